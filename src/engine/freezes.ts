// The freezes a NodePool is under, read once for the engine's decision and for the forecast: the NodePool's
// noderotation.io/freeze annotation (frozen from now until its time) and the governing policy's spec.freezes.
import type { PolicyParams } from '../derivation/params.js';
import type { Freeze } from '../generated/api-types.js';
import { union, type Interval } from '../schedule/windows.js';
import { A, parseTime } from './annotations.js';

/** A freeze as a half-open interval (epoch ms), with what names it (messages, the calendar) and why. */
export interface FreezeSpan extends Interval {
  /** Where it is declared: "NodePool web: noderotation.io/freeze" or "RotationPolicy p: spec.freezes[0]". */
  name: string;
  /** Its spec.freezes reason; empty when none is given. */
  reason: string;
}

export interface Freezes {
  /** Each readable freeze, the annotation's first. */
  spans: FreezeSpan[];
  /** Why a freeze cannot be read, when one cannot: it freezes until fixed (fail closed). */
  unreadable: string | null;
}

export function readFreezes(
  annotation: string | undefined,
  policy: { name: string; freezes: readonly Freeze[] } | null,
  now: number,
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
    spans.push({ start: now, end: ann, name: `NodePool ${nodePool}: ${A.freeze}`, reason: 'frozen by annotation' });
  (policy?.freezes ?? []).forEach((f, i) => {
    const start = parseTime(f.start);
    const end = parseTime(f.end);
    if (start === null || end === null)
      unreadable ??= `spec.freezes[${i}] of RotationPolicy ${policy?.name ?? ''} is not two RFC 3339 times`;
    else
      spans.push({
        start,
        end,
        name: `RotationPolicy ${policy?.name ?? ''}: spec.freezes[${i}]`,
        reason: f.reason ?? '',
      });
  });
  return { spans, unreadable };
}

// The freezes scheduled ahead (spec.freezes), for the rotations that must beat them: merged into sorted disjoint
// intervals once per policy reading. The annotation is not among them: nobody schedules it ahead, it holds from
// the moment it is set.
const scheduled = new WeakMap<PolicyParams, Interval[]>();

/** The policy's scheduled freezes as sorted disjoint half-open intervals (an unreadable one is left out here). */
export function scheduledFreezes(p: PolicyParams): Interval[] {
  let spans = scheduled.get(p);
  if (!spans) {
    const read = p.freezes.flatMap((f) => {
      const start = parseTime(f.start);
      const end = parseTime(f.end);
      return start !== null && end !== null && end > start ? [{ start, end }] : [];
    });
    spans = union(read);
    scheduled.set(p, spans);
  }
  return spans;
}

/** The merged scheduled freeze containing instant t (start ≤ t < end), or null. */
export function scheduledFreezeAt(p: PolicyParams, t: number): Interval | null {
  const spans = scheduledFreezes(p);
  let lo = 0;
  let hi = spans.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if ((spans[mid] as Interval).end <= t) lo = mid + 1;
    else hi = mid;
  }
  const s = spans[lo];
  return s && s.start <= t ? s : null;
}
