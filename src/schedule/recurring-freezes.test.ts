import fc from 'fast-check';
import rrulePackage from 'rrule';
import { describe, expect, it } from 'vitest';
import type { RecurringFreeze } from '../generated/api-types.js';
import { intlWall } from '../../test/support/intl-clock.js';
import { freezeOccurrences, MAX_OCCURRENCES, recurringFreezeOccurrences } from './recurring-freezes.js';
import { probe } from '../../test/support/probe.js';

const T = (iso: string): number => Date.parse(iso);
const iso = (ms: number): string => new Date(ms).toISOString().replace(':00.000Z', 'Z');
const spans = (f: RecurringFreeze, from: string, to: string): string[] =>
  freezeOccurrences(f, T(from), T(to)).map((o) => `${iso(o.start)}/${iso(o.end)}`);

// The independent model: the local calendar date of an instant, read through Intl (not through zone.ts).
function localDate(zone: string, ms: number): { y: number; m: number; d: number; minute: number } {
  const w = intlWall(zone, ms);
  return { y: w.year, m: w.month, d: w.day, minute: w.hour * 60 + w.minute };
}
const daysIn = (y: number, m: number): number => new Date(Date.UTC(y, m, 0)).getUTCDate();
const ordinal = (y: number, m: number, d: number): number => Date.UTC(y, m - 1, d) / 86_400_000;

/** Is the local day of `ms` inside a yearly freeze? Day by day, from the schema's words. */
function yearlyModel(spec: { from: string; to: string }, zone: string, ms: number): boolean {
  const { y, m, d } = localDate(zone, ms);
  const day = (year: number, md: string): number => {
    const [mm, dd] = md.split('-').map(Number) as [number, number];
    return ordinal(year, mm, Math.min(dd, daysIn(year, mm)));
  };
  const today = ordinal(y, m, d);
  if (spec.to >= spec.from) return today >= day(y, spec.from) && today <= day(y, spec.to);
  return today >= day(y, spec.from) || today <= day(y, spec.to);
}

/** Is the local day of `ms` inside a monthly freeze? Each of this month's and last month's occurrences. */
function monthlyModel(spec: { from: number; to: number }, zone: string, ms: number): boolean {
  const { y, m, d } = localDate(zone, ms);
  const resolve = (day: number, yy: number, mm: number): number =>
    day < 0 ? daysIn(yy, mm) + 1 + day : Math.min(day, daysIn(yy, mm));
  const today = ordinal(y, m, d);
  for (const back of [0, 1]) {
    const [yy, mm] = m - back < 1 ? [y - 1, 12] : [y, m - back];
    const first = ordinal(yy, mm, resolve(spec.from, yy, mm));
    const [ny, nm] = mm === 12 ? [yy + 1, 1] : [yy, mm + 1];
    const sameMonth = resolve(spec.to, yy, mm) >= resolve(spec.from, yy, mm);
    const last = sameMonth ? ordinal(yy, mm, resolve(spec.to, yy, mm)) : ordinal(ny, nm, resolve(spec.to, ny, nm));
    if (today >= first && today <= last) return true;
  }
  return false;
}

const inside = (occ: { start: number; end: number }[], ms: number): boolean =>
  occ.some((o) => o.start <= ms && ms < o.end);

const ZONES = ['America/New_York', 'Europe/Berlin', 'Australia/Sydney', 'UTC'];

