// Starting a rotation (design §5.2 steps 2–3): the start gates, candidate selection, the forceful-fallback
// rule and the surge-headroom check. Each gate is a predicate returning why it blocks, or null.
import type { NodeClaim } from '../karpenter/types.js';
import { hasFatal } from '../derivation/findings.js';
import { occurrences, openIntervals, TICK_SECONDS, type Interval } from '../schedule/windows.js';
import { A, DRAINING, FORCEFUL_FALLBACK, parseTime, rfc3339, STATE } from './annotations.js';
import { byDeadline, claimRotationBound, deadlineOf, dueBy, notCandidateBecause } from './candidates.js';
import { frozenBecause, type PoolContext } from './context.js';
import type { PolicyParams } from '../derivation/params.js';
import { headroomShortfall, sizePlaceholder } from './placeholder.js';
import { budgetBlocks, podProtection } from './protection.js';
import { annotate, claimRef, deleteNodeClaim, event, observe, poolRef } from './actions.js';
import type { Action } from './types.js';

type Gate = (c: PoolContext) => string | null;

/** Blocks until `seconds(params)` after the time in the NodePool annotation `key`, and wakes up then. */
function pauseAfter(key: string, seconds: (p: PolicyParams) => number, what: string): Gate {
  return (c) => {
    const last = parseTime(c.pool.metadata.annotations?.[key]);
    if (last === null || !c.params) return null;
    const until = last + seconds(c.params) * 1000;
    if (c.now >= until) return null;
    c.wakeups.push(until);
    return `${what} until ${rfc3339(until)}`;
  };
}

const gates: Gate[] = [
  (c) => (c.policy === null ? 'not governed by exactly one RotationPolicy' : null),
  (c) => (c.params === null ? `RotationPolicy ${c.policy?.metadata.name ?? ''} is invalid (InvalidPolicy)` : null),
  (c) => {
    const fatal = c.derivation?.findings.filter((f) => f.severity === 'fatal') ?? [];
    return hasFatal(fatal) ? `the policy cannot work here: ${fatal.map((f) => f.reason).join(', ')}` : null;
  },
  (c) => (c.params?.suspend ? 'the policy is suspended' : null),
  (c) => (c.windowOpen ? null : 'outside the maintenance window'),
  frozenBecause,
  // Gate A: the settle pause after a success; gate B: the pause after a failure (ADR-0004).
  pauseAfter(A.lastRotationAt, (p) => p.cooldownAfter, 'cooling down after the last rotation'),
  pauseAfter(A.lastFailureAt, (p) => p.failurePause, 'pausing after a failed attempt'),
];

/** The first gate that blocks a start, or null when a rotation may start now. */
export function startGate(c: PoolContext): string | null {
  for (const gate of gates) {
    const why = gate(c);
    if (why !== null) return why;
  }
  return null;
}

export interface Candidates {
  count: number;
  /** The first in rotation order (earliest deadline, then oldest, then name), if any. */
  first: NodeClaim | undefined;
  /** Every eligible claim, unordered (sorted only when the first is held by a Pod's do-not-disrupt). */
  all: NodeClaim[];
}

/** The eligible claims: how many, and which goes first. Only the head is ever needed, so no full sort. */
export function candidates(c: PoolContext): Candidates {
  if (!c.params || !c.windows) return { count: 0, first: undefined, all: [] };
  const p = c.params;
  const period = c.windows.periodSeconds;
  let first: NodeClaim | undefined;
  const all: NodeClaim[] = [];
  for (const claim of c.idx.claimsOf(c.pool.metadata.name)) {
    if (notCandidateBecause(claim, p, period, c.now, c.idx) !== null) continue;
    all.push(claim);
    if (!first || byDeadline(claim, first) < 0) first = claim;
  }
  return { count: all.length, first, all };
}

/**
 * ADR-0001's intent, stated as a rule: with surge.forcefulFallback enabled, a candidate is rotated surge-less
 * when a graceful surge would leave it exposed to Karpenter's uncontrolled expiry —
 *  (a) due − now < t_rot: a surge started now cannot finish before it is due (design §3.6); or
 *  (b) this is its last window: no later occurrence has an instant outside every freeze early enough
 *      (start + t_rot ≤ due) for another attempt, so a failed or too-late surge here would leave only the backstop.
 * Due is the deadline, or under preFreezeRotation the start of the scheduled freeze the deadline falls inside
 * (dueBy). A backlog that will not clear in time (a batch larger than K·C) reaches (b) for its surplus: they are
 * rotated surge-less in their last window instead of expiring at a random hour.
 */
export function fallbackReason(c: PoolContext, claim: NodeClaim): string | null {
  if (!c.params?.forcefulFallback) return null;
  const due = dueBy(claim, c.params);
  if (due === null) return null; // expireAfter: Never never qualifies
  const what = due === deadlineOf(claim) ? 'its deadline' : 'the freeze its deadline falls inside';
  const tRot = claimRotationBound(claim, c.params.readyTimeout) * 1000;
  if (due - c.now < tRot) return `a graceful surge could not finish before ${what}`;
  // A window that never closes has an opportunity every tick (its P) outside the freezes; otherwise only
  // occurrences that start after the one open now count, from their first instant outside the freezes.
  const later = c.windows?.continuous
    ? unfrozenFrom(c.freezeSpans, c.now + TICK_SECONDS * 1000) + tRot <= due
    : openIntervals(occurrences(c.params.windows, c.now, due), c.freezeSpans, c.now, due).some(
        (p) => p.occurrence.start > c.now && p.open.start + tRot <= due,
      );
  return later ? null : `this is its last maintenance window before ${what}`;
}

