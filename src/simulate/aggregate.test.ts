// The per-day sums behind the fleet-scale report, and the deterministic sample of rows.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { Scenario } from '../generated/api-types.js';
import { dailySeries, endingOf, localDays, nodesAtRisk, sampleLives } from './aggregate.js';
import { simulate, type NodeLife, type SimulationResult } from './simulate.js';

const START = Date.parse('2027-01-04T00:00:00Z');
const H = 3_600_000;
const at = (hours: number): string => new Date(START + hours * H).toISOString().replace('.000Z', 'Z');

function life(o: Partial<NodeLife> & { node?: string }): NodeLife {
  return {
    node: 'n',
    origin: 'initial',
    createdAt: at(0),
    deadline: null,
    rotationStartedAt: null,
    drainStartedAt: null,
    attempts: 0,
    endedAt: null,
    end: 'running',
    ...o,
  };
}

function result(timeline: NodeLife[], o: Partial<SimulationResult> = {}): SimulationResult {
  return {
    scenario: 't',
    mode: 'controller',
    start: at(0),
    end: at(72),
    nodes: timeline.length,
    rotations: { graceful: 0, forcefulFallback: 0, failedAttempts: 0 },
    forcefulExpirations: 0,
    forcefulExpirationsInFreeze: 0,
    startsOutsideWindow: 0,
    maxConcurrentRotations: 0,
    figures: {} as SimulationResult['figures'],
    windows: [],
    freezes: [],
    timezones: ['UTC'],
    timeline,
    ...o,
  };
}

describe('endingOf: which day a life ends on, and as what', () => {
  it.each([
    {
      reason: 'a graceful rotation counts when its old node starts draining, not when the drain ends',
      l: life({ end: 'rotated', rotationStartedAt: at(23), drainStartedAt: at(23.5), endedAt: at(24.5) }),
      expected: { kind: 'graceful', at: START + 23.5 * H },
    },
    {
      reason: 'a fallback counts at its deletion, inside the window',
      l: life({ end: 'fallback', rotationStartedAt: at(2), drainStartedAt: at(2), endedAt: at(2.2) }),
      expected: { kind: 'fallback', at: START + 2 * H },
    },
    {
      reason: 'an expiration counts at the deadline Karpenter reached',
      l: life({ end: 'expired', deadline: at(30), endedAt: at(30.2) }),
      expected: { kind: 'expired', at: START + 30 * H },
    },
    {
      reason: 'a node already past its deadline at the start expires at the start',
      l: life({ end: 'expired', createdAt: at(-400), deadline: at(-10), endedAt: at(0.2) }),
      expected: { kind: 'expired', at: START },
    },
    { reason: 'a node still running ends in no day', l: life({}), expected: null },
    {
      reason: 'a reaped surge node is neither a rotation nor an expiration',
      l: life({ end: 'reaped', origin: 'surge', endedAt: at(3) }),
      expected: null,
    },
  ])('$reason', ({ l, expected }) => {
    expect(endingOf(l, START)).toEqual(expected);
  });
});

describe('nodesAtRisk: deadline before the next chance in a window', () => {
  const windows = [
    { start: START + 10 * H, end: START + 14 * H },
    { start: START + 34 * H, end: START + 38 * H },
  ];
  const END = START + 72 * H;
  it.each([
    { reason: 'deadline before the next window opens', l: life({ deadline: at(9) }), t: 0, risk: 1 },
    {
      reason: 'deadline inside the next window: it can still be rotated',
      l: life({ deadline: at(12) }),
      t: 0,
      risk: 0,
    },
    {
      reason: 'in an open window the chance is now, so a deadline later in it is not at risk',
      l: life({ deadline: at(13) }),
      t: 11,
      risk: 0,
    },
    {
      reason: 'right after a window closed, a deadline before the next one is at risk',
      l: life({ deadline: at(20) }),
      t: 15,
      risk: 1,
    },
    {
      reason: 'past the last window of the run only a deadline inside the run counts',
      l: life({ deadline: at(80) }),
      t: 40,
      risk: 0,
    },
    { reason: 'past the last window, a deadline in the run', l: life({ deadline: at(60) }), t: 40, risk: 1 },
    {
      reason: 'a node whose rotation has started is in hand',
      l: life({ deadline: at(9), rotationStartedAt: at(1) }),
      t: 2,
      risk: 0,
    },
    { reason: 'a node not yet created', l: life({ deadline: at(9), createdAt: at(5) }), t: 2, risk: 0 },
    {
      reason: 'a node already gone',
      l: life({ deadline: at(9), end: 'reaped', endedAt: at(1) }),
      t: 2,
      risk: 0,
    },
    { reason: 'a node that never expires', l: life({ deadline: null }), t: 0, risk: 0 },
  ])('$reason', ({ l, t, risk }) => {
    expect(nodesAtRisk([l], windows, START + t * H, END, false)).toBe(risk);
  });

  it('without a controller (baseline) no window is a chance: every deadline in the run is at risk', () => {
    expect(nodesAtRisk([life({ deadline: at(12) })], windows, START, END, true)).toBe(1);
    expect(nodesAtRisk([life({ deadline: at(80) })], windows, START, END, true)).toBe(0);
  });
});

