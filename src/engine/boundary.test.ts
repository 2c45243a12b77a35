// The client boundary: @kubernetes/client-node 1.4.x hands the controller class instances with Date
// timestamps; toEngineSnapshot turns them into what the engine reads (strings), frozen and identity-stable.
import { loadYaml } from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import { claim, IN_WINDOW, nodePool, NS, OLD, policy, snapshot, workload } from '../../test/support/fixtures.js';
import type { Node, Pod } from '../kube/types.js';
import { served, SnapshotError, toEngineSnapshot } from './boundary.js';
import { decide } from './decide.js';

/** The object as client-node returns it from the API: deserialised by its generated model (Dates). */
const viaClient = <T extends object>(obj: T, kind: 'Node' | 'Pod'): object =>
  loadYaml(JSON.stringify({ ...obj, apiVersion: 'v1', kind }));

const candidate = claim('old', { createdAt: OLD });
const node = candidate.node as Node;
const pod = workload('w', node.metadata.name, { cpu: '1' });
const raw = snapshot({ policies: [policy()], pool: nodePool(), claims: [candidate], pods: [pod] });

function clientSnapshot(): Parameters<typeof toEngineSnapshot>[0] {
  const timedNode: Node = {
    ...node,
    metadata: { ...node.metadata, creationTimestamp: candidate.claim.metadata.creationTimestamp },
  };
  return {
    ...raw,
    nodes: [viaClient(timedNode, 'Node')],
    pods: [viaClient(pod, 'Pod')],
  };
}

describe('toEngineSnapshot', () => {
  it('receives Dates from client-node (the premise of this boundary)', () => {
    const n = clientSnapshot().nodes[0] as { metadata: { creationTimestamp: unknown } };
    expect(n.metadata.creationTimestamp).toBeInstanceOf(Date);
  });

  it('turns every Date into the RFC 3339 string the API served, second precision kept as written', () => {
    const s = toEngineSnapshot(clientSnapshot());
    expect(s.nodes[0]?.metadata.creationTimestamp).toBe(candidate.claim.metadata.creationTimestamp);
    expect(JSON.stringify(s)).not.toMatch(/\.000Z/);
  });

  it('keeps sub-second digits where there are some (MicroTime fields)', () => {
    const s = toEngineSnapshot({
      ...raw,
      pods: [{ ...pod, status: { phase: 'Running', startTime: new Date('2027-01-01T00:00:00.250Z') } }],
    });
    expect((s.pods[0]?.status as { startTime?: string }).startTime).toBe('2027-01-01T00:00:00.250Z');
  });

  it('gives the same decision as the API JSON the engine was built on', () => {
    const fromClient = toEngineSnapshot(clientSnapshot());
    const fromJson = { ...raw, nodes: [{ ...node, metadata: { ...node.metadata } }] };
    fromJson.nodes[0]!.metadata.creationTimestamp = candidate.claim.metadata.creationTimestamp;
    expect(decide(fromClient, IN_WINDOW).actions).toEqual(decide(fromJson, IN_WINDOW).actions);
    expect(decide(fromClient, IN_WINDOW).actions.length).toBeGreaterThan(0);
  });

  it('returns plain, deeply frozen objects: a write into them throws', () => {
    const s = toEngineSnapshot(clientSnapshot());
    const n = s.nodes[0] as Node;
    expect(Object.getPrototypeOf(n)).toBe(Object.prototype);
    expect(Object.isFrozen(n.metadata.labels)).toBe(true);
    expect(() => {
      (n.metadata.labels as Record<string, string>).x = 'y';
    }).toThrow(TypeError);
  });

  it('maps the same client object to the same engine object (identity-keyed caches stay warm)', () => {
    const c = clientSnapshot();
    const a = toEngineSnapshot(c);
    const b = toEngineSnapshot({ ...c, pods: [...c.pods] });
    expect(b.nodes[0]).toBe(a.nodes[0]);
    expect(b.pods[0]).toBe(a.pods[0]);
  });

  it('reads an object declared as served JSON as it is: no copy, deeply frozen, the same decision', () => {
    const json = (): typeof raw => JSON.parse(JSON.stringify(raw)) as typeof raw;
    const copied = toEngineSnapshot(json());
    const kept = json();
    for (const o of [...kept.nodeClaims, ...kept.nodes, ...kept.pods]) served(o);
    const s = toEngineSnapshot(kept);
    expect(s.nodeClaims[0]).toBe(kept.nodeClaims[0]);
    expect(s.nodes[0]).toBe(kept.nodes[0]);
    expect(s.pods[0]).toBe(kept.pods[0]);
    expect(s.policies[0]).not.toBe(kept.policies[0]); // not declared: copied
    const n = s.nodes[0] as Node;
    expect(Object.isFrozen(n.metadata.labels)).toBe(true);
    expect(() => {
      (n.metadata.labels as Record<string, string>).x = 'y';
    }).toThrow(TypeError);
    expect(decide(s, IN_WINDOW).actions).toEqual(decide(copied, IN_WINDOW).actions);
    expect(decide(s, IN_WINDOW).actions.length).toBeGreaterThan(0);
  });

  it.each([
    {
      reason: 'an invalid Date names its path',
      input: { ...raw, pods: [{ ...pod, metadata: { ...pod.metadata, creationTimestamp: new Date('x') } }] },
      message: 'pods[0].metadata.creationTimestamp: an invalid Date; expected a valid timestamp',
    },
    {
      reason: 'an object without a name names its index',
      input: { ...raw, nodes: [{ metadata: {} }] },
      message: 'nodes[0].metadata.name: nothing; expected a non-empty string',
    },
    {
      reason: 'a function is not JSON data',
      input: { ...raw, pods: [{ ...pod, spec: { ...pod.spec, f: () => 1 } } as Pod] },
      message: 'pods[0].spec.f: a function',
    },
    {
      reason: 'an empty namespace is refused',
      input: { ...raw, namespace: '' },
      message: 'namespace: "";',
    },
  ])('refuses input it cannot read: $reason', ({ input, message }) => {
    expect(() => toEngineSnapshot(input as never)).toThrow(SnapshotError);
    expect(() => toEngineSnapshot(input as never)).toThrow(message);
  });

  it('carries podsOfNodes, sorted', () => {
    expect(toEngineSnapshot({ ...raw, podsOfNodes: ['b', 'a'] }).podsOfNodes).toEqual(['a', 'b']);
    expect(toEngineSnapshot(raw)).not.toHaveProperty('podsOfNodes');
    expect(NS).toBe(raw.namespace);
  });
});
