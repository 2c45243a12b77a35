// The forecast per NodeClaim (issue 22 item 1): its forced deadline, when it becomes a candidate, the window in
// which the engine is planned to rotate it, the margin left, and whether it is at risk. Pure: `now` is injected.
//
// It follows the engine's own rules rather than restating them:
//  - deadline, eligibility and t_rot come from the engine's helpers (candidates.ts): the claim's own
//    expireAfter and terminationGracePeriod, and the auto or explicit age threshold exactly as the engine reads it;
//  - a claim is a candidate strictly after its eligibility instant (`now > eligibleFrom`), and the engine wakes
//    at eligibleFrom + 1 ms, so the earliest start is eligibleAt + 1 ms;
//  - a rotation may start at any instant t with an occurrence open (occ.start ≤ t < occ.end) and no freeze
//    covering t (freeze.start ≤ t < freeze.end) — the start gates of start.ts; a rotation once started runs on
//    past the window's end, so the window bounds only the start;
//  - the pool rotates one claim at a time (the activeRotation anchor is a serial gate; maxUnavailable is 1), the
//    earliest-deadline candidate first (byDeadline), and after a success it waits cooldownAfter.
//
// Serialisation (decision): the pool is modelled as one server whose service time is the derivation's expected
// rotation time plus the cooldown, t_rot_est + cooldownAfter — the very service time behind the derivation's
// capacity C = m · ceil(D / (t_rot_est + cooldownAfter)) (throughput.ts). Rather than a fixed C per occurrence,
// the queue is simulated on the real calendar, so an occurrence of length D admits exactly ceil(D / service)
// starts (C for the shortest one, more for longer ones, fewer for one cut by a freeze), and an eligibility that
// begins mid-window starts mid-window, as the engine would. A claim whose turn comes at or after its deadline is
// expired by Karpenter before then and takes no turn; a claim whose turn leaves less than t_rot before its
// deadline still takes its turn (the engine starts it anyway) but is at risk. The planning uses the expected
// time for the queue and the bound t_rot for the margin, so the margin is the guarantee the engine's t_rot
// promises, not a best case.
import type { Freeze, RecurringFreeze, RotationPolicy } from '../generated/api-types.js';
import type { NodeClaim, NodePool } from '../karpenter/types.js';
import { policyParams, type PolicyParams } from '../derivation/params.js';
import { byDeadline, claimRotationBound, deadlineOf, dueBy, eligibleFrom } from '../engine/candidates.js';
import { A, rfc3339 } from '../engine/annotations.js';
import { freezeAt, readFreezes, RECURRING_HORIZON_MS, type FreezeSpan } from '../engine/freezes.js';
import { occurrences, openIntervals, type Interval } from '../schedule/windows.js';

export interface ClaimForecast {
  nodeClaim: string;
  /** creationTimestamp + spec.expireAfter (epoch ms); null for expireAfter: Never. */
  deadline: number | null;
  /**
   * The instant it is to be rotated by (epoch ms): the deadline, or under preFreezeRotation the start of the
   * scheduled freeze its deadline falls inside (the engine's dueBy); null for expireAfter: Never.
   */
  dueBy: number | null;
  /** The instant after which the claim is a candidate (epoch ms); null without a deadline. */
  eligibleAt: number | null;
  /** The occurrence in which its rotation is planned to start; null when none before the deadline. */
  plannedWindow: Interval | null;
  /** The planned start inside that occurrence (epoch ms). */
  plannedStart: number | null;
  /** t_rot for this claim (its own terminationGracePeriod), seconds. */
  rotationBoundSeconds: number;
  /** dueBy − (plannedStart + t_rot), seconds; null when not planned or without a deadline. Negative: too late. */
  marginSeconds: number | null;
  /** A deadline and no start in a window, in its turn, that leaves t_rot before it is due. */
  atRisk: boolean;
  /** The freeze the deadline falls inside (its label: a recurring freeze's name, a one-off's field), or null. */
  deadlineInFreeze: string | null;
}

