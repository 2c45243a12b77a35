// Rotation ahead of a freeze (issue 22 item 3), and the freezes in the forceful-fallback rule: a claim whose
// forced deadline falls inside a scheduled freeze is due by the freeze's start under spec.preFreezeRotation —
// a candidate that much earlier, in the windows before the freeze — and a window a freeze covers is never the
// "later chance" that keeps a claim from falling back.
import { describe, expect, it } from 'vitest';
import {
  claim,
  DAY,
  events,
  HOUR,
  IN_WINDOW,
  iso,
  nodePool,
  OUT_OF_WINDOW,
  policy,
  snapshot,
  workload,
} from '../../test/support/fixtures.js';
import type { RotationPolicySpec } from '../generated/api-types.js';
import { policyParams } from '../derivation/params.js';
import { dueBy, eligibleFrom } from './candidates.js';
import { decide } from './decide.js';
import type { Action } from './types.js';

const notes = (actions: Action[]): string[] => actions.flatMap((a) => (a.type === 'event' ? [a.message] : []));
const freeze = (start: number, end: number) => ({ start: iso(start), end: iso(end), reason: 'black friday' });
const E = 336 * HOUR; // the fixture claims' expireAfter

describe('dueBy and eligibility under preFreezeRotation', () => {
  // Daily windows (P = 1 day) and an explicit ageThreshold of 10 days: age 230h is not a candidate yet.
  const daily: RotationPolicySpec['maintenanceWindows'] = [
    { timezone: 'UTC', days: ['Mon', 'Tue', 'Wed', 'Thu', 'Fri', 'Sat', 'Sun'], start: '00:00', end: '23:00' },
  ];
  const created = IN_WINDOW - 230 * HOUR; // deadline IN_WINDOW + 106h
  const c = claim('c', { createdAt: created }).claim;
  const tRot = (15 * 60 + 3600 + 120) * 1000;
  const spec = (over: Partial<RotationPolicySpec>): RotationPolicySpec => ({
    ...policy().spec,
    maintenanceWindows: daily,
    ageThreshold: '240h',
    ...over,
  });
  it.each([
    {
      reason: 'off by default: due at the deadline even inside a freeze',
      spec: spec({ freezes: [freeze(IN_WINDOW + 20 * HOUR, IN_WINDOW + 130 * HOUR)] }),
      due: created + E,
    },
    {
      reason: 'on, the deadline inside a freeze: due at the freeze start',
      spec: spec({
        preFreezeRotation: { enabled: true },
        freezes: [freeze(IN_WINDOW + 20 * HOUR, IN_WINDOW + 130 * HOUR)],
      }),
      due: IN_WINDOW + 20 * HOUR,
    },
    {
      reason: 'on, overlapping freezes: due at the start of their union',
      spec: spec({
        preFreezeRotation: { enabled: true },
        freezes: [
          freeze(IN_WINDOW + 100 * HOUR, IN_WINDOW + 130 * HOUR),
          freeze(IN_WINDOW + 10 * HOUR, IN_WINDOW + 101 * HOUR),
        ],
      }),
      due: IN_WINDOW + 10 * HOUR,
    },
    {
      reason: 'on, the deadline at a freeze end (half-open): due at the deadline',
      spec: spec({ preFreezeRotation: { enabled: true }, freezes: [freeze(IN_WINDOW, created + E)] }),
      due: created + E,
    },
    {
      reason: 'on, the deadline before the freeze: due at the deadline',
      spec: spec({ preFreezeRotation: { enabled: true }, freezes: [freeze(created + E + 1, created + E + DAY)] }),
      due: created + E,
    },
  ])('$reason', ({ spec: s, due }) => {
    const p = policyParams(s);
    expect(dueBy(c, p)).toBe(due);
    // The same chances before it is due: eligibility moves with it (explicit A, and auto).
    expect(eligibleFrom(c, p, DAY / 1000)).toBe(created + 240 * HOUR - (created + E - due));
    const auto = policyParams({ ...s, ageThreshold: 'auto' });
    expect(eligibleFrom(c, auto, DAY / 1000)).toBe(due - (auto.minRotationChances * DAY + tRot));
  });

  it.each([
    {
      reason: 'a yearly freeze over the deadline: due at its occurrence, 00:00 New York on 8 January',
      recurring: [{ name: 'y', timezone: 'America/New_York', yearly: { from: '01-08', to: '01-12' } }],
      freezes: [],
      due: Date.parse('2027-01-08T05:00:00Z'),
    },
    {
      reason: 'a one-off freeze that ends where a monthly occurrence begins: due at the one-off start (touching joins)',
      recurring: [{ name: 'm', timezone: 'UTC', monthly: { from: 9, to: 12 } }],
      freezes: [freeze(Date.parse('2027-01-07T00:00:00Z'), Date.parse('2027-01-09T00:00:00Z'))],
      due: Date.parse('2027-01-07T00:00:00Z'),
    },
    {
      reason: 'a recurring freeze whose occurrences miss the deadline: due at the deadline',
      recurring: [{ name: 'm', timezone: 'UTC', monthly: { from: 20, to: 25 } }],
      freezes: [],
      due: created + E,
    },
  ])('recurring freezes: $reason', ({ recurring, freezes, due }) => {
    // The deadline: IN_WINDOW + 106h = 2027-01-10T04:00Z.
    const p = policyParams(
      spec({
        preFreezeRotation: { enabled: true },
        freezes,
        recurringFreezes: recurring as RotationPolicySpec['recurringFreezes'],
      }),
    );
    expect(dueBy(c, p)).toBe(due);
  });

  it('a claim due inside a freeze starts in the window before it, and only under the option', () => {
    const fz = [freeze(IN_WINDOW + 20 * HOUR, IN_WINDOW + 130 * HOUR)];
    const claims = [claim('c', { createdAt: created })];
    const at = (over: Partial<RotationPolicySpec>) =>
      decide(snapshot({ policies: [policy({ ...spec(over), nodePools: ['general'] })], claims }), IN_WINDOW);
    const off = at({ freezes: fz });
    expect(events(off.actions)).toEqual([]);
    expect(off.pools[0]?.report.idle).toBe('no candidate');
    expect(events(at({ freezes: fz, preFreezeRotation: { enabled: true } }).actions)).toEqual(['RotationStarted']);
  });
});

