// The engine's vocabulary: the catalogue of event reasons and metric observations, and one builder per action
// type. Every action the engine returns is built here, so an event's type (Normal/Warning) is fixed by its
// reason, an observation names a known metric, and a new action shape changes one file.
import type { NodeClaim } from '../karpenter/types.js';
import type { Pod } from '../kube/types.js';
import type { Action, DeleteTarget, Ref } from './types.js';

type EventType = 'Normal' | 'Warning';
interface ReasonEntry {
  type: EventType;
  on: Ref['kind'];
  /** Who emits it: the engine as an `event` action, or the controller from the pool report (level-triggered). */
  by: 'engine' | 'controller';
  meaning: string;
}

/** Every event reason, its type, the object it is emitted on and what it means (docs/observability.md). */
export const EVENT_REASONS = {
  RotationStarted: { type: 'Normal', on: 'NodePool', by: 'engine', meaning: 'a candidate is anchored' },
  DrainStarted: {
    type: 'Normal',
    on: 'NodePool',
    by: 'engine',
    meaning: 'surge ready; the old NodeClaim is deleted',
  },
  RotationCompleted: { type: 'Normal', on: 'NodePool', by: 'engine', meaning: 'the old NodeClaim is gone' },
  ForcefulFallback: { type: 'Warning', on: 'NodePool', by: 'engine', meaning: 'a surge-less fallback begins' },
  RotationExpired: {
    type: 'Warning',
    on: 'NodePool',
    by: 'engine',
    meaning: 'the claim was removed before its drain started',
  },
  GovernanceLost: {
    type: 'Warning',
    on: 'NodePool',
    by: 'engine',
    meaning: 'the pool lost its policy mid-rotation; rolled back',
  },
  PolicyConflict: {
    type: 'Warning',
    on: 'NodePool',
    by: 'controller',
    meaning: 'equal-specificity tie between RotationPolicies',
  },
  NoSurgeHeadroom: {
    type: 'Warning',
    on: 'NodePool',
    by: 'controller',
    meaning: "spec.limits leave no room for the surge's footprint",
  },
  RotationFailed: { type: 'Warning', on: 'NodeClaim', by: 'engine', meaning: 'readyTimeout elapsed; rolled back' },
  ShortLead: {
    type: 'Warning',
    on: 'NodeClaim',
    by: 'controller',
    meaning: 'its own expireAfter cannot guarantee K windows',
  },
  SurgeClamped: { type: 'Normal', on: 'NodeClaim', by: 'engine', meaning: 'placeholder clamped within the band' },
  SurgeClampBandExceeded: {
    type: 'Warning',
    on: 'NodeClaim',
    by: 'engine',
    meaning: 'clamp shortfall above 5 % of the limit',
  },
  SurgeClampRefused: { type: 'Warning', on: 'NodeClaim', by: 'engine', meaning: 'DaemonSets exhaust allocatable' },
  OrphanedRotationState: {
    type: 'Warning',
    on: 'NodeClaim',
    by: 'engine',
    meaning: 'the start-up sweep found a pending/draining claim without an anchor',
  },
} as const satisfies Record<string, ReasonEntry>;

export type EventReason = keyof typeof EVENT_REASONS;

interface TransitionMetric {
  type: 'counter' | 'histogram';
  /** Label names besides `nodepool`, which every one of them has. */
  labels: readonly string[];
  help: string;
  buckets?: readonly number[];
}

/**
 * The metrics fed by transitions (docs/observability.md): this table is their declaration — the controller builds
 * its prom-client objects from it, so a name, label or bucket exists in exactly one place.
 */
export const TRANSITION_METRICS = {
  noderotation_completed_total: {
    type: 'counter',
    labels: ['outcome'],
    help: 'Finished rotations by outcome: success, failure, expired (Karpenter removed the claim first).',
  },
  noderotation_forceful_fallback_total: {
    type: 'counter',
    labels: [],
    help: 'Surge-less fallback rotations started (ADR-0001).',
  },
  noderotation_duration_seconds: {
    type: 'histogram',
    labels: ['phase'],
    help: 'Rotation phases: surge_wait (started-at to surge ready), drain (draining-at to claim gone).',
    buckets: [30, 60, 120, 300, 600, 900, 1800, 3600, 7200],
  },
} as const satisfies Record<string, TransitionMetric>;

