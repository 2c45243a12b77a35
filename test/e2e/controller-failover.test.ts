// Two replicas with --leader-elect, the leader killed with -9 in the middle of a rotation: the standby takes
// over once the Lease expires and finishes that same rotation from the objects — one anchor, one surge claim,
// one placeholder at every sampled instant — and only the replica that leads ever writes.
import { describe, expect, it } from 'vitest';
import { REPORTING_CONTROLLER } from '../../controller/rotation/events.js';
import { A } from '../../src/engine/annotations.js';
import { ON_DEMAND_AMD64, ourMarkers, poolWithApp } from './helpers/context.js';
import { ALWAYS_OPEN, useController } from './helpers/controller-context.js';
import {
  anchorWrites,
  leads,
  leaseHolder,
  logTime,
  PoolSampler,
  reasonsAbout,
  setOf,
  writes,
} from './helpers/controller-observe.js';
import type { ControllerProcess } from './helpers/controller-process.js';
import { metricSum, waitFor } from './helpers/k8s.js';
import { eventsV1 } from './helpers/noderotation-api.js';

describe('leader failover in the middle of a rotation', () => {
  const ctx = useController();
  const { kube, res } = ctx;

  const ledAt = (c: ControllerProcess): number => c.logs.findIndex((l) => l.msg === 'became the leader');

  it('kill -9 the leader mid-rotation: the standby finishes it; one rotation; only the leader writes', async () => {
    const { ns, pool, claim } = await poolWithApp(kube, res, 'e2e-fo', ON_DEMAND_AMD64);
    const name = claim.metadata.name;

    // The first replica leads (it is alone); the second joins as the standby. Nothing is governed yet.
    const first = await ctx.controller(ns, ['--leader-elect']);
    await waitFor('the first replica to lead', () => leads(first), { intervalMs: 250 });
    const standby = await ctx.controller(ns, ['--leader-elect']);
    expect(await leads(standby)).toBe(false);

    const sampler = new PoolSampler(kube, pool, ns, 200);
    ctx.onCleanup(async () => {
      await sampler.stop();
    });
    await ctx.policy(`${pool}-policy`, {
      nodePools: [pool],
      maintenanceWindows: ALWAYS_OPEN,
      ageThreshold: '1s',
      surge: { readyTimeout: '5m', cooldownAfter: '30m' },
    });

    // In flight: anchored, and the placeholder that asks for the surge node exists.
    const phase = await waitFor(
      'the rotation in flight (anchor and placeholder written)',
      async () => {
        const ann = (await kube.getNodePool(pool))?.metadata.annotations ?? {};
        const placeholders = await kube.pods(ns, A.surgeFor);
        return ann[A.activeRotation] === name && placeholders.length === 1
          ? (ann[A.activeRotationState] ?? 'pending')
          : undefined;
      },
      { timeoutMs: 60_000, intervalMs: 200, describe: () => first.tail(20) },
    );
    const killedAt = Date.now();
    await first.kill();

    await waitFor('the standby to take over', () => leads(standby), {
      timeoutMs: 40_000,
      intervalMs: 250,
      describe: () => standby.tail(10),
    });
    const takeover = (Date.now() - killedAt) / 1000;
    await waitFor(
      'the rotation completed by the standby',
      async () => {
        const ann = (await kube.getNodePool(pool))?.metadata.annotations ?? {};
        return (
          (await kube.getNodeClaim(name)) === undefined &&
          !(A.activeRotation in ann) &&
          (await reasonsAbout(kube, pool)).includes('RotationCompleted')
        );
      },
      { timeoutMs: 240_000, intervalMs: 500, describe: () => standby.tail(20) },
    );
    const samples = await sampler.stop();
    console.log(`killed in phase ${phase}; the standby led ${takeover.toFixed(1)} s after the kill`);

    // Never two rotations: one anchor (this candidate), at most one placeholder and one surge claim at every
    // sampled instant, and one surge claim over the whole run.
    expect(samples.length).toBeGreaterThan(20);
    for (const s of samples) {
      expect([undefined, name]).toContain(s.anchor);
      expect(s.placeholders.length).toBeLessThanOrEqual(1);
      expect(s.claims.filter((c) => c !== name).length).toBeLessThanOrEqual(1);
    }
    const surgeClaims = new Set(samples.flatMap((s) => s.claims).filter((c) => c !== name));
    expect([...surgeClaims]).toHaveLength(1);
    expect((await kube.nodeClaims(pool)).map((c) => c.metadata.name)).toEqual([...surgeClaims]);

    // The killed replica led and started the rotation; the standby resumed it (no second start) and finished it.
    expect(ledAt(first)).toBeGreaterThanOrEqual(0);
    expect(writes(first).every((l) => first.logs.indexOf(l) > ledAt(first))).toBe(true);
    expect(anchorWrites(first, pool).map((l) => setOf(l)[A.activeRotation])).toEqual([name]);
    expect(anchorWrites(standby, pool)).toEqual([]);
    const standbyWrites = writes(standby, pool);
    expect(standbyWrites.length, standby.tail(30)).toBeGreaterThan(0);
    // The standby wrote nothing before it led, and it led only after the kill.
    const led = ledAt(standby);
    expect(led).toBeGreaterThanOrEqual(0);
    expect(logTime(standby.logs[led]!)).toBeGreaterThan(killedAt);
    expect(writes(standby).every((l) => standby.logs.indexOf(l) > led)).toBe(true);
    // The old claim was deleted once, by whichever replica got there, after the surge.
    const deletes = [...writes(first), ...writes(standby)].filter((l) => l.action === 'deleteNodeClaim');
    expect(deletes.map((l) => l.nodeclaim)).toEqual([name]);
    if (phase === 'pending') expect(standbyWrites.map((l) => l.action)).toContain('deleteNodeClaim');
    const reasons = await reasonsAbout(kube, pool);
    expect(reasons.filter((r) => r === 'RotationStarted')).toHaveLength(1);
    expect(reasons.filter((r) => r === 'RotationCompleted')).toHaveLength(1);
    expect(
      metricSum(await standby.metrics(), 'noderotation_completed_total', { nodepool: pool, outcome: 'success' }),
    ).toBe(1);
    // The same, as the apiserver saw it: every event of this rotation names the replica that recorded it; the
    // standby's all come after it led.
    const identity = (c: ControllerProcess): unknown => c.logs.find((l) => l.msg === 'starting')?.identity;
    expect(await leaseHolder(kube, ns)).toBe(identity(standby));
    const recorded = (await eventsV1(kube, 'default')).filter(
      (e) => e.reportingController === REPORTING_CONTROLLER && [pool, name].includes(e.regarding?.name ?? ''),
    );
    expect(recorded.find((e) => e.reason === 'RotationStarted')?.reportingInstance).toBe(identity(first));
    expect(recorded.find((e) => e.reason === 'RotationCompleted')?.reportingInstance).toBe(identity(standby));
    for (const e of recorded) {
      expect([identity(first), identity(standby)]).toContain(e.reportingInstance);
      if (e.reportingInstance === identity(standby))
        expect(Date.parse(e.eventTime as string)).toBeGreaterThanOrEqual(logTime(standby.logs[led]!));
    }

    // Nothing of ours is left.
    expect(ourMarkers((await kube.getNodePool(pool))?.metadata.annotations)).toEqual([A.lastRotationAt]);
    for (const n of await kube.nodes(pool)) {
      expect(ourMarkers(n.metadata?.annotations)).toEqual([]);
      expect(n.spec?.unschedulable ?? false).toBe(false);
    }
    for (const c of await kube.nodeClaims(pool)) expect(ourMarkers(c.metadata.annotations)).toEqual([]);
    await waitFor('no placeholder left', async () => (await kube.pods(ns, A.surgeFor)).length === 0);
    expect(await standby.stop()).toBe(0);
    expect([...first.errors(), ...standby.errors()]).toEqual([]);
  });
});
