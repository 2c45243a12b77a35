// The freezes a NodePool is under, read once for the engine's decision and for the forecast: the NodePool's
// noderotation.io/freeze annotation (frozen from now until its time), the governing policy's spec.freezes and
// the occurrences of its spec.recurringFreezes from now until a horizon. Each span carries a label naming the
// freeze (the recurring freeze's name, the one-off's reason or field, the annotation), for messages.
import type { Freeze, RecurringFreeze } from '../generated/api-types.js';
import { freezeOccurrences, type FreezeOccurrence } from '../schedule/recurring-freezes.js';
import { boundedCache } from '../util/bounded-cache.js';
import type { Interval } from '../schedule/windows.js';
import { A, parseTime } from './annotations.js';

/** A freeze as a half-open interval (epoch ms) and what to call it. */
export interface FreezeSpan extends Interval {
  label: string;
}

export interface Freezes {
  /** Each readable freeze as a half-open interval (epoch ms), the annotation's first, then spec.freezes, then the
   * recurring occurrences (sorted). */
  spans: FreezeSpan[];
  /** Why a freeze cannot be read, when one cannot: it freezes until fixed (fail closed). */
  unreadable: string | null;
}

const DAY_MS = 86_400_000;

/**
 * How far ahead recurring occurrences are read by default: the engine needs the occurrence covering now and the
 * next one (its wake-up), and a yearly freeze comes back within 366 days; 400 leaves room for a long occurrence.
 * The forecast reads to its last deadline instead (freezeIntervals).
 */
export const RECURRING_HORIZON_MS = 400 * DAY_MS;

// The engine reads the same freezes every decision with a `now` a minute later: occurrences are expanded once
// per freeze, UTC day and horizon in days (from the day's start, so they cover every `now` of that day), and
// filtered to [now, until). A memo of a pure function: the same result as expanding each time.
const expanded = boundedCache<string, FreezeOccurrence[]>(256);

function occurrencesFrom(f: RecurringFreeze, now: number, until: number): FreezeOccurrence[] {
  const day = Math.floor(now / DAY_MS) * DAY_MS;
  const days = Math.ceil((until - day) / DAY_MS);
  const all = expanded.get(`${JSON.stringify(f)}|${day}|${days}`, () => freezeOccurrences(f, day, day + days * DAY_MS));
  return all.filter((o) => o.end > now && o.start < until);
}

const oneOffLabel = (f: Freeze, i: number): string =>
  f.reason !== undefined && f.reason !== '' ? `spec.freezes[${i}] (${f.reason})` : `spec.freezes[${i}]`;

export function readFreezes(
  annotation: string | undefined,
  policy: { name: string; freezes: readonly Freeze[]; recurringFreezes?: readonly RecurringFreeze[] } | null,
  now: number,
  until: number = now + RECURRING_HORIZON_MS,
): Freezes {
  const spans: FreezeSpan[] = [];
  let unreadable: string | null = null;
  const ann = parseTime(annotation);
  if (annotation !== undefined && ann === null)
    unreadable =
      `the NodePool's ${A.freeze} annotation ${JSON.stringify(annotation.slice(0, 80))} is not an RFC 3339 time ` +
      '(e.g. 2027-01-04T00:00:00Z); fix or remove it';
  if (ann !== null && ann > now) spans.push({ start: now, end: ann, label: `the ${A.freeze} annotation` });
  (policy?.freezes ?? []).forEach((f, i) => {
    const start = parseTime(f.start);
    const end = parseTime(f.end);
    if (start === null || end === null)
      unreadable ??= `spec.freezes[${i}] of RotationPolicy ${policy?.name ?? ''} is not two RFC 3339 times`;
    else spans.push({ start, end, label: oneOffLabel(f, i) });
  });
  const recurring: FreezeSpan[] = [];
  (policy?.recurringFreezes ?? []).forEach((f, i) => {
    try {
      for (const o of occurrencesFrom(f, now, until)) recurring.push({ start: o.start, end: o.end, label: f.name });
    } catch (e) {
      unreadable ??=
        `spec.recurringFreezes[${i}] (${JSON.stringify(f.name)}) of RotationPolicy ${policy?.name ?? ''} cannot be ` +
        `read (${e instanceof Error ? e.message : String(e)}); fix it`;
    }
  });
  recurring.sort((a, b) => a.start - b.start || a.end - b.end || a.label.localeCompare(b.label));
  return { spans: [...spans, ...recurring], unreadable };
}

/** The first span containing instant t (start ≤ t < end), or null. */
export function freezeAt<T extends Interval>(spans: readonly T[], t: number): T | null {
  return spans.find((s) => s.start <= t && t < s.end) ?? null;
}
