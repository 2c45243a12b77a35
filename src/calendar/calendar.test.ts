// The calendar read back by an independent parser (ical.js): every window occurrence, freeze and forecast event
// it finds is at the instants the project computes (windows.ts, readFreezes, the forecast), across DST
// transitions and the year's end; and the same inputs give the same bytes.
import { readFileSync, writeFileSync } from 'node:fs';
import ICAL from 'ical.js';
import { describe, expect, it } from 'vitest';
import type { Freeze, MaintenanceWindow } from '../generated/api-types.js';
import type { NodePool } from '../karpenter/types.js';
import { occurrences } from '../schedule/windows.js';
import { claim, DAY, HOUR, nodePool, policy, pool } from '../../test/support/fixtures.js';
import { buildCalendar, DEFAULT_HORIZON_DAYS, PAST_DAYS, SPAN_DAYS } from './calendar.js';
import { calendarModel, type CalendarWorld } from './world.js';
import { transitions } from './vtimezone.js';

interface Read {
  uid: string;
  summary: string;
  categories: string[];
  /** The zone of DTSTART when it has a TZID. */
  zone: string | null;
  overrides: number;
  /** Every occurrence (start, end) as epoch ms, up to the rule's end. */
  instants: { start: number; end: number }[];
}

const ms = (t: ICAL.Time): number => t.toJSDate().getTime();

/** The calendar as ical.js reads it: one entry per UID, overrides related to their rule. */
function readBack(ics: string): Read[] {
  ICAL.TimezoneService.reset();
  const cal = ICAL.Component.fromString(ics);
  const events = cal.getAllSubcomponents('vevent').map((v) => new ICAL.Event(v));
  const masters = new Map<string, ICAL.Event>();
  const overrides = new Map<string, number>();
  for (const e of events.filter((x) => !x.isRecurrenceException())) masters.set(e.uid, e);
  for (const e of events.filter((x) => x.isRecurrenceException())) {
    (masters.get(e.uid) as ICAL.Event).relateException(e);
    overrides.set(e.uid, (overrides.get(e.uid) ?? 0) + 1);
  }
  return [...masters.values()].map((e) => {
    const instants: { start: number; end: number }[] = [];
    if (e.isRecurring()) {
      const it = e.iterator();
      for (let n = it.next(); n; n = it.next()) {
        const d = e.getOccurrenceDetails(n) as { startDate: ICAL.Time; endDate: ICAL.Time };
        instants.push({ start: ms(d.startDate), end: ms(d.endDate) });
        if (instants.length > 2000) throw new Error(`${e.uid}: the rule does not end`);
      }
    } else instants.push({ start: ms(e.startDate), end: ms(e.endDate) });
    const start = e.component.getFirstProperty('dtstart');
    return {
      uid: e.uid,
      summary: e.summary,
      categories: (e.component.getFirstProperty('categories')?.getValues() ?? []).map(String),
      zone: (start?.getParameter('tzid') as string | undefined) ?? null,
      overrides: overrides.get(e.uid) ?? 0,
      instants,
    };
  });
}

/** A bare NodePool with annotations. */
const annotated = (name: string, annotations: Record<string, string>): NodePool => ({
  ...pool(name),
  metadata: { name, annotations },
});

const iso = (t: number): string => new Date(t).toISOString().replace('.000Z', 'Z');
const isoPairs = (xs: readonly { start: number; end: number }[]): string[] =>
  xs.map((x) => `${iso(x.start)}/${iso(x.end)}`);

/** A calendar of one NodePool under one policy with these windows (and optionally freezes, claims). */
function calendarOf(windows: MaintenanceWindow[], now: number, world: Partial<CalendarWorld> = {}): string {
  return buildCalendar(
    calendarModel(
      {
        policies: [policy({ maintenanceWindows: windows as [MaintenanceWindow, ...MaintenanceWindow[]] })],
        nodePools: [nodePool()],
        nodeClaims: null,
        ...world,
      },
      now,
      { horizonSeconds: DEFAULT_HORIZON_DAYS * 86400 },
    ),
  );
}

