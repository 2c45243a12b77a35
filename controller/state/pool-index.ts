// Which objects belong to which NodePool, kept up to date from the watches' change notifications, so that a
// pool's pass reads only its own objects (its cost does not grow with the fleet) and a watch event maps to
// the pools it concerns without a scan.
import { A } from '../../src/engine/annotations.js';
import { NODEPOOL_LABEL, type NodeClaim } from '../../src/karpenter/types.js';
import type { Node, Pod } from '../../src/kube/types.js';
import { boundedCache } from '../../src/util/bounded-cache.js';

type Named = { metadata: { name: string; namespace?: string; labels?: Record<string, string> } };

/**
 * One frozen list per distinct set of pools, so that thousands of keys in the same pool hold one list between
 * them (a Set per key was most of the index's memory). Bounded: a set of pools no longer seen is forgotten, and
 * a forgotten one is only made again.
 */
const poolLists = boundedCache<string, readonly string[]>(1024);
const NO_POOLS: readonly string[] = Object.freeze([]);
const listOf = (pools: readonly string[]): readonly string[] =>
  pools.length === 0 ? NO_POOLS : poolLists.get(pools.join('\n'), () => Object.freeze([...pools]));

/** A multimap pool → keys with reverse lookup, for one kind. */
class Membership {
  private readonly byPool = new Map<string, Set<string>>();
  private readonly poolsOf = new Map<string, readonly string[]>();

  /** `pools` sorted, without duplicates. */
  set(key: string, pools: readonly string[]): void {
    for (const p of this.poolsOf.get(key) ?? NO_POOLS) this.byPool.get(p)?.delete(key);
    if (pools.length === 0) {
      this.poolsOf.delete(key);
      return;
    }
    this.poolsOf.set(key, listOf(pools));
    for (const p of pools) {
      let s = this.byPool.get(p);
      if (!s) this.byPool.set(p, (s = new Set()));
      s.add(key);
    }
  }

  keys(pool: string): string[] {
    return [...(this.byPool.get(pool) ?? [])].sort();
  }

  pools(key: string): readonly string[] {
    return this.poolsOf.get(key) ?? NO_POOLS;
  }
}

export class PoolIndex {
  readonly claims = new Membership();
  readonly nodes = new Membership();
  readonly placeholders = new Membership();

  /** Records a NodeClaim (or its removal); returns the pools it concerned before and after. */
  claim(key: string, claim: NodeClaim | undefined): string[] {
    const before = this.claims.pools(key);
    const pool = claim?.metadata.labels?.[NODEPOOL_LABEL];
    this.claims.set(key, pool ? [pool] : NO_POOLS);
    return union(before, pool ? [pool] : NO_POOLS);
  }

  /** A Node belongs to the pool of its label and, while it carries surge-for, to the pool of that claim. */
  node(key: string, node: Node | undefined): string[] {
    const before = this.nodes.pools(key);
    const pools = node ? this.poolsOfMarked(node) : NO_POOLS;
    this.nodes.set(key, pools);
    return union(before, pools);
  }

  /** Placeholder Pods belong to the pool of their label, else to the pool of the claim they surge for. */
  placeholder(key: string, pod: Pod | undefined): string[] {
    const before = this.placeholders.pools(key);
    const pools = pod ? this.poolsOfMarked(pod) : NO_POOLS;
    this.placeholders.set(key, pools);
    return union(before, pools);
  }

  /** The pool of a NodeClaim, by name (NodeClaims are cluster-scoped: the name is the key). */
  poolOf(claim: string): string | undefined {
    return this.claims.pools(claim)[0];
  }

  private poolsOfMarked(o: Named & { metadata: { annotations?: Record<string, string> } }): string[] {
    const out = new Set<string>();
    const label = o.metadata.labels?.[NODEPOOL_LABEL];
    if (label) out.add(label);
    // The annotation holds the full claim name when the label had to be shortened (docs/state.md).
    const surgeFor = o.metadata.annotations?.[A.surgeFor] ?? o.metadata.labels?.[A.surgeFor];
    const owner = surgeFor ? this.poolOf(surgeFor) : undefined;
    if (owner) out.add(owner);
    return [...out].sort();
  }
}

function union(a: readonly string[], b: readonly string[]): string[] {
  return [...new Set([...a, ...b])].sort();
}
