import fc from 'fast-check';
import { DateTime } from 'luxon';
import { describe, expect, it } from 'vitest';
import type { MaintenanceWindow, RotationPolicySpec } from '../generated/api-types.js';
import type { NodeClaim } from '../karpenter/types.js';
import { policyParams, type PolicyParams } from '../derivation/params.js';
import { windowFigures, type Interval } from '../schedule/windows.js';
import { forecast, forecastJson, freezeIntervals, type ClaimForecast } from './forecast.js';

const MIN = 60_000;
const HOUR = 60 * MIN;
const at = (iso: string): number => Date.parse(iso);
const NOW = at('2027-01-04T00:00:00Z'); // a Monday
const DAYS = ['Mon', 'Tue', 'Wed', 'Thu', 'Fri', 'Sat', 'Sun'] as const;

const claim = (name: string, created: number, expireAfter: string, tgp = '10m'): NodeClaim => ({
  apiVersion: 'karpenter.sh/v1',
  kind: 'NodeClaim',
  metadata: { name, creationTimestamp: new Date(created).toISOString().replace('.000Z', 'Z') },
  spec: { expireAfter, terminationGracePeriod: tgp },
});

const params = (windows: MaintenanceWindow[], extra: Partial<RotationPolicySpec> = {}): PolicyParams =>
  policyParams({
    maintenanceWindows: windows,
    minRotationChances: 2,
    surge: { readyTimeout: '20m', cooldownAfter: '10m', drainEstimate: '20m', provisioningEstimate: '10m' },
    ...extra,
  } as RotationPolicySpec);

const run = (
  p: PolicyParams,
  claims: NodeClaim[],
  now = NOW,
  freezes: Interval[] = [],
  expectedRotationSeconds = 1800,
): ClaimForecast[] =>
  forecast({
    claims,
    params: p,
    periodSeconds: windowFigures(p.windows, now).periodSeconds,
    expectedRotationSeconds,
    freezes,
    now,
  });

/**
 * The independent model: whether the union of weekly windows is open at an instant, read from the wall clock with
 * luxon (no occurrence lists), and a scan of the calendar on a grid — every whole minute and the millisecond after
 * it (every input is in whole minutes; a claim is a candidate strictly after its eligibility instant, so the
 * engine's first start is one millisecond after a whole minute). At each grid instant, in order: drop the claims
 * whose deadline has come (Karpenter expires them), and if the pool is free, the union open and no freeze
 * covers the instant, start the earliest-deadline claim that is a candidate by then.
 */
function openAt(windows: readonly MaintenanceWindow[], t: number): boolean {
  return windows.some((w) => {
    const local = DateTime.fromMillis(t, { zone: w.timezone });
    const mod = local.hour * 60 + local.minute;
    const [sh, sm] = w.start.split(':').map(Number) as [number, number];
    const [eh, em] = w.end.split(':').map(Number) as [number, number];
    const s = sh * 60 + sm;
    const e = eh * 60 + em;
    const today = (w.days as string[]).includes(DAYS[local.weekday - 1] as string);
    const yesterday = (w.days as string[]).includes(DAYS[(local.weekday + 5) % 7] as string);
    if (e > s) return today && s <= mod && mod < e;
    return (today && mod >= s) || (yesterday && mod < e);
  });
}

interface ModelClaim {
  name: string;
  created: number;
  E: number; // ms
  tRot: number; // ms
}

