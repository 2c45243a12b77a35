// FreezeOutlastsNodes (issue 21): a scheduled freeze so long that some nodes are force-expired inside it. No
// rotation starts during a freeze (spec.freezes[], the engine's freezeOf), so a node that becomes a candidate
// after a freeze began and runs out of time before it ends never gets a window.
//
// The bound is D = E − A − t_rot: the time from a node's becoming a candidate (age A) to the last instant a
// rotation, bounded by t_rot, can start and still finish before expireAfter E. It is the span G = floor(D / P)
// counts windows in, and under auto (A = E − K·P − t_rot) it is exactly K·P. A node that becomes a candidate
// as a freeze longer than D begins leaves the freeze with less than t_rot before its deadline: no graceful
// rotation can finish in time (the engine's own forceful-fallback rule (a)), so Karpenter expires it or, with
// forcefulFallback, it is drained without a surge. E − A alone would only catch freezes the node dies inside
// of, and miss those it leaves with minutes to live.
import { parseTime } from '../engine/annotations.js';
import type { Freeze } from '../generated/api-types.js';
import { formatDuration as h } from '../util/duration.js';
import { finding, type Finding, type Fix } from './findings.js';

export interface FreezeTerms {
  /** E in seconds; null for Never. */
  E: number | null;
  /** A in seconds; null without a deadline. */
  A: number | null;
  /** G; null without a deadline or when A ≤ 0 under auto. */
  G: number | null;
  K: number;
  P: number;
  tRot: number;
  /** The policy's ageThreshold is "auto". */
  auto: boolean;
}

/** Epoch ms as RFC 3339 in UTC, `Z`, with milliseconds only when there are some (the form every freeze accepts). */
export const utcTime = (ms: number): string => new Date(ms).toISOString().replace('.000Z', 'Z');

/** The other way out besides a shorter freeze: more chances under auto, an earlier candidacy for an explicit A. */
function alternative(L: number, t: FreezeTerms & { E: number }): string {
  if (t.auto) {
    const K = Math.ceil(L / t.P);
    return t.E - K * t.P - t.tRot > 0 ? `, or raise minRotationChances to ${K} (D = K·P under auto)` : '';
  }
  const A = t.E - t.tRot - L;
  return A > 0 ? `, or lower ageThreshold to ${h(A)}` : '';
}

/**
 * One warning per freeze not over at `now` whose length L exceeds D, with the fix that ends it at start + D.
 * Nothing is checked when the pool has no deadline or no guaranteed window (other findings say why).
 */
export function freezeFindings(freezes: readonly Freeze[], t: FreezeTerms, now: number): Finding[] {
  const { E, A, G } = t;
  if (E === null || A === null || G === null || G < 1) return [];
  const D = E - A - t.tRot;
  return freezes.flatMap((f, i) => {
    const start = parseTime(f.start);
    const end = parseTime(f.end);
    // An unreadable freeze is an input error (and fails closed in the engine); one already over harms no node.
    if (start === null || end === null || end <= now) return [];
    const L = (end - start) / 1000;
    if (!(L > D)) return [];
    const field = `spec.freezes[${i}]`;
    const value = utcTime(start + Math.floor(D * 1000));
    const fix: Fix = { object: 'RotationPolicy', path: `${field}.end`, value };
    const message =
      `${field} (${f.start} to ${f.end}) lasts ${h(L)}, longer than the ${h(D)} a node of this NodePool has ` +
      `from becoming a candidate to the last rotation start that finishes before expireAfter ` +
      `(E − A − t_rot = ${h(E)} − ${h(A)} − ${h(t.tRot)}), so nodes that become candidates as it begins get no ` +
      `window to be rotated in before Karpenter expires them. Set its end to ${value}${alternative(L, { ...t, E })}.`;
    return [finding('FreezeOutlastsNodes', field, message, fix)];
  });
}
