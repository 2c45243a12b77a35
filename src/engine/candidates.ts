// Candidate selection (design §3.2): which NodeClaims may start a rotation now, in which order.
import type { NodeClaim } from '../karpenter/types.js';
import { isReady } from '../kube/types.js';
import { parseDuration, parseExpireAfter } from '../util/duration.js';
import { rotationBound } from '../derivation/derive.js';
import type { PolicyParams } from '../derivation/params.js';
import { A, parseTime, STATE } from './annotations.js';
import type { ClusterIndex } from './cluster-index.js';
import { scheduledFreezeAt } from './freezes.js';
import { objectProtection } from './protection.js';

// NodeClaim.spec is immutable and creationTimestamp never changes; the engine never mutates an object, so a
// claim object's creation time and deadline are fixed for its lifetime (and read for every claim each pass).
const times = new WeakMap<NodeClaim, { created: number; deadline: number | null }>();

function timesOf(claim: NodeClaim): { created: number; deadline: number | null } {
  let t = times.get(claim);
  if (!t) {
    const E = parseExpireAfter(claim.spec.expireAfter ?? 'Never');
    const created = parseTime(claim.metadata.creationTimestamp) ?? 0;
    t = { created, deadline: E === null || claim.metadata.creationTimestamp === undefined ? null : created + E * 1000 };
    times.set(claim, t);
  }
  return t;
}

/** creationTimestamp + spec.expireAfter, or null for Never (no deadline). */
export function deadlineOf(claim: NodeClaim): number | null {
  return timesOf(claim).deadline;
}

/**
 * The instant by which the claim is to be rotated: its deadline, or — under spec.preFreezeRotation — the start of
 * the scheduled freeze its deadline falls inside, since Karpenter would force it during the freeze, when nothing
 * of ours may start. It never comes after the deadline, and a later deadline never has an earlier due instant (a
 * freeze maps the deadlines inside it to its start), so ordering by deadline is ordering by due instant.
 */
export function dueBy(claim: NodeClaim, p: PolicyParams): number | null {
  const deadline = deadlineOf(claim);
  if (deadline === null || !p.preFreezeRotation) return deadline;
  return scheduledFreezeAt(p, deadline)?.start ?? deadline;
}

/** t_rot for this claim: its own terminationGracePeriod (1h fallback when unset). */
export function claimRotationBound(claim: NodeClaim, readyTimeout: number): number {
  const tgp = claim.spec.terminationGracePeriod === undefined ? null : parseDuration(claim.spec.terminationGracePeriod);
  return rotationBound(readyTimeout, tgp);
}

const eligibility = new WeakMap<NodeClaim, { p: PolicyParams; period: number; at: number | null }>();

/**
 * The instant the claim becomes a candidate by age: deadline − leadTime (auto), or creation + A (explicit); moved
 * earlier by as much as its due instant is (dueBy), so that it has the same chances before a freeze as it would
 * have had before its deadline.
 */
export function eligibleFrom(claim: NodeClaim, p: PolicyParams, periodSeconds: number): number | null {
  const hit = eligibility.get(claim);
  if (hit && hit.p === p && hit.period === periodSeconds) return hit.at;
  const deadline = deadlineOf(claim);
  const due = dueBy(claim, p);
  let at: number | null;
  if (deadline === null || due === null) at = null;
  else if (p.ageThresholdOverride !== null)
    at = timesOf(claim).created + p.ageThresholdOverride * 1000 - (deadline - due);
  else at = due - (p.minRotationChances * periodSeconds + claimRotationBound(claim, p.readyTimeout)) * 1000;
  eligibility.set(claim, { p, period: periodSeconds, at });
  return at;
}

/** retryBackoff · 2^(retry-count − 1), capped at 8× (§5.2). */
export function backoffSeconds(retryCount: number, retryBackoff: number): number {
  return retryBackoff * Math.min(2 ** Math.max(retryCount - 1, 0), 8);
}

export function retryCount(claim: NodeClaim): number {
  const n = Number(claim.metadata.annotations?.[A.retryCount] ?? '0');
  return Number.isFinite(n) && n > 0 ? Math.floor(n) : 0;
}

/** When a failed claim may be retried. */
export function retryAt(claim: NodeClaim, p: PolicyParams): number | null {
  const failedAt = parseTime(claim.metadata.annotations?.[A.failedAt]);
  return failedAt === null ? null : failedAt + backoffSeconds(retryCount(claim), p.retryBackoff) * 1000;
}

/** Pepr-style predicate: null when the claim is a candidate, else why not. */
export function notCandidateBecause(
  claim: NodeClaim,
  p: PolicyParams,
  periodSeconds: number,
  now: number,
  idx: ClusterIndex,
): string | null {
  const from = eligibleFrom(claim, p, periodSeconds);
  if (from === null) return 'expireAfter is Never: no deadline to beat';
  if (now <= from) return 'not old enough yet';
  if (!isReady(claim)) return 'not Ready (left to node repair and the expireAfter backstop)';
  if (claim.metadata.deletionTimestamp) return 'already being deleted';
  const state = claim.metadata.annotations?.[A.state];
  if (state === STATE.pending || state === STATE.draining) return `already ${state}`;
  if (state === STATE.expired) return 'expired (terminal)';
  if (state === STATE.failed) {
    const at = retryAt(claim, p);
    if (at !== null && now < at) return 'failed; waiting out its retry backoff';
  }
  return objectProtection(claim, idx.nodeOfClaim(claim));
}

/** Earliest deadline first; ties by oldest creationTimestamp, then name (§3.2). */
export function byDeadline(a: NodeClaim, b: NodeClaim): number {
  const ta = timesOf(a);
  const tb = timesOf(b);
  const da = ta.deadline ?? Infinity;
  const db = tb.deadline ?? Infinity;
  if (da !== db) return da - db;
  if (ta.created !== tb.created) return ta.created - tb.created;
  return a.metadata.name < b.metadata.name ? -1 : a.metadata.name > b.metadata.name ? 1 : 0;
}
