// Karpenter's forceful expiration (pkg/controllers/nodeclaim/expiration): once creationTimestamp +
// spec.expireAfter has passed, the NodeClaim is deleted, whatever the time of day. This is the behaviour the
// rotation controller moves into maintenance windows, so the test environment must really do it.
import { describe, expect, it } from 'vitest';
import { deployment, useCluster } from './helpers/context.js';
import type { NodeClaim } from '../../src/karpenter/types.js';
import { conditionTrue, metricSum, podRunningReady, toDate, waitFor } from './helpers/k8s.js';

// Long enough for the first NodeClaim to be Ready with the pod on it (about 3 s here) well before it expires.
const EXPIRE_AFTER_S = 30;

describe('expiry', () => {
  const { kube, res } = useCluster();

  it(`force-expires a NodeClaim after expireAfter (${EXPIRE_AFTER_S}s) and a replacement comes up`, async () => {
    const ns = await res.namespace('e2e-expiry');
    const pool = await res.nodePool('e2e-expiry', {
      expireAfter: `${EXPIRE_AFTER_S}s`,
      requirements: [
        { key: 'kubernetes.io/arch', operator: 'In', values: ['amd64'] },
        { key: 'karpenter.sh/capacity-type', operator: 'In', values: ['on-demand'] },
      ],
    });
    await kube.apps.createNamespacedDeployment({
      namespace: ns,
      body: deployment({ name: 'app', pool, replicas: 1, cpu: '500m' }),
    });

    const first = await waitFor('the first NodeClaim Ready with the pod running on its node', async () => {
      const claims = await kube.nodeClaims(pool);
      const pods = await kube.pods(ns, 'app=app');
      const claim = claims.find((c) => conditionTrue(c, 'Ready'));
      return claim && pods.some((p) => podRunningReady(p) && p.spec?.nodeName === claim.status?.nodeName)
        ? claim
        : undefined;
    });
    const firstName = String(first.metadata.name);
    expect(first.spec.expireAfter).toBe(`${EXPIRE_AFTER_S}s`);
    const created = toDate(first.metadata.creationTimestamp);
    if (!created) throw new Error('NodeClaim without creationTimestamp');

    // Nobody but Karpenter's expiration controller deletes it: wait past expireAfter for the deletion.
    const deleting = await waitFor(
      `NodeClaim ${firstName} deleted by expiry`,
      async (): Promise<NodeClaim | 'gone' | undefined> => {
        const c = await kube.getNodeClaim(firstName);
        if (c === undefined) return 'gone';
        return c.metadata.deletionTimestamp ? c : undefined;
      },
      { timeoutMs: (EXPIRE_AFTER_S + 90) * 1000, intervalMs: 250 },
    );
    if (deleting !== 'gone') {
      // Timestamps have second precision, both truncated: deletion >= creation + expireAfter holds exactly.
      const deletedAt = toDate(deleting.metadata.deletionTimestamp)?.getTime() ?? 0;
      expect(deletedAt - created.getTime()).toBeGreaterThanOrEqual(EXPIRE_AFTER_S * 1000);
    }
    // ... and counted it as an expiry (metric incremented by the expiration controller).
    await waitFor(
      'karpenter_nodeclaims_disrupted_total{reason="expired"} for the pool',
      async () =>
        metricSum(await kube.karpenterMetrics(), 'karpenter_nodeclaims_disrupted_total', {
          nodepool: pool,
          reason: 'expired',
        }) >= 1,
    );

    // The drained pod comes back on a replacement NodeClaim, and the expired one is gone.
    const replacement = await waitFor(
      'a replacement NodeClaim Ready with the pod running on its node, the expired NodeClaim gone',
      async () => {
        if ((await kube.getNodeClaim(firstName)) !== undefined) return undefined;
        const claims = await kube.nodeClaims(pool);
        const pods = await kube.pods(ns, 'app=app');
        const claim = claims.find((c) => c.metadata.name !== firstName && conditionTrue(c, 'Ready'));
        return claim && pods.some((p) => podRunningReady(p) && p.spec?.nodeName === claim.status?.nodeName)
          ? claim
          : undefined;
      },
      {
        timeoutMs: 90_000,
        describe: async () =>
          JSON.stringify({
            claims: (await kube.nodeClaims(pool)).map((c) => [
              c.metadata.name,
              c.metadata.deletionTimestamp,
              c.status?.conditions,
            ]),
            pods: (await kube.pods(ns)).map((p) => [p.metadata?.name, p.spec?.nodeName, p.status?.phase]),
          }),
      },
    );
    expect(replacement.metadata.name).not.toBe(firstName);
    expect(await kube.getNode(String(first.status?.nodeName))).toBeUndefined();
  });
});
