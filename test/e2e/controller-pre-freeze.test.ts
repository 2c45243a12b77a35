// Rotation ahead of a freeze under the controller (issue 22 item 3, docs/state.md "Rotation ahead of a freeze"): two
// NodePools whose nodes Karpenter expires 15 minutes after creation, under policies identical but for
// spec.preFreezeRotation, with a scheduled freeze that begins two minutes after the policies and outlasts both
// deadlines. By age alone (ageThreshold 10m) neither node is a candidate before the freeze begins, so Karpenter
// would force both during it. With the option, the node is due by the freeze's start: a candidate at once, it is
// rotated gracefully (surge first) and its drain begins before the freeze. Without it, the pool is untouched
// until the freeze begins and then held by it. The controller's /calendar.ics shows both pools' freeze.
import ICAL from 'ical.js';
import { describe, expect, it } from 'vitest';
import { A, parseTime } from '../../src/engine/annotations.js';
import { ON_DEMAND_AMD64, poolWithApp } from './helpers/context.js';
import { ALWAYS_OPEN, useController } from './helpers/controller-context.js';
import { waitFor } from './helpers/k8s.js';
import { actionsOn, holdsUntil, poolMetric, rotatedAndClean, untouched } from './helpers/windows.js';

const EXPIRE_AFTER = 900; // seconds
const LEAD = 120_000; // from the policies to the freeze's start
const HOUR = 3_600_000;

describe('rotation ahead of a freeze under the controller', () => {
  const ctx = useController();
  const { kube, res } = ctx;

  it('due by the freeze: rotated before it begins with the option; untouched, then frozen, without', async () => {
    const ctlNs = await res.namespace('e2e-pf-ctl');
    const lifetime = { ...ON_DEMAND_AMD64, expireAfter: `${EXPIRE_AFTER}s`, terminationGracePeriod: '10s' };
    const [on, off] = await Promise.all([
      poolWithApp(kube, res, 'e2e-pfon', lifetime),
      poolWithApp(kube, res, 'e2e-pfoff', lifetime),
    ]);
    const controller = await ctx.controller(ctlNs);
    // Whole seconds: the exported freeze end is in seconds.
    const start = Math.floor((Date.now() + LEAD) / 1000) * 1000;
    const end = start + HOUR;
    for (const [p, enabled] of [
      [on, true],
      [off, false],
    ] as const) {
      const deadline = (parseTime(p.claim.metadata.creationTimestamp) as number) + EXPIRE_AFTER * 1000;
      expect(deadline, 'the deadline falls inside the freeze').toBeGreaterThan(start);
      await ctx.policy(`${p.pool}-policy`, {
        nodePools: [p.pool],
        maintenanceWindows: ALWAYS_OPEN,
        // G = floor((E − A − t_rot) / P) = floor((900 − 600 − (60 + 10 + 120)) / 60) = 1 chance.
        ageThreshold: '10m',
        minRotationChances: 1,
        surge: { readyTimeout: '60s', cooldownAfter: '30m' },
        freezes: [{ start: new Date(start).toISOString(), end: new Date(end).toISOString(), reason: 'e2e' }],
        preFreezeRotation: { enabled },
      });
    }

    // The calendar the controller serves, read back by an independent parser: each pool's freeze, to the second.
    await waitFor(
      'the freeze of both pools in /calendar.ics',
      async () => {
        const text = await controller.calendar();
        if (text === null) return false;
        const events = ICAL.Component.fromString(text)
          .getAllSubcomponents('vevent')
          .map((e) => new ICAL.Event(e));
        return [on.pool, off.pool].every((pool) =>
          events.some(
            (e) =>
              e.summary.startsWith('Freeze: ') &&
              e.summary.includes(pool) &&
              e.startDate.toJSDate().getTime() === start &&
              e.endDate.toJSDate().getTime() === end,
          ),
        );
      },
      { timeoutMs: 30_000, describe: async () => (await controller.calendar()) ?? '(not served)' },
    );

    await rotatedAndClean(kube, controller, ctlNs, on.pool, on.claim.metadata.name);
    const drain = actionsOn(controller, on.pool).find((l) => l.action === 'deleteNodeClaim');
    expect(Date.parse(String(drain?.ts)), 'the drain began before the freeze').toBeLessThan(start);

    await holdsUntil('nothing of ours on the pool without the option', start, () =>
      untouched(kube, controller, ctlNs, off.pool, 1),
    );
    await waitFor(
      'the pool without the option passed frozen',
      async () => (await poolMetric(controller, 'noderotation_freeze_until_timestamp', off.pool)) === end / 1000,
      { timeoutMs: 60_000, describe: () => controller.tail(20) },
    );
    expect(await untouched(kube, controller, ctlNs, off.pool, 1)).toBeNull();
    expect((await kube.getNodePool(off.pool))?.metadata.annotations?.[A.activeRotation]).toBeUndefined();
    expect(await controller.stop()).toBe(0);
    expect(controller.errors()).toEqual([]);
  });
});
