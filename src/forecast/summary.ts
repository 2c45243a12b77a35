// The forecast of one NodePool summed up, for `status`, and for the controller's metrics: from the engine's
// report of the pool (its figures P and t_rot_est, which policy governs it), the policy's freezes and the
// pool's freeze annotation. Pure: the clock is an input.
import type { PoolReport } from '../engine/types.js';
import { rfc3339 } from '../engine/annotations.js';
import type { NodePoolRotationStatus, RotationPolicy } from '../generated/api-types.js';
import { nodePoolOf, type NodeClaim, type NodePool } from '../karpenter/types.js';
import { forecastOf, type ClaimForecast } from './forecast.js';
import { poolPreFreezeFindings } from './pre-freeze.js';
import type { Finding } from '../derivation/findings.js';

export interface ForecastSummary {
  /** The next planned rotations, by planned start (rounded up to the second), then name. */
  next: { nodeClaim: string; plannedStart: string }[];
  /** Claims with a deadline and no start in their turn that leaves t_rot before it. */
  atRisk: number;
  /** The smallest margin among the planned claims (seconds, rounded down); null when none is planned. */
  minMarginSeconds: number | null;
}

/** How many planned rotations the summary lists. */
export const FORECAST_NEXT = 3;
/** How many claims at risk a RotationPolicy's status names. */
export const AT_RISK_NAMED = 10;

/** The objects the engine read (RFC 3339 timestamps: an engine snapshot). */
export interface ForecastWorld {
  policies: readonly RotationPolicy[];
  nodePools: readonly NodePool[];
  nodeClaims: readonly NodeClaim[];
}

/** The pool's forecast per claim; null when it is not governed or the engine has no figures for it. */
export function poolForecast(r: PoolReport, w: ForecastWorld, now: number): ClaimForecast[] | null {
  const policy = w.policies.find((p) => p.metadata.name === r.policy);
  const pool = w.nodePools.find((p) => p.metadata.name === r.nodePool);
  // Figures exist only when the engine could read the policy, so its parameters parse here too.
  if (!policy || !pool || !r.figures) return null;
  const claims = w.nodeClaims.filter((c) => nodePoolOf(c) === r.nodePool);
  return forecastOf(policy, pool, claims, r.figures, now);
}

/** The findings of a pool's forecast (PreFreezeOverflow), under the policy the report names. */
export function forecastFindings(r: PoolReport, w: ForecastWorld, list: readonly ClaimForecast[] | null): Finding[] {
  const policy = w.policies.find((p) => p.metadata.name === r.policy);
  return policy && r.figures ? poolPreFreezeFindings(policy, r.figures, list) : [];
}

/** The summary of a forecast: the next planned rotations, the claims at risk, the smallest margin. */
export function summarise(list: readonly ClaimForecast[]): ForecastSummary {
  const planned = list.filter((f) => f.plannedStart !== null);
  const margins = list.flatMap((f) => (f.marginSeconds === null ? [] : [f.marginSeconds]));
  return {
    next: [...planned]
      .sort((a, b) => (a.plannedStart as number) - (b.plannedStart as number))
      .slice(0, FORECAST_NEXT)
      .map((f) => ({
        nodeClaim: f.nodeClaim,
        plannedStart: rfc3339(Math.ceil((f.plannedStart as number) / 1000) * 1000),
      })),
    atRisk: list.filter((f) => f.atRisk).length,
    minMarginSeconds: margins.length === 0 ? null : Math.floor(Math.min(...margins)),
  };
}

export function forecastSummary(r: PoolReport, w: ForecastWorld, now: number): ForecastSummary | null {
  const list = poolForecast(r, w, now);
  return list && summarise(list);
}

/**
 * The forecast as a RotationPolicy's status shows it per NodePool: the next planned rotations by the window they
 * are planned in (its start, not the planned instant, which moves with the clock inside an open window: a status
 * written on every pass would be noise), the claims at risk and the first of them by deadline.
 */
export type ForecastStatus = NonNullable<NodePoolRotationStatus['forecast']>;

export function forecastStatus(list: readonly ClaimForecast[]): ForecastStatus {
  const planned = list.filter((f) => f.plannedStart !== null && f.plannedWindow !== null);
  const atRisk = list.filter((f) => f.atRisk);
  return {
    nextRotations: [...planned]
      .sort((a, b) => (a.plannedStart as number) - (b.plannedStart as number) || (a.nodeClaim < b.nodeClaim ? -1 : 1))
      .slice(0, FORECAST_NEXT)
      .map((f) => ({
        nodeClaim: f.nodeClaim,
        window: rfc3339((f.plannedWindow as { start: number }).start),
        ...(f.dueBy !== null ? { dueBy: rfc3339(f.dueBy) } : {}),
      })) as ForecastStatus['nextRotations'], // at most FORECAST_NEXT: the schema's maxItems, a tuple in the types
    claimsAtRisk: atRisk.length,
    atRisk: atRisk.slice(0, AT_RISK_NAMED).map((f) => f.nodeClaim) as ForecastStatus['atRisk'],
  };
}