function model(
  windows: MaintenanceWindow[],
  claims: ModelClaim[],
  o: { K: number; P: number; A: number | null; service: number; freezes: Interval[]; now: number; pre?: boolean },
): Map<string, { start: number | null; atRisk: boolean; margin: number | null }> {
  const out = new Map<string, { start: number | null; atRisk: boolean; margin: number | null }>();
  // Under preFreezeRotation a deadline inside a freeze is due at the freeze's start, and the claim is a candidate
  // that much earlier.
  const due = (c: ModelClaim): number => {
    const d = c.created + c.E;
    return (o.pre && o.freezes.find((f) => f.start <= d && d < f.end)?.start) || d;
  };
  const eligible = (c: ModelClaim): number =>
    o.A !== null ? c.created + o.A - (c.created + c.E - due(c)) : due(c) - (o.K * o.P + c.tRot);
  let pending = [...claims].sort(
    (a, b) => a.created + a.E - (b.created + b.E) || a.created - b.created || (a.name < b.name ? -1 : 1),
  );
  const end = Math.max(...claims.map((c) => c.created + c.E));
  let free = o.now;
  const openCache = new Map<number, boolean>();
  for (let m = Math.floor(o.now / MIN) * MIN; m <= end && pending.length > 0; m += MIN) {
    for (const t of [m, m + 1]) {
      if (t < o.now) continue;
      for (const c of pending.filter((x) => due(x) <= t)) out.set(c.name, { start: null, atRisk: true, margin: null });
      pending = pending.filter((x) => due(x) > t);
      if (t < free) continue;
      if (!openCache.has(m)) openCache.set(m, openAt(windows, m));
      if (!openCache.get(m) || o.freezes.some((f) => f.start <= t && t < f.end)) continue;
      const pick = pending.find((c) => eligible(c) < t);
      if (!pick) continue;
      pending = pending.filter((x) => x !== pick);
      const margin = due(pick) - (t + pick.tRot);
      out.set(pick.name, { start: t, atRisk: margin < 0, margin: margin / 1000 });
      free = t + o.service;
    }
  }
  for (const c of pending) out.set(c.name, { start: null, atRisk: true, margin: null });
  return out;
}

describe('forecast against the independent calendar-scan model', () => {
  // Hours away from DST transitions (those are covered by the table below), so the wall-clock reading of the
  // model has no skipped or repeated wall time to interpret.
  const hhmm = fc
    .tuple(fc.integer({ min: 4, max: 23 }), fc.constantFrom(0, 15, 30, 45))
    .map(([h, m]) => `${String(h).padStart(2, '0')}:${String(m).padStart(2, '0')}`);
  const windowArb = fc
    .record({
      timezone: fc.constantFrom('UTC', 'Europe/Berlin', 'America/New_York', 'Asia/Tokyo', 'Australia/Sydney'),
      days: fc.subarray([...DAYS], { minLength: 1 }),
      start: hhmm,
      end: hhmm,
    })
    .filter((w) => w.start !== w.end)
    .map((w) => w as MaintenanceWindow);
  const claimArb = fc.record({
    createdMin: fc.integer({ min: -6 * 24 * 60, max: 0 }), // minutes before now
    hours: fc.integer({ min: 24, max: 8 * 24 }),
    tgpMin: fc.integer({ min: 1, max: 90 }),
  });

  it('plans the same start, margin and risk for every claim', () => {
    fc.assert(
      fc.property(
        fc.array(windowArb, { minLength: 1, maxLength: 3 }),
        fc.array(claimArb, { minLength: 1, maxLength: 6 }),
        fc.option(fc.integer({ min: 1, max: 6 * 24 }), { nil: null }), // explicit age threshold (hours)
        fc.integer({ min: 1, max: 3 }), // K
        fc.integer({ min: 10, max: 240 }), // t_rot_est minutes
        fc.option(fc.tuple(fc.integer({ min: 0, max: 5 * 24 * 60 }), fc.integer({ min: 1, max: 3 * 24 * 60 })), {
          nil: null,
        }),
        fc.integer({ min: 0, max: 7 * 24 * 60 }), // now offset, minutes
        fc.boolean(), // preFreezeRotation
        (windows, cs, aHours, K, estMin, frz, nowMin, pre) => {
          const now = NOW + nowMin * MIN;
          const freezes = frz === null ? [] : [{ start: now + frz[0] * MIN, end: now + (frz[0] + frz[1]) * MIN }];
          const p = params(windows, {
            minRotationChances: K,
            ...(aHours === null ? {} : { ageThreshold: `${aHours}h` }),
            // The freeze is the policy's, scheduled: the one preFreezeRotation looks ahead to.
            freezes: freezes.map((f) => ({
              start: new Date(f.start).toISOString(),
              end: new Date(f.end).toISOString(),
            })),
            preFreezeRotation: { enabled: pre },
          });
          const P = windowFigures(p.windows, now).periodSeconds * 1000;
          const claims = cs.map((c, i) => claim(`c${i}`, now + c.createdMin * MIN, `${c.hours}h`, `${c.tgpMin}m`));
          const got = forecast({
            claims,
            params: p,
            periodSeconds: P / 1000,
            expectedRotationSeconds: estMin * 60,
            freezes,
            now,
          });
          const want = model(
            windows,
            cs.map((c, i) => ({
              name: `c${i}`,
              created: now + c.createdMin * MIN,
              E: c.hours * HOUR,
              tRot: (20 + c.tgpMin + 2) * MIN, // readyTimeout + tGP + 120 s buffer
            })),
            { K, P, A: aHours === null ? null : aHours * HOUR, service: (estMin + 10) * MIN, freezes, now, pre },
          );
          for (const f of got) {
            const w = want.get(f.nodeClaim);
            expect({ start: f.plannedStart, atRisk: f.atRisk, margin: f.marginSeconds }).toEqual(w);
            if (f.plannedStart !== null) {
              expect(f.plannedWindow?.start).toBeLessThanOrEqual(f.plannedStart);
              expect(f.plannedWindow?.end).toBeGreaterThan(f.plannedStart);
            }
          }
          // Deterministic order: by deadline, then name.
          const keys = got.map((f) => [f.deadline ?? Infinity, f.nodeClaim] as const);
          expect(keys).toEqual([...keys].sort((a, b) => a[0] - b[0] || (a[1] < b[1] ? -1 : a[1] > b[1] ? 1 : 0)));
        },
      ),
      { numRuns: 60 },
    );
  }, 120_000);
});

