import { describe, expect, it } from 'vitest';
import { A } from '../../src/engine/annotations.js';
import { NODEPOOL_LABEL, type NodeClaim } from '../../src/karpenter/types.js';
import type { Node, Pod } from '../../src/kube/types.js';
import { PoolIndex } from './pool-index.js';

const claimIn = (name: string, pool?: string): NodeClaim =>
  ({ metadata: { name, labels: pool ? { [NODEPOOL_LABEL]: pool } : {} } }) as NodeClaim;
const nodeIn = (name: string, pool?: string, surgeFor?: string): Node =>
  ({
    metadata: {
      name,
      labels: pool ? { [NODEPOOL_LABEL]: pool } : {},
      ...(surgeFor ? { annotations: { [A.surgeFor]: surgeFor } } : {}),
    },
  }) as Node;
const placeholderFor = (name: string, surgeFor: string): Pod => ({
  metadata: { name, namespace: 'ns', labels: { [A.surgeFor]: surgeFor } },
  spec: { containers: [] },
});

describe('PoolIndex: which objects concern which NodePool', () => {
  it('a claim belongs to the pool of its label; a change reports the pools before and after', () => {
    const ix = new PoolIndex();
    expect(ix.claim('c1', claimIn('c1', 'b'))).toEqual(['b']);
    expect(ix.claim('c2', claimIn('c2', 'b'))).toEqual(['b']);
    expect(ix.claim('c1', claimIn('c1', 'a'))).toEqual(['a', 'b']); // moved: both pools are told
    expect(ix.claims.keys('a')).toEqual(['c1']);
    expect(ix.claims.keys('b')).toEqual(['c2']);
    expect(ix.poolOf('c1')).toBe('a');
    expect(ix.claim('c1', undefined)).toEqual(['a']); // deleted
    expect(ix.claims.keys('a')).toEqual([]);
    expect(ix.poolOf('c1')).toBeUndefined();
    expect(ix.claim('c3', claimIn('c3'))).toEqual([]); // no pool label: no pool
  });

  it('a Node or a placeholder marked surge-for a claim is in its pool too, and leaves it unmarked', () => {
    const ix = new PoolIndex();
    ix.claim('old', claimIn('old', 'a'));
    expect(ix.node('n1', nodeIn('n1', 'b', 'old'))).toEqual(['a', 'b']);
    expect(ix.nodes.keys('a')).toEqual(['n1']);
    expect(ix.nodes.keys('b')).toEqual(['n1']);
    expect(ix.node('n1', nodeIn('n1', 'b'))).toEqual(['a', 'b']); // unmarked: a is told it left
    expect(ix.nodes.keys('a')).toEqual([]);
    expect(ix.placeholder('ns/p', placeholderFor('p', 'old'))).toEqual(['a']);
    expect(ix.placeholders.keys('a')).toEqual(['ns/p']);
    expect(ix.node('n2', nodeIn('n2', undefined, 'unknown-claim'))).toEqual([]); // a claim not known: no pool
  });

  it('keys of one pool share one list of pools, and a reader cannot change it', () => {
    const ix = new PoolIndex();
    for (const c of ['c1', 'c2']) ix.claim(c, claimIn(c, 'a'));
    expect(ix.claims.pools('c1')).toBe(ix.claims.pools('c2'));
    expect(Object.isFrozen(ix.claims.pools('c1'))).toBe(true);
  });
});