describe('recurring freezes: occurrences as instants', () => {
  it.each([
    {
      reason: 'Black Friday to Cyber Monday in New York (EST, -05:00)',
      f: { name: 'bf', timezone: 'America/New_York', yearly: { from: '11-27', to: '11-30' } },
      from: '2026-01-01T00:00:00Z',
      to: '2027-01-01T00:00:00Z',
      want: ['2026-11-27T05:00Z/2026-12-01T05:00Z'],
    },
    {
      reason: 'a year-end freeze wraps over the new year (both years overlapping the span)',
      f: { name: 'ye', timezone: 'UTC', yearly: { from: '12-20', to: '01-05' } },
      from: '2026-06-01T00:00:00Z',
      to: '2027-01-03T00:00:00Z',
      want: ['2026-12-20T00:00Z/2027-01-06T00:00Z'],
    },
    {
      reason: '02-29 is 02-28 in a year without it',
      f: { name: 'leap', timezone: 'UTC', yearly: { from: '02-29', to: '02-29' } },
      from: '2027-01-01T00:00:00Z',
      to: '2028-12-31T00:00:00Z',
      want: ['2027-02-28T00:00Z/2027-03-01T00:00Z', '2028-02-29T00:00Z/2028-03-01T00:00Z'],
    },
    {
      reason: 'a freeze over the spring-forward day in Berlin is an hour short',
      f: { name: 'spring', timezone: 'Europe/Berlin', yearly: { from: '03-29', to: '03-29' } },
      from: '2026-01-01T00:00:00Z',
      to: '2026-12-31T00:00:00Z',
      want: ['2026-03-28T23:00Z/2026-03-29T22:00Z'],
    },
    {
      reason: 'month end: the last two days and the first (negative days, running into the next month)',
      f: { name: 'close', timezone: 'UTC', monthly: { from: -2, to: 1 } },
      from: '2027-01-15T00:00:00Z',
      to: '2027-03-15T00:00:00Z',
      want: ['2027-01-30T00:00Z/2027-02-02T00:00Z', '2027-02-27T00:00Z/2027-03-02T00:00Z'],
    },
    {
      reason: 'day 31 in a shorter month is its last day',
      f: { name: 'd31', timezone: 'UTC', monthly: { from: 31, to: 31 } },
      from: '2027-02-01T00:00:00Z',
      to: '2027-05-01T00:00:00Z',
      want: [
        '2027-02-28T00:00Z/2027-03-01T00:00Z',
        '2027-03-31T00:00Z/2027-04-01T00:00Z',
        '2027-04-30T00:00Z/2027-05-01T00:00Z',
      ],
    },
    {
      reason: 'RRULE: the fourth Friday of November for 96 hours, in Sydney (AEDT, +11:00)',
      f: {
        name: 'bf',
        timezone: 'Australia/Sydney',
        rrule: 'FREQ=YEARLY;BYMONTH=11;BYDAY=4FR',
        start: '2025-11-28T00:00',
        duration: '96h',
      },
      from: '2026-01-01T00:00:00Z',
      to: '2028-01-01T00:00:00Z',
      want: ['2026-11-26T13:00Z/2026-11-30T13:00Z', '2027-11-25T13:00Z/2027-11-29T13:00Z'],
    },
    {
      reason: 'RRULE: a start skipped by spring-forward moves forward by the gap; the duration is absolute',
      f: { name: 'd', timezone: 'America/New_York', rrule: 'FREQ=DAILY', start: '2026-03-06T02:30', duration: '1h' },
      from: '2026-03-07T00:00:00Z',
      to: '2026-03-09T12:00:00Z',
      want: [
        '2026-03-07T07:30Z/2026-03-07T08:30Z',
        '2026-03-08T07:30Z/2026-03-08T08:30Z',
        '2026-03-09T06:30Z/2026-03-09T07:30Z',
      ],
    },
    {
      reason: 'RRULE: COUNT counts the start; nothing after the last',
      f: { name: 'c', timezone: 'UTC', rrule: 'FREQ=WEEKLY;COUNT=2', start: '2026-01-05T00:00', duration: '24h' },
      from: '2026-01-01T00:00:00Z',
      to: '2026-03-01T00:00:00Z',
      want: ['2026-01-05T00:00Z/2026-01-06T00:00Z', '2026-01-12T00:00Z/2026-01-13T00:00Z'],
    },
    {
      reason: 'RRULE: a start the rule does not match is still the first occurrence (DTSTART)',
      f: {
        name: 's',
        timezone: 'UTC',
        rrule: 'FREQ=MONTHLY;BYMONTHDAY=-1;COUNT=2',
        start: '2026-01-10T00:00',
        duration: '1h',
      },
      from: '2026-01-01T00:00:00Z',
      to: '2026-12-01T00:00:00Z',
      want: ['2026-01-10T00:00Z/2026-01-10T01:00Z', '2026-01-31T00:00Z/2026-01-31T01:00Z'],
    },
    {
      reason: 'RRULE: UNTIL ends it (local, inclusive)',
      f: {
        name: 'u',
        timezone: 'UTC',
        rrule: 'FREQ=DAILY;INTERVAL=2;UNTIL=20260105',
        start: '2026-01-01T00:00',
        duration: '1h',
      },
      from: '2025-12-01T00:00:00Z',
      to: '2026-12-01T00:00:00Z',
      want: [
        '2026-01-01T00:00Z/2026-01-01T01:00Z',
        '2026-01-03T00:00Z/2026-01-03T01:00Z',
        '2026-01-05T00:00Z/2026-01-05T01:00Z',
      ],
    },
    {
      reason: 'RRULE: a start decades before the span keeps its INTERVAL alignment (every third week)',
      f: {
        name: 'w',
        timezone: 'UTC',
        rrule: 'FREQ=WEEKLY;INTERVAL=3;BYDAY=MO,FR',
        start: '1990-01-05T10:00',
        duration: '1h',
      },
      from: '2026-12-01T00:00:00Z',
      to: '2026-12-31T00:00:00Z',
      want: [
        '2026-12-04T10:00Z/2026-12-04T11:00Z',
        '2026-12-21T10:00Z/2026-12-21T11:00Z',
        '2026-12-25T10:00Z/2026-12-25T11:00Z',
      ],
    },
    {
      reason: 'an empty span has none',
      f: { name: 'e', timezone: 'UTC', yearly: { from: '01-01', to: '12-31' } },
      from: '2026-01-01T00:00:00Z',
      to: '2026-01-01T00:00:00Z',
      want: [],
    },
  ])('$reason', ({ f, from, to, want }) => {
    expect(spans(f as RecurringFreeze, from, to)).toEqual(want);
  });

  it('a rule that never matches again ends quickly and has only its start', () => {
    const f = {
      name: 'never',
      timezone: 'UTC',
      rrule: 'FREQ=DAILY;BYMONTH=2;BYMONTHDAY=30',
      start: '2026-01-01T00:00',
      duration: '1h',
    };
    const began = performance.now();
    expect(spans(f, '2025-12-01T00:00:00Z', '2027-01-01T00:00:00Z')).toEqual(['2026-01-01T00:00Z/2026-01-01T01:00Z']);
    expect(performance.now() - began).toBeLessThan(5000);
  });

  it('a daily rule over decades is capped at MAX_OCCURRENCES, the first ones', () => {
    const f = { name: 'many', timezone: 'UTC', rrule: 'FREQ=DAILY', start: '2026-01-01T00:00', duration: '1h' };
    const out = freezeOccurrences(f, T('2026-01-01T00:00:00Z'), T('2046-01-01T00:00:00Z'));
    expect(out).toHaveLength(MAX_OCCURRENCES);
    expect(iso(out[0]?.start ?? 0)).toBe('2026-01-01T00:00Z');
  });

  it('several freezes: sorted by start, each named', () => {
    const out = recurringFreezeOccurrences(
      [
        { name: 'b', timezone: 'UTC', monthly: { from: 1, to: 1 }, reason: 'close' },
        { name: 'a', timezone: 'UTC', yearly: { from: '01-01', to: '01-01' } },
      ],
      T('2026-12-15T00:00:00Z'),
      T('2027-02-15T00:00:00Z'),
    );
    expect(out.map((o) => `${o.name}@${iso(o.start)}${o.reason ? ` (${o.reason})` : ''}`)).toEqual([
      'a@2027-01-01T00:00Z',
      'b@2027-01-01T00:00Z (close)',
      'b@2027-02-01T00:00Z (close)',
    ]);
  });
});

