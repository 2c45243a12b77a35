// What justifies deleting a NodeClaim (issue 17, invariant S2 of docs/safety.md). The engine asks these before
// it emits a delete, and the controller's executor asks them again on state read from the API for that very
// write (deleteJustification), so a delete goes out only when both agree. Each answer is null (justified) or
// one sentence saying why not.
import type { NodeClaim } from '../karpenter/types.js';
import { occurrences } from '../schedule/windows.js';
import { A, DRAINING, FORCEFUL_FALLBACK, parseTime, STATE } from './annotations.js';
import { isPlaceholder } from './identity.js';
import { frozenBecause, type PoolContext } from './context.js';
import { protection } from './protection.js';
import { surgeReady } from './placeholder.js';
import { fallbackReason } from './start.js';
import type { DeleteTarget } from './types.js';

const DAY = 86_400_000;

/** Whether an occurrence of the policy's windows contains the instant `t`. */
function windowOpenAt(c: PoolContext, t: number): boolean {
  if (!c.params) return false;
  return occurrences(c.params.windows, t - 8 * DAY, t + 60_000).some((o) => o.start <= t && t < o.end);
}

/** The pool is governed by exactly one valid policy that may act now (not suspended, not frozen). */
export function governedAndUnfrozen(c: PoolContext): string | null {
  if (c.policy === null || c.params === null)
    return `NodePool ${c.pool.metadata.name} is not governed by exactly one valid RotationPolicy`;
  const fatal = c.derivation?.findings.filter((f) => f.severity === 'fatal') ?? [];
  if (fatal.length > 0) return `the policy cannot work here: ${fatal.map((f) => f.reason).join(', ')}`;
  if (c.params.suspend) return 'the policy is suspended';
  return frozenBecause(c);
}

/**
 * Everything a delete of the rotation's candidate needs besides the markers that name it (which the caller
 * writes in the same step, or checks on fresh state): governance, no freeze, no protection, and the time bounds
 * of its mode — a surge rotation started in an open window, its surge still Ready and holding the room, the
 * drain begun no longer than readyTimeout ago; a fallback begun in an open window no longer than readyTimeout
 * ago, whose rule still holds.
 */
export function candidateDeletable(
  c: PoolContext,
  claim: NodeClaim,
  mode: 'surge' | 'forceful-fallback',
  drainingAt: number,
): string | null {
  const name = claim.metadata.name;
  if (!claim.metadata.uid) return `NodeClaim ${name} has no UID to precondition the delete on`;
  if (claim.metadata.deletionTimestamp) return `NodeClaim ${name} is already being deleted`;
  const gate = governedAndUnfrozen(c);
  if (gate !== null) return gate;
  const p = c.params;
  if (!p) return 'no policy';
  const protectedBy = protection(c, claim);
  if (protectedBy !== null) return protectedBy;
  if (c.now - drainingAt > p.readyTimeout * 1000 || drainingAt > c.now + 60_000)
    return `its drain was to begin at ${new Date(drainingAt).toISOString()}, outside readyTimeout of now`;
  if (mode === FORCEFUL_FALLBACK) {
    if (!windowOpenAt(c, drainingAt)) return 'the forceful fallback did not begin in an open maintenance window';
    if (fallbackReason(c, claim) === null) return 'the forceful-fallback rule no longer holds for it';
    return null;
  }
  const startedAt = parseTime(claim.metadata.annotations?.[A.startedAt]);
  if (startedAt === null) return `NodeClaim ${name} has no readable ${A.startedAt}`;
  if (!windowOpenAt(c, startedAt)) return `its rotation did not start in an open maintenance window`;
  const ready = surgeReady(
    c.idx.placeholderFor(name),
    c.idx.nodeOfClaim(claim)?.metadata.name,
    c.pool.metadata.name,
    c.idx,
  );
  if ('notReady' in ready) return `its surge no longer holds the room: ${ready.notReady}`;
  return null;
}

