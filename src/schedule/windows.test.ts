import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { MaintenanceWindow } from '../generated/api-types.js';
import { DAYS, inWindow, occurrences, TICK_SECONDS, windowFigures } from './windows.js';
import { offsetMinutes, wallToInstant } from './zone.js';

const at = (iso: string): number => Date.parse(iso);
const w = (timezone: string, days: string[], start: string, end: string): MaintenanceWindow => ({
  timezone,
  days: days as never,
  start,
  end,
});
const DAY = 86400;
const NOW = at('2027-01-04T00:00:00Z'); // a Monday

describe('window period P (design §3.1)', () => {
  it('is 4d for the union {Wed, Sat} 02:00–06:00 (the worked example)', () => {
    const f = windowFigures([w('Asia/Tokyo', ['Wed', 'Sat'], '02:00', '06:00')], NOW);
    expect(f).toEqual({
      empty: false,
      continuous: false,
      periodSeconds: 4 * DAY,
      minDurationSeconds: 4 * 3600,
      minGapSeconds: 3 * DAY - 4 * 3600,
    });
  });

  it('collapses to the reconcile tick for a 24/7 union built from several entries', () => {
    const f = windowFigures([w('UTC', [...DAYS], '00:00', '12:00'), w('UTC', [...DAYS], '12:00', '00:00')], NOW);
    expect(f.continuous).toBe(true);
    expect(f.periodSeconds).toBe(TICK_SECONDS);
    expect(f.minGapSeconds).toBeNull();
  });

  it('is 0 with no occurrence at all', () => {
    expect(windowFigures([], NOW)).toMatchObject({ empty: true, periodSeconds: 0 });
  });

  it('treats end <= start as crossing midnight, and end == start as a full day', () => {
    const [first] = occurrences([w('UTC', ['Fri'], '22:00', '02:00')], NOW, NOW + 7 * DAY * 1000);
    expect(first).toEqual({ start: at('2027-01-08T22:00:00Z'), end: at('2027-01-09T02:00:00Z') });
    const [full] = occurrences([w('UTC', ['Fri'], '06:00', '06:00')], NOW, NOW + 7 * DAY * 1000);
    expect(full).toEqual({ start: at('2027-01-08T06:00:00Z'), end: at('2027-01-09T06:00:00Z') });
  });

  it('merges overlapping and touching entries in different zones into one occurrence', () => {
    // Tokyo 02:00–06:00 is 17:00–21:00 UTC the day before; UTC 20:00–23:00 overlaps it; UTC 23:00– touches.
    const occ = occurrences(
      [
        w('Asia/Tokyo', ['Wed'], '02:00', '06:00'),
        w('UTC', ['Tue'], '20:00', '23:00'),
        w('UTC', ['Tue'], '23:00', '23:30'),
      ],
      NOW,
      NOW + 7 * DAY * 1000,
    );
    expect(occ).toEqual([{ start: at('2027-01-05T17:00:00Z'), end: at('2027-01-05T23:30:00Z') }]);
  });

  it('takes the DST-lengthened gap exactly: New York weekly Saturday window is 7d1h across fall-back', () => {
    // The gap containing the first Sunday of November is an hour longer than a week in absolute time.
    const f = windowFigures([w('America/New_York', ['Sat'], '02:00', '06:00')], NOW);
    expect(f.periodSeconds).toBe(7 * DAY + 3600);
  });

  it('takes the DST-shortened occurrence as D: a window over the spring-forward hour lasts one hour less', () => {
    const f = windowFigures([w('Europe/Berlin', ['Sun'], '01:00', '05:00')], NOW);
    expect(f.minDurationSeconds).toBe(3 * 3600);
    expect(f.periodSeconds).toBe(7 * DAY + 3600);
  });

  it('is exactly the weekly value in a zone without DST, whatever the date', () => {
    for (const now of [NOW, at('2027-03-28T12:00:00Z'), at('2027-10-31T00:30:00Z')]) {
      expect(windowFigures([w('Asia/Tokyo', ['Mon'], '01:00', '02:00')], now).periodSeconds).toBe(7 * DAY);
    }
  });
});

