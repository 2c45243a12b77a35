// The maintenance window (design §3.1): the union of weekly entries, each in its own zone, evaluated on the
// real calendar. Occurrences are merged intervals of that union in absolute time, so windows in different
// zones, windows crossing midnight and overlapping entries need no special cases, and DST is exact.
import type { MaintenanceWindow } from '../generated/api-types.js';
import { wallToInstant } from './zone.js';

export const DAYS = ['Mon', 'Tue', 'Wed', 'Thu', 'Fri', 'Sat', 'Sun'] as const;
export type Day = (typeof DAYS)[number];

/** The controller's reconcile tick. A continuously open window has P equal to it (design §3.1). */
export const TICK_SECONDS = 60;

const DAY_MS = 86_400_000;

/** A half-open interval [start, end) in epoch milliseconds. */
export interface Interval {
  start: number;
  end: number;
}

function minutes(hhmm: string): number {
  const [h, m] = hhmm.split(':').map(Number);
  return (h as number) * 60 + (m as number);
}

/** ISO weekday (1 = Monday) of a calendar date, independent of any zone. */
function weekday(year: number, month: number, day: number): number {
  const d = new Date(Date.UTC(year, month - 1, day)).getUTCDay();
  return d === 0 ? 7 : d;
}

/** One occurrence of one entry, with the local date it opens on (its wall clock reads `start` of the entry then). */
export interface EntryOccurrence extends Interval {
  /** The local date the window opens on: year, month (1-based), day. */
  date: [number, number, number];
}

/** The minutes of the day an entry opens and closes at; the close may exceed a day (a window crossing midnight). */
export function entryMinutes(w: MaintenanceWindow): { startMin: number; endMin: number } {
  const startMin = minutes(w.start);
  let endMin = minutes(w.end);
  if (endMin <= startMin) endMin += 24 * 60; // crosses midnight (end == start: a full day)
  return { startMin, endMin };
}

/** One entry's occurrences that overlap [from, to), in order, each with its local date. */
export function entryOccurrences(w: MaintenanceWindow, from: number, to: number): EntryOccurrence[] {
  const { startMin, endMin } = entryMinutes(w);
  const days = new Set(w.days.map((d) => DAYS.indexOf(d) + 1));
  const out: EntryOccurrence[] = [];
  // Walk calendar dates with a margin: zone offsets are within ±14h and an occurrence lasts at most a day.
  const first = new Date(from - 2 * DAY_MS);
  const last = to + DAY_MS;
  for (
    let date = Date.UTC(first.getUTCFullYear(), first.getUTCMonth(), first.getUTCDate());
    date <= last;
    date += DAY_MS
  ) {
    const d = new Date(date);
    const [y, mo, da] = [d.getUTCFullYear(), d.getUTCMonth() + 1, d.getUTCDate()];
    if (!days.has(weekday(y, mo, da))) continue;
    const start = wallToInstant(w.timezone, y, mo, da, startMin);
    const end = wallToInstant(w.timezone, y, mo, da, endMin);
    if (end > start && end > from && start < to) out.push({ start, end, date: [y, mo, da] });
  }
  return out;
}

/** The union of half-open intervals, sorted and disjoint (touching intervals join); the input is not changed. */
export function union(spans: readonly Interval[]): Interval[] {
  const merged: Interval[] = [];
  for (const iv of [...spans].sort((a, b) => a.start - b.start || a.end - b.end)) {
    const tail = merged[merged.length - 1];
    if (tail && iv.start <= tail.end) tail.end = Math.max(tail.end, iv.end);
    else merged.push({ start: iv.start, end: iv.end });
  }
  return merged;
}

/** Occurrences of the union overlapping [from, to), merged (touching intervals join) and sorted. */
export function occurrences(windows: readonly MaintenanceWindow[], from: number, to: number): Interval[] {
  return union(windows.flatMap((w) => entryOccurrences(w, from, to)));
}