const md = fc
  .tuple(fc.integer({ min: 1, max: 12 }), fc.integer({ min: 1, max: 31 }))
  .filter(([m, d]) => d <= [31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31][m - 1]!)
  .map(([m, d]) => `${String(m).padStart(2, '0')}-${String(d).padStart(2, '0')}`);
const monthDay = fc.oneof(fc.integer({ min: 1, max: 31 }), fc.integer({ min: -28, max: -1 }));
// Spans around DST changes in the three zones, year ends and February of a leap year.
const spanStart = fc.constantFrom(
  T('2026-03-01T00:00:00Z'),
  T('2026-10-01T00:00:00Z'),
  T('2026-12-15T00:00:00Z'),
  T('2028-02-01T00:00:00Z'),
  T('2027-03-20T00:00:00Z'),
);

/** Compares the occurrences with the model on a 15-minute grid and at each occurrence's edges. */
function agrees(
  occ: { start: number; end: number }[],
  model: (ms: number) => boolean,
  from: number,
  to: number,
): string | null {
  const probes: number[] = [];
  for (let t = from; t < to; t += 900_000) probes.push(t);
  for (const o of occ) probes.push(o.start, o.start - 60_000, o.end, o.end - 60_000);
  for (const t of probes.filter((p) => p >= from && p < to))
    if (inside(occ, t) !== model(t)) return `${iso(t)}: occurrences say ${inside(occ, t)}, the model ${model(t)}`;
  return null;
}

