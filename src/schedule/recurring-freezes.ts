// The occurrences of a recurring freeze (spec.recurringFreezes) in absolute time, for a bounded span: pure and
// deterministic (no clock; the span is the caller's), sorted, capped.
//  - yearly and monthly are local calendar days, computed directly: 00:00 on the first day until 00:00 on the day
//    after the last, each converted with wallToInstant (so a DST change inside a freeze shortens or lengthens it
//    by the hour clocks moved, and a freeze that starts on a spring-forward day starts at the first instant).
//  - rrule is expanded by the `rrule` package in floating mode (wall times as Dates whose UTC fields are the
//    local time, no tzid); each wall start becomes an instant with wallToInstant, and an occurrence lasts
//    `duration` in absolute time from there (96h is 96 real hours, across a DST change too). `start` is the
//    first occurrence (RFC 5545's DTSTART) even where the rule itself does not match it; COUNT counts it.
// The package walks period by period until a match passes the span's end or its calendar ends (year 9999): a
// rule that never matches again (BYMONTH=2;BYMONTHDAY=30) would walk millions of days. Two exact shifts bound
// that walk: a rule without COUNT starts from the period-aligned start nearest the span (the skipped periods
// change nothing, its defaults made explicit), and the whole calendar moves forward by whole 400-year Gregorian
// cycles (the same weekdays and leap years) so that the span ends within 400 years of year 9999.
import type { RecurringFreeze } from '../generated/api-types.js';
import { parseDuration } from '../util/duration.js';
import { onFirstUse } from '../util/on-first-use.js';
import type { Interval } from './windows.js';
import { instantToWall, wallToInstant } from './zone.js';

type RRuleClass = typeof import('rrule').RRule;
type Options = NonNullable<ConstructorParameters<RRuleClass>[0]>;

// The package is loaded when a rule is first expanded, and through require: imported as an ES module (Node's
// CommonJS interop over its UMD bundle) it added 5 MiB to the controller's resident memory at start, required
// 1.5 MiB (docs/benchmarks.md), and most policies have no RRULE freeze at all.
const rruleClass = onFirstUse('rrule', (m: typeof import('rrule')) => m.RRule);

/** One occurrence of a recurring freeze: [start, end) in epoch ms, with the freeze's name. */
export interface FreezeOccurrence extends Interval {
  name: string;
  reason?: string;
}

/** At most this many occurrences of one freeze in one span (an hourly-short daily freeze for 13 years). */
export const MAX_OCCURRENCES = 5000;

const DAY_MS = 86_400_000;
/** Local wall time is within 15h of UTC everywhere (UTC-12 … UTC+14). */
const ZONE_MARGIN_MS = 15 * 3_600_000;
const CYCLE_YEARS = 400;
const LAST_YEAR = 9999;

const daysIn = (year: number, month: number): number => new Date(Date.UTC(year, month, 0)).getUTCDate();

/** The wall calendar date (year, 1-based month) a wall-time Date falls in. */
const ym = (wall: Date): { y: number; m: number } => ({ y: wall.getUTCFullYear(), m: wall.getUTCMonth() + 1 });

function occurrence(f: RecurringFreeze, start: number, end: number): FreezeOccurrence {
  return f.reason === undefined ? { start, end, name: f.name } : { start, end, name: f.name, reason: f.reason };
}

/** Local days [first, last] (calendar dates; last may be in a later month) as an occurrence. */
function localDays(f: RecurringFreeze, y: number, m: number, d: number, y2: number, m2: number, d2: number) {
  return occurrence(f, wallToInstant(f.timezone, y, m, d, 0), wallToInstant(f.timezone, y2, m2, d2 + 1, 0));
}

function yearly(f: RecurringFreeze, spec: { from: string; to: string }, from: number, to: number): FreezeOccurrence[] {
  const [fm, fd] = spec.from.split('-').map(Number) as [number, number];
  const [tm, td] = spec.to.split('-').map(Number) as [number, number];
  const wraps = spec.to < spec.from;
  const out: FreezeOccurrence[] = [];
  const first = ym(instantToWall(f.timezone, from)).y - 1;
  const last = ym(instantToWall(f.timezone, to)).y;
  for (let y = first; y <= last; y++) {
    const y2 = wraps ? y + 1 : y;
    out.push(localDays(f, y, fm, Math.min(fd, daysIn(y, fm)), y2, tm, Math.min(td, daysIn(y2, tm))));
  }
  return out;
}

