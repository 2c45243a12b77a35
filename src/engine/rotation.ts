// Driving the rotation in flight (design §5.2 advance, §3.3–§3.8): one ordered list of handlers per claim
// state; each re-asserts its phase's desired state, so a crashed controller resumes from the anchor alone.
import type { NodeClaim } from '../karpenter/types.js';
import type { Node } from '../kube/types.js';
import { BUFFER_SECONDS, UNSET_TGP_FALLBACK_SECONDS } from '../derivation/derive.js';
import { formatGoDuration, parseDuration } from '../util/duration.js';
import { A, ANCHOR_SET, DRAINING, FORCEFUL_FALLBACK, parseTime, rfc3339, STATE, SURGE_PATH } from './annotations.js';
import { retryAt, retryCount } from './candidates.js';
import { frozenBecause, type PoolContext } from './context.js';
import { cordon, freeze, unfreeze } from './markers.js';
import { DEFAULT_IMAGE, placeholderPod, placeholderPriorityClass, sizePlaceholder, surgeReady } from './placeholder.js';
import type { Action, Observation, Ref } from './types.js';
import { annotate, claimRef, createPod, deleteNodeClaim, deletePod, event, observe, poolRef } from './actions.js';
import { startGate } from './start.js';
import { candidateDeletable, surgeReapable } from './justify.js';
import { eligibleFrom } from './candidates.js';

export interface Progress {
  actions: Action[];
  /** Why the rotation is waiting, when it is. */
  waiting: string | null;
  drainStuck: boolean;
}

const poolOf = (c: PoolContext): Ref => poolRef(c.pool.metadata.name);
const annotatePool = (c: PoolContext, set: Record<string, string>, remove: readonly string[], why: string): Action =>
  annotate(poolOf(c), set, remove, why);
const annotateClaim = (name: string, set: Record<string, string>, remove: readonly string[], why: string): Action =>
  annotate(claimRef(name), set, remove, why);
const observeIn = (
  c: PoolContext,
  metric: Observation,
  value: number,
  why: string,
  labels?: Record<string, string>,
): Action => observe(c.pool.metadata.name, metric, value, why, labels);

/**
 * Remove the placeholder and every marker of this rotation: nodes carrying surge-for, the candidate, and the
 * surge-for link on a surge NodeClaim that is kept (`reaped` is being deleted): once the rotation is over,
 * nothing may mark that claim as ours to delete.
 */
function release(c: PoolContext, name: string, why: string, reaped?: string): Action[] {
  const out: Action[] = [];
  const ph = c.idx.placeholderFor(name);
  if (ph) out.push(deletePod(ph, why));
  for (const linked of c.idx.claimsOf(c.pool.metadata.name))
    if (linked.metadata.annotations?.[A.surgeFor] === name && linked.metadata.name !== reaped)
      out.push(
        annotateClaim(linked.metadata.name, {}, [A.surgeFor], `${why}: ${linked.metadata.name} is no longer its surge`),
      );
  const nodes = new Map(c.idx.nodesMarkedFor(name).map((n) => [n.metadata.name, n]));
  const claim = c.idx.claim(name);
  const cand = claim ? c.idx.nodeOfClaim(claim) : undefined;
  // The candidate's own node always: our cordon there may predate (or outlive) its surge-for marker.
  if (cand) nodes.set(cand.metadata.name, cand);
  for (const n of [...nodes.values()].sort((a, b) => a.metadata.name.localeCompare(b.metadata.name)))
    out.push(...unfreeze(n, why));
  return out;
}

const clearAnchor = (c: PoolContext, why: string, extra: Record<string, string> = {}): Action =>
  annotatePool(c, extra, ANCHOR_SET, why);

/** The pool is no longer governed by exactly one valid RotationPolicy: undo ours, no failure recorded. */
function governanceLost(c: PoolContext, name: string, outcome: string): Action[] {
  const why = `NodePool ${c.pool.metadata.name} is no longer governed by a single RotationPolicy`;
  return [
    ...release(c, name, why),
    annotateClaim(name, {}, [A.state, A.startedAt, A.surgeClaim], why),
    clearAnchor(c, why),
    event(poolOf(c), 'GovernanceLost', `${why}; ${name}: ${outcome}`),
  ];
}

