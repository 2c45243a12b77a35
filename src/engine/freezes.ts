// The freezes a NodePool is under, read once for the engine's decision and for the forecast: the NodePool's
// noderotation.io/freeze annotation (frozen from now until its time), the governing policy's spec.freezes and
// the occurrences of its spec.recurringFreezes from now until a horizon. Each span says what to call it (for
// messages), where it is declared (for the calendar) and why.
import type { PolicyParams } from '../derivation/params.js';
import type { Freeze, RecurringFreeze } from '../generated/api-types.js';
import { freezeOccurrences, type FreezeOccurrence } from '../schedule/recurring-freezes.js';
import { boundedCache } from '../util/bounded-cache.js';
import { union, type Interval } from '../schedule/windows.js';
import { A, parseTime } from './annotations.js';

/** A freeze as a half-open interval (epoch ms), with what to call it, where it is declared and why. */
export interface FreezeSpan extends Interval {
  /** What to call it: a recurring freeze's name, `spec.freezes[i]` (with its reason), or the annotation. */
  label: string;
  /** Where it is declared: "NodePool web: noderotation.io/freeze" or "RotationPolicy p: spec.freezes[0]". */
  name: string;
  /** Its reason; empty when none is given. */
  reason: string;
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
  nodePool = '',
): Freezes {
  const spans: FreezeSpan[] = [];
  let unreadable: string | null = null;
  const ann = parseTime(annotation);
  if (annotation !== undefined && ann === null)
    unreadable =
      `the NodePool's ${A.freeze} annotation ${JSON.stringify(annotation.slice(0, 80))} is not an RFC 3339 time ` +
      '(e.g. 2027-01-04T00:00:00Z); fix or remove it';
  if (ann !== null && ann > now)
    spans.push({
      start: now,
      end: ann,
      label: `the ${A.freeze} annotation`,
      name: `NodePool ${nodePool}: ${A.freeze}`,
      reason: 'frozen by annotation',
    });
  (policy?.freezes ?? []).forEach((f, i) => {
    const start = parseTime(f.start);
    const end = parseTime(f.end);
    if (start === null || end === null)
      unreadable ??= `spec.freezes[${i}] of RotationPolicy ${policy?.name ?? ''} is not two RFC 3339 times`;
    else
      spans.push({
        start,
        end,
        label: oneOffLabel(f, i),
        name: `RotationPolicy ${policy?.name ?? ''}: spec.freezes[${i}]`,
        reason: f.reason ?? '',
      });
  });
  const recurring: FreezeSpan[] = [];
  (policy?.recurringFreezes ?? []).forEach((f, i) => {
    try {
      for (const o of occurrencesFrom(f, now, until))
        recurring.push({
          start: o.start,
          end: o.end,
          label: f.name,
          name: `RotationPolicy ${policy?.name ?? ''}: spec.recurringFreezes[${f.name}]`,
          reason: f.reason ?? '',
        });
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

// The freezes scheduled ahead (spec.freezes and spec.recurringFreezes), for the rotations that must beat them.
// The annotation is not among them: nobody schedules it ahead, it holds from the moment it is set. A freeze that
// cannot be read is left out here (the decision fails closed on it through readFreezes).
const oneOff = new WeakMap<PolicyParams, Interval[]>();

/** The policy's one-off freezes as sorted disjoint half-open intervals, once per policy reading. */
function oneOffFreezes(p: PolicyParams): Interval[] {
  let spans = oneOff.get(p);
  if (!spans) {
    spans = union(
      p.freezes.flatMap((f) => {
        const start = parseTime(f.start);
        const end = parseTime(f.end);
        return start !== null && end !== null && end > start ? [{ start, end }] : [];
      }),
    );
    oneOff.set(p, spans);
  }
  return spans;
}

// Occurrences of one recurring freeze, expanded per 32-day bucket and kept: the deadlines asked about cluster.
const BUCKET_MS = 32 * DAY_MS;
const buckets = boundedCache<string, FreezeOccurrence[]>(1024);

function recurringAt(f: RecurringFreeze, t: number): Interval[] {
  const b = Math.floor(t / BUCKET_MS) * BUCKET_MS;
  try {
    const all = buckets.get(`${JSON.stringify(f)}|${b}`, () => freezeOccurrences(f, b, b + BUCKET_MS));
    return all.filter((o) => o.start <= t && t < o.end);
  } catch {
    return [];
  }
}

/** Every scheduled freeze (one-off, or an occurrence of a recurring one) containing instant t. */
function covering(p: PolicyParams, t: number): Interval[] {
  return [
    ...oneOffFreezes(p).filter((s) => s.start <= t && t < s.end),
    ...p.recurringFreezes.flatMap((f) => recurringAt(f, t)),
  ];
}

/** How many freezes a union is followed through in each direction before it is taken as it stands. */
const MAX_CHAIN = 64;

/**
 * The union of the scheduled freezes around instant t — the freezes containing t, joined with those they overlap
 * or touch, in both directions — or null when none contains t.
 */
export function scheduledFreezeAt(p: PolicyParams, t: number): Interval | null {
  const hit = covering(p, t);
  if (hit.length === 0) return null;
  let start = Math.min(...hit.map((s) => s.start));
  let end = Math.max(...hit.map((s) => s.end));
  for (let i = 0; i < MAX_CHAIN; i++) {
    const before = covering(p, start - 1);
    const earlier = Math.min(start, ...before.map((s) => s.start));
    if (earlier === start) break;
    start = earlier;
  }
  for (let i = 0; i < MAX_CHAIN; i++) {
    const after = covering(p, end);
    const later = Math.max(end, ...after.map((s) => s.end));
    if (later === end) break;
    end = later;
  }
  return { start, end };
}

/** The policy's scheduled freezes overlapping [from, to), merged into sorted disjoint intervals. */
export function scheduledFreezesBetween(p: PolicyParams, from: number, to: number): Interval[] {
  const recurring = p.recurringFreezes.flatMap((f) => {
    try {
      return freezeOccurrences(f, from, to);
    } catch {
      return [];
    }
  });
  return union([...oneOffFreezes(p).filter((s) => s.end > from && s.start < to), ...recurring]);
}
