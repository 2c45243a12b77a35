// The executor's contract (issue 17): every write conditioned on the state the decision read, a NodeClaim delete
// judged again on state read for it, and what each API answer means. The client is a recording stand-in: these
// are the requests the executor makes, in order.
import { describe, expect, it } from 'vitest';
import { IN_WINDOW, markedDraining, withPool } from '../../test/support/fixtures.js';
import { A } from '../../src/engine/annotations.js';
import type { Action, Snapshot } from '../../src/engine/types.js';
import { ApiError } from '../../runtime/kube/client.js';
import { execute, LostRace, Refused, type ExecutorDeps } from './executor.js';

interface Call {
  method: string;
  path: string;
  body: unknown;
}

/** Deps whose client answers with `answer(call)` (an error to throw, or a body); the requests are recorded. */
function deps(o: { answer?: (c: Call) => unknown; fresh?: Snapshot | null; versions?: Record<string, string> } = {}): {
  d: ExecutorDeps;
  calls: Call[];
  wrote: string[];
} {
  const calls: Call[] = [];
  const wrote: string[] = [];
  const versions = new Map(
    Object.entries(o.versions ?? { 'Node/n': '7', 'NodePool/general': '3', 'NodeClaim/c': '5' }),
  );
  const client = {
    request: <T>(method: string, path: string, opts: { body?: unknown } = {}): Promise<T> => {
      const call = { method, path, body: opts.body };
      calls.push(call);
      const out = o.answer?.(call);
      return out instanceof Error ? Promise.reject(out) : Promise.resolve((out ?? {}) as T);
    },
  };
  const d: ExecutorDeps = {
    client,
    resourceVersionOf: (kind, name) => versions.get(`${kind}/${name}`),
    wrote: (kind, name, _ns, rv) => {
      versions.set(`${kind}/${name}`, rv);
      wrote.push(`${kind}/${name}=${rv}`);
    },
    fresh: () => Promise.resolve(o.fresh === undefined ? null : o.fresh),
    now: () => IN_WINDOW + 3 * 60_000,
    onEvent: async () => {},
    onObserve: () => {},
  };
  return { d, calls, wrote };
}

const reason = 'test';
const notFound = new ApiError(404, 'NotFound', 'not found');
const conflict = new ApiError(409, 'Conflict', 'the object has been modified');
const unavailable = new ApiError(503, 'ServiceUnavailable', 'the server is currently unable to handle the request');

describe('patches carry the resourceVersion the decision read', () => {
  it.each([
    {
      reason: 'an annotation write',
      action: {
        type: 'annotate',
        target: { kind: 'NodePool', name: 'general' },
        set: { k: 'v' },
        remove: ['x'],
        reason,
      },
      path: '/apis/karpenter.sh/v1/nodepools/general',
      body: { metadata: { annotations: { x: null, k: 'v' }, resourceVersion: '3' } },
    },
    {
      reason: 'a cordon',
      action: { type: 'cordon', node: 'n', reason },
      path: '/api/v1/nodes/n',
      body: {
        spec: { unschedulable: true },
        metadata: { annotations: { [A.cordoned]: 'true' }, resourceVersion: '7' },
      },
    },
    {
      reason: 'an uncordon (only of the node as read: an operator’s later cordon makes it a 409, never a removal)',
      action: { type: 'uncordon', node: 'n', reason },
      path: '/api/v1/nodes/n',
      body: { spec: { unschedulable: null }, metadata: { annotations: { [A.cordoned]: null }, resourceVersion: '7' } },
    },
  ] as { reason: string; action: Action; path: string; body: unknown }[])('$reason', async ({ action, path, body }) => {
    const { d, calls } = deps();
    await execute(action, d);
    expect(calls).toEqual([{ method: 'PATCH', path, body }]);
  });

  it('a second write to the same object in one pass is conditioned on the version the first returned', async () => {
    const { d, calls, wrote } = deps({ answer: () => ({ metadata: { resourceVersion: '4' } }) });
    const a = (k: string): Action => ({
      type: 'annotate',
      target: { kind: 'NodePool', name: 'general' },
      set: { [k]: 'v' },
      remove: [],
      reason,
    });
    await execute(a('one'), d);
    await execute(a('two'), d);
    expect(calls.map((c) => (c.body as { metadata: { resourceVersion: string } }).metadata.resourceVersion)).toEqual([
      '3',
      '4',
    ]);
    expect(wrote).toEqual(['NodePool/general=4', 'NodePool/general=4']);
  });

  it('an object the decision did not read is not written at all', async () => {
    const { d, calls } = deps({ versions: {} });
    await expect(execute({ type: 'cordon', node: 'n', reason }, d)).rejects.toBeInstanceOf(LostRace);
    expect(calls).toEqual([]);
  });
});

