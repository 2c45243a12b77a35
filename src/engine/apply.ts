// Applies actions to a snapshot in memory, as the API server would: the simulator's model of the cluster,
// the engine's own fixpoint within one decision, and the idempotence property all use this one function.
import type { NodeClaim, NodePool } from '../karpenter/types.js';
import type { Node, Pod } from '../kube/types.js';
import { A, rfc3339 } from './annotations.js';
import { shareStructure } from './cluster-index.js';
import type { Action, Snapshot } from './types.js';

type Annotated = { metadata: { name: string; annotations?: Record<string, string>; namespace?: string } };

function find<T extends Annotated>(list: T[], name: string, namespace?: string): number {
  return list.findIndex(
    (o) => o.metadata.name === name && (namespace === undefined || o.metadata.namespace === namespace),
  );
}

function withAnnotations<T extends Annotated>(obj: T, set: Record<string, string>, remove: readonly string[]): T {
  const annotations = { ...(obj.metadata.annotations ?? {}) };
  for (const k of remove) delete annotations[k];
  Object.assign(annotations, set);
  return { ...obj, metadata: { ...obj.metadata, annotations } };
}

/** Whether applying `action` would change `snapshot` (used to keep decisions free of no-op writes). */
export function changes(snapshot: Snapshot, action: Action): boolean {
  return apply(snapshot, [action], 0) !== snapshot;
}

/**
 * Returns a new snapshot with the actions applied (the input is not modified); returns the same object when
 * nothing changes. `now` stamps deletionTimestamps. Events and observations change nothing.
 */
export function apply(snapshot: Snapshot, actions: readonly Action[], now: number): Snapshot {
  let s = snapshot;
  const replace = <K extends 'nodePools' | 'nodeClaims' | 'nodes' | 'pods'>(
    key: K,
    index: number,
    value: Snapshot[K][number],
  ): void => {
    const prev = s[key];
    const list = [...prev] as Snapshot[K][number][];
    list[index] = value;
    // Same names, owners and links at the same positions: the index may keep its maps (cluster-index.ts).
    if (key !== 'pods') shareStructure(prev, list);
    s = { ...s, [key]: list };
  };
  for (const action of actions) {
    switch (action.type) {
      case 'annotate': {
        const key = ({ NodePool: 'nodePools', NodeClaim: 'nodeClaims', Node: 'nodes', Pod: 'pods' } as const)[
          action.target.kind
        ];
        const list = s[key] as Annotated[];
        const i = find(list, action.target.name, action.target.namespace);
        if (i < 0) break;
        const obj = list[i] as Annotated;
        if (action.onlyIfAbsent && obj.metadata.annotations?.[action.onlyIfAbsent] !== undefined) break;
        const before = obj.metadata.annotations ?? {};
        const same =
          action.remove.every((k) => before[k] === undefined) &&
          Object.entries(action.set).every(([k, v]) => before[k] === v);
        if (same) break;
        replace(key, i, withAnnotations(obj, action.set, action.remove) as never);
        break;
      }
      case 'cordon':
      case 'uncordon': {
        const i = find(s.nodes, action.node);
        if (i < 0) break;
        const node = s.nodes[i] as Node;
        const on = action.type === 'cordon';
        if ((node.spec.unschedulable === true) === on && (node.metadata.annotations?.[A.cordoned] === 'true') === on)
          break;
        const next = withAnnotations(node, on ? { [A.cordoned]: 'true' } : {}, on ? [] : [A.cordoned]);
        replace('nodes', i, { ...next, spec: { ...next.spec, unschedulable: on } });
        break;
      }
      case 'createPod':
        if (find(s.pods, action.pod.metadata.name, action.pod.metadata.namespace) >= 0) break;
        s = { ...s, pods: [...s.pods, { ...action.pod, status: { phase: 'Pending' } }] };
        break;
      case 'deletePod': {
        const i = find(s.pods, action.name, action.namespace);
        if (i < 0) break;
        s = { ...s, pods: s.pods.filter((_, j) => j !== i) };
        break;
      }
      case 'deleteNodeClaim': {
        const i = find(s.nodeClaims, action.name);
        if (i < 0 || (s.nodeClaims[i] as NodeClaim).metadata.deletionTimestamp) break;
        const claim = s.nodeClaims[i] as NodeClaim;
        replace('nodeClaims', i, { ...claim, metadata: { ...claim.metadata, deletionTimestamp: rfc3339(now) } });
        break;
      }
      case 'event':
      case 'observe':
        break;
    }
  }
  return s;
}

export type { NodePool, Pod };
