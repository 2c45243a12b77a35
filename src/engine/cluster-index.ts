// Lookups over a snapshot: which Node backs a NodeClaim, which pods run where, which NodeClaim a Node is.
import { nodePoolOf, type NodeClaim } from '../karpenter/types.js';
import type { Node, Pod } from '../kube/types.js';
import { A, COMPONENT_LABEL, PLACEHOLDER_COMPONENT } from './annotations.js';
import type { Snapshot } from './types.js';

export interface ClusterIndex {
  nodeOfClaim(claim: NodeClaim): Node | undefined;
  claimOfNode(node: Node): NodeClaim | undefined;
  node(name: string): Node | undefined;
  claim(name: string): NodeClaim | undefined;
  podsOn(nodeName: string): Pod[];
  placeholderFor(claimName: string): Pod | undefined;
  claimsOf(pool: string): NodeClaim[];
  nodesMarkedFor(claimName: string): Node[];
}

export const isPlaceholder = (pod: Pod): boolean => pod.metadata.labels?.[COMPONENT_LABEL] === PLACEHOLDER_COMPONENT;

export function indexSnapshot(s: Snapshot): ClusterIndex {
  const nodes = new Map(s.nodes.map((n) => [n.metadata.name, n]));
  const byProvider = new Map(s.nodes.filter((n) => n.spec.providerID).map((n) => [n.spec.providerID as string, n]));
  const claims = new Map(s.nodeClaims.map((c) => [c.metadata.name, c]));
  const claimByNode = new Map<string, NodeClaim>();
  for (const c of s.nodeClaims) {
    const n = c.status?.nodeName ? nodes.get(c.status.nodeName) : c.status?.providerID ? byProvider.get(c.status.providerID) : undefined;
    if (n) claimByNode.set(n.metadata.name, c);
  }
  for (const n of s.nodes) {
    // The Node is owned by its NodeClaim once registered.
    const owner = n.metadata.ownerReferences?.find((o) => o.kind === 'NodeClaim');
    if (owner && !claimByNode.has(n.metadata.name) && claims.has(owner.name)) claimByNode.set(n.metadata.name, claims.get(owner.name) as NodeClaim);
  }
  const nodeByClaim = new Map([...claimByNode].map(([node, c]) => [c.metadata.name, nodes.get(node) as Node]));
  const podsByNode = new Map<string, Pod[]>();
  const placeholders = new Map<string, Pod>();
  for (const p of s.pods) {
    if (p.spec.nodeName) podsByNode.set(p.spec.nodeName, [...(podsByNode.get(p.spec.nodeName) ?? []), p]);
    const owner = p.metadata.annotations?.[A.surgeFor];
    if (owner && isPlaceholder(p) && p.metadata.namespace === s.namespace) placeholders.set(owner, p);
  }
  const claimsByPool = new Map<string, NodeClaim[]>();
  for (const c of s.nodeClaims) {
    const pool = nodePoolOf(c);
    if (pool) claimsByPool.set(pool, [...(claimsByPool.get(pool) ?? []), c]);
  }
  return {
    nodeOfClaim: (c) => nodeByClaim.get(c.metadata.name),
    claimOfNode: (n) => claimByNode.get(n.metadata.name),
    node: (name) => nodes.get(name),
    claim: (name) => claims.get(name),
    podsOn: (name) => podsByNode.get(name) ?? [],
    placeholderFor: (name) => placeholders.get(name),
    claimsOf: (pool) => claimsByPool.get(pool) ?? [],
    nodesMarkedFor: (name) => s.nodes.filter((n) => n.metadata.annotations?.[A.surgeFor] === name),
  };
}
