// Freezes under the controller: with the window open and a node past its threshold, a freeze holds the rotation
// that is due — nothing of ours touches the pool while it holds (polled throughout), the freeze's end is
// exported — and its end releases it: the rotation starts after it, completes and leaves nothing behind.
//  - `annotated`: the operator's noderotation.io/freeze annotation on the NodePool (an hour ahead), removed by
//    the operator (the test);
//  - `scheduled`: a spec.freezes period of the policy that began an hour ago and ends a minute from now;
//  - `pending`: a rotation already pending (its surge cannot land: the pool's limits) is frozen by the annotation,
//    then given room: its surge lands and is Ready, yet the freeze holds it pending — no drain, the old claim
//    kept — until the annotation is removed; then it drains and completes (docs/state.md, Freezes).
// The pools run at once: the annotations are removed when the scheduled freeze has ended.
import { describe, expect, it } from 'vitest';
import { A } from '../../src/engine/annotations.js';
import { limitedPoolWithApp, ON_DEMAND_AMD64, poolWithApp } from './helpers/context.js';
import { ALWAYS_OPEN, useController } from './helpers/controller-context.js';
import { kubectl } from './helpers/kubectl.js';
import { nodeReady, podRunningReady, waitFor } from './helpers/k8s.js';
import { actionsOn, holdsUntil, poolMetric, rotatedAndClean, untouched } from './helpers/windows.js';

const HOUR = 3_600_000;

