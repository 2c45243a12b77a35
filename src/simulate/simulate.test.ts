import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { Scenario } from '../generated/api-types.js';
import { DAYS } from '../schedule/windows.js';
import { simulate } from './simulate.js';

const WED_SAT = [{ timezone: 'Asia/Tokyo', days: ['Wed', 'Sat'], start: '02:00', end: '06:00' }];

function scenario(o: {
  count?: number;
  fallback?: boolean;
  mode?: 'controller' | 'baseline';
  duration?: string;
  failure?: number;
  windows?: unknown[];
  seed?: number;
  fleet?: { count: number; age: string }[];
}): Scenario {
  return {
    apiVersion: 'noderotation.io/v1alpha1',
    kind: 'Scenario',
    metadata: { name: 'test' },
    spec: {
      start: '2027-01-04T00:00:00Z',
      duration: o.duration ?? '1440h',
      mode: o.mode ?? 'controller',
      nodePool: { name: 'general', expireAfter: '336h', terminationGracePeriod: '1h' },
      policy: {
        maintenanceWindows: (o.windows ?? WED_SAT) as never,
        minRotationChances: 2,
        surge: { forcefulFallback: { enabled: o.fallback ?? false } },
      },
      fleet: o.fleet ?? [{ count: o.count ?? 1, age: '0h' }],
      behaviour: { provisioningTime: '5m', drainTime: '10m', surgeFailureRate: o.failure ?? 0, seed: o.seed ?? 1 },
    },
  } as unknown as Scenario;
}

describe('simulation of the worked example and of batches', () => {
  it('N ≤ K·C (20 = 2 × 10): every node rotated gracefully, none expired, all in a window, one at a time', () => {
    const r = simulate(scenario({ count: 20 }));
    expect(r.figures).toMatchObject({ guaranteedChances: 2, capacityPerOccurrence: 10 });
    expect(r).toMatchObject({ nodes: 20, forcefulExpirations: 0, startsOutsideWindow: 0, maxConcurrentRotations: 1 });
    expect(r.rotations.graceful).toBeGreaterThanOrEqual(20);
    expect(r.timeline.filter((n) => n.origin === 'initial').every((n) => n.end === 'rotated')).toBe(true);
  });

  it('N > K·C (25): exactly the surplus of the first generation reaches Forceful Expiration', () => {
    const r = simulate(scenario({ count: 25, duration: '400h' }));
    expect(r.forcefulExpirations).toBe(5);
    expect(r.timeline.filter((n) => n.origin === 'initial' && n.end === 'expired')).toHaveLength(5);
  });

  it('with forcefulFallback the surplus becomes in-window fallbacks instead', () => {
    const off = simulate(scenario({ count: 25, duration: '400h' }));
    const on = simulate(scenario({ count: 25, duration: '400h', fallback: true }));
    expect(on.rotations.forcefulFallback).toBeGreaterThan(0);
    expect(on.forcefulExpirations).toBeLessThan(off.forcefulExpirations);
    expect(on.startsOutsideWindow).toBe(0);
    expect(on.maxConcurrentRotations).toBe(1);
  });

  it('a batch too large even for the fallback shows the limit: the last window is full, the rest expire', () => {
    const r = simulate(scenario({ count: 60, duration: '400h', fallback: true }));
    const initial = r.timeline.filter((n) => n.origin === 'initial');
    const fallbacks = initial.filter((n) => n.end === 'fallback').length;
    const graceful = initial.filter((n) => n.end === 'rotated').length;
    // First window: 10 graceful starts; the last window: surge-less, one per drain + cooldown (4h / 20m = 12).
    expect(graceful).toBe(10);
    expect(fallbacks).toBe(12);
    expect(initial.filter((n) => n.end === 'expired')).toHaveLength(60 - 10 - 12);
  });

  it('the baseline (no controller) force-expires every node at its deadline', () => {
    const r = simulate(scenario({ count: 20, mode: 'baseline' }));
    const initial = r.timeline.filter((n) => n.origin === 'initial');
    expect(initial.every((n) => n.end === 'expired' && n.drainStartedAt === null)).toBe(true);
    expect(r.rotations).toEqual({ graceful: 0, forcefulFallback: 0, failedAttempts: 0 });
    expect(r.forcefulExpirations).toBe(80); // 20 nodes × 4 lifetimes of 14d in 60d
  });

  it('failed surges are retried and counted', () => {
    const r = simulate(scenario({ count: 10, failure: 0.4, seed: 3 }));
    expect(r.rotations.failedAttempts).toBeGreaterThan(0);
    expect(r.maxConcurrentRotations).toBe(1);
    expect(r.startsOutsideWindow).toBe(0);
  });

  it('a placeholder preempted every time is recreated until readyTimeout, then the attempt fails', () => {
    const s = scenario({ count: 2, duration: '400h' });
    s.spec.behaviour = { ...s.spec.behaviour, preemptionRate: 1 };
    const r = simulate(s);
    expect(r.rotations.graceful).toBe(0);
    expect(r.rotations.failedAttempts).toBeGreaterThan(0);
    expect(r.forcefulExpirations).toBe(2);
    expect(r.startsOutsideWindow).toBe(0);
  });

  it('is deterministic: the same scenario (and seed) gives byte-identical output', () => {
    const s = scenario({ count: 15, failure: 0.3, fallback: true, seed: 9 });
    expect(JSON.stringify(simulate(s))).toBe(JSON.stringify(simulate(structuredClone(s))));
  });
});

describe('property: the engine keeps its promises under random schedules', () => {
  const hhmm = fc.integer({ min: 0, max: 23 }).map((h) => `${String(h).padStart(2, '0')}:00`);
  const windows = fc.array(
    fc.record({
      timezone: fc.constantFrom('UTC', 'Asia/Tokyo', 'America/New_York', 'Europe/Berlin'),
      days: fc.uniqueArray(fc.constantFrom(...DAYS), { minLength: 1, maxLength: 7 }),
      start: hhmm,
      end: hhmm,
    }),
    { minLength: 1, maxLength: 3 },
  );

  it('never starts outside a window, never two at once; a lone node with A > 0 and no failures never expires', () => {
    fc.assert(
      fc.property(
        windows,
        fc.integer({ min: 1, max: 12 }),
        fc.boolean(),
        fc.double({ min: 0, max: 0.5, noNaN: true }),
        fc.integer({ min: 0, max: 300 }),
        (w, count, fallback, failure, ageHours) => {
          const r = simulate(
            scenario({ windows: w, fallback, failure, duration: '720h', fleet: [{ count, age: `${ageHours}h` }] }),
          );
          expect(r.startsOutsideWindow).toBe(0);
          expect(r.maxConcurrentRotations).toBeLessThanOrEqual(1);
          const lone = simulate(scenario({ windows: w, duration: '720h', fleet: [{ count: 1, age: '0h' }] }));
          if ((lone.figures.ageThresholdSeconds ?? 0) > 0) expect(lone.forcefulExpirations).toBe(0);
        },
      ),
      { numRuns: 25 },
    );
  });
});
