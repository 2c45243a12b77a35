// Layer 2 of design §3.2: can the windows rotate the NodePool's nodes as fast as they age? It works from the
// expected service time t_rot_est (not the deadline bound t_rot), so it forecasts and warns; it never blocks.
// Each guard is written as the negation of the condition that warns, so a figure that is not a number (NaN)
// never produces a warning.
import type { WindowFigures } from '../schedule/windows.js';
import { formatDuration as h } from '../util/duration.js';
import { finding, type Finding } from './findings.js';
import type { PolicyParams } from './params.js';
import { count } from '../util/plural.js';

/** C = m · ceil(D / (t_rot_est + cooldownAfter)): rotation starts one occurrence admits (≥ 1 when D > 0). */
export function capacityPerOccurrence(p: PolicyParams, minDurationSeconds: number, tRotEst: number): number {
  return p.maxUnavailable * Math.ceil(minDurationSeconds / (tRotEst + p.cooldownAfter));
}

/** The figures layer 2 compares; N is null when the node count is unknown (then only spillover is checked). */
export interface ThroughputTerms {
  A: number | null;
  G: number | null;
  C: number;
  N: number | null;
  tRotEst: number;
  /** The largest share of window occurrences recurring freezes take in a span of A (0 without them). */
  frozenShare?: number;
  /** The fewest windows outside freezes a node overlapping a recurring occurrence keeps (null: not limited). */
  fewestChances?: number | null;
}

/** One rotation's service time as the windows see it: the rotation itself plus the settle pause after it. */
const serviceSeconds = (p: PolicyParams, t: ThroughputTerms): number => t.tRotEst + p.cooldownAfter;

/** Steady state: N nodes each need one rotation per A of age, and the windows serve C per P. */
function arrivalFindings(p: PolicyParams, w: WindowFigures, t: ThroughputTerms): Finding[] {
  const { A, C, N } = t;
  if (N === null || !(N > 0) || A === null || !(A > 0)) return [];
  // A continuous window serves one rotation per (t_rot_est + cooldownAfter) per unit of maxUnavailable instead.
  const open = 1 - (t.frozenShare ?? 0);
  const capacityOverA =
    (w.continuous ? (p.maxUnavailable * A) / serviceSeconds(p, t) : (C * A) / w.periodSeconds) * open;
  if (!(capacityOverA < N)) return [];
  const frozen = open < 1 ? ` (recurring freezes take up to ${Math.round((1 - open) * 100)}% of the windows)` : '';
  const message =
    `the windows can rotate about ${Math.floor(capacityOverA)} nodes per age threshold (${h(A)})${frozen} but ` +
    `the NodePool has ${N}, so some nodes will reach expireAfter. ` +
    'Widen the windows, add occurrences, or lower cooldownAfter.';
  return [finding('ThroughputShortfall', 'spec.maintenanceWindows', message)];
}

/** A synchronized batch shares one deadline, so it gets G occurrences of C starts, however old the fleet is. */
function burstFindings(p: PolicyParams, t: ThroughputTerms): Finding[] {
  const { C, N } = t;
  // A batch whose span a recurring freeze cuts keeps only the windows outside freezes (at least one: G ≥ 1).
  const G = t.G === null ? null : Math.min(t.G, Math.max(1, t.fewestChances ?? t.G));
  if (N === null || !(N > 0) || G === null || !(G >= 1 && G * C < N)) return [];
  const cut = G < (t.G ?? 0) ? ' outside recurring freezes' : '';
  const message =
    `a batch of ${N} nodes created together shares one deadline, but ${count(G, 'window')}${cut} × ` +
    `${C} rotations per occurrence = ${G * C}; ${N - G * C} would be force-expired. ` +
    `Widen the windows, raise minRotationChances${p.forcefulFallback ? '' : ', or enable surge.forcefulFallback'}.`;
  return [finding('ThroughputBurstShortfall', 'spec.maintenanceWindows', message)];
}

/** Spillover: a rotation started late runs into the next occurrence, which then delivers less than C. */
function spilloverFindings(p: PolicyParams, w: WindowFigures, t: ThroughputTerms): Finding[] {
  if (w.minGapSeconds === null || !(serviceSeconds(p, t) > w.minGapSeconds)) return [];
  const message =
    `one rotation plus cooldown (${h(t.tRotEst)} + ${h(p.cooldownAfter)}) is longer than the shortest pause ` +
    `between windows (${h(w.minGapSeconds)}), so a late rotation runs into the next occurrence and ` +
    `neighbouring occurrences do not each deliver ${t.C}. Merge the windows or shorten cooldownAfter.`;
  return [finding('RotationSpansNextWindow', 'spec.maintenanceWindows', message)];
}

/** Every layer-2 finding, in the order: steady-state arrival, synchronized batch, spillover. */
export function throughputFindings(p: PolicyParams, w: WindowFigures, t: ThroughputTerms): Finding[] {
  return [...arrivalFindings(p, w, t), ...burstFindings(p, t), ...spilloverFindings(p, w, t)];
}