describe('freezes under the controller', () => {
  const ctx = useController();
  const { kube, res } = ctx;

  it('the freeze annotation and a scheduled freeze hold a due or pending rotation and release it', async () => {
    const ctlNs = await res.namespace('e2e-cf-ctl');
    const [annotated, scheduled, pending] = await Promise.all([
      poolWithApp(kube, res, 'e2e-cf-ann', ON_DEMAND_AMD64),
      poolWithApp(kube, res, 'e2e-cf-sched', ON_DEMAND_AMD64),
      limitedPoolWithApp(kube, res, 'e2e-cf-pend'),
    ]);
    // Started before the policies exist (it leaves ungoverned pools alone), so that the scheduled freeze need only
    // last past their watch events and one pass of each pool.
    const controller = await ctx.controller(ctlNs);
    // Whole seconds: the exported freeze end is in seconds.
    const now = Math.floor(Date.now() / 1000) * 1000;
    const annotationUntil = now + HOUR;
    const scheduledEnd = now + 35_000;
    kubectl(['annotate', 'nodepool', annotated.pool, `${A.freeze}=${new Date(annotationUntil).toISOString()}`]);
    const spec = {
      maintenanceWindows: ALWAYS_OPEN,
      ageThreshold: '1s',
      surge: { readyTimeout: '5m', cooldownAfter: '30m' },
    };
    await ctx.policy(`${annotated.pool}-policy`, { ...spec, nodePools: [annotated.pool] });
    await ctx.policy(`${pending.pool}-policy`, { ...spec, nodePools: [pending.pool] });
    await ctx.policy(`${scheduled.pool}-policy`, {
      ...spec,
      nodePools: [scheduled.pool],
      freezes: [
        { start: new Date(now - HOUR).toISOString(), end: new Date(scheduledEnd).toISOString(), reason: 'e2e' },
      ],
    });

    // Each pool passed: a candidate, the window open, the freeze and its end exported.
    const frozen = [
      { pool: annotated.pool, until: annotationUntil },
      { pool: scheduled.pool, until: scheduledEnd },
    ];
    await waitFor(
      'both pools passed: a candidate, the window open, frozen until the freeze ends',
      async () => {
        for (const { pool, until } of frozen) {
          if ((await poolMetric(controller, 'noderotation_candidates', pool)) !== 1) return false;
          if ((await poolMetric(controller, 'noderotation_window_active', pool)) !== 1) return false;
          if ((await poolMetric(controller, 'noderotation_freeze_until_timestamp', pool)) !== until / 1000)
            return false;
        }
        return true;
      },
      {
        timeoutMs: 30_000,
        describe: async () =>
          `${await untouched(kube, controller, ctlNs, annotated.pool, 1, [A.freeze])}; ` +
          `${await untouched(kube, controller, ctlNs, scheduled.pool, 1)}\n${controller.tail(20)}`,
      },
    );
    // Meanwhile `pending`: started at once, frozen while pending, then given room for its surge.
    const pendingClaim = pending.claim.metadata.name;
    const placeholderOf = async () => (await kube.pods(ctlNs, `${A.surgeFor}=${pendingClaim}`))[0];
    const pendingHeld = async (): Promise<string | null> => {
      const ann = (await kube.getNodePool(pending.pool))?.metadata.annotations ?? {};
      if (ann[A.activeRotation] !== pendingClaim || ann[A.activeRotationState] !== undefined)
        return `the anchor moved on: ${JSON.stringify(ann)}`;
      const old = await kube.getNodeClaim(pendingClaim);
      if (old?.metadata.annotations?.[A.state] !== 'pending' || old.metadata.deletionTimestamp)
        return `the old claim is ${old ? JSON.stringify(old.metadata) : 'gone'}`;
      const drained = actionsOn(controller, pending.pool).find((l) => l.action === 'deleteNodeClaim');
      return drained ? `the controller wrote ${JSON.stringify(drained)}` : null;
    };
    const holdPending = async (): Promise<void> => {
      await waitFor(
        'the rotation of the pending pool pending, its placeholder created',
        async () =>
          (await kube.getNodeClaim(pendingClaim))?.metadata.annotations?.[A.state] === 'pending' &&
          (await placeholderOf()) !== undefined,
        { timeoutMs: 30_000, describe: () => controller.tail(20) },
      );
      kubectl(['annotate', 'nodepool', pending.pool, `${A.freeze}=${new Date(annotationUntil).toISOString()}`]);
      await waitFor(
        'the pending pool passed frozen',
        async () =>
          (await poolMetric(controller, 'noderotation_freeze_until_timestamp', pending.pool)) ===
          annotationUntil / 1000,
      );
      kubectl(['patch', 'nodepool', pending.pool, '--type', 'merge', '-p', '{"spec":{"limits":{"cpu":"10"}}}']);
      await waitFor(
        'the surge node Ready, the placeholder running on it, the surge claim recorded',
        async () => {
          const ph = await placeholderOf();
          const host = ph?.spec?.nodeName ? await kube.getNode(ph.spec.nodeName) : undefined;
          const recorded = (await kube.getNodeClaim(pendingClaim))?.metadata.annotations?.[A.surgeClaim];
          return podRunningReady(ph) && nodeReady(host) && recorded !== undefined;
        },
        { timeoutMs: 90_000, describe: () => controller.tail(20) },
      );
      // The surge is ready: unfrozen, the next pass would drain. Held for a while of passes (node and Pod updates).
      await holdsUntil('the frozen rotation held pending with its surge ready', Date.now() + 10_000, pendingHeld);
    };
    await Promise.all([
      holdsUntil('nothing of ours on the frozen pools', scheduledEnd, async () => {
        const annotatedHeld = await untouched(kube, controller, ctlNs, annotated.pool, 1, [A.freeze]);
        return annotatedHeld ?? untouched(kube, controller, ctlNs, scheduled.pool, 1);
      }),
      holdPending(),
    ]);
    // The scheduled freeze has ended and its rotation starts; the annotations still hold their pools until the
    // operator removes them.
    await waitFor(
      'the rotation of the scheduled pool anchored',
      async () => (await kube.getNodePool(scheduled.pool))?.metadata.annotations?.[A.activeRotation] !== undefined,
      { timeoutMs: 30_000, describe: () => controller.tail(20) },
    );
    expect(await untouched(kube, controller, ctlNs, annotated.pool, 1, [A.freeze])).toBeNull();
    expect(await pendingHeld()).toBeNull();
    const lifted = Date.now();
    kubectl(['annotate', 'nodepool', annotated.pool, `${A.freeze}-`]);
    kubectl(['annotate', 'nodepool', pending.pool, `${A.freeze}-`]);

    await rotatedAndClean(kube, controller, ctlNs, scheduled.pool, scheduled.claim.metadata.name);
    await rotatedAndClean(kube, controller, ctlNs, annotated.pool, annotated.claim.metadata.name);
    await rotatedAndClean(kube, controller, ctlNs, pending.pool, pendingClaim);
    // Each started only once its freeze was over (the controller logs each write before making it).
    const startOf = (pool: string): number => Date.parse(String(actionsOn(controller, pool)[0]?.ts));
    expect(startOf(scheduled.pool)).toBeGreaterThanOrEqual(scheduledEnd);
    expect(startOf(annotated.pool)).toBeGreaterThanOrEqual(lifted);
    const drainOf = actionsOn(controller, pending.pool).find((l) => l.action === 'deleteNodeClaim');
    expect(Date.parse(String(drainOf?.ts))).toBeGreaterThanOrEqual(lifted);
    for (const pool of [annotated.pool, scheduled.pool, pending.pool]) {
      expect(await poolMetric(controller, 'noderotation_freeze_until_timestamp', pool)).toBe(0);
    }
    expect(await controller.stop()).toBe(0);
    expect(controller.errors()).toEqual([]);
  });
});