describe('what an API error on a write means', () => {
  it.each([
    { reason: 'a 409: someone changed it since the read; decide again', error: conflict, expected: LostRace },
    { reason: 'a 404 on a cordon: the Node is gone, nothing left to set', error: notFound, expected: null },
    { reason: 'any other failure ends the pass (retried after backoff)', error: unavailable, expected: ApiError },
  ])('$reason', async ({ error, expected }) => {
    const { d, calls } = deps({ answer: () => error });
    const run = execute({ type: 'cordon', node: 'n', reason }, d);
    if (expected === null) await expect(run).resolves.toBeUndefined();
    else await expect(run).rejects.toBeInstanceOf(expected);
    expect(calls).toHaveLength(1);
  });

  it('a placeholder delete is preconditioned on its UID; not found means done', async () => {
    const { d, calls } = deps({ answer: () => notFound });
    await execute({ type: 'deletePod', namespace: 'ns', name: 'p', uid: 'u9', reason }, d);
    expect(calls).toEqual([
      {
        method: 'DELETE',
        path: '/api/v1/namespaces/ns/pods/p',
        body: { apiVersion: 'v1', kind: 'DeleteOptions', preconditions: { uid: 'u9' } },
      },
    ]);
  });
});

describe('a NodeClaim delete is judged again on state read for it', () => {
  const del: Action = {
    type: 'deleteNodeClaim',
    name: 'old',
    uid: 'uid-old',
    nodePool: 'general',
    target: { role: 'candidate', claim: 'old' },
    reason,
  };
  const withRv = (s: Snapshot): Snapshot => ({
    ...s,
    nodeClaims: s.nodeClaims.map((c) => ({ ...c, metadata: { ...c.metadata, resourceVersion: '42' } })),
  });

  it('justified: deleted with the UID and resourceVersion of exactly the claim judged', async () => {
    const fresh = { ...withRv(markedDraining()), podsOfNodes: ['node-old'] };
    const { d, calls } = deps({ fresh });
    await execute(del, d);
    expect(calls).toEqual([
      {
        method: 'DELETE',
        path: '/apis/karpenter.sh/v1/nodeclaims/old',
        body: { apiVersion: 'v1', kind: 'DeleteOptions', preconditions: { uid: 'uid-old', resourceVersion: '42' } },
      },
    ]);
  });

  it.each([
    {
      reason: 'the fresh read shows a freeze the cache had not seen yet',
      fresh: withPool(withRv(markedDraining()), { [A.freeze]: '2030-01-01T00:00:00Z' }),
    },
    { reason: 'the fresh read shows the NodePool gone', fresh: null },
    {
      reason: 'a different claim of that name (another UID) exists now',
      fresh: {
        ...withRv(markedDraining()),
        nodeClaims: withRv(markedDraining()).nodeClaims.map((c) =>
          c.metadata.name === 'old' ? { ...c, metadata: { ...c.metadata, uid: 'uid-successor' } } : c,
        ),
      },
    },
    {
      reason: 'the Pods of its node were not read (so a Pod’s do-not-disrupt could not be seen)',
      fresh: { ...withRv(markedDraining()), podsOfNodes: [] },
    },
  ])('refused, nothing written: $reason', async ({ fresh }) => {
    const { d, calls } = deps({ fresh });
    await expect(execute(del, d)).rejects.toBeInstanceOf(Refused);
    expect(calls).toEqual([]);
  });

  it('a delete whose UID the decision did not know is never made by name alone', async () => {
    const { d, calls } = deps({ fresh: markedDraining() });
    await expect(execute({ ...del, uid: undefined }, d)).rejects.toBeInstanceOf(Refused);
    expect(calls).toEqual([]);
  });

  it('a 409 on the delete (changed between judgement and delete) ends the pass as a lost race', async () => {
    const { d } = deps({ fresh: { ...withRv(markedDraining()), podsOfNodes: ['node-old'] }, answer: () => conflict });
    await expect(execute(del, d)).rejects.toBeInstanceOf(LostRace);
  });
});