/** A monthly day in a month: negative from its end (-1 the last day), past its end its last day. */
const dayOf = (day: number, y: number, m: number): number =>
  day < 0 ? daysIn(y, m) + 1 + day : Math.min(day, daysIn(y, m));

function monthly(f: RecurringFreeze, spec: { from: number; to: number }, from: number, to: number) {
  const out: FreezeOccurrence[] = [];
  const start = ym(instantToWall(f.timezone, from));
  const end = ym(instantToWall(f.timezone, to));
  // From the month before the span's (an occurrence may run into the next month) to the span's last month.
  for (let i = start.y * 12 + start.m - 2; i <= end.y * 12 + end.m - 1; i++) {
    const [y, m] = [Math.floor(i / 12), (i % 12) + 1];
    const d = dayOf(spec.from, y, m);
    const sameMonth = dayOf(spec.to, y, m) >= d;
    const [y2, m2] = sameMonth ? [y, m] : [Math.floor((i + 1) / 12), ((i + 1) % 12) + 1];
    out.push(localDays(f, y, m, d, y2, m2, dayOf(spec.to, y2, m2)));
  }
  return out;
}

const wallDate = (y: number, m: number, d: number, minute: number): Date => {
  const t = new Date(Date.UTC(2000, m - 1, d, 0, minute));
  t.setUTCFullYear(y); // years below 100 are not 19xx
  return t;
};

const addYears = (wall: Date, years: number): Date => {
  const t = new Date(wall.getTime());
  t.setUTCFullYear(wall.getUTCFullYear() + years);
  return t;
};

/** The rule's options anchored at `anchor` instead of `dtstart`, its dtstart-derived defaults made explicit. */
function anchored(opts: Partial<Options>, dtstart: Date, anchor: Date): Partial<Options> {
  const RRule = rruleClass();
  const out: Partial<Options> = { ...opts, dtstart: anchor, tzid: null };
  out.byhour = dtstart.getUTCHours();
  out.byminute = dtstart.getUTCMinutes();
  out.bysecond = 0;
  const dayParts = [opts.bymonthday, opts.byweekday].some((v) => v !== undefined && v !== null);
  if (!dayParts) {
    if (opts.freq === RRule.YEARLY) {
      out.bymonth ??= dtstart.getUTCMonth() + 1;
      out.bymonthday = dtstart.getUTCDate();
    } else if (opts.freq === RRule.MONTHLY) out.bymonthday = dtstart.getUTCDate();
    else if (opts.freq === RRule.WEEKLY) out.byweekday = (dtstart.getUTCDay() + 6) % 7;
  }
  return out;
}

/** The period-aligned start nearest before `lo` (a wall time): the first instant of a period of the rule. */
function anchorBefore(opts: Partial<Options>, dtstart: Date, lo: Date): Date {
  const RRule = rruleClass();
  const interval = opts.interval ?? 1;
  const minute = dtstart.getUTCHours() * 60 + dtstart.getUTCMinutes();
  const [y, m] = [dtstart.getUTCFullYear(), dtstart.getUTCMonth() + 1];
  const span = (unitMs: number): number => Math.floor((lo.getTime() - dtstart.getTime()) / (unitMs * interval));
  switch (opts.freq) {
    case RRule.DAILY:
      return new Date(dtstart.getTime() + span(DAY_MS) * interval * DAY_MS);
    case RRule.WEEKLY: {
      const day = new Date(dtstart.getTime() + span(7 * DAY_MS) * interval * 7 * DAY_MS);
      const wkst = typeof opts.wkst === 'number' ? opts.wkst : (opts.wkst?.weekday ?? 0);
      const back = ((day.getUTCDay() + 6) % 7) - wkst;
      return new Date(day.getTime() - (((back % 7) + 7) % 7) * DAY_MS);
    }
    case RRule.MONTHLY: {
      const months = (lo.getUTCFullYear() - y) * 12 + lo.getUTCMonth() + 1 - m;
      const k = Math.floor(months / interval) * interval;
      return wallDate(y + Math.floor((m - 1 + k) / 12), ((m - 1 + k) % 12) + 1, 1, minute);
    }
    default: {
      const k = Math.floor((lo.getUTCFullYear() - y) / interval) * interval;
      return wallDate(y + k, 1, 1, minute);
    }
  }
}

