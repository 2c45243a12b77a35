// The leadership fence on the real apiserver (issue 17, S4: no write after leadership could have lapsed). Two
// replicas with --leader-elect; the leader is frozen with SIGSTOP for longer than the 15 s Lease, the other
// takes over, and the frozen one is resumed with a write due at that very moment. It must not write: on waking
// it finds its last renew more than the renew deadline ago (monotonic clock), reports the loss and exits 1.
//
// What is staged so that a resumed leader without the fence WOULD write: the pool's maintenance window opens
// while the leader is frozen (the policy's status then changes: windowOpen false → true), so the frozen
// leader's wake-up for the opening is overdue when it resumes, and its pass writes the policy status at once.
// That write needs no read first (no rotation is anchored and no claim is old enough to be a candidate, so the
// pass lists no Pods), so an unfenced process sends it in the same turn as the timers fire on waking, before
// the answer to its own Lease read could tell it that it lost. (A due rotation start would read the candidate
// node's Pods first and race the Lease read, so it could not make the test fail reliably.) The replica that
// took over is killed before the window opens, so that nothing else writes the policy: any change to it after
// the resume is the frozen replica's.
import { describe, expect, it } from 'vitest';
import { REPORTING_CONTROLLER } from '../../controller/rotation/events.js';
import { ON_DEMAND_AMD64, ourMarkers, poolWithApp } from './helpers/context.js';
import { useController } from './helpers/controller-context.js';
import { leads, leaseHolder } from './helpers/controller-observe.js';
import type { ControllerProcess } from './helpers/controller-process.js';
import { waitFor } from './helpers/k8s.js';
import { eventsV1, getRotationPolicy } from './helpers/noderotation-api.js';
import { minuteAfter, weeklyWindow } from './helpers/windows.js';

const LEASE_MS = 15_000;

/** Resolves once the wall clock has passed `t` (the test's own schedule, not an assertion on timing). */
const until = async (t: number): Promise<void> => {
  while (Date.now() < t) await new Promise((r) => setTimeout(r, Math.min(250, t - Date.now())));
};

describe('a leader paused past its Lease', () => {
  const ctx = useController();
  const { kube, res } = ctx;

  const identity = (c: ControllerProcess): string => c.logs.find((l) => l.msg === 'starting')?.identity as string;

  it('SIGSTOP longer than the Lease, the other takes over, SIGCONT: no write, the loss logged, exit 1', async () => {
    const { ns, pool } = await poolWithApp(kube, res, 'e2e-pause', ON_DEMAND_AMD64);
    const a = await ctx.controller(ns, ['--leader-elect']);
    await waitFor('the first replica to lead', () => leads(a), { intervalMs: 250 });
    const b = await ctx.controller(ns, ['--leader-elect']);
    expect(await leads(b)).toBe(false);

    // The window opens at `opens` (a whole minute, 50–110 s ahead): far enough for the status write, then the
    // freeze 40 s before it, the takeover and b's removal to come first.
    const opens = minuteAfter(Date.now(), 50_000);
    const policyName = `${pool}-policy`;
    await ctx.policy(policyName, {
      nodePools: [pool],
      maintenanceWindows: [weeklyWindow(opens, opens + 30 * 60_000, 'UTC')],
      // The node is minutes old: no candidate, so the window's opening changes the status and nothing else.
      ageThreshold: '24h',
      surge: { readyTimeout: '5m', cooldownAfter: '30m' },
    });
    const summary = async () => {
      const p = await getRotationPolicy(kube, policyName);
      const pools = (p?.status?.nodePools ?? []) as { name: string; windowOpen?: boolean }[];
      return {
        rv: (p?.metadata as { resourceVersion?: string } | undefined)?.resourceVersion,
        status: p?.status,
        pool: pools.find((x) => x.name === pool),
      };
    };
    await waitFor(
      'the leader to write the status: window closed',
      async () => (await summary()).pool?.windowOpen === false,
      {
        timeoutMs: 30_000,
        intervalMs: 250,
        describe: () => a.tail(10),
      },
    );

    // Freeze the leader 40 s before the window opens; the other replica takes over once the Lease expires.
    await until(opens - 40_000);
    const pausedAt = Date.now();
    a.pause();
    await waitFor('the other replica to take over', () => leads(b), {
      timeoutMs: 30_000,
      intervalMs: 250,
      describe: () => b.tail(10),
    });
    expect(await leaseHolder(kube, ns)).toBe(identity(b));
    expect(Date.now() - pausedAt).toBeGreaterThanOrEqual(LEASE_MS - 2_000);
    // From here on only the frozen replica could write this policy.
    await b.kill();
    if (Date.now() > opens - 3_000) throw new Error('the takeover came too late for this schedule: rerun');
    const before = await summary();
    expect(before.pool?.windowOpen).toBe(false);

    // Resume it once the window has opened: its wake-up for the opening is overdue, a write is due now.
    await until(opens + 3_000);
    const logsBefore = a.logs.length;
    a.resume();
    const resumedAt = Date.now();
    expect(await a.exited()).toBe(1);
    const after = a.logs.slice(logsBefore);

    // Its own record: the loss, measured from its last renew (not from the Lease), and no write attempted but
    // refused ones.
    const lost = after.find((l) => l.msg === 'lost leadership; exiting so that only the leader writes');
    expect(lost, a.tail(20)).toBeDefined();
    expect(String(lost?.why)).toMatch(/renew/);
    for (const l of after.filter((x) => x.msg.startsWith('write failed')))
      expect(String(l.error)).toMatch(/not sent: leadership could have lapsed/);
    expect(after.filter((l) => l.msg === 'became the leader')).toEqual([]);

    // The apiserver's record: the policy it would have written is as it was before the resume (the window is
    // open now, so any status write would have changed it), no Event of its after the resume, no marker of ours.
    const now = await summary();
    expect(now.rv).toBe(before.rv);
    expect(now.status).toEqual(before.status);
    const late = (await eventsV1(kube, 'default')).filter(
      (e) =>
        e.reportingController === REPORTING_CONTROLLER &&
        e.reportingInstance === identity(a) &&
        Date.parse(e.eventTime ?? '') >= resumedAt - 1_000,
    );
    expect(late).toEqual([]);
    expect(ourMarkers((await kube.getNodePool(pool))?.metadata.annotations)).toEqual([]);
    for (const c of await kube.nodeClaims(pool)) expect(ourMarkers(c.metadata.annotations)).toEqual([]);
    for (const n of await kube.nodes(pool)) expect(ourMarkers(n.metadata?.annotations)).toEqual([]);
    // It led and wrote before the freeze: a writer, then not one.
    expect(a.logs.slice(0, logsBefore).some((l) => l.msg === 'became the leader')).toBe(true);
  });
});