describe('windows: recurring events in their own zone, read back at the project’s own openings', () => {
  const cases: {
    reason: string;
    now: string;
    window: MaintenanceWindow;
    /** Occurrences given as overrides in UTC over the year (the DST nights), exactly. */
    overrides: number;
    /** Occurrences before the rule's first, as events of their own (0 when unset). */
    own?: number;
    /** Some occurrences spelled out, as the project and the parser must both have them. */
    spot: string[];
  }[] = [
    {
      reason: 'Berlin, Sunday 01:00–05:00: 3 h on the last Sunday of March, 5 h on the last Sunday of October',
      now: '2027-03-20T00:00:00Z',
      window: { timezone: 'Europe/Berlin', days: ['Sun'], start: '01:00', end: '05:00' },
      overrides: 2,
      spot: [
        '2027-03-21T00:00:00Z/2027-03-21T04:00:00Z',
        '2027-03-28T00:00:00Z/2027-03-28T03:00:00Z',
        '2027-04-03T23:00:00Z/2027-04-04T03:00:00Z',
        '2027-10-30T23:00:00Z/2027-10-31T04:00:00Z',
        '2027-11-07T00:00:00Z/2027-11-07T04:00:00Z',
      ],
    },
    {
      reason: 'Berlin, Sunday 02:30–04:00: opens in the skipped hour in March (as 03:30), the repeated one in October',
      now: '2027-03-01T00:00:00Z',
      window: { timezone: 'Europe/Berlin', days: ['Sun'], start: '02:30', end: '04:00' },
      overrides: 2,
      spot: [
        '2027-03-28T01:30:00Z/2027-03-28T02:00:00Z',
        '2027-10-31T00:30:00Z/2027-10-31T03:00:00Z',
        '2027-11-07T01:30:00Z/2027-11-07T03:00:00Z',
      ],
    },
    {
      reason: 'Berlin, Saturday 22:00–03:00: crosses midnight into the transition',
      now: '2027-10-20T12:00:00Z',
      window: { timezone: 'Europe/Berlin', days: ['Sat'], start: '22:00', end: '03:00' },
      overrides: 2,
      spot: ['2027-10-30T20:00:00Z/2027-10-31T02:00:00Z', '2027-11-06T21:00:00Z/2027-11-07T02:00:00Z'],
    },
    {
      reason: 'Berlin, Saturday 22:00–02:30: the first occurrence in the span closes in the repeated hour',
      now: '2027-11-06T00:00:00Z',
      window: { timezone: 'Europe/Berlin', days: ['Sat'], start: '22:00', end: '02:30' },
      overrides: 2,
      own: 1,
      spot: ['2027-10-30T20:00:00Z/2027-10-31T00:30:00Z', '2027-11-06T21:00:00Z/2027-11-07T01:30:00Z'],
    },
    {
      reason: 'New York, Sat and Sun 22:00–04:00: the nights into the second Sunday of March and first of November',
      now: '2027-03-10T00:00:00Z',
      window: { timezone: 'America/New_York', days: ['Sat', 'Sun'], start: '22:00', end: '04:00' },
      overrides: 2,
      spot: [
        '2027-03-14T03:00:00Z/2027-03-14T08:00:00Z',
        '2027-03-15T02:00:00Z/2027-03-15T08:00:00Z',
        '2027-11-07T02:00:00Z/2027-11-07T09:00:00Z',
        '2027-11-08T03:00:00Z/2027-11-08T09:00:00Z',
      ],
    },
    {
      reason: 'Berlin, a full day (end == start) on Sundays: 23 h in March, 25 h in October',
      now: '2027-03-25T00:00:00Z',
      window: { timezone: 'Europe/Berlin', days: ['Sun'], start: '00:00', end: '00:00' },
      overrides: 2,
      spot: ['2027-03-27T23:00:00Z/2027-03-28T22:00:00Z', '2027-10-30T22:00:00Z/2027-10-31T23:00:00Z'],
    },
    {
      reason: 'Sydney, southern hemisphere: summer time from the first Sunday of October to the first of April',
      now: '2027-03-30T00:00:00Z',
      window: { timezone: 'Australia/Sydney', days: ['Sun'], start: '01:00', end: '04:00' },
      overrides: 2,
      spot: ['2027-04-03T14:00:00Z/2027-04-03T18:00:00Z', '2027-04-10T15:00:00Z/2027-04-10T18:00:00Z'],
    },
    {
      reason: "a week across the year's end, every day 09:00–17:00 Berlin: Dec 28 to Jan 4 without a gap",
      now: '2026-12-30T12:00:00Z',
      window: {
        timezone: 'Europe/Berlin',
        days: ['Mon', 'Tue', 'Wed', 'Thu', 'Fri', 'Sat', 'Sun'],
        start: '09:00',
        end: '17:00',
      },
      overrides: 0,
      spot: [
        '2026-12-28T08:00:00Z/2026-12-28T16:00:00Z',
        '2026-12-31T08:00:00Z/2026-12-31T16:00:00Z',
        '2027-01-01T08:00:00Z/2027-01-01T16:00:00Z',
        '2027-01-04T08:00:00Z/2027-01-04T16:00:00Z',
      ],
    },
    {
      reason: "the year's end in Tokyo (+09:00, no DST): Thursday 23:00–02:00 crosses into 2027",
      now: '2026-12-28T00:00:00Z',
      window: { timezone: 'Asia/Tokyo', days: ['Thu'], start: '23:00', end: '02:00' },
      overrides: 0,
      spot: ['2026-12-31T14:00:00Z/2026-12-31T17:00:00Z', '2027-01-07T14:00:00Z/2027-01-07T17:00:00Z'],
    },
    {
      reason: 'Kolkata (+05:30): a half-hour offset, no transitions',
      now: '2027-06-01T00:00:00Z',
      window: { timezone: 'Asia/Kolkata', days: ['Tue', 'Fri'], start: '01:15', end: '03:45' },
      overrides: 0,
      spot: ['2027-06-03T19:45:00Z/2027-06-03T22:15:00Z'],
    },
  ];

  it.each(cases)('$reason', ({ now: nowText, window, overrides, own = 0, spot }) => {
    const now = Date.parse(nowText);
    const read = readBack(calendarOf([window], now));
    const windows = read.filter((r) => r.categories.includes('maintenance-window'));
    const rule = windows.find((r) => r.uid === 'window.general.0@noderotation.io') as Read;
    expect([rule.zone, rule.overrides]).toEqual([window.timezone, overrides]);
    // Before the rule's first occurrence, an occurrence it cannot give is an event of its own, in UTC.
    const others = windows.filter((r) => r !== rule);
    expect(others.map((r) => [r.zone, r.instants.length])).toEqual(others.map(() => [null, 1]));
    expect(others.length).toBe(own);
    // The project's openings over the calendar's span, from a week back to a year ahead: every one, once.
    const from = now - PAST_DAYS * DAY;
    const until = now + SPAN_DAYS * DAY;
    const expected = occurrences([window], from, until).filter((o) => o.start >= from && o.start <= until);
    expect(expected.length).toBeGreaterThan(50);
    const all = windows.flatMap((r) => r.instants).sort((a, b) => a.start - b.start);
    expect(isoPairs(all)).toEqual(isoPairs(expected));
    for (const s of spot) expect(isoPairs(all)).toContain(s);
  });

  it("the week across the year's end reads back as eight openings, Dec 28 to Jan 4, none lost or doubled", () => {
    const days = ['Mon', 'Tue', 'Wed', 'Thu', 'Fri', 'Sat', 'Sun'] as const;
    const window: MaintenanceWindow = { timezone: 'Europe/Berlin', days: [...days], start: '23:30', end: '00:30' };
    const read = readBack(calendarOf([window], Date.parse('2026-12-31T12:00:00Z')));
    const week = (read[0]?.instants ?? []).filter(
      (i) => i.start >= Date.parse('2026-12-28T00:00:00+01:00') && i.start < Date.parse('2027-01-05T00:00:00+01:00'),
    );
    expect(isoPairs(week)).toEqual(
      ['12-28', '12-29', '12-30', '12-31', '01-01', '01-02', '01-03', '01-04'].map((d) => {
        const y = d.startsWith('12') ? 2026 : 2027;
        const start = Date.parse(`${y}-${d}T22:30:00Z`);
        return `${iso(start)}/${iso(start + HOUR)}`;
      }),
    );
  });

  it('a window whose first occurrence in the span is a DST night starts its rule at the next plain one', () => {
    // From 2027-03-21 + 7 days back: the first Sunday 01:00–05:00 in the span is the spring-forward night.
    const window: MaintenanceWindow = { timezone: 'Europe/Berlin', days: ['Sun'], start: '01:00', end: '05:00' };
    const now = Date.parse('2027-03-28T12:00:00Z');
    const read = readBack(calendarOf([window], now));
    const night = read.find((r) => r.uid !== 'window.general.0@noderotation.io');
    expect(night?.uid).toBe('window.general.0.20270328T010000@noderotation.io');
    expect(isoPairs(night?.instants ?? [])).toEqual(['2027-03-28T00:00:00Z/2027-03-28T03:00:00Z']);
    const rule = read.find((r) => r.uid === 'window.general.0@noderotation.io') as Read;
    expect(iso(rule.instants[0]?.start ?? NaN)).toBe('2027-04-03T23:00:00Z');
  });

  it('one VTIMEZONE per zone used, with the transitions of the span (Berlin 2027: March 28 and October 31)', () => {
    const now = Date.parse('2027-01-10T00:00:00Z');
    const ics = calendarOf(
      [
        { timezone: 'Europe/Berlin', days: ['Sun'], start: '01:00', end: '05:00' },
        { timezone: 'UTC', days: ['Mon'], start: '01:00', end: '05:00' },
        { timezone: 'Europe/Berlin', days: ['Wed'], start: '01:00', end: '05:00' },
      ],
      now,
    );
    expect([...ics.matchAll(/^TZID:(.*)\r$/gm)].map((m) => m[1])).toEqual(['Europe/Berlin', 'UTC']);
    expect(transitions('Europe/Berlin', now, now + 300 * DAY).map((t) => `${iso(t.at)} ${t.from}→${t.to}`)).toEqual([
      '2027-03-28T01:00:00Z 60→120',
      '2027-10-31T01:00:00Z 120→60',
    ]);
  });
});