/** The first instant at or after t outside every freeze (the spans sorted and disjoint). */
function unfrozenFrom(spans: readonly Interval[], t: number): number {
  return spans.find((s) => s.start <= t && t < s.end)?.end ?? t;
}

/**
 * When fallbackReason starts to hold for the claim by the clock alone: (a) past due − t_rot, (b) in a window that
 * never closes one tick earlier, or once the next tick falls inside a freeze after which none is early enough.
 * Elsewhere (b) begins at a window opening, which wakes the pool anyway. A pool held only by its surge headroom
 * wakes up then, rather than at the next resync, which may come too late.
 */
function fallbackFrom(c: PoolContext, claim: NodeClaim): number | null {
  const due = c.params ? dueBy(claim, c.params) : null;
  if (!c.params?.forcefulFallback || due === null) return null;
  const tRot = claimRotationBound(claim, c.params.readyTimeout) * 1000;
  if (!c.windows?.continuous) return due - tRot + 1;
  const tick = TICK_SECONDS * 1000;
  const beforeLastFreeze = c.freezeSpans
    .filter((s) => s.start - tick > c.now && s.start <= due - tRot && s.end + tRot > due)
    .map((s) => s.start - tick);
  return Math.min(due - tRot - tick + 1, ...beforeLastFreeze);
}

export interface Start {
  actions: Action[];
  idle: string | null;
}

/** Candidates whose Pods are looked at for do-not-disrupt in one decision before it gives up until the next. */
const MAX_POD_PROTECTED = 8;

/**
 * The first candidate in rotation order that no Pod on its node protects (the claim and Node annotations are
 * already part of candidacy), or why none may start.
 */
function unprotected(c: PoolContext, eligible: Candidates): { claim: NodeClaim } | { idle: string } {
  const budget = budgetBlocks(c.pool, c.idx.claimsOf(c.pool.metadata.name), c.now);
  if (budget !== null) return { idle: `disruption budget: ${budget}` };
  const first = eligible.first;
  if (!first) return { idle: 'no candidate' };
  const podsProtect = (claim: NodeClaim): string | null => {
    const node = c.idx.nodeOfClaim(claim);
    return node ? podProtection(c.idx.podsOn(node.metadata.name), c.now) : null;
  };
  const why = podsProtect(first);
  if (why === null) return { claim: first };
  const rest = eligible.all
    .filter((x) => x !== first)
    .sort(byDeadline)
    .slice(0, MAX_POD_PROTECTED - 1);
  for (const claim of rest) if (podsProtect(claim) === null) return { claim };
  return { idle: `the first candidates are protected by their Pods (${why})` };
}

export function start(c: PoolContext, eligible: Candidates): Start {
  const blocked = startGate(c);
  if (blocked !== null) return { actions: [], idle: blocked };
  const picked = unprotected(c, eligible);
  if ('idle' in picked || !c.params) return { actions: [], idle: 'idle' in picked ? picked.idle : 'no candidate' };
  const cand = picked.claim;
  const name = cand.metadata.name;
  const pool = c.pool.metadata.name;
  const anchor = (set: Record<string, string>, why: string): Action =>
    annotate(poolRef(pool), set, [], why, A.activeRotation);
  const fallback = fallbackReason(c, cand);
  if (fallback !== null) {
    const why = `forceful fallback for ${name}: ${fallback}`;
    const anchorSet = {
      [A.activeRotation]: name,
      [A.rotationMode]: FORCEFUL_FALLBACK,
      [A.activeRotationState]: DRAINING,
      [A.drainingAt]: rfc3339(c.now),
    };
    return {
      idle: null,
      actions: [
        anchor(anchorSet, why),
        annotate(claimRef(name), { [A.state]: STATE.draining }, [A.startedAt, A.surgeClaim], why),
        deleteNodeClaim(
          cand,
          pool,
          { role: 'candidate', claim: name },
          `${why}; drained through the voluntary path, PDBs apply`,
        ),
        observe(pool, 'forcefulFallback', 1, why),
        event(poolRef(pool), 'ForcefulFallback', `${why}; deleting it without a surge, inside the window`, why),
      ],
    };
  }
  const node = c.idx.nodeOfClaim(cand);
  const sizing = sizePlaceholder(cand, node ? c.idx.podsOn(node.metadata.name) : [], c.params.wholeNodeReservation);
  const short = headroomShortfall(c.pool, sizing.requests);
  if (short.length > 0) {
    const at = fallbackFrom(c, cand);
    if (at !== null && at > c.now) c.wakeups.push(at);
    return { actions: [], idle: `NoSurgeHeadroom: spec.limits leave no room for the surge (${short.join(', ')})` };
  }
  const why = `${name} is the earliest-deadline candidate and the window is open`;
  return {
    idle: null,
    actions: [
      anchor({ [A.activeRotation]: name }, why),
      event(poolRef(pool), 'RotationStarted', `rotating ${name}: ${why}`, why),
    ],
  };
}