describe('forecast: cases', () => {
  // Wed 02:00–06:00 UTC; t_rot = 20m + 10m + 2m = 32m; service = 30m + 10m cooldown.
  const wed = [{ timezone: 'UTC', days: ['Wed'], start: '02:00', end: '06:00' }] as MaintenanceWindow[];
  const cases: {
    reason: string;
    windows: MaintenanceWindow[];
    claims: NodeClaim[];
    now?: number;
    freezes?: Interval[];
    spec?: Partial<RotationPolicySpec>;
    want: Partial<ClaimForecast>[];
  }[] = [
    {
      reason: 'already past eligible: planned at the next opening, margin = deadline − (start + t_rot)',
      windows: wed,
      spec: { ageThreshold: '24h' },
      claims: [claim('a', at('2027-01-01T00:00:00Z'), '240h')],
      want: [
        {
          nodeClaim: 'a',
          deadline: at('2027-01-11T00:00:00Z'),
          eligibleAt: at('2027-01-02T00:00:00Z'),
          plannedWindow: { start: at('2027-01-06T02:00:00Z'), end: at('2027-01-06T06:00:00Z') },
          plannedStart: at('2027-01-06T02:00:00Z'),
          marginSeconds: (at('2027-01-11T00:00:00Z') - at('2027-01-06T02:32:00Z')) / 1000,
          atRisk: false,
        },
      ],
    },
    {
      // Found by the property below (seed 813532494): after skipping an expired claim the cursor went back to now.
      reason:
        'two eligible at a window opening, the first already past its deadline: the other starts after its ' +
        'eligibility, never at the opening itself',
      windows: [{ timezone: 'UTC', days: ['Sat'], start: '05:00', end: '04:00' }] as MaintenanceWindow[],
      spec: { ageThreshold: '98h', minRotationChances: 1 },
      now: at('2027-01-05T03:00:00Z'),
      claims: [
        claim('late', at('2027-01-05T03:00:00Z'), '24h', '1m'),
        claim('due', at('2027-01-05T03:00:00Z'), '99h', '1m'),
      ],
      want: [
        { nodeClaim: 'late', plannedStart: null, atRisk: true },
        { nodeClaim: 'due', eligibleAt: at('2027-01-09T05:00:00Z'), plannedStart: at('2027-01-09T05:00:00Z') + 1 },
      ],
    },
    {
      reason: 'expireAfter Never: no deadline, never planned, never at risk, sorted last',
      windows: wed,
      claims: [claim('z', at('2027-01-01T00:00:00Z'), 'Never'), claim('a', at('2027-01-01T00:00:00Z'), '240h')],
      spec: { ageThreshold: '24h' },
      want: [
        { nodeClaim: 'a', atRisk: false },
        { nodeClaim: 'z', deadline: null, eligibleAt: null, plannedStart: null, marginSeconds: null, atRisk: false },
      ],
    },
    {
      reason: 'its last window falls in a freeze: no window left before the deadline, so at risk',
      windows: wed,
      spec: { ageThreshold: '24h' },
      claims: [claim('a', at('2027-01-01T00:00:00Z'), '240h')],
      freezes: [{ start: at('2027-01-05T00:00:00Z'), end: at('2027-01-08T00:00:00Z') }],
      want: [{ nodeClaim: 'a', plannedWindow: null, plannedStart: null, marginSeconds: null, atRisk: true }],
    },
    {
      reason: 'a freeze ending mid-window: the start moves to the freeze end, inside the same occurrence',
      windows: wed,
      spec: { ageThreshold: '24h' },
      claims: [claim('a', at('2027-01-01T00:00:00Z'), '240h')],
      freezes: [{ start: at('2027-01-05T00:00:00Z'), end: at('2027-01-06T03:00:00Z') }],
      want: [{ nodeClaim: 'a', plannedStart: at('2027-01-06T03:00:00Z'), atRisk: false }],
    },
    {
      reason: 'the only window leaves less than t_rot before the deadline: planned there, negative margin, at risk',
      windows: wed,
      spec: { ageThreshold: '24h' },
      claims: [claim('a', at('2027-01-01T02:20:00Z'), '120h')], // deadline Wed 02:20
      want: [{ nodeClaim: 'a', plannedStart: at('2027-01-06T02:00:00Z'), marginSeconds: -12 * 60, atRisk: true }],
    },
    {
      reason: 'a start that finishes exactly at the deadline has room: margin 0, not at risk',
      windows: wed,
      spec: { ageThreshold: '24h' },
      claims: [claim('a', at('2027-01-01T02:32:00Z'), '120h')], // deadline Wed 02:32
      want: [{ nodeClaim: 'a', plannedStart: at('2027-01-06T02:00:00Z'), marginSeconds: 0, atRisk: false }],
    },
    {
      reason: 'serialised: one at a time with t_rot_est + cooldownAfter between starts, the 7th waits a week',
      windows: wed,
      spec: { ageThreshold: '24h' },
      claims: ['a', 'b', 'c', 'd', 'e', 'f', 'g'].map((n) => claim(n, at('2027-01-01T00:00:00Z'), '480h')),
      want: [
        { nodeClaim: 'a', plannedStart: at('2027-01-06T02:00:00Z') },
        { nodeClaim: 'b', plannedStart: at('2027-01-06T02:40:00Z') },
        { nodeClaim: 'c', plannedStart: at('2027-01-06T03:20:00Z') },
        { nodeClaim: 'd', plannedStart: at('2027-01-06T04:00:00Z') },
        { nodeClaim: 'e', plannedStart: at('2027-01-06T04:40:00Z') },
        { nodeClaim: 'f', plannedStart: at('2027-01-06T05:20:00Z') },
        { nodeClaim: 'g', plannedStart: at('2027-01-13T02:00:00Z'), atRisk: false },
      ],
    },
    {
      reason: 'DST: a 04:00–05:00 Europe/Berlin window on the spring-forward Sunday is planned by the wall clock',
      windows: [{ timezone: 'Europe/Berlin', days: ['Sun'], start: '04:00', end: '05:00' }] as MaintenanceWindow[],
      now: at('2027-03-22T00:00:00Z'),
      spec: { ageThreshold: '24h' },
      claims: [claim('a', at('2027-03-20T00:00:00Z'), '240h'), claim('b', at('2027-03-20T00:00:00Z'), '240h')],
      // 2027-03-28: CEST (UTC+2) from 01:00 UTC, so 04:00 local is 02:00 UTC (not 03:00 as the week before).
      want: [
        {
          nodeClaim: 'a',
          plannedWindow: { start: at('2027-03-28T02:00:00Z'), end: at('2027-03-28T03:00:00Z') },
          plannedStart: at('2027-03-28T02:00:00Z'),
        },
        { nodeClaim: 'b', plannedStart: at('2027-03-28T02:40:00Z'), atRisk: false },
      ],
    },
    {
      reason:
        'auto age threshold: eligible at deadline − (K·P + t_rot); a candidate already, the window open: planned now',
      windows: [{ timezone: 'UTC', days: [...DAYS], start: '00:00', end: '12:00' }] as MaintenanceWindow[],
      claims: [claim('a', at('2027-01-01T00:00:00Z'), '120h')],
      // P = 24h, K = 2: eligible at Jan 6 00:00 − 48h − 32m = Jan 3 23:28, already past at now (Jan 4 00:00).
      want: [{ nodeClaim: 'a', eligibleAt: at('2027-01-03T23:28:00Z'), plannedStart: NOW, atRisk: false }],
    },
  ];
  for (const c of cases) {
    it(c.reason, () => {
      const got = run(params(c.windows, c.spec), c.claims, c.now ?? NOW, c.freezes ?? []);
      expect(got.length).toBe(c.want.length);
      c.want.forEach((w, i) => expect(got[i]).toMatchObject(w));
    });
  }
});