function drainBoundSeconds(claim: NodeClaim): number {
  const tgp =
    claim.spec.terminationGracePeriod === undefined
      ? UNSET_TGP_FALLBACK_SECONDS
      : parseDuration(claim.spec.terminationGracePeriod);
  return tgp + BUFFER_SECONDS;
}

/** readyTimeout elapsed (or the freeze outlasted it): reap, remove, unfreeze, record the failure, release the gate. */
function rollBack(c: PoolContext, claim: NodeClaim, why: string): Action[] {
  const name = claim.metadata.name;
  const out: Action[] = [];
  // Only the surge claim linked both ways by what we persisted is ours to reap (never a guess); one whose link
  // was never persisted is left to Karpenter, which removes an empty node or an unregistered claim itself.
  const persisted = claim.metadata.annotations?.[A.surgeClaim];
  const surge = persisted ? c.idx.claim(persisted) : undefined;
  const reap = surge && surgeReapable(c, claim, surge) === null ? surge : undefined;
  if (reap)
    out.push(
      deleteNodeClaim(
        reap,
        c.pool.metadata.name,
        { role: 'surge', claim: reap.metadata.name, of: name },
        `reap the surge NodeClaim induced for ${name}: ${why}`,
      ),
    );
  out.push(...release(c, name, why, reap?.metadata.name));
  out.push(
    annotateClaim(
      name,
      { [A.state]: STATE.failed, [A.failedAt]: rfc3339(c.now), [A.retryCount]: String(retryCount(claim) + 1) },
      [A.startedAt, A.surgeClaim],
      why,
    ),
  );
  out.push(clearAnchor(c, why, { [A.lastFailureAt]: rfc3339(c.now) }));
  out.push(observeIn(c, 'completed', 1, why, { outcome: 'failure' }));
  out.push(event(claimRef(name), 'RotationFailed', `${why}; rolled back, retry after backoff`));
  return out;
}

/** A drain that never began and may not begin now: undo ours, record the failure, release the gate. */
function abandon(c: PoolContext, claim: NodeClaim, why: string): Action[] {
  const name = claim.metadata.name;
  return [
    ...release(c, name, why),
    annotateClaim(
      name,
      { [A.state]: STATE.failed, [A.failedAt]: rfc3339(c.now), [A.retryCount]: String(retryCount(claim) + 1) },
      [A.startedAt, A.surgeClaim],
      why,
    ),
    clearAnchor(c, why, { [A.lastFailureAt]: rfc3339(c.now) }),
    observeIn(c, 'completed', 1, why, { outcome: 'failure' }),
    event(claimRef(name), 'RotationFailed', `${why}; nothing was deleted, Karpenter's expiry remains the backstop`),
  ];
}

/** The old NodeClaim is gone: success if we had started its drain, otherwise Karpenter expired it first. */
function complete(c: PoolContext, name: string): Progress {
  const ann = c.pool.metadata.annotations ?? {};
  const out = release(c, name, `rotation of ${name} finished`);
  if (ann[A.activeRotationState] === DRAINING) {
    const drainingAt = parseTime(ann[A.drainingAt]);
    out.push(clearAnchor(c, `rotation of ${name} complete`, { [A.lastRotationAt]: rfc3339(c.now) }));
    out.push(observeIn(c, 'completed', 1, 'rotation complete', { outcome: 'success' }));
    if (drainingAt !== null) out.push(observeIn(c, 'drainSeconds', (c.now - drainingAt) / 1000, 'drain finished'));
    out.push(
      event(
        poolOf(c),
        'RotationCompleted',
        `NodeClaim ${name} was replaced${ann[A.rotationMode] === FORCEFUL_FALLBACK ? ' (forceful fallback)' : ''}`,
      ),
    );
  } else {
    out.push(clearAnchor(c, `NodeClaim ${name} disappeared before its drain started: Karpenter expired it`));
    out.push(observeIn(c, 'completed', 1, 'expired before rotation', { outcome: 'expired' }));
    out.push(event(poolOf(c), 'RotationExpired', `NodeClaim ${name} was removed before its rotation could drain it`));
  }
  return { actions: out, waiting: null, drainStuck: false };
}

