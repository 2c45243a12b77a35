// Rollback under the controller: the pool's limits leave no room for a surge node, so the attempt is rolled back
// at readyTimeout — the old node exactly as it was, the failure recorded on the claim and counted — and the
// failure pause is honoured: no second attempt starts.
import { describe, expect, it } from 'vitest';
import { A } from '../../src/engine/annotations.js';
import { limitedPoolWithApp, ourMarkers } from './helpers/context.js';
import { ALWAYS_OPEN, useController } from './helpers/controller-context.js';
import { metricSum, waitFor } from './helpers/k8s.js';
import { eventsV1 } from './helpers/noderotation-api.js';

describe('rollback under the controller', () => {
  const ctx = useController();
  const { kube } = ctx;

  it('no room for the surge: rolled back at readyTimeout, failure recorded, the pause honoured', async () => {
    const { ns, pool, claim } = await limitedPoolWithApp(kube, ctx.res, 'e2e-crb');
    const name = claim.metadata.name;
    const nodeName = claim.status?.nodeName as string;

    await ctx.policy(`${pool}-policy`, {
      nodePools: [pool],
      maintenanceWindows: ALWAYS_OPEN,
      ageThreshold: '1s',
      surge: { readyTimeout: '20s', failurePause: '30m', retryBackoff: '30m' },
    });
    const controller = await ctx.controller(ns);

    await waitFor(
      'the failure recorded on the claim',
      async () => (await kube.getNodeClaim(name))?.metadata.annotations?.[A.state] === 'failed',
      { timeoutMs: 120_000, intervalMs: 1000, describe: () => controller.tail(15) },
    );
    await waitFor(
      'the failure counted',
      async () =>
        metricSum(await controller.metrics(), 'noderotation_completed_total', {
          nodepool: pool,
          outcome: 'failure',
        }) === 1,
    );
    const reasons = async (): Promise<string[]> =>
      (await eventsV1(kube, 'default'))
        .filter((e) => e.regarding?.name === name || e.regarding?.name === pool)
        .map((e) => e.reason ?? '');
    await waitFor('RotationFailed recorded', async () => (await reasons()).includes('RotationFailed'));

    // Karpenter never launched a surge node (the limit held); the old node is exactly as it was.
    expect((await kube.nodeClaims(pool)).map((c) => c.metadata.name)).toEqual([name]);
    const node = await kube.getNode(nodeName);
    expect(node?.spec?.unschedulable ?? false).toBe(false);
    expect(ourMarkers(node?.metadata?.annotations)).toEqual([]);
    await waitFor('the placeholder gone', async () => (await kube.pods(ns, A.surgeFor)).length === 0);
    const claimAnn = (await kube.getNodeClaim(name))?.metadata.annotations ?? {};
    expect(claimAnn).toMatchObject({ [A.state]: 'failed', [A.retryCount]: '1' });
    const poolAnn = (await kube.getNodePool(pool))?.metadata.annotations ?? {};
    expect(Object.keys(poolAnn).filter((k) => k.startsWith('noderotation.io/'))).toEqual([A.lastFailureAt]);

    // The failure pause holds: a forced pass of every pool (a restart) starts nothing new.
    expect(await controller.stop()).toBe(0);
    const again = await ctx.controller(ns);
    // A pass of the pool has ended once its gauges are exported (they are set after its actions ran).
    await waitFor('a full pass of the pool', async () =>
      (await again.metrics()).includes(`noderotation_in_progress{nodepool="${pool}"} 0`),
    );
    expect((await kube.getNodePool(pool))?.metadata.annotations?.[A.activeRotation]).toBeUndefined();
    expect(again.logs.filter((l) => l.action !== undefined)).toEqual([]);
    expect((await reasons()).filter((r) => r === 'RotationStarted')).toHaveLength(1);
  });
});