describe('freezeIntervals', () => {
  it('takes the scheduled freezes and the annotation (frozen from now), and fails closed on an unreadable one', () => {
    expect(
      freezeIntervals([{ start: '2027-01-05T00:00:00Z', end: '2027-01-06T00:00:00Z' }], '2027-01-04T06:00:00Z', NOW),
    ).toEqual([
      {
        start: NOW,
        end: at('2027-01-04T06:00:00Z'),
        label: 'the noderotation.io/freeze annotation',
        name: 'NodePool : noderotation.io/freeze',
        reason: 'frozen by annotation',
      },
      {
        start: at('2027-01-05T00:00:00Z'),
        end: at('2027-01-06T00:00:00Z'),
        label: 'spec.freezes[0]',
        name: 'RotationPolicy : spec.freezes[0]',
        reason: '',
      },
    ]);
    const closed = { start: NOW, end: Infinity, label: 'an unreadable freeze' };
    expect(freezeIntervals([], 'soon', NOW)).toMatchObject([closed]);
    expect(freezeIntervals([{ start: 'x', end: 'y' }], undefined, NOW)).toMatchObject([closed]);
    expect(freezeIntervals([], '2026-01-01T00:00:00Z', NOW)).toEqual([]);
  });
});

describe('recurring freezes in the forecast', () => {
  const wed = [{ timezone: 'UTC', days: ['Wed'], start: '02:00', end: '06:00' }] as MaintenanceWindow[];
  it('names the recurring freeze a deadline falls in, and plans no start inside an occurrence', () => {
    // A monthly freeze on the 6th (a Wednesday in January 2027): the window of the 6th is frozen.
    const recurring: RotationPolicySpec['recurringFreezes'] = [
      { name: 'month-close', timezone: 'UTC', monthly: { from: 6, to: 6 } },
    ];
    const p = params(wed, { ageThreshold: '24h', recurringFreezes: recurring });
    const freezes = freezeIntervals(p.freezes, undefined, NOW, p.recurringFreezes);
    const claims = [
      claim('in', at('2027-01-01T00:00:00Z'), '132h'), // deadline Jan 6 12:00, inside the freeze
      claim('out', at('2027-01-01T00:00:00Z'), '300h'), // deadline Jan 13 12:00
    ];
    const got = run(p, claims, NOW, freezes);
    expect(got.map((f) => [f.nodeClaim, f.deadlineInFreeze, f.plannedStart])).toEqual([
      ['in', 'month-close', null],
      ['out', null, at('2027-01-13T02:00:00Z')],
    ]);
    expect(forecastJson(got[0] as ClaimForecast).deadlineInFreeze).toBe('month-close');
    expect(got[0]?.atRisk).toBe(true);
  });

  it('reads occurrences up to the horizon it is given (a deadline two years out)', () => {
    const recurring = [{ name: 'peak', timezone: 'UTC', yearly: { from: '01-10', to: '01-20' } }];
    const far = freezeIntervals([], undefined, NOW, recurring, at('2029-12-31T00:00:00Z'));
    expect(far.map((f) => `${f.label}@${new Date(f.start).toISOString().slice(0, 10)}`)).toEqual([
      'peak@2027-01-10',
      'peak@2028-01-10',
      'peak@2029-01-10',
    ]);
  });
});