/** The open instants from `from` to `to`: occurrences minus freezes, as sorted disjoint half-open intervals. */
export function openIntervals(
  occ: readonly Interval[],
  freezes: readonly Interval[],
  from: number,
  to: number,
): { open: Interval; occurrence: Interval }[] {
  const fz = [...freezes].sort((a, b) => a.start - b.start);
  const out: { open: Interval; occurrence: Interval }[] = [];
  for (const o of occ) {
    let pieces: Interval[] = [{ start: Math.max(o.start, from), end: Math.min(o.end, to) }];
    for (const f of fz) {
      pieces = pieces.flatMap((p) => {
        if (f.end <= p.start || f.start >= p.end) return [p];
        const keep: Interval[] = [];
        if (f.start > p.start) keep.push({ start: p.start, end: f.start });
        if (f.end < p.end) keep.push({ start: f.end, end: p.end });
        return keep;
      });
    }
    for (const p of pieces) if (p.end > p.start) out.push({ open: p, occurrence: o });
  }
  return out;
}

/** Whether the union is open at instant t. */
export function inWindow(windows: readonly MaintenanceWindow[], t: number): boolean {
  return occurrences(windows, t - DAY_MS, t + DAY_MS).some((iv) => iv.start <= t && t < iv.end);
}

/** Horizon over which the figures are taken: the coming year, plus a week so every weekday pattern wraps. */
export const HORIZON_DAYS = 366 + 7;

export interface WindowFigures {
  /** No occurrence at all: P = 0 (fatal NoWindows). */
  empty: boolean;
  /** The union never closes over the horizon (24/7): P is the tick. */
  continuous: boolean;
  /** P: the largest start-to-start gap between consecutive occurrences, seconds. */
  periodSeconds: number;
  /** D: the shortest occurrence, seconds (the tick when continuous, 0 when empty). */
  minDurationSeconds: number;
  /** gap: the shortest closed interval between consecutive occurrences, seconds; null when never closed. */
  minGapSeconds: number | null;
}

/**
 * P, D and gap over the real calendar of the coming year from `now`, so that a DST transition lengthening
 * or shortening one particular gap or occurrence is taken at its worst rather than approximated (§3.1 allows
 * ±1h; taking the worst case makes the K-chances guarantee hold exactly).
 */
export function windowFigures(windows: readonly MaintenanceWindow[], now: number): WindowFigures {
  const from = now - 8 * DAY_MS;
  const to = now + HORIZON_DAYS * DAY_MS;
  const occ = occurrences(windows, from, to);
  if (occ.length === 0)
    return { empty: true, continuous: false, periodSeconds: 0, minDurationSeconds: 0, minGapSeconds: null };
  const yearEnd = now + 366 * DAY_MS;
  if (occ.some((iv) => iv.start <= now && iv.end >= yearEnd)) {
    return {
      empty: false,
      continuous: true,
      periodSeconds: TICK_SECONDS,
      minDurationSeconds: TICK_SECONDS,
      minGapSeconds: null,
    };
  }
  let period = 0;
  let minGap = Infinity;
  let minDuration = Infinity;
  // Consecutive pairs whose later start falls in (now, now + 366d]: every gap a node can face in the coming
  // year. Occurrences cut by the horizon's edges are never the first of a pair, so they never count short.
  for (let i = 0; i + 1 < occ.length; i++) {
    const a = occ[i] as Interval;
    const b = occ[i + 1] as Interval;
    if (b.start <= now || b.start > yearEnd || a.start < from + DAY_MS * 2) continue;
    period = Math.max(period, b.start - a.start);
    minGap = Math.min(minGap, b.start - a.end);
    minDuration = Math.min(minDuration, a.end - a.start);
  }
  return {
    empty: false,
    continuous: false,
    periodSeconds: period / 1000,
    minDurationSeconds: minDuration / 1000,
    minGapSeconds: minGap / 1000,
  };
}