describe('forceful fallback with freezes', () => {
  // IN_WINDOW is Wednesday 03:00 in Tokyo (windows Wed and Sat 02:00–06:00); the next window opens Saturday.
  const deadline = IN_WINDOW + 4 * DAY; // Sunday: Saturday's window would still be a chance
  const claims = [claim('c', { createdAt: deadline - E })];
  const fallback = { forcefulFallback: { enabled: true } };
  it.each([
    { reason: 'no freeze: Saturday is a later chance, graceful', freezes: [], pre: false, want: 'RotationStarted' },
    {
      reason: 'a freeze over Saturday: this is the last window, surge-less now',
      freezes: [freeze(IN_WINDOW + HOUR, IN_WINDOW + 10 * DAY)],
      pre: false,
      want: 'ForcefulFallback',
      note: /last maintenance window before its deadline/,
    },
    {
      reason: 'a freeze over Saturday that ends before it opens: still a chance, graceful',
      freezes: [freeze(IN_WINDOW + HOUR, IN_WINDOW + 2 * DAY)],
      pre: false,
      want: 'RotationStarted',
    },
    {
      reason: 'under preFreezeRotation, due at a freeze start less than t_rot away: surge-less now',
      freezes: [freeze(IN_WINDOW + HOUR, IN_WINDOW + 10 * DAY)],
      pre: true,
      want: 'ForcefulFallback',
      note: /could not finish before the freeze its deadline falls inside/,
    },
  ])('$reason', ({ freezes, pre, want, note }) => {
    const p = policy({ freezes, surge: fallback, ...(pre ? { preFreezeRotation: { enabled: true } } : {}) });
    const d = decide(snapshot({ policies: [p], claims }), IN_WINDOW);
    expect(events(d.actions)).toEqual([want]);
    if (note) expect(notes(d.actions).join('\n')).toMatch(note);
  });

  it('a window that never closes: a pool held by its headroom wakes one tick before a freeze it cannot outlive', () => {
    const always = policy({
      maintenanceWindows: [
        { timezone: 'UTC', days: ['Mon', 'Tue', 'Wed', 'Thu', 'Fri', 'Sat', 'Sun'], start: '00:00', end: '00:00' },
      ],
      ageThreshold: '1h',
      surge: fallback,
      freezes: [freeze(OUT_OF_WINDOW + 2 * HOUR, OUT_OF_WINDOW + 10 * DAY)],
    });
    const full = { ...nodePool({}, { limits: { cpu: '4' } }), status: { resources: { cpu: '4' } } };
    const s = snapshot({
      policies: [always],
      pool: full,
      claims: [claim('c', { createdAt: OUT_OF_WINDOW + 5 * DAY - E })],
      pods: [workload('w', 'node-c', { cpu: '1' })],
    });
    const idle = decide(s, OUT_OF_WINDOW).pools[0];
    expect(idle?.report.idle).toMatch(/^NoSurgeHeadroom/);
    const wake = OUT_OF_WINDOW + 2 * HOUR - 60_000; // the next tick is the freeze's first instant
    expect(idle?.requeueAt).toBe(wake);
    expect(events(decide(s, wake - 1).actions)).toEqual([]);
    expect(events(decide(s, wake).actions)).toEqual(['ForcefulFallback']);
  });
});
