// Lookups over a snapshot: which Node backs a NodeClaim, which pods run where, which NodeClaim a Node is.
//
// Snapshots are immutable. apply() replaces an annotated or cordoned object at the same position of a new
// list, which changes no name, owner or link; it hands the old list's *structure* token to the new list
// (shareStructure). The maps below hold positions and are cached per structure, so a decision over 10k
// claims does not rebuild them because one Node was annotated; lookups read the current list.
import { nodePoolOf, type NodeClaim } from '../karpenter/types.js';
import type { Node, Pod } from '../kube/types.js';
import { A } from './annotations.js';
import { placeholderKey, surgeForLabelValue } from './identity.js';
import type { Snapshot } from './types.js';

export interface ClusterIndex {
  nodeOfClaim(claim: NodeClaim): Node | undefined;
  claimOfNode(node: Node): NodeClaim | undefined;
  node(name: string): Node | undefined;
  claim(name: string): NodeClaim | undefined;
  /** The Pods on a node; [] (and the node recorded in missingPods) when the snapshot does not carry them. */
  podsOn(nodeName: string): Pod[];
  /** Nodes asked for through podsOn whose Pods the snapshot does not carry (Snapshot.podsOfNodes). */
  missingPods(): string[];
  placeholderFor(claimName: string): Pod | undefined;
  claimsOf(pool: string): NodeClaim[];
  nodesMarkedFor(claimName: string): Node[];
}

export { isPlaceholder } from './identity.js';

type Token = { readonly id: number };
const structures = new WeakMap<readonly unknown[], Token>();
let nextToken = 0;

function structure(list: readonly unknown[]): Token {
  let t = structures.get(list);
  if (!t) {
    t = { id: nextToken++ };
    structures.set(list, t);
  }
  return t;
}

/** `next` has the same objects' names, owners and links at the same positions as `prev` (annotations aside). */
export function shareStructure(prev: readonly unknown[], next: readonly unknown[]): void {
  structures.set(next, structure(prev));
}

function push<K, V>(map: Map<K, V[]>, key: K, value: V): void {
  const list = map.get(key);
  if (list) list.push(value);
  else map.set(key, [value]);
}

interface NodeMaps {
  byName: Map<string, number>;
  byProvider: Map<string, number>;
}
interface ClaimMaps {
  byName: Map<string, number>;
  byPool: Map<string, number[]>;
}
interface PodMaps {
  byNode: Map<string, Pod[]>;
  /** By surge-for label value. */
  placeholders: Map<string, Pod>;
}
/** node position → claim position and back. */
interface Links {
  claimOfNode: Map<number, number>;
  nodeOfClaim: Map<number, number>;
}

const nodeCache = new WeakMap<Token, NodeMaps>();
const claimCache = new WeakMap<Token, ClaimMaps>();
const podCache = new WeakMap<readonly Pod[], Map<string, PodMaps>>();
const linkCache = new WeakMap<Token, WeakMap<Token, Links>>();

function nodeMaps(nodes: readonly Node[]): NodeMaps {
  const t = structure(nodes);
  let m = nodeCache.get(t);
  if (!m) {
    m = { byName: new Map(), byProvider: new Map() };
    nodes.forEach((n, i) => {
      m!.byName.set(n.metadata.name, i);
      if (n.spec.providerID) m!.byProvider.set(n.spec.providerID, i);
    });
    nodeCache.set(t, m);
  }
  return m;
}

function claimMaps(claims: readonly NodeClaim[]): ClaimMaps {
  const t = structure(claims);
  let m = claimCache.get(t);
  if (!m) {
    m = { byName: new Map(), byPool: new Map() };
    claims.forEach((c, i) => {
      m!.byName.set(c.metadata.name, i);
      const pool = nodePoolOf(c);
      if (pool) push(m!.byPool, pool, i);
    });
    claimCache.set(t, m);
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
      const key = placeholderKey(p);
      if (key === undefined || p.metadata.namespace !== namespace) continue;
      // Two for one rotation (ours and a differently named one of the reference's): the first by name.
      const seen = m.placeholders.get(key);
      if (!seen || p.metadata.name < seen.metadata.name) m.placeholders.set(key, p);
    }
    byNs.set(namespace, m);
  }
  return m;
}