/**
 * Whether `surge` may be reaped as the surge claim of the pending rotation of `old`: linked both ways by what
 * we persisted (old's surge-claim names it, its own surge-for names old; never inferred), created after the
 * rotation started, hosting nothing but the placeholder and DaemonSet Pods, and not protected by the operator.
 */
export function surgeReapable(c: PoolContext, old: NodeClaim, surge: NodeClaim): string | null {
  const name = surge.metadata.name;
  if (!surge.metadata.uid) return `NodeClaim ${name} has no UID to precondition the delete on`;
  if (surge.metadata.deletionTimestamp) return `NodeClaim ${name} is already being deleted`;
  if (
    old.metadata.annotations?.[A.surgeClaim] !== name ||
    surge.metadata.annotations?.[A.surgeFor] !== old.metadata.name
  )
    return `NodeClaim ${name} is not linked both ways to the rotation of ${old.metadata.name}`;
  const startedAt = parseTime(old.metadata.annotations?.[A.startedAt]);
  const created = parseTime(surge.metadata.creationTimestamp);
  if (startedAt === null || created === null || created <= startedAt)
    return `NodeClaim ${name} was not created after the rotation of ${old.metadata.name} started`;
  const node = c.idx.nodeOfClaim(surge);
  const ann = node?.metadata.annotations ?? {};
  if (
    surge.metadata.annotations?.[A.doNotDisrupt] === 'true' ||
    (ann[A.doNotDisrupt] === 'true' && ann[A.doNotDisruptOwned] !== 'true')
  )
    return `the operator protects NodeClaim ${name} with ${A.doNotDisrupt}`;
  if (node) {
    const busy = c.idx
      .podsOn(node.metadata.name)
      .filter((p) => !isPlaceholder(p) && !p.metadata.ownerReferences?.some((o) => o.kind === 'DaemonSet'))
      .filter((p) => p.status?.phase !== 'Succeeded' && p.status?.phase !== 'Failed');
    if (busy.length > 0) return `NodeClaim ${name}'s node runs other Pods (${busy[0]?.metadata.name ?? ''})`;
  }
  return null;
}

/**
 * The whole S2 judgement on one snapshot: the markers that make the claim the anchored candidate in its drain
 * (or the linked surge of the anchored, still pending rotation), and then the conditions above.
 */
export function deleteJustification(c: PoolContext, target: DeleteTarget): string | null {
  const ann = c.pool.metadata.annotations ?? {};
  if (target.role === 'candidate') {
    const claim = c.idx.claim(target.claim);
    if (!claim) return `NodeClaim ${target.claim} is not there`;
    if (ann[A.activeRotation] !== target.claim)
      return `NodePool ${c.pool.metadata.name} is not anchored on ${target.claim}`;
    if (ann[A.activeRotationState] !== DRAINING || claim.metadata.annotations?.[A.state] !== STATE.draining)
      return `the rotation of ${target.claim} is not marked draining on both the NodePool and the NodeClaim`;
    const drainingAt = parseTime(ann[A.drainingAt]);
    if (drainingAt === null) return `NodePool ${c.pool.metadata.name} has no readable ${A.drainingAt}`;
    const mode = ann[A.rotationMode] === FORCEFUL_FALLBACK ? FORCEFUL_FALLBACK : 'surge';
    return candidateDeletable(c, claim, mode, drainingAt);
  }
  const old = c.idx.claim(target.of);
  const surge = c.idx.claim(target.claim);
  if (!old || !surge) return `NodeClaim ${old ? target.claim : target.of} is not there`;
  if (ann[A.activeRotation] !== target.of) return `NodePool ${c.pool.metadata.name} is not anchored on ${target.of}`;
  if (old.metadata.annotations?.[A.state] !== STATE.pending)
    return `the rotation of ${target.of} is not pending (only a pending rotation's surge is reaped)`;
  return surgeReapable(c, old, surge);
}