describe('dailySeries', () => {
  it('puts each ending on its day, the run’s very end on the last day, and measures the windows per day', () => {
    const s = dailySeries(
      result(
        [
          life({ node: 'a', end: 'rotated', drainStartedAt: at(1), endedAt: at(1.2), deadline: at(100) }),
          life({ node: 'b', end: 'expired', deadline: at(72), endedAt: at(72) }),
          life({ node: 'c', end: 'fallback', drainStartedAt: at(25), endedAt: at(25.2) }),
          life({ node: 'd', deadline: at(71.9) }),
        ],
        { windows: [{ start: at(22), end: at(26) }] },
      ),
    );
    expect(s.days.map((d) => [d.start, d.graceful, d.fallback, d.expired, d.windowSeconds])).toEqual([
      ['2027-01-04T00:00:00Z', 1, 0, 0, 2 * 3600],
      ['2027-01-05T00:00:00Z', 0, 1, 0, 2 * 3600],
      ['2027-01-06T00:00:00Z', 0, 0, 1, 0],
    ]);
    // d: the window open at the start of the second day is its chance; on the third no window is left and its
    // deadline is inside the run: at risk. b's deadline is the run's end itself, not before it.
    expect(s.days.map((d) => d.atRisk)).toEqual([0, 0, 1]);
    // d is still there after its deadline: Karpenter's expiry of it was under way when the run ended.
    expect(s.removingAtEnd).toBe(1);
  });

  it('counts a node whose removal started but did not finish by the end apart from the days', () => {
    const s = dailySeries(result([life({ drainStartedAt: at(71.9) }), life({ deadline: at(71.95) })]));
    expect(s.days.reduce((n, d) => n + d.graceful + d.fallback + d.expired, 0)).toBe(0);
    expect(s.removingAtEnd).toBe(2);
  });

  it('a partial last day is a day of its own', () => {
    expect(dailySeries(result([], { end: at(49) })).days).toHaveLength(3);
  });

  it('in a zone, the days are its calendar days: an ending on the local day it falls on', () => {
    // 2027-01-04T00:00Z is 19:00 on the 3rd in New York: a first day of 5 hours, then whole local days.
    const s = dailySeries(
      result([
        life({ node: 'a', end: 'rotated', drainStartedAt: at(4), endedAt: at(4.2) }),
        life({ node: 'b', end: 'rotated', drainStartedAt: at(6), endedAt: at(6.2) }),
      ]),
      'America/New_York',
    );
    expect(s.days.map((d) => [d.date, d.start, d.graceful])).toEqual([
      ['2027-01-03', '2027-01-04T00:00:00Z', 1],
      ['2027-01-04', '2027-01-04T05:00:00Z', 1],
      ['2027-01-05', '2027-01-05T05:00:00Z', 0],
      ['2027-01-06', '2027-01-06T05:00:00Z', 0],
    ]);
  });
});

describe('localDays: a run cut into the calendar days of a zone', () => {
  const hours = (days: { start: number }[], end: number) =>
    days.map((d, i) => ((days[i + 1]?.start ?? end) - d.start) / H);

  it.each([
    {
      reason: 'New York in spring: the day of the change is 23 hours, the days after start at 04:00Z',
      zone: 'America/New_York',
      from: '2027-03-13T05:00:00Z',
      to: '2027-03-16T04:00:00Z',
      dates: ['2027-03-13', '2027-03-14', '2027-03-15'],
      lengths: [24, 23, 24],
    },
    {
      reason: 'New York in autumn: 25 hours',
      zone: 'America/New_York',
      from: '2027-11-06T04:00:00Z',
      to: '2027-11-09T05:00:00Z',
      dates: ['2027-11-06', '2027-11-07', '2027-11-08'],
      lengths: [24, 25, 24],
    },
    {
      reason: 'Berlin, starting mid-day: the first day is cut at the start',
      zone: 'Europe/Berlin',
      from: '2027-03-27T12:00:00Z',
      to: '2027-03-29T12:00:00Z',
      dates: ['2027-03-27', '2027-03-28', '2027-03-29'],
      lengths: [11, 23, 14],
    },
    {
      reason: 'UTC: whole days from a midnight start, a partial last day of its own',
      zone: 'UTC',
      from: '2027-01-04T00:00:00Z',
      to: '2027-01-06T01:00:00Z',
      dates: ['2027-01-04', '2027-01-05', '2027-01-06'],
      lengths: [24, 24, 1],
    },
  ])('$reason', ({ zone, from, to, dates, lengths }) => {
    const days = localDays(Date.parse(from), Date.parse(to), zone);
    expect(days.map((d) => d.date)).toEqual(dates);
    expect(hours(days, Date.parse(to))).toEqual(lengths);
  });
});