describe('freezes: concrete events in UTC at the instants the engine reads', () => {
  const now = Date.parse('2027-01-04T00:00:00Z');
  const cases: { reason: string; pools: NodePool[]; freezes: Freeze[]; expected: string[] }[] = [
    {
      reason: "the annotation (from now) and each spec.freezes entry, one event each, the policy's reasons kept",
      pools: [annotated('general', { 'noderotation.io/freeze': '2027-01-05T06:00:00Z' })],
      freezes: [
        { start: '2027-01-10T00:00:00Z', end: '2027-01-11T00:00:00Z', reason: 'release, v2; 1 day' },
        { start: '2027-02-01T00:00:00+01:00', end: '2027-02-02T00:00:00+01:00' },
      ],
      expected: [
        'Freeze: NodePool general (NodePool general: noderotation.io/freeze) 2027-01-04T00:00:00Z/2027-01-05T06:00:00Z',
        'Freeze: NodePool general (RotationPolicy general: spec.freezes[0]) 2027-01-10T00:00:00Z/2027-01-11T00:00:00Z',
        'Freeze: NodePool general (RotationPolicy general: spec.freezes[1]) 2027-01-31T23:00:00Z/2027-02-01T23:00:00Z',
      ],
    },
    {
      reason: 'a freeze over before the calendar starts, or after its span, is left out; an expired annotation too',
      pools: [annotated('general', { 'noderotation.io/freeze': '2027-01-01T00:00:00Z' })],
      freezes: [
        { start: '2026-12-01T00:00:00Z', end: '2026-12-02T00:00:00Z' },
        { start: '2029-01-01T00:00:00Z', end: '2029-01-02T00:00:00Z' },
      ],
      expected: [],
    },
    {
      reason: 'an unreadable annotation freezes until fixed (the engine fails closed): from now to the span’s end',
      pools: [annotated('general', { 'noderotation.io/freeze': 'tomorrow' })],
      freezes: [],
      expected: [
        'Freeze: NodePool general (NodePool general: unreadable freeze) 2027-01-04T00:00:00Z/2028-01-05T00:00:00Z',
      ],
    },
    {
      reason: "one policy freeze over two NodePools is one event naming both; each pool's annotation its own",
      pools: [pool('a'), annotated('b', { 'noderotation.io/freeze': '2027-01-06T00:00:00Z' })],
      freezes: [{ start: '2027-01-10T00:00:00Z', end: '2027-01-11T00:00:00Z' }],
      expected: [
        'Freeze: NodePool b (NodePool b: noderotation.io/freeze) 2027-01-04T00:00:00Z/2027-01-06T00:00:00Z',
        'Freeze: NodePools a, b (RotationPolicy general: spec.freezes[0]) 2027-01-10T00:00:00Z/2027-01-11T00:00:00Z',
      ],
    },
  ];

  it.each(cases)('$reason', ({ pools, freezes, expected }) => {
    const governing = policy({ freezes, nodePools: pools.map((p) => p.metadata.name) as [string, ...string[]] });
    const ics = buildCalendar(
      calendarModel({ policies: [governing], nodePools: pools, nodeClaims: null }, now, { horizonSeconds: 35 * 86400 }),
    );
    const read = readBack(ics).filter((r) => r.categories.includes('freeze'));
    expect(read.flatMap((r) => r.instants.map((i) => `${r.summary} ${isoPairs([i])[0]}`)).sort()).toEqual(expected);
  });
});