describe('wall-clock rules at DST transitions', () => {
  it('moves a wall time inside a spring-forward gap forward by the gap', () => {
    // 2027-03-14 02:30 does not exist in New York (02:00 → 03:00 EDT); it means 03:30 EDT = 07:30Z.
    expect(wallToInstant('America/New_York', 2027, 3, 14, 150)).toBe(at('2027-03-14T07:30:00Z'));
  });

  it('takes the first occurrence of a wall time repeated at fall-back', () => {
    // 2027-11-07 01:30 happens twice in New York; the first is 01:30 EDT = 05:30Z.
    expect(wallToInstant('America/New_York', 2027, 11, 7, 90)).toBe(at('2027-11-07T05:30:00Z'));
  });

  it('is the plain offset away from transitions, including half- and quarter-hour zones', () => {
    expect(wallToInstant('Asia/Kathmandu', 2027, 1, 4, 0)).toBe(at('2027-01-03T18:15:00Z'));
    expect(wallToInstant('Asia/Kolkata', 2027, 1, 4, 0)).toBe(at('2027-01-03T18:30:00Z'));
  });
});

// ---- Property: the union and P agree with an independent minute-by-minute sweep ----------------------
// Fixed-offset zones make a week the exact cycle, so the sweep of one week (plus wrap-around) is the truth.
const FIXED_ZONES = [
  'UTC',
  'Asia/Tokyo',
  'Asia/Kolkata',
  'Asia/Kathmandu',
  'America/Phoenix',
  'Australia/Brisbane',
  'Etc/GMT+11',
];

const hhmm = fc
  .integer({ min: 0, max: 24 * 60 - 1 })
  .map((m) => `${String(Math.floor(m / 60)).padStart(2, '0')}:${String(m % 60).padStart(2, '0')}`);
const windowArb = fc.record({
  timezone: fc.constantFrom(...FIXED_ZONES),
  days: fc.uniqueArray(fc.constantFrom(...DAYS), { minLength: 1, maxLength: 7 }),
  start: hhmm,
  end: hhmm,
});

/** Independent membership: read the local wall clock at t and ask whether any entry covers it. */
function sweepMember(windows: MaintenanceWindow[], offsets: Map<string, number>, t: number): boolean {
  return windows.some((win) => {
    const local = new Date(t + (offsets.get(win.timezone) as number) * 60_000);
    const minute = local.getUTCHours() * 60 + local.getUTCMinutes();
    const today = DAYS[(local.getUTCDay() + 6) % 7] as string;
    const yesterday = DAYS[(local.getUTCDay() + 5) % 7] as string;
    const [sh, sm] = win.start.split(':').map(Number) as [number, number];
    const [eh, em] = win.end.split(':').map(Number) as [number, number];
    const s = sh * 60 + sm;
    const e = eh * 60 + em;
    if (e > s) return win.days.includes(today as never) && minute >= s && minute < e;
    // crosses midnight (e == s: 24h)
    return (win.days.includes(today as never) && minute >= s) || (win.days.includes(yesterday as never) && minute < e);
  });
}

/** P, D and gap from the edges a sweep found, over consecutive starts whose later start lies in (from, to]. */
function edgeFigures(
  starts: number[],
  ends: number[],
  from: number,
  to: number,
  skipBefore = -Infinity,
): { period: number; minDuration: number; minGap: number } {
  let period = 0;
  let minGap = Infinity;
  let minDuration = Infinity;
  for (let i = 0; i + 1 < starts.length; i++) {
    const a = starts[i] as number;
    const b = starts[i + 1] as number;
    if (a < skipBefore || b <= from || b > to) continue;
    const end = ends.find((e) => e > a) as number;
    period = Math.max(period, b - a);
    minGap = Math.min(minGap, b - end);
    minDuration = Math.min(minDuration, end - a);
  }
  return { period: period / 1000, minDuration: minDuration / 1000, minGap: minGap / 1000 };
}