function rrule(f: RecurringFreeze, text: string, from: number, to: number): FreezeOccurrence[] {
  const [date, time] = (f.start ?? '').split('T') as [string, string];
  const [y, m, d] = date.split('-').map(Number) as [number, number, number];
  const [hh, mm] = time.split(':').map(Number) as [number, number];
  const dtstart = wallDate(y, m, d, hh * 60 + mm);
  const durationMs = parseDuration(f.duration ?? '0s') * 1000;
  const RRule = rruleClass();
  const opts = RRule.parseString(text);
  // Wall starts whose occurrence may overlap [from, to).
  const lo = new Date(from - durationMs - ZONE_MARGIN_MS);
  const hi = new Date(to + ZONE_MARGIN_MS);
  const walls: Date[] = [dtstart];
  if (opts.count !== undefined && opts.count !== null) {
    const shift = CYCLE_YEARS * Math.max(0, Math.floor((LAST_YEAR - 1 - hi.getUTCFullYear()) / CYCLE_YEARS));
    const rule = new RRule({ ...anchored(opts, dtstart, addYears(dtstart, shift)) });
    const hiShifted = addYears(hi, shift);
    const all = rule.all((w, i) => i < Math.min(opts.count ?? 0, MAX_OCCURRENCES) && w <= hiShifted);
    const matched = all.map((w) => addYears(w, -shift));
    // COUNT counts DTSTART: when the rule does not match it, it takes one of the rule's places.
    const first = matched[0];
    const own = first !== undefined && first.getTime() === dtstart.getTime();
    walls.push(...(own ? matched : matched.slice(0, Math.max(0, (opts.count ?? 0) - 1))));
  } else {
    const anchor = dtstart < lo ? anchorBefore(opts, dtstart, lo) : dtstart;
    const shift = CYCLE_YEARS * Math.max(0, Math.floor((LAST_YEAR - 1 - hi.getUTCFullYear()) / CYCLE_YEARS));
    const options = anchored(opts, dtstart, addYears(anchor, shift));
    if (opts.until) options.until = addYears(opts.until, shift);
    const rule = new RRule(options);
    const found = rule.between(addYears(lo, shift), addYears(hi, shift), true, (_, i) => i < MAX_OCCURRENCES);
    walls.push(...found.filter((w) => addYears(w, -shift) >= dtstart).map((w) => addYears(w, -shift)));
  }
  const seen = new Set<number>();
  const out: FreezeOccurrence[] = [];
  for (const w of walls) {
    if (seen.has(w.getTime())) continue;
    seen.add(w.getTime());
    const wy = w.getUTCFullYear();
    const start = wallToInstant(
      f.timezone,
      wy,
      w.getUTCMonth() + 1,
      w.getUTCDate(),
      w.getUTCHours() * 60 + w.getUTCMinutes(),
    );
    out.push(occurrence(f, start, start + durationMs));
  }
  return out;
}

/**
 * The occurrences of `freeze` that overlap [from, to) (epoch ms), sorted by start, at most MAX_OCCURRENCES (the
 * first ones). Expects a validated freeze; throws on one it cannot read (callers fail closed).
 */
export function freezeOccurrences(freeze: RecurringFreeze, from: number, to: number): FreezeOccurrence[] {
  if (!(to > from)) return [];
  let all: FreezeOccurrence[];
  if (freeze.yearly) all = yearly(freeze, freeze.yearly, from, to);
  else if (freeze.monthly) all = monthly(freeze, freeze.monthly, from, to);
  else if (freeze.rrule !== undefined) all = rrule(freeze, freeze.rrule, from, to);
  else throw new Error(`recurring freeze ${JSON.stringify(freeze.name)} sets none of yearly, monthly or rrule`);
  return all
    .filter((o) => o.end > from && o.start < to && o.end > o.start)
    .sort((a, b) => a.start - b.start || a.end - b.end)
    .slice(0, MAX_OCCURRENCES);
}

/** Every occurrence of every freeze of the list overlapping [from, to), sorted (start, end, name). */
export function recurringFreezeOccurrences(
  freezes: readonly RecurringFreeze[],
  from: number,
  to: number,
): FreezeOccurrence[] {
  return freezes
    .flatMap((f) => freezeOccurrences(f, from, to))
    .sort((a, b) => a.start - b.start || a.end - b.end || a.name.localeCompare(b.name));
}
