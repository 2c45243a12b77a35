// One NodePool's snapshot for the engine, from the watch caches plus the Pods of the nodes that matter.
// There is no cluster-wide Pod cache: the Pods the engine reads (for placeholder sizing and reap guards) are
// those on the nodes a rotation involves, listed per node when a pass needs them.
import { A } from '../../src/engine/annotations.js';
import type { Action, Decision, Snapshot } from '../../src/engine/types.js';
import type { RotationPolicy } from '../../src/generated/api-types.js';
import type { NodeClaim, NodePool } from '../../src/karpenter/types.js';
import type { Node, Pod } from '../../src/kube/types.js';

export interface PoolWorld {
  policies: RotationPolicy[];
  pool: NodePool;
  claims: NodeClaim[];
  nodes: Node[];
  placeholders: Pod[];
  namespace: string;
}

export function poolSnapshot(w: PoolWorld, pods: readonly Pod[]): Snapshot {
  const seen = new Set(w.placeholders.map((p) => `${p.metadata.namespace ?? ''}/${p.metadata.name}`));
  const others = pods.filter((p) => !seen.has(`${p.metadata.namespace ?? ''}/${p.metadata.name}`));
  return {
    policies: w.policies,
    nodePools: [w.pool],
    nodeClaims: w.claims,
    nodes: w.nodes,
    pods: [...w.placeholders, ...others],
    namespace: w.namespace,
  };
}

/**
 * The nodes whose Pods a decision reads: the nodes of the rotation in flight (the anchored claim's node and
 * every node marked surge-for it, or of its surge claim), and every node a decision acts on (a rotation it
 * starts: the candidate's node, for sizing the placeholder).
 */
export function involvedNodes(s: Snapshot, decision: Decision | null): string[] {
  const out = new Set<string>();
  const claimNode = new Map(s.nodeClaims.map((c) => [c.metadata.name, c.status?.nodeName]));
  const addClaim = (name: string | undefined): void => {
    const n = name ? claimNode.get(name) : undefined;
    if (n) out.add(n);
  };
  for (const pool of s.nodePools) {
    const active = pool.metadata.annotations?.[A.activeRotation];
    if (!active) continue;
    addClaim(active);
    const claim = s.nodeClaims.find((c) => c.metadata.name === active);
    addClaim(claim?.metadata.annotations?.[A.surgeClaim]);
    for (const n of s.nodes) if (n.metadata.annotations?.[A.surgeFor] === active) out.add(n.metadata.name);
  }
  for (const a of decision?.actions ?? []) for (const n of nodesOf(a, claimNode)) out.add(n);
  return [...out].sort();
}

function nodesOf(a: Action, claimNode: Map<string, string | undefined>): string[] {
  switch (a.type) {
    case 'cordon':
    case 'uncordon':
      return [a.node];
    case 'annotate':
      if (a.target.kind === 'Node') return [a.target.name];
      if (a.target.kind === 'NodeClaim') return [claimNode.get(a.target.name)].filter((x): x is string => !!x);
      if (a.target.kind === 'NodePool') {
        const claim = a.set[A.activeRotation];
        return claim ? [claimNode.get(claim)].filter((x): x is string => !!x) : [];
      }
      return [];
    case 'deleteNodeClaim':
      return [claimNode.get(a.name)].filter((x): x is string => !!x);
    default:
      return [];
  }
}