export interface ForecastInput {
  /** The NodePool's claims. Claims being deleted are left out (they are already on their way). */
  claims: readonly NodeClaim[];
  params: PolicyParams;
  /** P, as the engine reads it (the window figures' periodSeconds); the auto age threshold depends on it. */
  periodSeconds: number;
  /** t_rot_est, the derivation's expected rotation time (seconds). */
  expectedRotationSeconds: number;
  /** Freezes as half-open intervals (epoch ms), labelled: freezeIntervals() builds them from the policy and the
   * NodePool. */
  freezes: readonly (Interval & { label?: string })[];
  now: number;
}

/**
 * The freezes the engine honours (readFreezes, the engine's own reading), as labelled intervals: each scheduled
 * freeze of the policy, each occurrence of its recurring freezes from now until `until` (the forecast's last
 * deadline, at least the engine's horizon), and the NodePool's freeze annotation (frozen from now until then).
 * An unreadable freeze freezes until fixed (the engine fails closed), so it is one interval without end.
 */
export function freezeIntervals(
  policyFreezes: readonly Freeze[],
  annotation: string | undefined,
  now: number,
  recurringFreezes: readonly RecurringFreeze[] = [],
  until: number = now + RECURRING_HORIZON_MS,
): FreezeSpan[] {
  const { spans, unreadable } = readFreezes(
    annotation,
    { name: '', freezes: policyFreezes, recurringFreezes },
    now,
    until,
  );
  return unreadable !== null
    ? [{ start: now, end: Infinity, label: 'an unreadable freeze', name: 'an unreadable freeze', reason: unreadable }]
    : spans.filter((f) => f.end > f.start);
}

/**
 * The forecast of one NodePool under its policy, from the figures the derivation gave it (P and t_rot_est);
 * null when it has none (an unreadable zone).
 */
export function forecastOf(
  policy: RotationPolicy,
  pool: NodePool,
  claims: readonly NodeClaim[],
  figures: { windowPeriodSeconds: number | null; expectedRotationSeconds: number | null },
  now: number,
): ClaimForecast[] | null {
  const P = figures.windowPeriodSeconds;
  const tRotEst = figures.expectedRotationSeconds;
  if (P === null || tRotEst === null) return null;
  const params = policyParams(policy.spec);
  const deadlines = claims.map(deadlineOf).filter((d): d is number => d !== null);
  const until = Math.max(now + RECURRING_HORIZON_MS, ...deadlines);
  return forecast({
    claims,
    params,
    periodSeconds: P,
    expectedRotationSeconds: tRotEst,
    freezes: freezeIntervals(
      params.freezes,
      pool.metadata.annotations?.[A.freeze],
      now,
      params.recurringFreezes,
      until,
    ),
    now,
  });
}

/** The label of the freeze containing instant t ('a freeze' for an unlabelled one), or null. */
function labelAt(freezes: readonly (Interval & { label?: string })[], t: number): string | null {
  const hit = freezeAt(freezes, t);
  return hit === null ? null : (hit.label ?? 'a freeze');
}

/** xs[k], for an index known to be in range. */
const at = (xs: readonly number[], k: number): number => xs[k] as number;

const byDeadlineThenName = (a: ClaimForecast, b: ClaimForecast): number => {
  const da = a.deadline ?? Infinity;
  const db = b.deadline ?? Infinity;
  if (da !== db) return da < db ? -1 : 1;
  return a.nodeClaim < b.nodeClaim ? -1 : a.nodeClaim > b.nodeClaim ? 1 : 0;
};