describe('sampleLives: the rows of a large run', () => {
  const kinds: NodeLife['end'][] = ['rotated', 'expired', 'fallback', 'running'];
  const timeline = (counts: Partial<Record<NodeLife['end'], number>>): NodeLife[] =>
    Object.entries(counts)
      .flatMap(([end, n]) =>
        Array.from({ length: n }, (_, i) => life({ node: `${end}-${String(i).padStart(5, '0')}`, end: end as never })),
      )
      .sort((a, b) => a.node.localeCompare(b.node));

  it.each([
    {
      reason: 'a timeline within the budget is drawn whole',
      counts: { rotated: 5 },
      size: 10,
      expected: { rotated: 5 },
    },
    {
      reason: 'a handful of expirations among thousands of rotations all show',
      counts: { rotated: 5000, expired: 3 },
      size: 100,
      expected: { rotated: 97, expired: 3 },
    },
    {
      reason: 'half the budget is shared evenly, the rest in proportion',
      counts: { rotated: 900, expired: 100 },
      size: 100,
      // 25 each, then 50 × 875/950 = 46 and 50 × 75/950 = 3, and the one left over to the rarer kind.
      expected: { rotated: 71, expired: 29 },
    },
    { reason: 'a budget of zero draws nothing', counts: { rotated: 50 }, size: 0, expected: {} },
  ])('$reason', ({ counts, size, expected }) => {
    const s = sampleLives(timeline(counts), size);
    const got: Record<string, number> = {};
    for (const l of s) got[l.end] = (got[l.end] ?? 0) + 1;
    expect(got).toEqual(expected);
  });

  it('exactly the budget, no life twice, in timeline order, and the same lives every time', () => {
    fc.assert(
      fc.property(
        fc.array(fc.constantFrom(...kinds), { minLength: 1, maxLength: 400 }),
        fc.integer({ min: 0, max: 120 }),
        (ends, size) => {
          const t = ends.map((end, i) => life({ node: `n${String(i).padStart(4, '0')}`, end }));
          const s = sampleLives(t, size);
          expect(s).toHaveLength(Math.min(size, t.length));
          expect(new Set(s).size).toBe(s.length);
          expect(s.map((l) => t.indexOf(l))).toEqual([...s.map((l) => t.indexOf(l))].sort((a, b) => a - b));
          expect(sampleLives(t, size)).toEqual(s);
        },
      ),
    );
  });
});

const WINDOW_DAYS = ['Mon', 'Tue', 'Wed', 'Thu', 'Fri', 'Sat', 'Sun'] as const;

describe('the per-day counts add up to the simulation', () => {
  it('graceful exactly; fallbacks and expirations up to the removals still under way at the end', () => {
    fc.assert(
      fc.property(
        fc.record({
          count: fc.integer({ min: 1, max: 30 }),
          ageHours: fc.integer({ min: 0, max: 400 }),
          days: fc.subarray([...WINDOW_DAYS], { minLength: 1 }),
          startHour: fc.integer({ min: 0, max: 20 }),
          hours: fc.integer({ min: 1, max: 3 }),
          durationHours: fc.integer({ min: 30, max: 900 }),
          fallback: fc.boolean(),
          baseline: fc.boolean(),
          failure: fc.constantFrom(0, 0.3),
        }),
        (o) => {
          const hh = (h: number) => `${String(h).padStart(2, '0')}:00`;
          const scenario = {
            apiVersion: 'noderotation.io/v1alpha1',
            kind: 'Scenario',
            metadata: { name: 'prop' },
            spec: {
              start: '2027-01-04T00:00:00Z',
              duration: `${o.durationHours}h`,
              mode: o.baseline ? 'baseline' : 'controller',
              nodePool: { name: 'general', expireAfter: '168h', terminationGracePeriod: '1h' },
              policy: {
                maintenanceWindows: [
                  { timezone: 'UTC', days: o.days, start: hh(o.startHour), end: hh(o.startHour + o.hours) },
                ],
                surge: { forcefulFallback: { enabled: o.fallback } },
              },
              fleet: [{ count: o.count, age: `${o.ageHours}h` }],
              behaviour: { surgeFailureRate: o.failure, seed: 3 },
            },
          } as unknown as Scenario;
          const r = simulate(scenario);
          const s = dailySeries(r);
          const sum = (k: 'graceful' | 'fallback' | 'expired') => s.days.reduce((n, d) => n + d[k], 0);
          expect(s.days).toHaveLength(Math.ceil(o.durationHours / 24));
          expect(sum('graceful')).toBe(r.rotations.graceful);
          for (const [k, total] of [
            ['fallback', r.rotations.forcefulFallback],
            ['expired', r.forcefulExpirations],
          ] as const) {
            expect(sum(k)).toBeLessThanOrEqual(total);
            expect(total - sum(k)).toBeLessThanOrEqual(s.removingAtEnd);
          }
          // No node is ever at risk in more numbers than there are nodes alive.
          for (const d of s.days) expect(d.atRisk).toBeLessThanOrEqual(r.timeline.length);
        },
      ),
      { numRuns: 40 },
    );
  });
});