describe('recurring freezes: against a day-by-day model (Intl), across DST, year ends, Feb 29', () => {
  it('yearly', () => {
    fc.assert(
      fc.property(fc.constantFrom(...ZONES), md, md, spanStart, (zone, from, to, start) => {
        const end = start + 75 * 86_400_000;
        const spec = { from, to };
        const occ = freezeOccurrences({ name: 'y', timezone: zone, yearly: spec }, start, end);
        expect(agrees(occ, (t) => yearlyModel(spec, zone, t), start, end)).toBeNull();
      }),
      { numRuns: 60 },
    );
  });

  it('monthly, negative days and days past a month end included', () => {
    fc.assert(
      fc.property(fc.constantFrom(...ZONES), monthDay, monthDay, spanStart, (zone, from, to, start) => {
        const end = start + 75 * 86_400_000;
        const spec = { from, to };
        const occ = freezeOccurrences({ name: 'm', timezone: zone, monthly: spec }, start, end);
        expect(agrees(occ, (t) => monthlyModel(spec, zone, t), start, end)).toBeNull();
      }),
      { numRuns: 60 },
    );
  });

  it('rrule (weekly by weekdays, every INTERVAL weeks): starts at the local time, lasts the duration', () => {
    const DAYS = ['MO', 'TU', 'WE', 'TH', 'FR', 'SA', 'SU'];
    fc.assert(
      fc.property(
        fc.constantFrom(...ZONES),
        fc.uniqueArray(fc.integer({ min: 0, max: 6 }), { minLength: 1, maxLength: 3 }),
        fc.integer({ min: 1, max: 3 }),
        fc.integer({ min: 0, max: 23 }),
        fc.integer({ min: 1, max: 30 }),
        spanStart,
        (zone, days, interval, hour, hours, start) => {
          const end = start + 60 * 86_400_000;
          const f = {
            name: 'r',
            timezone: zone,
            // The start is a Monday (2025-01-06), so weeks are counted from it (WKST=MO).
            rrule: `FREQ=WEEKLY;INTERVAL=${interval};BYDAY=${days.map((d) => DAYS[d]).join(',')}`,
            start: `2025-01-06T${String(hour).padStart(2, '0')}:00`,
            duration: `${hours}h`,
          };
          const occ = freezeOccurrences(f, start, end);
          // The model: every local minute-of-day `hour`:00 on a matching day starts one (found by scanning).
          const starts: number[] = [];
          for (let t = start - 3 * 86_400_000; t < end; t += 900_000) {
            const l = localDate(zone, t);
            const prev = localDate(zone, t - 900_000);
            const week = Math.floor((ordinal(l.y, l.m, l.d) - ordinal(2025, 1, 6)) / 7);
            const weekday = (new Date(Date.UTC(l.y, l.m - 1, l.d)).getUTCDay() + 6) % 7;
            const due = week % interval === 0 && days.includes(weekday);
            // The first instant whose local time reaches hour:00 on the day (a skipped hour starts after the gap).
            const reached = l.minute >= hour * 60 && (prev.d !== l.d || prev.minute < hour * 60);
            if (due && reached) starts.push(t);
          }
          const model = (t: number): boolean => starts.some((s) => s <= t && t < s + hours * 3_600_000);
          expect(agrees(occ, model, start, end)).toBeNull();
        },
      ),
      { numRuns: 40 },
    );
  });
});

