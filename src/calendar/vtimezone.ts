// VTIMEZONE components (RFC 5545 section 3.6.5) from the tz data the project already computes with (zone.ts, through
// Intl), not from a packaged copy of the tz database: the offsets a parser applies are then the very offsets the
// windows were computed with. Each component lists the zone's transitions over the calendar's span, one
// STANDARD or DAYLIGHT observance per transition (an explicit DTSTART, no RRULE), which any parser can apply
// without knowing the zone's rules; the calendar's recurrences end with that span (calendar.ts).
import { offsetMinutes } from '../schedule/zone.js';
import { localTime, utcOffset } from './ics.js';

const DAY_MS = 86_400_000;
const QUARTER_MS = 900_000;

/** A change of a zone's UTC offset at `at` (epoch ms), from `from` to `to` minutes. */
export interface Transition {
  at: number;
  from: number;
  to: number;
}

/**
 * The offset changes in [from, to). Transitions fall on quarter hours (zone.ts) and are more than a day apart,
 * so a daily scan finds each, and a search over quarter hours finds its instant.
 */
export function transitions(zone: string, from: number, to: number): Transition[] {
  const out: Transition[] = [];
  let prev = offsetMinutes(zone, from);
  for (let t = from; t < to; t += DAY_MS) {
    const next = Math.min(t + DAY_MS, to);
    const off = offsetMinutes(zone, next);
    if (off === prev) continue;
    // offset(lo) = prev, offset(hi) = off, on quarter-hour boundaries: the first quarter with the new offset.
    let lo = Math.floor(t / QUARTER_MS);
    let hi = Math.ceil(next / QUARTER_MS);
    while (hi - lo > 1) {
      const mid = (lo + hi) >> 1;
      if (offsetMinutes(zone, mid * QUARTER_MS) === prev) lo = mid;
      else hi = mid;
    }
    if (hi * QUARTER_MS < to) out.push({ at: hi * QUARTER_MS, from: prev, to: off });
    prev = off;
  }
  return out;
}

/** The content lines of the VTIMEZONE of `zone` over [from, to). */
export function vtimezone(zone: string, from: number, to: number): string[] {
  // The first observance starts at the span's first midnight UTC (whole minutes), before any event in it.
  const onset = Math.floor(from / DAY_MS) * DAY_MS;
  const initial = offsetMinutes(zone, onset);
  const changes = transitions(zone, onset, to);
  // DAYLIGHT: an offset above the span's lowest (the zone's standard time); a zone without changes is STANDARD.
  const standard = Math.min(initial, ...changes.map((c) => c.to));
  const observance = (at: number, fromOffset: number, toOffset: number): string[] => {
    const kind = toOffset > standard ? 'DAYLIGHT' : 'STANDARD';
    // DTSTART is the onset as clocks read it before the change (RFC 5545 section 3.6.5).
    const wall = new Date(at + fromOffset * 60_000);
    const minute = wall.getUTCHours() * 60 + wall.getUTCMinutes();
    return [
      `BEGIN:${kind}`,
      `DTSTART:${localTime(wall.getUTCFullYear(), wall.getUTCMonth() + 1, wall.getUTCDate(), minute)}`,
      `TZOFFSETFROM:${utcOffset(fromOffset)}`,
      `TZOFFSETTO:${utcOffset(toOffset)}`,
      `END:${kind}`,
    ];
  };
  return [
    'BEGIN:VTIMEZONE',
    `TZID:${zone}`,
    ...observance(onset, initial, initial),
    ...changes.flatMap((c) => observance(c.at, c.from, c.to)),
    'END:VTIMEZONE',
  ];
}
