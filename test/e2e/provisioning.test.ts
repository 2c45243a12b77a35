// Pending pods that fit no node make Karpenter launch a NodeClaim; KWOK makes its Node Ready; the
// scheduler binds the pods and KWOK runs them. The chain the rotation controller relies on.
import { describe, expect, it } from 'vitest';
import { deployment, useCluster } from './helpers/context.js';
import { conditionTrue, nodeReady, podRunningReady, waitFor } from './helpers/k8s.js';

describe('provisioning', () => {
  const { kube, res } = useCluster();

  it('launches a NodeClaim for unschedulable pods, KWOK marks the Node Ready, the pods run', async () => {
    const ns = await res.namespace('e2e-prov');
    const pool = await res.nodePool('e2e-prov', {
      requirements: [
        { key: 'kubernetes.io/arch', operator: 'In', values: ['amd64'] },
        { key: 'kubernetes.io/os', operator: 'In', values: ['linux'] },
        { key: 'karpenter.sh/capacity-type', operator: 'In', values: ['on-demand'] },
      ],
    });
    expect(await kube.nodeClaims(pool)).toHaveLength(0);

    await kube.apps.createNamespacedDeployment({
      namespace: ns,
      body: deployment({ name: 'web', pool, replicas: 3, cpu: '1500m' }),
    });

    // The scheduler fails to place the pods first (no node of this pool exists) and marks them
    // Unschedulable: that is what Karpenter reacts to. Its FailedScheduling events outlive the pending phase.
    await waitFor('FailedScheduling events from kube-scheduler for the pods', async () => {
      const evs = await kube.events({ namespace: ns, kind: 'Pod', reason: 'FailedScheduling' });
      return evs.some((e) => e.involvedObject.name?.startsWith('web-'));
    });

    const claims = await waitFor(
      'NodeClaims Ready',
      async () => {
        const cs = await kube.nodeClaims(pool);
        return cs.length > 0 && cs.every((c) => conditionTrue(c, 'Ready')) ? cs : undefined;
      },
      { describe: async () => JSON.stringify((await kube.nodeClaims(pool)).map((c) => c.status)) },
    );

    const pods = await waitFor(
      '3 pods Running and Ready',
      async () => {
        const ps = await kube.pods(ns, 'app=web');
        return ps.length === 3 && ps.every(podRunningReady) ? ps : undefined;
      },
      {
        describe: async () =>
          JSON.stringify((await kube.pods(ns, 'app=web')).map((p) => [p.spec?.nodeName, p.status?.phase])),
      },
    );

    // Every claim went through Karpenter's lifecycle and is backed by a KWOK-managed, Ready Node.
    const nodes = await kube.nodes(pool);
    for (const claim of claims) {
      for (const cond of ['Launched', 'Registered', 'Initialized', 'Ready'])
        expect(conditionTrue(claim, cond)).toBe(true);
      const node = nodes.find((n) => n.spec?.providerID === claim.status?.providerID);
      expect(node, `Node for NodeClaim ${String(claim.metadata.name)}`).toBeDefined();
      expect(node?.metadata?.name).toBe(claim.status?.nodeName);
      expect(node?.metadata?.annotations?.['kwok.x-k8s.io/node']).toBe('fake');
      expect(
        node?.metadata?.ownerReferences?.some((o) => o.kind === 'NodeClaim' && o.name === claim.metadata.name),
      ).toBe(true);
      expect(nodeReady(node)).toBe(true);
    }
    // Each pod runs on one of the pool's nodes, and KWOK gave it an IP.
    const nodeNames = new Set(nodes.map((n) => n.metadata?.name));
    for (const p of pods) {
      expect(nodeNames.has(p.spec?.nodeName)).toBe(true);
      expect(p.status?.podIP).toBeTruthy();
    }
  });
});
