// The soak's plan: its own figures agree with the engine's derivation (explain), the race is tight as the issue
// asks, the window model agrees with the engine's schedule, and the chaos schedule is a function of the seed.
import { describe, expect, it } from 'vitest';
import { explain } from '../../src/explain/explain.js';
import { occurrences } from '../../src/schedule/windows.js';
import { CHAOS_KINDS, chaosSchedule, figuresOf, nodePoolOf, openIntervals, policyOf, soakPlan } from './plan.js';

const OPTIONS = { minutes: 60, pools: 3, seed: 7, chaos: true };
const NOW = Date.parse('2026-12-01T10:07:00Z');

describe('the soak plan', () => {
  const plan = soakPlan(OPTIONS);

  it('its figures are the engine’s, and the expected findings only', () => {
    const result = explain(
      {
        policies: plan.pools.map((p) => ({ ...policyOf(p), source: { file: 'soak', document: 1 } })),
        plans: [],
        nodePools: plan.pools.map(nodePoolOf),
        nodeClaims: [],
      },
      NOW,
    );
    for (const p of plan.pools) {
      const engine = result.report.nodePools.find((x) => x.nodePool === p.name);
      const ours = figuresOf(p);
      expect(engine, p.name).toMatchObject({
        windowPeriodSeconds: ours.periodS,
        rotationBoundSeconds: ours.rotationBoundS,
        leadTimeSeconds: ours.leadTimeS,
        ageThresholdSeconds: ours.ageThresholdS,
        guaranteedChances: ours.chances,
      });
      const reasons = engine?.findings.map((f) => f.reason).sort();
      const expected = {
        tight: [],
        windowed: ['AggressiveAgeThreshold'],
        fallback: ['AggressiveAgeThreshold', 'WeakenedChances'],
      };
      expect(reasons, p.name).toEqual(expected[p.role]);
    }
  });

  it('the race is tight: lead time is more than half of a tight node’s life, and t_rot within the lead', () => {
    for (const p of plan.pools.filter((x) => x.role === 'tight')) {
      const f = figuresOf(p);
      expect(f.leadTimeS / p.expireAfterS).toBeGreaterThan(0.5);
      expect(f.leadTimeS).toBeLessThanOrEqual(1.5 * (p.expireAfterS - f.ageThresholdS));
      // At least five rotations an hour: each of a pool's nodes is a candidate from age A on.
      expect((p.replicas * 3600) / p.expireAfterS).toBeGreaterThanOrEqual(5);
    }
  });

  it('its model of the windows opens and closes where the engine’s schedule does', () => {
    for (const p of plan.pools) {
      const from = NOW - 86_400_000;
      const to = NOW + 86_400_000;
      const engine = occurrences(p.policy.maintenanceWindows, from, to);
      const ours = openIntervals(p, from, to);
      for (let t = from; t < to; t += 7 * 60_000 + 13_000) {
        const inEngine = engine.some((w) => w.start <= t && t < w.end);
        const inOurs = ours.some((w) => w.start <= t && t < w.end);
        expect(inOurs, `${p.name} at ${new Date(t).toISOString()}`).toBe(inEngine);
      }
    }
  });

  it('the chaos schedule: a function of the seed, one fault at a time, within the chaos period', () => {
    const a = chaosSchedule(OPTIONS, 3000);
    expect(chaosSchedule(OPTIONS, 3000)).toEqual(a);
    expect(chaosSchedule({ ...OPTIONS, seed: 8 }, 3000)).not.toEqual(a);
    for (let i = 1; i < a.length; i++) {
      const prev = a[i - 1] as (typeof a)[number];
      expect((a[i] as (typeof a)[number]).at).toBeGreaterThanOrEqual(prev.at + prev.forS + 40);
    }
    expect(Math.max(...a.map((e) => e.at + e.forS))).toBeLessThanOrEqual(3000);
    // Every kind in each round: an hour's run meets each at least once.
    expect(new Set(a.map((e) => e.kind))).toEqual(new Set(CHAOS_KINDS));
    expect(soakPlan({ ...OPTIONS, chaos: false }).chaos).toEqual([]);
  });
});