/** The forecast for every claim of one NodePool, sorted by deadline (none last), then name. */
export function forecast(input: ForecastInput): ClaimForecast[] {
  const { params: p, periodSeconds, now } = input;
  const claims = input.claims.filter((c) => !c.metadata.deletionTimestamp);
  const service = (input.expectedRotationSeconds + p.cooldownAfter) * 1000;
  const base = (claim: NodeClaim): ClaimForecast => {
    const deadline = deadlineOf(claim);
    return {
      nodeClaim: claim.metadata.name,
      deadline,
      dueBy: dueBy(claim, p),
      eligibleAt: eligibleFrom(claim, p, periodSeconds),
      plannedWindow: null,
      plannedStart: null,
      rotationBoundSeconds: claimRotationBound(claim, p.readyTimeout),
      marginSeconds: null,
      atRisk: deadline !== null,
      deadlineInFreeze: deadline === null ? null : labelAt(input.freezes, deadline),
    };
  };
  const out = new Map(claims.map((c) => [c, base(c)]));
  const queue = claims.filter((c) => deadlineOf(c) !== null).sort(byDeadline);
  if (queue.length > 0) {
    const horizon = Math.max(...queue.map((c) => deadlineOf(c) as number));
    const open = openIntervals(occurrences(p.windows, now, horizon), input.freezes, now, horizon);
    const eligibleAt = queue.map((c) => (out.get(c) as ClaimForecast).eligibleAt as number);
    // Claims by eligibility, and those already candidates by their rank in the engine's order (byDeadline):
    // the cursor only moves forward, so each claim joins the candidates once and leaves when planned.
    const byEligibility = queue.map((_, k) => k).sort((a, b) => at(eligibleAt, a) - at(eligibleAt, b) || a - b);
    const ready: number[] = [];
    let e = 0;
    const admit = (t: number): void => {
      for (; e < byEligibility.length && at(eligibleAt, at(byEligibility, e)) < t; e++) {
        const rank = at(byEligibility, e);
        let lo = 0;
        let hi = ready.length;
        while (lo < hi) {
          const mid = (lo + hi) >> 1;
          if (at(ready, mid) < rank) lo = mid + 1;
          else hi = mid;
        }
        ready.splice(lo, 0, rank);
      }
    };
    let cursor = now;
    let i = 0; // the open interval the cursor is in or before
    while (e < byEligibility.length || ready.length > 0) {
      // The earliest instant ≥ cursor at which some claim is a candidate (strictly after eligibleAt) and the pool
      // may start.
      admit(cursor);
      let t = ready.length > 0 ? cursor : Math.max(cursor, at(eligibleAt, at(byEligibility, e)) + 1);
      while (i < open.length && (open[i] as { open: Interval }).open.end <= t) i++;
      const slot = open[i];
      if (!slot) break;
      t = Math.max(t, slot.open.start);
      admit(t);
      // The engine's pick at t: the earliest-deadline claim already a candidate.
      const claim = queue[ready.shift() as number] as NodeClaim;
      const f = out.get(claim) as ClaimForecast;
      // Expired by Karpenter before its turn, or due in a freeze that has begun (nothing starts inside it, and it
      // is expired before the freeze ends): at risk, and it takes no turn.
      const due = f.dueBy as number;
      // The pool stays free at t for the next claim, never earlier: t already waited for an eligibility.
      if (t >= due) {
        cursor = t;
        continue;
      }
      const margin = (due - (t + f.rotationBoundSeconds * 1000)) / 1000;
      Object.assign(f, {
        plannedWindow: { ...slot.occurrence },
        plannedStart: t,
        marginSeconds: margin,
        atRisk: margin < 0,
      });
      cursor = t + service;
    }
  }
  return [...out.values()].sort(byDeadlineThenName);
}

/** A forecast as `explain -o json` prints it: instants as RFC 3339, keys in the documented order. */
export interface ForecastJson {
  nodeClaim: string;
  deadline: string | null;
  dueBy: string | null;
  eligibleAt: string | null;
  plannedWindow: { start: string; end: string } | null;
  plannedStart: string | null;
  rotationBoundSeconds: number;
  marginSeconds: number | null;
  atRisk: boolean;
  /** The freeze the forced deadline falls inside (a recurring freeze's name, a one-off's field), or null. */
  deadlineInFreeze: string | null;
}

/** Whole seconds, on the safe side: an instant is rounded up (a start at eligibleAt + 1 ms shows the next second). */
const time = (ms: number | null): string | null => (ms === null ? null : rfc3339(Math.ceil(ms / 1000) * 1000));

export function forecastJson(f: ClaimForecast): ForecastJson {
  return {
    nodeClaim: f.nodeClaim,
    deadline: time(f.deadline),
    dueBy: time(f.dueBy),
    eligibleAt: time(f.eligibleAt),
    plannedWindow: f.plannedWindow && { start: rfc3339(f.plannedWindow.start), end: rfc3339(f.plannedWindow.end) },
    plannedStart: time(f.plannedStart),
    rotationBoundSeconds: f.rotationBoundSeconds,
    // Rounded down, on the safe side, like the start above.
    marginSeconds: f.marginSeconds === null ? null : Math.floor(f.marginSeconds),
    atRisk: f.atRisk,
    deadlineInFreeze: f.deadlineInFreeze,
  };
}
