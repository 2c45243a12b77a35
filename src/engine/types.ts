// What the engine sees (a snapshot of the cluster) and what it decides (actions, each with its reason).
import type { RotationPolicy } from '../generated/api-types.js';
import type { NodeClaim, NodePool } from '../karpenter/types.js';
import type { Node, Pod } from '../kube/types.js';
import type { Figures } from '../derivation/derive.js';
import type { Finding } from '../derivation/findings.js';
import type { EventReason, Observation } from './actions.js';

export interface Snapshot {
  policies: RotationPolicy[];
  nodePools: NodePool[];
  nodeClaims: NodeClaim[];
  nodes: Node[];
  /**
   * Pods that matter: those on the nodes in `podsOfNodes` (or on every node when it is absent) and the
   * placeholders in `namespace`. What the controller must supply: docs/engine-contract.md.
   */
  pods: Pod[];
  /** Namespace the placeholder Pods live in (the controller's own). */
  namespace: string;
  /**
   * The nodes whose Pods `pods` carries in full. Absent: every node's (a cluster-wide list, as the simulator
   * and the e2e shell supply). When present, a decision that needs the Pods of another node waits for them
   * and names the node in `missingPods`, instead of deciding on an incomplete picture.
   */
  podsOfNodes?: readonly string[];
  /**
   * The names of the PriorityClasses that exist. Absent when the caller does not know (the simulator, the
   * CLI): the placeholder's PriorityClass is then assumed to exist. When present and the class a policy's
   * placeholder names is missing, no rotation can start (the API refuses the placeholder) and the pool's
   * findings say so (PlaceholderPriorityClassNotFound).
   */
  priorityClasses?: readonly string[];
}

export type Kind = 'NodePool' | 'NodeClaim' | 'Node' | 'Pod';

/** What may justify deleting a NodeClaim: the anchored candidate in its drain, or the linked surge of `of`. */
export type DeleteTarget = { role: 'candidate'; claim: string } | { role: 'surge'; claim: string; of: string };

export interface Ref {
  kind: Kind;
  name: string;
  namespace?: string;
}

interface Base {
  /** Why: one sentence a person reads in logs and events. */
  reason: string;
}

export type Action = Base &
  (
    | {
        type: 'annotate';
        target: Ref;
        set: Record<string, string>;
        remove: string[];
        /** Write only if this annotation is absent (the conflict-checked anchor write, §5.2). */
        onlyIfAbsent?: string;
      }
    /** spec.unschedulable = true plus our cordoned marker, one update. */
    | { type: 'cordon'; node: string }
    /** spec.unschedulable = false and the marker removed; only ever for a node carrying our marker. */
    | { type: 'uncordon'; node: string }
    | { type: 'createPod'; pod: Pod }
    /** Preconditioned on the UID when known: a same-named successor (another controller's) is never hit. */
    | { type: 'deletePod'; namespace: string; name: string; uid?: string }
    /**
     * Through the API: Karpenter's termination controller drains it on the voluntary path (PDBs apply). `target`
     * says what justifies it (S2, justify.ts): the shell judges that again on state read for this very write.
     */
    | { type: 'deleteNodeClaim'; name: string; uid?: string; nodePool: string; target: DeleteTarget }
    | { type: 'event'; target: Ref; eventType: 'Normal' | 'Warning'; eventReason: EventReason; message: string }
    | { type: 'observe'; metric: Observation; nodePool: string; value: number; labels?: Record<string, string> }
  );

/** Metric samples tied to transitions, emitted once per transition (§4.2); catalogue in actions.ts. */
export type { EventReason, Observation };

export type Mode = 'surge' | 'forceful-fallback';

/** Level-triggered facts about a NodePool (gauges, conditions, deduplicated warnings). */
export interface PoolReport {
  nodePool: string;
  policy: string | null;
  governance: 'governed' | 'ungoverned' | 'conflict';
  conflictingPolicies: string[];
  windowOpen: boolean;
  /** Epoch ms the open occurrence closes at; null while closed. */
  windowClosesAt: number | null;
  /** Epoch ms of the next opening after now (after the open occurrence, if open); null if none within 16 days. */
  windowOpensAt: number | null;
  /** Epoch ms until which a freeze holds, or null. */
  frozenUntil: number | null;
  /** A freeze that cannot be read (fail closed: it holds everything until fixed), or null. */
  freezeUnreadable: string | null;
  /** The pool's `last-rotation-at` and `last-failure-at` (epoch ms), as the engine last wrote them. */
  lastRotationAt: number | null;
  lastFailureAt: number | null;
  candidates: number;
  inProgress: boolean;
  activeRotation: string | null;
  mode: Mode | null;
  /** The rotation in flight's phase: `pending` (waiting for the surge) or `draining` (the old claim deleted). */
  phase: 'pending' | 'draining' | null;
  shortLead: string[];
  drainStuck: boolean;
  retryCountMax: number;
  figures: Figures | null;
  findings: Finding[];
  /** Why no rotation started on this pass, when none did (e.g. "outside the maintenance window"). */
  idle: string | null;
}

export interface PoolDecision {
  nodePool: string;
  actions: Action[];
  report: PoolReport;
  /** The earliest instant (epoch ms) at which deciding again could give a different answer without any event. */
  requeueAt: number | null;
  /** Nodes whose Pods this pool's next step needs and the snapshot lacks (see Snapshot.podsOfNodes); sorted. */
  missingPods: string[];
}

export interface Decision {
  pools: PoolDecision[];
  /** Every action of every pool, pools in name order. */
  actions: Action[];
  /** Every pool's missingPods, sorted and deduplicated: supply these nodes' Pods and decide again. */
  missingPods: string[];
}