function links(claims: readonly NodeClaim[], nodes: readonly Node[]): Links {
  const ct = structure(claims);
  const nt = structure(nodes);
  let inner = linkCache.get(ct);
  if (!inner) {
    inner = new WeakMap();
    linkCache.set(ct, inner);
  }
  let l = inner.get(nt);
  if (!l) {
    const n = nodeMaps(nodes);
    const c = claimMaps(claims);
    l = { claimOfNode: new Map(), nodeOfClaim: new Map() };
    claims.forEach((claim, ci) => {
      const ni = claim.status?.nodeName
        ? n.byName.get(claim.status.nodeName)
        : claim.status?.providerID
          ? n.byProvider.get(claim.status.providerID)
          : undefined;
      if (ni !== undefined) l!.claimOfNode.set(ni, ci);
    });
    nodes.forEach((node, ni) => {
      // The Node is owned by its NodeClaim once registered.
      if (l!.claimOfNode.has(ni)) return;
      const owner = node.metadata.ownerReferences?.find((o) => o.kind === 'NodeClaim');
      const ci = owner ? c.byName.get(owner.name) : undefined;
      if (ci !== undefined) l!.claimOfNode.set(ni, ci);
    });
    for (const [ni, ci] of l.claimOfNode) l.nodeOfClaim.set(ci, ni);
    inner.set(nt, l);
  }
  return l;
}

/** Claims of each pool, materialised once per claims list (lists change identity when a claim is annotated). */
const poolClaims = new WeakMap<readonly NodeClaim[], Map<string, NodeClaim[]>>();

function claimsOfPool(claims: readonly NodeClaim[], c: ClaimMaps, pool: string): NodeClaim[] {
  let byPool = poolClaims.get(claims);
  if (!byPool) {
    byPool = new Map();
    poolClaims.set(claims, byPool);
  }
  let list = byPool.get(pool);
  if (!list) {
    list = (c.byPool.get(pool) ?? []).map((i) => claims[i] as NodeClaim);
    byPool.set(pool, list);
  }
  return list;
}

const supplied = new WeakMap<readonly string[], ReadonlySet<string>>();
function suppliedNodes(list: readonly string[]): ReadonlySet<string> {
  let set = supplied.get(list);
  if (!set) {
    set = new Set(list);
    supplied.set(list, set);
  }
  return set;
}

export function indexSnapshot(s: Snapshot): ClusterIndex {
  const complete = s.podsOfNodes ? suppliedNodes(s.podsOfNodes) : null;
  const missing = new Set<string>();
  const nodes = s.nodes;
  const claims = s.nodeClaims;
  const n = nodeMaps(nodes);
  const c = claimMaps(claims);
  const p = podMaps(s.pods, s.namespace);
  const l = links(claims, nodes);
  const at = <T>(list: readonly T[], i: number | undefined): T | undefined => (i === undefined ? undefined : list[i]);
  return {
    nodeOfClaim: (claim) => at(nodes, l.nodeOfClaim.get(c.byName.get(claim.metadata.name) as number)),
    claimOfNode: (node) => at(claims, l.claimOfNode.get(n.byName.get(node.metadata.name) as number)),
    node: (name) => at(nodes, n.byName.get(name)),
    claim: (name) => at(claims, c.byName.get(name)),
    podsOn: (name) => {
      if (complete && !complete.has(name)) missing.add(name);
      return p.byNode.get(name) ?? [];
    },
    missingPods: () => [...missing].sort(),
    placeholderFor: (name) => p.placeholders.get(surgeForLabelValue(name)),
    claimsOf: (pool) => claimsOfPool(claims, c, pool),
    // Markers change with every annotation, and this is only asked on the way out of a rotation.
    nodesMarkedFor: (name) => nodes.filter((x) => x.metadata.annotations?.[A.surgeFor] === name),
  };
}