describe('the forecast: planned rotations in their windows, claims at risk at their deadlines', () => {
  const now = Date.parse('2027-01-04T00:00:00Z');
  const window: MaintenanceWindow = { timezone: 'Europe/Berlin', days: ['Sat'], start: '22:00', end: '04:00' };
  const claims = [
    claim('fresh', { createdAt: now - 2 * DAY }).claim,
    claim('due', { createdAt: now - 9 * DAY }).claim,
    // Its deadline comes before the next window: at risk, nothing planned.
    claim('late', { createdAt: now - 13 * DAY - 12 * HOUR }).claim,
    claim('never', { createdAt: now - 100 * DAY, expireAfter: 'Never' }).claim,
  ];
  const world: CalendarWorld = {
    policies: [policy({ maintenanceWindows: [window] })],
    nodePools: [nodePool()],
    nodeClaims: claims,
  };

  it.each([
    {
      reason: 'three days: only the claim whose deadline is in 12 h, at risk',
      days: 3,
      planned: [],
      risky: ['late'],
    },
    {
      reason: "ten days: 'due' at risk too (the next window opens after its deadline), 'fresh' planned",
      days: 10,
      planned: ['fresh'],
      risky: ['late', 'due'],
    },
  ])('$reason: each event reads back at the instants of the forecast', ({ days, planned, risky }) => {
    const model = calendarModel(world, now, { horizonSeconds: days * 86400 });
    const forecast = model.pools[0]?.forecast ?? [];
    const read = readBack(buildCalendar(model));
    const horizonEnd = now + days * DAY;
    const inPlan = forecast.filter((f) => f.plannedStart !== null && f.plannedStart <= horizonEnd);
    expect(inPlan.map((f) => f.nodeClaim)).toEqual(planned);
    expect(read.filter((r) => r.categories.includes('rotation')).map((r) => [r.summary, isoPairs(r.instants)])).toEqual(
      inPlan.map((f) => [
        `Rotation: NodeClaim ${f.nodeClaim} (NodePool general)`,
        isoPairs([f.plannedWindow as { start: number; end: number }]),
      ]),
    );
    const atRisk = forecast.filter((f) => f.atRisk && (f.deadline as number) <= horizonEnd);
    expect(atRisk.map((f) => f.nodeClaim)).toEqual(risky);
    expect(
      read.filter((r) => r.categories.includes('at-risk')).map((r) => [r.summary, r.instants.map((i) => iso(i.start))]),
    ).toEqual(
      atRisk.map((f) => [
        `AT RISK: NodeClaim ${f.nodeClaim} (NodePool general) is expired by Karpenter, not rotated`,
        [iso(f.deadline as number)],
      ]),
    );
  });

  it('without NodeClaims there is no forecast, and the windows are still there', () => {
    const read = readBack(buildCalendar(calendarModel({ ...world, nodeClaims: null }, now, { horizonSeconds: 86400 })));
    expect(read.map((r) => r.categories[1])).toEqual(['maintenance-window']);
  });

  it('a NodePool filter keeps only the NodePools named; ungoverned ones are never in it', () => {
    const two: CalendarWorld = {
      ...world,
      policies: [policy({ maintenanceWindows: [window], nodePools: ['general', 'other'] })],
      nodePools: [
        nodePool(),
        { ...nodePool(), metadata: { name: 'other' } },
        { ...nodePool(), metadata: { name: 'free' } },
      ],
    };
    const all = calendarModel(two, now, { horizonSeconds: 86400 });
    expect(all.pools.map((p) => p.nodePool)).toEqual(['general', 'other']);
    const one = calendarModel(two, now, { horizonSeconds: 86400, nodePools: ['other'] });
    expect(one.pools.map((p) => p.nodePool)).toEqual(['other']);
    expect(readBack(buildCalendar(one))[0]?.summary).toBe('Maintenance window: NodePool other');
  });
});

