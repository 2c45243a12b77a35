// Lookups over a snapshot: which Node backs a NodeClaim, which pods run where, which NodeClaim a Node is.
// Snapshots are immutable and apply() replaces only the lists it changes, so each part of the index is
// cached by the identity of the list it was built from: a decision over 10k claims does not rebuild the
// claim maps because one Node was annotated.
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

function push<K, V>(map: Map<K, V[]>, key: K, value: V): void {
  const list = map.get(key);
  if (list) list.push(value);
  else map.set(key, [value]);
}

interface NodeMaps { byName: Map<string, Node>; byProvider: Map<string, Node>; marked: Map<string, Node[]> }
interface ClaimMaps { byName: Map<string, NodeClaim>; byPool: Map<string, NodeClaim[]> }
interface PodMaps { byNode: Map<string, Pod[]>; placeholders: Map<string, Pod> }
interface Links { claimByNode: Map<string, NodeClaim>; nodeByClaim: Map<string, Node> }

const nodeCache = new WeakMap<readonly Node[], NodeMaps>();
const claimCache = new WeakMap<readonly NodeClaim[], ClaimMaps>();
const podCache = new WeakMap<readonly Pod[], Map<string, PodMaps>>();
const linkCache = new WeakMap<readonly NodeClaim[], WeakMap<readonly Node[], Links>>();

function nodeMaps(nodes: readonly Node[]): NodeMaps {
  let m = nodeCache.get(nodes);
  if (!m) {
    m = { byName: new Map(), byProvider: new Map(), marked: new Map() };
    for (const n of nodes) {
      m.byName.set(n.metadata.name, n);
      if (n.spec.providerID) m.byProvider.set(n.spec.providerID, n);
      const owner = n.metadata.annotations?.[A.surgeFor];
      if (owner) push(m.marked, owner, n);
    }
    nodeCache.set(nodes, m);
  }
  return m;
}

function claimMaps(claims: readonly NodeClaim[]): ClaimMaps {
  let m = claimCache.get(claims);
  if (!m) {
    m = { byName: new Map(), byPool: new Map() };
    for (const c of claims) {
      m.byName.set(c.metadata.name, c);
      const pool = nodePoolOf(c);
      if (pool) push(m.byPool, pool, c);
    }
    claimCache.set(claims, m);
  }
  return m;
}

function podMaps(pods: readonly Pod[], namespace: string): PodMaps {
  let byNs = podCache.get(pods);
  if (!byNs) {
    byNs = new Map();
    podCache.set(pods, byNs);
  }
  let m = byNs.get(namespace);
  if (!m) {
    m = { byNode: new Map(), placeholders: new Map() };
    for (const p of pods) {
      if (p.spec.nodeName) push(m.byNode, p.spec.nodeName, p);
      const owner = p.metadata.annotations?.[A.surgeFor];
      if (owner && isPlaceholder(p) && p.metadata.namespace === namespace) m.placeholders.set(owner, p);
    }
    byNs.set(namespace, m);
  }
  return m;
}

function links(claims: readonly NodeClaim[], nodes: readonly Node[]): Links {
  let inner = linkCache.get(claims);
  if (!inner) {
    inner = new WeakMap();
    linkCache.set(claims, inner);
  }
  let l = inner.get(nodes);
  if (!l) {
    const n = nodeMaps(nodes);
    const c = claimMaps(claims);
    l = { claimByNode: new Map(), nodeByClaim: new Map() };
    for (const claim of claims) {
      const node = claim.status?.nodeName ? n.byName.get(claim.status.nodeName) : claim.status?.providerID ? n.byProvider.get(claim.status.providerID) : undefined;
      if (node) l.claimByNode.set(node.metadata.name, claim);
    }
    for (const node of nodes) {
      // The Node is owned by its NodeClaim once registered.
      if (l.claimByNode.has(node.metadata.name)) continue;
      const owner = node.metadata.ownerReferences?.find((o) => o.kind === 'NodeClaim');
      const claim = owner ? c.byName.get(owner.name) : undefined;
      if (claim) l.claimByNode.set(node.metadata.name, claim);
    }
    for (const [nodeName, claim] of l.claimByNode) l.nodeByClaim.set(claim.metadata.name, n.byName.get(nodeName) as Node);
    inner.set(nodes, l);
  }
  return l;
}

export function indexSnapshot(s: Snapshot): ClusterIndex {
  const n = nodeMaps(s.nodes);
  const c = claimMaps(s.nodeClaims);
  const p = podMaps(s.pods, s.namespace);
  const l = links(s.nodeClaims, s.nodes);
  return {
    nodeOfClaim: (claim) => l.nodeByClaim.get(claim.metadata.name),
    claimOfNode: (node) => l.claimByNode.get(node.metadata.name),
    node: (name) => n.byName.get(name),
    claim: (name) => c.byName.get(name),
    podsOn: (name) => p.byNode.get(name) ?? [],
    placeholderFor: (name) => p.placeholders.get(name),
    claimsOf: (pool) => c.byPool.get(pool) ?? [],
    nodesMarkedFor: (name) => n.marked.get(name) ?? [],
  };
}