describe('property: union and P equal a brute-force sweep', () => {
  it('holds for random window sets across fixed-offset zones', () => {
    fc.assert(
      fc.property(
        fc.array(windowArb, { minLength: 1, maxLength: 4 }),
        fc.integer({ min: 0, max: 6 * 24 * 60 }),
        (arb, nowMinute) => {
          const windows = arb as MaintenanceWindow[];
          const now = NOW + nowMinute * 60_000;
          const offsets = new Map(windows.map((x) => [x.timezone, offsetMinutes(x.timezone, now)]));
          // Sweep three weeks and read the middle one, so occurrences that wrap the week are whole.
          const from = now - 7 * DAY * 1000;
          const starts: number[] = [];
          const ends: number[] = [];
          let prev = sweepMember(windows, offsets, from - 60_000);
          let members = 0;
          const mine = occurrences(windows, now, now + 7 * DAY * 1000);
          const isMine = (t: number): boolean => mine.some((iv) => iv.start <= t && t < iv.end);
          for (let t = from; t < now + 14 * DAY * 1000; t += 60_000) {
            const cur = sweepMember(windows, offsets, t);
            if (cur && !prev) starts.push(t);
            if (!cur && prev) ends.push(t);
            if (t >= now && t < now + 7 * DAY * 1000) {
              members += cur ? 1 : 0;
              // membership agrees minute by minute
              if (cur !== isMine(t)) return false;
            }
            prev = cur;
          }
          const f = windowFigures(windows, now);
          if (members === 7 * 24 * 60) return f.continuous && f.periodSeconds === TICK_SECONDS;
          const e = edgeFigures(starts, ends, -Infinity, now + 8 * DAY * 1000, now - 7 * DAY * 1000 + DAY * 1000);
          return (
            !f.continuous &&
            f.periodSeconds === e.period &&
            f.minGapSeconds === e.minGap &&
            f.minDurationSeconds === e.minDuration
          );
        },
      ),
      { numRuns: 40 },
    );
  });

  it('inWindow agrees with the occurrences at their edges', () => {
    const windows = [w('Asia/Kolkata', ['Tue', 'Fri'], '23:30', '01:15')];
    for (const iv of occurrences(windows, NOW, NOW + 7 * DAY * 1000)) {
      expect([
        inWindow(windows, iv.start - 60_000),
        inWindow(windows, iv.start),
        inWindow(windows, iv.end - 60_000),
        inWindow(windows, iv.end),
      ]).toEqual([false, true, true, false]);
    }
  });
});

describe('DST zones: a year swept minute by minute with Intl agrees with the calendar figures', () => {
  // Independent of zone.ts: the wall clock of every minute of the coming year, read through Intl.
  function sweepYear(
    windows: MaintenanceWindow[],
    now: number,
  ): { period: number; minDuration: number; minGap: number } {
    const fmt = new Map(
      windows.map((w) => [
        w.timezone,
        new Intl.DateTimeFormat('en-US', {
          timeZone: w.timezone,
          weekday: 'short',
          hour: '2-digit',
          minute: '2-digit',
          hourCycle: 'h23',
        }),
      ]),
    );
    const member = (t: number): boolean =>
      windows.some((w) => {
        const parts = Object.fromEntries(
          (fmt.get(w.timezone) as Intl.DateTimeFormat).formatToParts(t).map((p) => [p.type, p.value]),
        );
        const minute = Number(parts.hour) * 60 + Number(parts.minute);
        const [sh, sm] = w.start.split(':').map(Number) as [number, number];
        const [eh, em] = w.end.split(':').map(Number) as [number, number];
        return w.days.includes(parts.weekday as never) && minute >= sh * 60 + sm && minute < eh * 60 + em;
      });
    const starts: number[] = [];
    const ends: number[] = [];
    let prev = member(now - 8 * DAY * 1000);
    for (let t = now - 8 * DAY * 1000 + 60_000; t < now + 374 * DAY * 1000; t += 60_000) {
      const cur = member(t);
      if (cur && !prev) starts.push(t);
      if (!cur && prev) ends.push(t);
      prev = cur;
    }
    return edgeFigures(starts, ends, now, now + 366 * DAY * 1000);
  }

  it.each([
    {
      reason: 'New York {Wed, Sat} 02:00–06:00: the November gap is an hour longer',
      windows: [w('America/New_York', ['Wed', 'Sat'], '02:00', '06:00')],
    },
    {
      reason: 'Berlin Sunday 01:00–05:00: both transitions fall inside the window',
      windows: [w('Europe/Berlin', ['Sun'], '01:00', '05:00')],
    },
    {
      reason: 'Sydney (southern hemisphere) and Tokyo together',
      windows: [w('Australia/Sydney', ['Mon', 'Thu'], '01:00', '04:00'), w('Asia/Tokyo', ['Sat'], '10:00', '12:00')],
    },
  ])('$reason', ({ windows }) => {
    const f = windowFigures(windows, NOW);
    const sweep = sweepYear(windows, NOW);
    expect({ period: f.periodSeconds, minDuration: f.minDurationSeconds, minGap: f.minGapSeconds }).toEqual(sweep);
  });
});
