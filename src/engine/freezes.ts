// The freezes a NodePool is under, read once for the engine's decision and for the forecast: the NodePool's
// noderotation.io/freeze annotation (frozen from now until its time) and the governing policy's spec.freezes.
import type { Freeze } from '../generated/api-types.js';
import type { Interval } from '../schedule/windows.js';
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
