// The layer-2 forecast terms of t_rot_est (design §3.2): how long a healthy surge takes to provision and a
// healthy drain takes to finish. They feed only the throughput forecast C, never a deadline, so a value the
// deadline bounds would make unreachable is clamped to that bound and warned about rather than rejected.
// Guards are written as the negation of the clamping condition, so a value that is not a number is never clamped.
import { formatDuration as h } from '../util/duration.js';
import { finding, type Finding } from './findings.js';
import type { PolicyParams } from './params.js';
import { effectiveGracePeriod } from './terms.js';

const DEFAULT_PROVISIONING_CAP = 300;
const DEFAULT_DRAIN_CAP = 600;

export interface Estimate {
  seconds: number;
  /** Set when the configured value was above its bound and has been clamped. */
  clamped: Finding | null;
}

/** provisioningEstimate: unset → min(readyTimeout, 5m); above readyTimeout → readyTimeout (the surge is abandoned). */
export function provisioningEstimate(p: PolicyParams): Estimate {
  if (p.provisioningEstimate === null) {
    return { seconds: Math.min(p.readyTimeout, DEFAULT_PROVISIONING_CAP), clamped: null };
  }
  if (!(p.provisioningEstimate > p.readyTimeout)) return { seconds: p.provisioningEstimate, clamped: null };
  const message =
    `provisioningEstimate ${h(p.provisioningEstimate)} exceeds readyTimeout ${h(p.readyTimeout)}, ` +
    `which abandons the surge first; it is clamped to ${h(p.readyTimeout)}. ` +
    `Lower provisioningEstimate to ${h(p.readyTimeout)} or less, or raise readyTimeout.`;
  const path = 'spec.surge.provisioningEstimate';
  const fix = { object: 'RotationPolicy', path, value: h(p.readyTimeout) } as const;
  return { seconds: p.readyTimeout, clamped: finding('ProvisioningEstimateAboveReadyTimeout', path, message, fix) };
}

/**
 * drainEstimate: unset → min(tGP, 10m) (tGP unset counts as 1h); above a set tGP → tGP, where Karpenter
 * force-completes the drain. An unset tGP bounds nothing, so a configured estimate is then taken as written.
 */
export function drainEstimate(p: PolicyParams, tgp: number | null): Estimate {
  if (p.drainEstimate === null) {
    return { seconds: Math.min(effectiveGracePeriod(tgp), DEFAULT_DRAIN_CAP), clamped: null };
  }
  if (tgp === null || !(p.drainEstimate > tgp)) return { seconds: p.drainEstimate, clamped: null };
  const message =
    `drainEstimate ${h(p.drainEstimate)} exceeds the NodePool's terminationGracePeriod ${h(tgp)}, ` +
    `after which Karpenter force-completes the drain; it is clamped to ${h(tgp)}. ` +
    `Lower drainEstimate to ${h(tgp)} or less.`;
  const fix = { object: 'RotationPolicy', path: 'spec.surge.drainEstimate', value: h(tgp) } as const;
  return { seconds: tgp, clamped: finding('DrainEstimateAboveTGP', 'spec.surge.drainEstimate', message, fix) };
}
