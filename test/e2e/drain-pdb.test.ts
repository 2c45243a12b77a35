// Deleting a NodeClaim drains its Node through the Eviction API, so a PodDisruptionBudget holds a pod back
// until the budget allows it; the NodePool's terminationGracePeriod bounds the wait (Karpenter deletes what
// is left at the termination time, bypassing PDBs). The rotation controller deletes NodeClaims and relies on
// exactly this.
import { describe, expect, it } from 'vitest';
import { deployment, useCluster } from './helpers/context.js';
import { conditionTrue, metricSum, podRunningReady, toDate, waitFor } from './helpers/k8s.js';

const TERMINATION_GRACE_PERIOD_S = 180;
const TERMINATION_TIMESTAMP = 'karpenter.sh/nodeclaim-termination-timestamp';

describe('drain through the Eviction API', () => {
  const { kube, res } = useCluster();
  const evictionsRefused = async (): Promise<number> =>
    metricSum(await kube.karpenterMetrics(), 'karpenter_pods_eviction_requests_total', { code: '429' });

  it('holds a pod on the draining node while its PDB disallows, evicts it once allowed', async () => {
    const ns = await res.namespace('e2e-drain');
    const pool = await res.nodePool('e2e-drain', {
      terminationGracePeriod: `${TERMINATION_GRACE_PERIOD_S}s`,
      requirements: [
        { key: 'kubernetes.io/arch', operator: 'In', values: ['amd64'] },
        { key: 'karpenter.sh/capacity-type', operator: 'In', values: ['on-demand'] },
      ],
    });
    await kube.apps.createNamespacedDeployment({
      namespace: ns,
      body: deployment({ name: 'app', pool, replicas: 1, cpu: '500m' }),
    });
    // minAvailable = replicas: no voluntary disruption allowed.
    await kube.policy.createNamespacedPodDisruptionBudget({
      namespace: ns,
      body: { metadata: { name: 'app' }, spec: { minAvailable: 1, selector: { matchLabels: { app: 'app' } } } },
    });

    const { claim, pod } = await waitFor('the pod running on a Ready NodeClaim', async () => {
      const claim = (await kube.nodeClaims(pool)).find((c) => conditionTrue(c, 'Ready'));
      const pod = (await kube.pods(ns, 'app=app')).find(
        (p) => podRunningReady(p) && p.spec?.nodeName === claim?.status?.nodeName,
      );
      return claim && pod ? { claim, pod } : undefined;
    });
    const claimName = String(claim.metadata.name);
    const nodeName = String(claim.status?.nodeName);
    const podName = String(pod.metadata?.name);
    const podUid = String(pod.metadata?.uid);
    // kube-controller-manager's disruption controller computes what the Eviction API enforces.
    await waitFor('PDB status: 1 healthy, 0 disruptions allowed', async () => {
      const pdb = await kube.policy.readNamespacedPodDisruptionBudget({ namespace: ns, name: 'app' });
      return pdb.status?.currentHealthy === 1 && pdb.status.disruptionsAllowed === 0;
    });

    // The test plays the part of whoever deletes the NodeClaim (the rotation controller, later).
    const refusedBefore = await evictionsRefused();
    await kube.deleteNodeClaim(claimName);

    // Karpenter drains through the Eviction API and the API server answers 429 (the PDB): Karpenter counts
    // the response codes (karpenter_pods_eviction_requests_total) and reports the node as FailedDraining.
    await waitFor(
      'Karpenter evictions refused with 429, twice',
      async () => (await evictionsRefused()) >= refusedBefore + 2,
    );
    await waitFor('a FailedDraining event on the node', async () => {
      const evs = await kube.events({ kind: 'Node', name: nodeName, reason: 'FailedDraining' });
      return evs.length > 0;
    });

    // While refused, the pod stays: same pod, not terminating, still on the draining node.
    const draining = await kube.getNodeClaim(claimName);
    expect(draining?.metadata.deletionTimestamp).toBeTruthy();
    const terminationAt = draining?.metadata.annotations?.[TERMINATION_TIMESTAMP];
    expect(terminationAt, `${TERMINATION_TIMESTAMP} on the NodeClaim`).toBeTruthy();
    const node = await kube.getNode(nodeName);
    expect(node?.spec?.taints?.some((t) => t.key === 'karpenter.sh/disrupted' && t.effect === 'NoSchedule')).toBe(true);
    const held = await kube.getPod(ns, podName);
    expect(held?.metadata?.uid).toBe(podUid);
    expect(held?.metadata?.deletionTimestamp).toBeUndefined();
    expect(held?.spec?.nodeName).toBe(nodeName);
    expect(await kube.events({ kind: 'Pod', name: podName, uid: podUid, reason: 'Evicted' })).toHaveLength(0);

    // Allow one disruption the way a rollout would: a second replica (it lands on a node Karpenter
    // launches; the draining node is tainted) becomes Ready, so the PDB allows one.
    await kube.apps.patchNamespacedDeployment({
      namespace: ns,
      name: 'app',
      body: [{ op: 'replace', path: '/spec/replicas', value: 2 }],
    });

    // Karpenter's next eviction succeeds: it records Evicted on the pod, the pod goes, the node drains
    // and the NodeClaim goes, all before the termination time (nothing was forced).
    await waitFor(
      'the held pod evicted, the NodeClaim gone',
      async () => {
        const evicted = await kube.events({ kind: 'Pod', name: podName, uid: podUid, reason: 'Evicted' });
        const current = await kube.getPod(ns, podName);
        const claimLeft = await kube.getNodeClaim(claimName);
        return evicted.length > 0 && current?.metadata?.uid !== podUid && claimLeft === undefined;
      },
      {
        timeoutMs: TERMINATION_GRACE_PERIOD_S * 1000,
        describe: async () =>
          JSON.stringify({
            pods: (await kube.pods(ns)).map((p) => [
              p.metadata?.name,
              p.spec?.nodeName,
              p.status?.phase,
              p.metadata?.deletionTimestamp,
            ]),
            claims: (await kube.nodeClaims(pool)).map((c) => [c.metadata.name, c.metadata.deletionTimestamp]),
            pdb: (await kube.policy.readNamespacedPodDisruptionBudget({ namespace: ns, name: 'app' })).status,
          }),
      },
    );
    expect(Date.now()).toBeLessThan(toDate(terminationAt)?.getTime() ?? 0);
    // Evicted, not deleted by the termination-time bypass.
    expect(await kube.events({ kind: 'Pod', name: podName, uid: podUid, reason: 'Disrupted' })).toHaveLength(0);
    await waitFor('2 replicas running elsewhere', async () => {
      const pods = await kube.pods(ns, 'app=app');
      return pods.filter(podRunningReady).length === 2 && pods.every((p) => p.spec?.nodeName !== nodeName);
    });
  });
});