function pending(c: PoolContext, claim: NodeClaim): Progress {
  const name = claim.metadata.name;
  const ann = claim.metadata.annotations ?? {};
  const p = c.params;
  const none: Progress = { actions: [], waiting: null, drainStuck: false };
  if (claim.metadata.deletionTimestamp) {
    // Force expiry (or someone else) got there first: undo ours, mark it terminal so it is never re-selected.
    const why = `NodeClaim ${name} is being deleted before its surge was ready`;
    return {
      ...none,
      actions: [
        ...release(c, name, why),
        annotateClaim(name, { [A.state]: STATE.expired }, [A.startedAt, A.surgeClaim], why),
        clearAnchor(c, why),
        observeIn(c, 'completed', 1, why, { outcome: 'expired' }),
        event(claimRef(name), 'RotationExpired', why),
      ],
    };
  }
  if (!p || c.policy === null) return { ...none, actions: governanceLost(c, name, 'the rotation was rolled back') };
  const startedAt = parseTime(ann[A.startedAt]);
  if (ann[A.state] !== STATE.pending || startedAt === null) {
    return {
      ...none,
      actions: [
        annotateClaim(
          name,
          { [A.state]: STATE.pending, [A.startedAt]: ann[A.startedAt] ?? rfc3339(c.now) },
          [],
          `rotation of ${name} starts: surge first`,
        ),
      ],
    };
  }
  const deadline = startedAt + p.readyTimeout * 1000;
  c.wakeups.push(deadline + 1000);
  if (c.now > deadline) {
    const why =
      frozenBecause(c) !== null
        ? `the freeze outlasted readyTimeout ${formatGoDuration(p.readyTimeout)}`
        : `no surge node was Ready within readyTimeout ${formatGoDuration(p.readyTimeout)}`;
    return { ...none, actions: rollBack(c, claim, why) };
  }
  const actions: Action[] = [];
  // Passive bookkeeping, also while frozen: markers on the candidate, and the surge claim once visible.
  const node = c.idx.nodeOfClaim(claim);
  if (node)
    actions.push(
      ...freeze(node, name, `protect ${name}'s node during its surge`),
      ...cordon(node, `no new Pods on ${name} while its surge is prepared`),
    );
  const ph = c.idx.placeholderFor(name);
  const host = ph?.spec.nodeName ? c.idx.node(ph.spec.nodeName) : undefined;
  if (host && host.metadata.name !== node?.metadata.name) {
    const surge = c.idx.claimOfNode(host);
    const bound = `the placeholder for ${name} is bound to ${host.metadata.name}`;
    // The link is persisted both ways, from what the scheduler did (the bind), never inferred: the old claim
    // names its surge (the reference's key), and the surge claim names its rotation (ours, additive), which is
    // what a reap checks and what the admission policy requires before it lets us delete a claim we did not mark.
    if (surge && ann[A.surgeClaim] !== surge.metadata.name)
      actions.push(annotateClaim(name, { [A.surgeClaim]: surge.metadata.name }, [], bound));
    if (surge && surge.metadata.annotations?.[A.surgeFor] !== name && !surge.metadata.deletionTimestamp)
      actions.push(annotateClaim(surge.metadata.name, { [A.surgeFor]: name }, [], bound));
    actions.push(...freeze(host, name, `protect the surge node for ${name}`));
  }
  const frozen = frozenBecause(c);
  if (frozen !== null) return { actions, waiting: `${frozen}: escalation is suspended`, drainStuck: false };
  // The API would refuse the placeholder on every pass until readyTimeout, the candidate cordoned all along:
  // roll back now, and the start gate holds further attempts until the PriorityClass exists.
  if (!ph && c.priorityClassMissing !== null)
    return {
      ...none,
      actions: rollBack(c, claim, `placeholder PriorityClass "${c.priorityClassMissing}" does not exist`),
    };
  if (!ph) {
    const pods = node ? c.idx.podsOn(node.metadata.name) : [];
    const sizing = sizePlaceholder(claim, pods, p.wholeNodeReservation);
    const avoid = [node?.metadata.name, ...nearDeadlineNodes(c, name)].filter((n): n is string => n !== undefined);
    const pod = placeholderPod({
      pool: c.pool,
      claim,
      node,
      params: p,
      sizing,
      avoidNodes: avoid,
      namespace: c.snapshot.namespace,
      priorityClassName: placeholderPriorityClass(c.policy),
      image: c.policy.spec.surge?.placeholder?.image ?? DEFAULT_IMAGE,
    });
    actions.push(createPod(pod, `induce a surge node for ${name}`));
    if (sizing.kind === 'refused')
      actions.push(
        event(
          claimRef(name),
          'SurgeClampRefused',
          `DaemonSet overhead exhausts allocatable ${sizing.exhausted.join(', ')}; ` +
            'the placeholder keeps the full request and the attempt will roll back',
        ),
      );
    else if (sizing.kind === 'clamped') {
      actions.push(
        event(
          claimRef(name),
          sizing.bandExceeded.length > 0 ? 'SurgeClampBandExceeded' : 'SurgeClamped',
          `placeholder requests clamped to allocatable minus DaemonSets (short by ${Object.entries(sizing.shortfall)
            .map(([k, v]) => `${k} ${v}`)
            .join(', ')})`,
        ),
      );
    }
    return { actions, waiting: 'waiting for the placeholder to be scheduled', drainStuck: false };
  }
  const ready = surgeReady(ph, node?.metadata.name, c.pool.metadata.name, c.idx);
  if ('notReady' in ready) return { actions, waiting: ready.notReady, drainStuck: false };
  // The delete that follows must be one the executor's fresh check will also allow (S2): what the operator set
  // since the start (a do-not-disrupt, a budget) rolls the attempt back instead.
  const refused = candidateDeletable(c, claim, 'surge', c.now);
  if (refused !== null) return { ...none, actions: rollBack(c, claim, `the drain may not begin: ${refused}`) };
  // Surge ready: delete the old claim. The placeholder stays bound on the surge node through the drain (design
  // §3.3 "Capacity reservation semantics"): it holds the room until the evicted workload preempts it (negative
  // priority, preemptionPolicy Never), and it is removed only when the rotation ends (complete, rollback,
  // governance loss).
  const why = `surge node ${ready.host.metadata.name} is Ready for ${name}`;
  // The host already carries our markers: bookkeeping above froze it as soon as the placeholder was bound.
  const path = surgePath(c, ready.host, startedAt);
  actions.push(
    annotatePool(
      c,
      {
        [A.activeRotationState]: DRAINING,
        [A.drainingAt]: rfc3339(c.now),
        [A.surgeWait]: formatGoDuration(Math.round((c.now - startedAt) / 1000)),
        ...(path ? { [A.surgePath]: path } : {}),
      },
      [],
      why,
    ),
    annotateClaim(name, { [A.state]: STATE.draining }, [], why),
    deleteNodeClaim(
      claim,
      c.pool.metadata.name,
      { role: 'candidate', claim: name },
      `${why}: drain ${name} through the voluntary path`,
    ),
    observeIn(c, 'surgeWaitSeconds', (c.now - startedAt) / 1000, why),
    event(poolOf(c), 'DrainStarted', `${why}; deleting ${name}`),
  );
  return { actions, waiting: null, drainStuck: false };
}

