// Maintenance windows under the controller, on wall-clock windows placed around now. Two pools share one minute
// boundary: at it, the window of one opens and the window of the other closes.
//  - `opening`: closed until the boundary: nothing of ours touches it before (polled throughout), its rotation
//    starts at or after the opening, completes and leaves nothing behind.
//  - `closing`: open now; its rotation starts at once and is held in flight past the window's end by a PDB that
//    allows no eviction; released after the end, it completes. Its second node is a candidate (cooldownAfter 1s)
//    and only the closed window holds it: no new rotation starts after the end.
import { describe, expect, it } from 'vitest';
import { A } from '../../src/engine/annotations.js';
import { ON_DEMAND_AMD64, ourMarkers, poolWithApp } from './helpers/context.js';
import { useController } from './helpers/controller-context.js';
import { waitFor } from './helpers/k8s.js';
import {
  actionsOn,
  weeklyWindow,
  zoneJustAfterMidnight,
  holdsUntil,
  minuteAfter,
  poolMetric,
  poolWithSpreadApp,
  rotatedAndClean,
  untouched,
} from './helpers/windows.js';

const HOUR = 3_600_000;

describe('maintenance windows under the controller', () => {
  const ctx = useController();
  const { kube, res } = ctx;

  it('nothing starts before a window opens; a rotation in flight at its end completes, none starts after', async () => {
    const ctlNs = await res.namespace('e2e-cw-ctl');
    const [opening, closing] = await Promise.all([
      poolWithApp(kube, res, 'e2e-cw-open', ON_DEMAND_AMD64),
      // terminationGracePeriod well past the test: only the PDB decides when the drain may finish.
      poolWithSpreadApp(kube, res, 'e2e-cw-close', { ...ON_DEMAND_AMD64, terminationGracePeriod: '15m' }, 2),
    ]);
    const [first, second] = closing.claims as [(typeof closing.claims)[0], (typeof closing.claims)[0]];
    await kube.policy.createNamespacedPodDisruptionBudget({
      namespace: closing.ns,
      body: { metadata: { name: 'app' }, spec: { maxUnavailable: 0, selector: { matchLabels: { app: 'app' } } } },
    });
    await waitFor('the PDB computed: no disruption allowed', async () => {
      const pdb = await kube.policy.readNamespacedPodDisruptionBudget({ namespace: closing.ns, name: 'app' });
      return pdb.status?.currentHealthy === 2 && pdb.status.disruptionsAllowed === 0;
    });

    // Started before the policies exist (it leaves ungoverned pools alone), so that the boundary need only leave
    // time for the policies' watch events and one pass of each pool (about 1 s; 20 s leaves room for a slow CI).
    const controller = await ctx.controller(ctlNs);
    const boundary = minuteAfter(Date.now(), 20_000);
    // A zone with a half-hour offset, so a window read in the wrong zone is closed at the boundary.
    await ctx.policy(`${opening.pool}-policy`, {
      nodePools: [opening.pool],
      maintenanceWindows: [weeklyWindow(boundary, boundary + HOUR / 2, 'Asia/Kolkata')],
      ageThreshold: '1s',
      surge: { readyTimeout: '5m', cooldownAfter: '30m' },
    });
    // Open since two hours before the boundary, across local midnight: the day is the day of the start, and the
    // end is before the start.
    const across = weeklyWindow(boundary - 2 * HOUR, boundary, zoneJustAfterMidnight(boundary));
    expect(across.end < across.start, JSON.stringify(across)).toBe(true);
    await ctx.policy(`${closing.pool}-policy`, {
      nodePools: [closing.pool],
      maintenanceWindows: [across],
      ageThreshold: '1s',
      surge: { readyTimeout: '5m', cooldownAfter: '1s' },
    });

    // Before the boundary: the controller has passed `opening`, found its candidate and the window closed.
    await waitFor(
      'the opening pool passed: a candidate, the window closed',
      async () =>
        (await poolMetric(controller, 'noderotation_candidates', opening.pool)) === 1 &&
        (await poolMetric(controller, 'noderotation_window_active', opening.pool)) === 0 &&
        (await poolMetric(controller, 'noderotation_window_active', closing.pool)) === 1,
      { timeoutMs: 30_000, describe: () => controller.tail(20) },
    );
    // `closing` starts at once (the first node, earliest deadline), inside its window.
    await waitFor(
      'the rotation of the closing pool anchored',
      async () =>
        (await kube.getNodePool(closing.pool))?.metadata.annotations?.[A.activeRotation] === first.metadata.name,
      { timeoutMs: 30_000, describe: () => controller.tail(20) },
    );
    const closingStart = actionsOn(controller, closing.pool)[0];
    expect(Date.parse(String(closingStart?.ts))).toBeLessThan(boundary);

    await holdsUntil('nothing of ours on the opening pool while its window is closed', boundary, () =>
      untouched(kube, controller, ctlNs, opening.pool, 1),
    );

    // Past the end, `closing` is still in flight: drained as far as the PDB allows, the old claim still there.
    await waitFor(
      'the closing pool seen outside its window, its old claim held in its drain',
      async () => {
        if ((await poolMetric(controller, 'noderotation_window_active', closing.pool)) !== 0) return false;
        const ann = (await kube.getNodePool(closing.pool))?.metadata.annotations ?? {};
        const old = await kube.getNodeClaim(first.metadata.name);
        return ann[A.activeRotation] === first.metadata.name && ann[A.activeRotationState] === 'draining' && old
          ? true
          : undefined;
      },
      { timeoutMs: 120_000, intervalMs: 1000, describe: () => controller.tail(20) },
    );
    expect(Date.now()).toBeGreaterThanOrEqual(boundary);
    await kube.policy.deleteNamespacedPodDisruptionBudget({ namespace: closing.ns, name: 'app' });

    // `opening` rotated, started at or after the opening, nothing left.
    await rotatedAndClean(kube, controller, ctlNs, opening.pool, opening.claim.metadata.name);
    const openingStart = actionsOn(controller, opening.pool)[0];
    expect(openingStart?.action, controller.tail(30)).toBe('annotate');
    expect(Date.parse(String(openingStart?.ts))).toBeGreaterThanOrEqual(boundary);
    // `closing` completed after its window ended, nothing left; its second node untouched.
    await rotatedAndClean(kube, controller, ctlNs, closing.pool, first.metadata.name);
    expect(ourMarkers((await kube.getNodeClaim(second.metadata.name))?.metadata.annotations)).toEqual([]);

    // No new rotation after the end: a fresh controller passes every pool and writes nothing, though the closing
    // pool has candidates and its cooldown (1s) is over: the closed window alone holds them.
    expect(await controller.stop()).toBe(0);
    expect(controller.errors()).toEqual([]);
    const again = await ctx.controller(ctlNs);
    await waitFor(
      'a full pass of both pools',
      async () => {
        const m = await again.metrics();
        return [opening.pool, closing.pool].every((p) => m.includes(`noderotation_in_progress{nodepool="${p}"} 0`));
      },
      { describe: () => again.tail(20) },
    );
    expect(await poolMetric(again, 'noderotation_window_active', closing.pool)).toBe(0);
    expect(await poolMetric(again, 'noderotation_candidates', closing.pool)).toBeGreaterThanOrEqual(1);
    expect(again.logs.filter((l) => l.action !== undefined)).toEqual([]);
    // Two claims of ours at least (the surge and the second node). Karpenter may have launched one more for the
    // app Pod evicted when the PDB went: with the placeholder holding the surge room through the drain (issue 23),
    // the Pod waits for the scheduler to preempt the placeholder, and Karpenter's batch sometimes sees it
    // unschedulable before it is nominated (seen 2 of 2 runs here). That claim is Karpenter's, carries nothing
    // of ours, and is consolidated as empty; untouched() checks every claim for our markers.
    const claimsNow = (await kube.nodeClaims(closing.pool)).length;
    expect(claimsNow).toBeGreaterThanOrEqual(2);
    expect(await untouched(kube, again, ctlNs, closing.pool, claimsNow, [A.lastRotationAt])).toBeNull();
    expect(await again.stop()).toBe(0);
    expect(again.errors()).toEqual([]);
  });
});