describe('determinism and the text form', () => {
  const now = Date.parse('2027-03-20T00:00:00Z');
  const world = (reverse: boolean): CalendarWorld => {
    const policies = [
      policy(
        {
          maintenanceWindows: [
            { timezone: 'Europe/Berlin', days: ['Sat', 'Sun'], start: '22:00', end: '04:00' },
            { timezone: 'America/New_York', days: ['Wed'], start: '01:00', end: '03:00' },
          ],
          freezes: [
            { start: '2027-04-01T00:00:00Z', end: '2027-04-03T00:00:00Z', reason: 'Easter; ünïcödé, “quoted”' },
          ],
        },
        'general',
      ),
    ];
    const claims = [
      claim('a', { createdAt: now - 10 * DAY }).claim,
      claim('b', { createdAt: now - 13.9 * DAY }).claim,
      claim('c', { createdAt: now - 5 * DAY }).claim,
    ];
    const pools = [nodePool({ 'noderotation.io/freeze': '2027-03-21T00:00:00Z' })];
    return {
      policies,
      nodePools: reverse ? [...pools].reverse() : pools,
      nodeClaims: reverse ? [...claims].reverse() : claims,
    };
  };
  const build = (reverse: boolean): string =>
    buildCalendar(calendarModel(world(reverse), now, { horizonSeconds: DEFAULT_HORIZON_DAYS * 86400 }));

  it('the same inputs give the same bytes, whatever their order, and the golden file', () => {
    const a = build(false);
    expect(build(true)).toBe(a);
    // UPDATE_GOLDEN=1 writes it anew, for a change of the output that is meant (then review its diff).
    const golden = new URL('./testdata/golden.ics', import.meta.url);
    if (process.env.UPDATE_GOLDEN === '1') writeFileSync(golden, a);
    expect(a).toBe(readFileSync(golden, 'utf8'));
  });

  it('CRLF line ends, no line over 75 octets, continuation lines start with a space, no character split', () => {
    const ics = build(false);
    expect(ics.endsWith('END:VCALENDAR\r\n')).toBe(true);
    expect(ics.replace(/\r\n/g, '').includes('\n')).toBe(false);
    const lines = ics.split('\r\n').slice(0, -1);
    for (const l of lines) expect(Buffer.byteLength(l, 'utf8')).toBeLessThanOrEqual(75);
    expect(lines.some((l) => l.startsWith(' '))).toBe(true);
    // Unfolded, the text is whole: the reason reads back exactly, escapes undone by the parser.
    const freeze = readBack(ics).find((r) => r.uid.startsWith('freeze.RotationPolicy'));
    expect(freeze?.summary).toBe('Freeze: NodePool general (RotationPolicy general: spec.freezes[0])');
    ICAL.TimezoneService.reset();
    const cal = ICAL.Component.fromString(ics);
    const descriptions = cal.getAllSubcomponents('vevent').map((v) => String(v.getFirstPropertyValue('description')));
    expect(descriptions).toContain(
      'No rotation starts in NodePool general from 2027-04-01T00:00:00Z until 2027-04-03T00:00:00Z. Declared by ' +
        'RotationPolicy general: spec.freezes[0]; reason: Easter; ünïcödé, “quoted”.',
    );
  });

  it('every event has a UID unique to it (overrides share their rule’s) and DTSTAMP is the clock', () => {
    const ics = build(false);
    const cal = ICAL.Component.fromString(ics);
    const vevents = cal.getAllSubcomponents('vevent');
    const masters = vevents.filter((v) => !v.hasProperty('recurrence-id')).map((v) => v.getFirstPropertyValue('uid'));
    expect(new Set(masters).size).toBe(masters.length);
    expect(new Set(vevents.map((v) => String(v.getFirstPropertyValue('dtstamp'))))).toEqual(
      new Set(['2027-03-20T00:00:00Z']),
    );
  });
});
