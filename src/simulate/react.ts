// Karpenter's and the scheduler's reaction to the engine's actions, one handler per action type; the actions
// the model does not react to (cordon, deletePod, ...) are applied by `apply` alone.
import { A, FORCEFUL_FALLBACK } from '../engine/annotations.js';
import type { Action } from '../engine/types.js';
import { inWindow } from '../schedule/windows.js';
import type { SimModel } from './model.js';

type ActionOf<T extends Action['type']> = Extract<Action, { type: T }>;
type Reaction<T extends Action['type']> = (m: SimModel, a: ActionOf<T>, at: number) => void;

/** A placeholder Pod: Karpenter provisions a surge node for it after provisioningTime, unless the surge fails. */
const onCreatePod: Reaction<'createPod'> = (m, a, at) => {
  const gen = (m.podGeneration.get(a.pod.metadata.name) ?? 0) + 1;
  m.podGeneration.set(a.pod.metadata.name, gen);
  if (m.random() >= m.config.surgeFailureRate)
    m.queue.push({ at: at + m.config.provisioning, kind: 'provisioned', pod: a.pod.metadata.name, generation: gen });
};

/** A NodeClaim the engine deleted: gone after the drain; how its life ended depends on the rotation mode. */
const onDeleteNodeClaim: Reaction<'deleteNodeClaim'> = (m, a, at) => {
  m.queue.push({ at: at + m.config.drain, kind: 'drained', claim: a.name });
  const claim = m.findClaim(a.name);
  const poolAnn = m.s.nodePools[0]?.metadata.annotations ?? {};
  const life = m.lives.get(a.name);
  if (life && poolAnn[A.activeRotation] === a.name) {
    life.drainStartedAt = at;
    if (poolAnn[A.rotationMode] === FORCEFUL_FALLBACK) {
      life.end = 'fallback';
      m.queue.push({ at: at + m.config.provisioning, kind: 'replace' }); // no surge: Karpenter provisions after
    } else {
      life.end = 'rotated';
    }
  } else if (life && claim) {
    life.end = 'reaped';
  }
};

/** The engine's metrics, counted into the result. */
const onObserve: Reaction<'observe'> = (m, a) => {
  const r = m.result.rotations;
  if (a.metric === 'forcefulFallback') r.forcefulFallback++;
  // A success is graceful unless the rotation it ends was a fallback (the anchor as the decision read it).
  const mode = m.decidedOn?.nodePools[0]?.metadata.annotations?.[A.rotationMode];
  if (a.metric === 'completed' && a.labels?.outcome === 'success' && mode !== FORCEFUL_FALLBACK) r.graceful++;
  if (a.metric === 'completed' && a.labels?.outcome === 'failure') r.failedAttempts++;
};

/** A rotation (graceful or fallback) started: counted when it starts outside every window. */
const onEvent: Reaction<'event'> = (m, a, at) => {
  if (a.eventReason !== 'RotationStarted' && a.eventReason !== 'ForcefulFallback') return;
  if (!inWindow(m.policy.spec.maintenanceWindows, at)) m.result.startsOutsideWindow++;
};

/** The rotation anchor set on the NodePool (an attempt begins), or a failed claim marked pending again. */
const onAnnotate: Reaction<'annotate'> = (m, a, at) => {
  if (a.target.kind === 'NodePool' && a.set[A.activeRotation] !== undefined) {
    const life = m.lives.get(a.set[A.activeRotation] as string);
    if (life) {
      life.rotationStartedAt ??= at;
      life.attempts++;
    }
  } else if (a.target.kind === 'NodeClaim' && a.set[A.state] === 'pending' && a.remove.includes(A.startedAt)) {
    const life = m.lives.get(a.target.name);
    if (life) life.attempts++; // a retry of a failed claim
  }
};

const REACTIONS: { [T in Action['type']]?: Reaction<T> } = {
  createPod: onCreatePod,
  deleteNodeClaim: onDeleteNodeClaim,
  observe: onObserve,
  event: onEvent,
  annotate: onAnnotate,
};

export function react(m: SimModel, actions: readonly Action[], at: number): void {
  for (const a of actions) {
    const reaction = REACTIONS[a.type] as ((m: SimModel, a: Action, at: number) => void) | undefined;
    reaction?.(m, a, at);
  }
}