/**
 * How the surge room was found (the reference's `surge-path`): `provisioned` when the host's NodeClaim was
 * created after the rotation started (Karpenter launched it for the placeholder), `absorbed` when the pool
 * already had it. Null (not written) when the host's claim cannot be told: a guess would mislead `surge-wait`.
 */
function surgePath(c: PoolContext, host: Node, startedAt: number): string | null {
  const claim = c.idx.claimOfNode(host);
  const created = parseTime(claim?.metadata.creationTimestamp);
  if (created === null) return null;
  return created > startedAt ? SURGE_PATH.provisioned : SURGE_PATH.absorbed;
}

/** Other claims of the pool already past their eligibility: the surge should not land on them either. */
function nearDeadlineNodes(c: PoolContext, except: string): string[] {
  if (!c.params || !c.windows) return [];
  const out: string[] = [];
  for (const other of c.idx.claimsOf(c.pool.metadata.name)) {
    if (other.metadata.name === except) continue;
    const from = eligibleFrom(other, c.params, c.windows.periodSeconds);
    const n = c.idx.nodeOfClaim(other);
    if (from !== null && c.now > from && n) out.push(n.metadata.name);
  }
  return out.sort();
}

function draining(c: PoolContext, claim: NodeClaim): Progress {
  const name = claim.metadata.name;
  const actions: Action[] = [];
  const ann = c.pool.metadata.annotations ?? {};
  // The pool left our governance with the delete already issued: it cannot be undone, and the drain runs on under
  // Karpenter; everything else of ours goes now, as the reference does whatever the phase (the surge room is no
  // longer held by us, the nodes are Karpenter's to disrupt again).
  if (claim.metadata.deletionTimestamp && (!c.params || c.policy === null))
    return {
      actions: governanceLost(c, name, 'its drain continues under Karpenter; the surge is no longer held'),
      waiting: null,
      drainStuck: false,
    };
  if (ann[A.activeRotationState] !== DRAINING)
    actions.push(
      annotatePool(
        c,
        { [A.activeRotationState]: DRAINING, ...(ann[A.drainingAt] ? {} : { [A.drainingAt]: rfc3339(c.now) }) },
        [],
        `${name} is draining`,
      ),
    );
  // The placeholder (if the workload has not preempted it yet) keeps holding the surge room; a preempted one is
  // not recreated here: the room it held is the evicted workload's now.
  const deleting = parseTime(claim.metadata.deletionTimestamp);
  if (deleting === null) {
    // Marked draining but not deleted (a crash between the two writes, or a state someone else wrote): the
    // delete is re-issued only if it is still justified now, as if it were being decided afresh (S2);
    // otherwise the attempt is abandoned and Karpenter's own expiry stays the backstop.
    const mode = ann[A.rotationMode] === FORCEFUL_FALLBACK ? FORCEFUL_FALLBACK : 'surge';
    const refused = candidateDeletable(c, claim, mode, parseTime(ann[A.drainingAt]) ?? c.now);
    if (refused !== null)
      return {
        actions: abandon(c, claim, `the drain of ${name} may not begin: ${refused}`),
        waiting: null,
        drainStuck: false,
      };
    actions.push(
      deleteNodeClaim(
        claim,
        c.pool.metadata.name,
        { role: 'candidate', claim: name },
        `${name} is marked draining but not deleted yet (resuming after a crash)`,
      ),
    );
    return { actions, waiting: 'draining', drainStuck: false };
  }
  const stuckAt = deleting + drainBoundSeconds(claim) * 1000;
  c.wakeups.push(stuckAt + 1000);
  // Stuck drains keep the serial gate: the delete cannot be undone, and releasing it would exceed maxUnavailable.
  return { actions, waiting: 'draining', drainStuck: c.now > stuckAt };
}

