// The terms the §3.2 figures are built from: the NodePool template's representative E and tGP, and the
// deadline-side bound t_rot. Kept apart from derive.ts because the engine (a NodeClaim's own t_rot) and the
// layer-3 check need them without the rest of the derivation.
import type { NodePool } from '../karpenter/types.js';
import { DEFAULT_EXPIRE_AFTER } from '../karpenter/types.js';
import { parseDuration, parseExpireAfter } from '../util/duration.js';

/** Detection lag covered by t_rot: 4 × the 30 s short requeue (design §3.2). */
export const BUFFER_SECONDS = 120;
/** t_rot's drain term when the NodePool sets no terminationGracePeriod (design §3.2). */
export const UNSET_TGP_FALLBACK_SECONDS = 3600;
/** EKS Auto Mode's cap on expireAfter + terminationGracePeriod. */
export const HARD_CAP_SECONDS = 21 * 86400;

export interface PoolTerms {
  /** E in seconds; null for expireAfter: Never. */
  expireAfter: number | null;
  /** tGP as set; null when unset. */
  terminationGracePeriod: number | null;
}

export function poolTerms(pool: NodePool): PoolTerms {
  const t = pool.spec.template.spec;
  return {
    expireAfter: parseExpireAfter(t.expireAfter ?? DEFAULT_EXPIRE_AFTER),
    terminationGracePeriod: t.terminationGracePeriod === undefined ? null : parseDuration(t.terminationGracePeriod),
  };
}

/** tGP as t_rot counts it: an unset grace period is taken as the 1h fallback rather than "forever". */
export function effectiveGracePeriod(tgp: number | null): number {
  return tgp ?? UNSET_TGP_FALLBACK_SECONDS;
}

/** t_rot = readyTimeout + tGP + buffer, with the 1h fallback for an unset tGP. */
export function rotationBound(readyTimeout: number, tgp: number | null): number {
  return readyTimeout + effectiveGracePeriod(tgp) + BUFFER_SECONDS;
}