describe('rrule: the shifts that bound the walk change no occurrence', () => {
  it('the same starts as the package walking from a start decades back (UTC, floating)', () => {
    const { RRule } = rrulePackage;
    fc.assert(
      fc.property(
        fc.constantFrom(
          'FREQ=DAILY;INTERVAL=5',
          'FREQ=WEEKLY;INTERVAL=3;BYDAY=MO,FR',
          'FREQ=WEEKLY;INTERVAL=2;WKST=SU;BYDAY=SU,SA',
          'FREQ=MONTHLY;INTERVAL=5;BYMONTHDAY=31,-3',
          'FREQ=MONTHLY;INTERVAL=2;BYDAY=MO,TU,WE,TH,FR;BYSETPOS=-1',
          'FREQ=YEARLY;INTERVAL=3;BYMONTH=11;BYDAY=4FR',
          'FREQ=YEARLY;INTERVAL=7',
          'FREQ=MONTHLY;INTERVAL=4',
        ),
        fc.integer({ min: 0, max: 40 * 365 }),
        fc.integer({ min: 0, max: 23 }),
        (rule, daysAfter, hour) => {
          const start = new Date(Date.UTC(1975, 0, 1 + daysAfter, hour));
          const text = start.toISOString().slice(0, 16);
          const from = T('2026-11-01T00:00:00Z');
          const to = T('2027-03-01T00:00:00Z');
          const got = freezeOccurrences(
            { name: 'r', timezone: 'UTC', rrule: rule, start: text, duration: '1m' },
            from,
            to,
          );
          const lib = new RRule({ ...RRule.parseString(rule), dtstart: start }).between(
            new Date(from - 60_000),
            new Date(to),
            true,
          );
          const want = lib.map((d) => d.getTime()).filter((t) => t + 60_000 > from && t < to);
          expect(got.map((o) => o.start)).toEqual(want);
        },
      ),
      { numRuns: 80 },
    );
  });
});

describe('the rrule package', () => {
  it('is loaded when a rule is first expanded, not when the module is imported (a process of its own)', () => {
    // Imported as an ES module its bundle costs the controller about 5 MiB of resident memory
    // (docs/benchmarks.md); a controller whose policies have no RRULE freeze never loads it.
    const seen = probe<{ before: number; after: number }>([
      "const { createRequire } = await import('node:module');",
      "const m = await import('./src/schedule/recurring-freezes.ts');",
      "const rrule = () => Object.keys(createRequire(import.meta.url).cache).filter((k) => k.includes('/rrule/'));",
      'const before = rrule().length;',
      "m.freezeOccurrences({ name: 'f', timezone: 'UTC', rrule: 'FREQ=YEARLY', start: '2027-11-26T00:00',",
      "  duration: '96h' }, Date.parse('2027-01-01T00:00:00Z'), Date.parse('2028-01-01T00:00:00Z'));",
      'console.log(JSON.stringify({ before, after: rrule().length }));',
    ]);
    expect(seen.before).toBe(0);
    expect(seen.after).toBeGreaterThan(0); // the probe sees the package once it is used: it would see it before
  });
});
