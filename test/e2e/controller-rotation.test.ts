// The controller as a process against real Karpenter: a governed NodePool's node, past its age threshold
// inside an open window, is rotated surge-first — the surge NodeClaim Ready before the old one is deleted,
// the workload moved onto it, every marker of ours gone — and the metrics, events and status say so.
import { describe, expect, it } from 'vitest';
import { A } from '../../src/engine/annotations.js';
import { ON_DEMAND_AMD64, poolWithApp } from './helpers/context.js';
import { ALWAYS_OPEN, useController } from './helpers/controller-context.js';
import { metricSum, podRunningReady, waitFor } from './helpers/k8s.js';
import { eventsV1, getRotationPolicy } from './helpers/noderotation-api.js';

describe('the controller rotates a node surge-first', () => {
  const ctx = useController();
  const { kube, res } = ctx;

  it('happy path: surge Ready before the old claim is deleted, workload moved, markers gone, observed', async () => {
    const priorityClass = await res.priorityClass('e2e-ctl-ph', -10, 'Never');
    const { ns, pool, claim: oldClaim } = await poolWithApp(kube, res, 'e2e-ctl', ON_DEMAND_AMD64, 'ctl');
    const oldName = oldClaim.metadata.name;

    // The window is always open and every node is past its threshold at once; cooldownAfter keeps it to one.
    const policy = await ctx.policy(`${pool}-policy`, {
      nodePools: [pool],
      maintenanceWindows: ALWAYS_OPEN,
      ageThreshold: '1s',
      surge: { readyTimeout: '5m', cooldownAfter: '30m', placeholder: { priorityClassName: priorityClass } },
    });
    // The controller runs as its ServiceAccount with exactly the rules of controller/rbac.ts.
    const controller = await ctx.controller(ns);

    const replacement = await waitFor(
      'the old NodeClaim gone and one Ready replacement',
      async () => {
        const claims = await kube.nodeClaims(pool);
        if (claims.some((c) => c.metadata.name === oldName)) return undefined;
        const ready = claims.filter((c) => c.status?.conditions?.some(readyTrue));
        return ready.length === 1 ? ready[0] : undefined;
      },
      { timeoutMs: 300_000, intervalMs: 1000, describe: () => controller.tail() },
    );

    // Surge first: the surge node was Ready (what the engine's surge_ready reads; Karpenter marks the NodeClaim
    // Ready a little later, once it has initialised the node) before the old NodeClaim was deleted. Condition
    // times have second precision, so the comparison is to the second.
    const deleted = controller.logs.find((l) => l.action === 'deleteNodeClaim' && l.nodeclaim === oldName);
    expect(deleted, controller.tail(40)).toBeDefined();
    const surgeNodeObj = await kube.getNode(replacement.status!.nodeName as string);
    const nodeReadyAt = surgeNodeObj?.status?.conditions?.find(
      (c) => c.type === 'Ready' && c.status === 'True',
    )?.lastTransitionTime;
    expect(nodeReadyAt).toBeDefined();
    expect(nodeReadyAt!.getTime()).toBeLessThanOrEqual(Math.floor(Date.parse(deleted!.ts as string) / 1000) * 1000);

    const surgeNode = replacement.status!.nodeName as string;
    await waitFor(
      'the app running on the surge node',
      async () => (await kube.pods(ns, 'app=app')).some((p) => podRunningReady(p) && p.spec?.nodeName === surgeNode),
      { timeoutMs: 120_000 },
    );
    await waitFor(
      'the RotationCompleted event and the success counted',
      async () => {
        const reasons = (await eventsV1(kube, 'default'))
          .filter((e) => e.regarding?.name === pool)
          .map((e) => e.reason);
        const metrics = await controller.metrics();
        return reasons.includes('RotationCompleted') &&
          metricSum(metrics, 'noderotation_completed_total', { nodepool: pool, outcome: 'success' }) === 1
          ? true
          : undefined;
      },
      {
        describe: async () =>
          `events: ${(await eventsV1(kube, 'default'))
            .filter((e) => e.regarding?.name === pool)
            .map((e) => e.reason)
            .join(', ')}\n` +
          `metrics: ${(await controller.metrics())
            .split('\n')
            .filter((l) => l.startsWith('noderotation_completed'))
            .join('; ')}\n` +
          controller.tail(30),
      },
    );
    const reasons = (await eventsV1(kube, 'default')).filter((e) => e.regarding?.name === pool).map((e) => e.reason);
    expect(reasons).toEqual(expect.arrayContaining(['RotationStarted', 'DrainStarted', 'RotationCompleted']));

    // Nothing of ours is left: not on the surge node, not on the pool (but last-rotation-at), no placeholder.
    // The placeholder held the surge room through the drain (issue 23): it was preempted by the app's
    // replacement, or removed once the old claim was gone, never when the drain began.
    const node = await kube.getNode(surgeNode);
    expect(ours(node?.metadata?.annotations)).toEqual([]);
    expect(node?.spec?.unschedulable ?? false).toBe(false);
    const poolAnn = (await kube.getNodePool(pool))?.metadata.annotations ?? {};
    expect(ours(poolAnn)).toEqual([A.lastRotationAt]);
    await waitFor('no placeholder left', async () => (await kube.pods(ns, A.surgeFor)).length === 0);
    for (const l of controller.logs.filter((x) => x.action === 'deletePod'))
      expect(l.msg).toBe(`rotation of ${oldName} finished`);
    const status = (await getRotationPolicy(kube, policy.metadata.name))?.status as
      { matchedNodePools?: number; conditions?: { type: string; status: string; reason: string }[] } | undefined;
    expect(status?.matchedNodePools).toBe(1);
    expect(status?.conditions?.find((c) => c.type === 'Ready')).toMatchObject({ status: 'True', reason: 'Accepted' });

    expect(await controller.stop()).toBe(0);
    expect(controller.errors()).toEqual([]);
  });
});

const readyTrue = (c: { type: string; status: string }): boolean => c.type === 'Ready' && c.status === 'True';
const ours = (ann: Record<string, string> | undefined): string[] =>
  Object.keys(ann ?? {})
    .filter((k) => k.startsWith('noderotation.io/') || k === A.doNotDisrupt)
    .sort();