function failed(c: PoolContext, claim: NodeClaim): Progress {
  const name = claim.metadata.name;
  const none: Progress = { actions: [], waiting: null, drainStuck: false };
  if (claim.metadata.deletionTimestamp) {
    const why = `failed NodeClaim ${name} is being deleted (the expireAfter backstop)`;
    return {
      ...none,
      actions: [
        annotateClaim(name, { [A.state]: STATE.expired }, [], why),
        clearAnchor(c, why),
        observeIn(c, 'completed', 1, why, { outcome: 'expired' }),
      ],
    };
  }
  const at = c.params ? retryAt(claim, c.params) : null;
  if (c.params && at !== null && at <= c.now && startGate(c) === null) {
    return {
      ...none,
      actions: [
        annotateClaim(name, { [A.state]: STATE.pending }, [A.startedAt], `retry ${name}: its backoff has elapsed`),
      ],
    };
  }
  const failedAt = claim.metadata.annotations?.[A.failedAt];
  const last = parseTime(c.pool.metadata.annotations?.[A.lastFailureAt]);
  const keep: Record<string, string> =
    failedAt && (last === null || (parseTime(failedAt) ?? 0) > last) ? { [A.lastFailureAt]: failedAt } : {};
  return { ...none, actions: [clearAnchor(c, `${name} failed; release the NodePool until its backoff elapses`, keep)] };
}

function expired(c: PoolContext, claim: NodeClaim): Progress {
  const why = `NodeClaim ${claim.metadata.name} expired; clean up`;
  return { actions: [...release(c, claim.metadata.name, why), clearAnchor(c, why)], waiting: null, drainStuck: false };
}

/** One step of the anchored rotation. */
export function advance(c: PoolContext, name: string): Progress {
  const claim = c.idx.claim(name);
  if (!claim) return complete(c, name);
  switch (claim.metadata.annotations?.[A.state]) {
    case STATE.draining:
      return draining(c, claim);
    case STATE.failed:
      return failed(c, claim);
    case STATE.expired:
      return expired(c, claim);
    default:
      return pending(c, claim);
  }
}
