// One NodePool's snapshot for the engine, from the watch caches plus the Pods of the nodes that matter.
// There is no cluster-wide Pod cache: the Pods the engine reads (for placeholder sizing and reap guards) are
// those on the nodes a rotation involves, listed per node when a pass needs them.
import { A } from '../../src/engine/annotations.js';
import { toEngineSnapshot } from '../../src/engine/boundary.js';
import type { Snapshot } from '../../src/engine/types.js';
import type { RotationPolicy } from '../../src/generated/api-types.js';
import type { NodeClaim, NodePool } from '../../src/karpenter/types.js';
import type { Node, Pod } from '../../src/kube/types.js';

/** One NodePool's objects from the watch caches (no workload Pods yet). */
export interface PoolWorld {
  policies: RotationPolicy[];
  nodePools: [NodePool];
  nodeClaims: NodeClaim[];
  nodes: Node[];
  placeholders: Pod[];
  namespace: string;
  /** The names of the PriorityClasses that exist (absent: not known, as for a delete's fresh read). */
  priorityClasses?: string[];
}

/**
 * The engine's snapshot (docs/engine-contract.md): the placeholders plus the Pods of `podsOfNodes`, listed in
 * full, which tells the engine that a node not in the list has not been looked at (it then asks for it).
 */
export function poolSnapshot(w: PoolWorld, pods: readonly Pod[], podsOfNodes: readonly string[]): Snapshot {
  const seen = new Set(w.placeholders.map((p) => `${p.metadata.namespace ?? ''}/${p.metadata.name}`));
  const others = pods.filter((p) => !seen.has(`${p.metadata.namespace ?? ''}/${p.metadata.name}`));
  return toEngineSnapshot({
    policies: w.policies,
    nodePools: w.nodePools,
    nodeClaims: w.nodeClaims,
    nodes: w.nodes,
    pods: [...w.placeholders, ...others],
    namespace: w.namespace,
    podsOfNodes,
    ...(w.priorityClasses ? { priorityClasses: w.priorityClasses } : {}),
  });
}

/**
 * The nodes whose Pods a rotation in flight needs, known from the anchor before deciding: the anchored claim's
 * node and its surge claim's node. Supplying them up front saves a second round in the usual case; anything
 * else the engine needs it names in `missingPods`.
 */
export function anchoredNodes(s: Pick<Snapshot, 'nodePools' | 'nodeClaims'>): string[] {
  const out = new Set<string>();
  const nodeOf = new Map(s.nodeClaims.map((c) => [c.metadata.name, c.status?.nodeName]));
  for (const pool of s.nodePools) {
    const active = pool.metadata.annotations?.[A.activeRotation];
    if (!active) continue;
    const own = nodeOf.get(active);
    if (own) out.add(own);
    const surgeClaim = s.nodeClaims.find((c) => c.metadata.name === active)?.metadata.annotations?.[A.surgeClaim];
    const surge = surgeClaim ? nodeOf.get(surgeClaim) : undefined;
    if (surge) out.add(surge);
  }
  return [...out].sort();
}