export type TransitionMetricName = keyof typeof TRANSITION_METRICS;

interface ObservationEntry {
  metric: TransitionMetricName;
  /** Labels this observation always carries. */
  fixed: Readonly<Record<string, string>>;
  /** Labels the emitting action supplies (its `labels`); with `fixed`, exactly the metric's labels. */
  supplied: readonly string[];
  meaning: string;
}

/**
 * Transition samples the engine emits as `observe` actions, and the metric and labels each one feeds. The rotation
 * mode is not a label of `noderotation_completed_total` (the reference's label set): fallbacks are counted by
 * `noderotation_forceful_fallback_total`.
 */
export const OBSERVATIONS = {
  completed: {
    metric: 'noderotation_completed_total',
    fixed: {},
    supplied: ['outcome'],
    meaning: 'a rotation finished: outcome success, failure or expired',
  },
  forcefulFallback: {
    metric: 'noderotation_forceful_fallback_total',
    fixed: {},
    supplied: [],
    meaning: 'a surge-less fallback rotation started',
  },
  surgeWaitSeconds: {
    metric: 'noderotation_duration_seconds',
    fixed: { phase: 'surge_wait' },
    supplied: [],
    meaning: 'started-at → surge ready (phase surge_wait)',
  },
  drainSeconds: {
    metric: 'noderotation_duration_seconds',
    fixed: { phase: 'drain' },
    supplied: [],
    meaning: 'draining-at → old NodeClaim gone (phase drain)',
  },
} as const satisfies Record<string, ObservationEntry>;

export type Observation = keyof typeof OBSERVATIONS;

export type Outcome = 'success' | 'failure' | 'expired';

// --- builders ---

export const poolRef = (name: string): Ref => ({ kind: 'NodePool', name });
export const claimRef = (name: string): Ref => ({ kind: 'NodeClaim', name });
export const nodeRef = (name: string): Ref => ({ kind: 'Node', name });

/** Set and remove annotations on one object; `onlyIfAbsent` makes it the conflict-checked anchor write. */
export function annotate(
  target: Ref,
  set: Record<string, string>,
  remove: readonly string[],
  reason: string,
  onlyIfAbsent?: string,
): Action {
  return { type: 'annotate', target, set, remove: [...remove], reason, ...(onlyIfAbsent ? { onlyIfAbsent } : {}) };
}

export const cordonNode = (node: string, reason: string): Action => ({ type: 'cordon', node, reason });
export const uncordonNode = (node: string, reason: string): Action => ({ type: 'uncordon', node, reason });
export const createPod = (pod: Pod, reason: string): Action => ({ type: 'createPod', pod, reason });

export const deletePod = (pod: Pod, reason: string): Action => ({
  type: 'deletePod',
  namespace: pod.metadata.namespace as string,
  name: pod.metadata.name,
  ...(pod.metadata.uid ? { uid: pod.metadata.uid } : {}),
  reason,
});

/**
 * Delete through the API, preconditioned on the UID (never a same-named successor) and judged again by the shell
 * on fresh state (`target`, S2). A claim without a UID is never deleted: the shell refuses it.
 */
export const deleteNodeClaim = (claim: NodeClaim, nodePool: string, target: DeleteTarget, reason: string): Action => ({
  type: 'deleteNodeClaim',
  name: claim.metadata.name,
  ...(claim.metadata.uid ? { uid: claim.metadata.uid } : {}),
  nodePool,
  target,
  reason,
});

/** An event; its type comes from the catalogue. `why` defaults to the message. */
export function event(target: Ref, eventReason: EventReason, message: string, why: string = message): Action {
  return { type: 'event', target, eventType: EVENT_REASONS[eventReason].type, eventReason, message, reason: why };
}

export function observe(
  nodePool: string,
  metric: Observation,
  value: number,
  reason: string,
  labels?: Record<string, string>,
): Action {
  return { type: 'observe', metric, nodePool, value, reason, ...(labels ? { labels } : {}) };
}
