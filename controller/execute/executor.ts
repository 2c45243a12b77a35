// Carries the engine's actions out through the API, each idempotently and touching only what is ours:
//  - annotations by JSON merge patch of exactly our keys (never the whole map; `null` removes a key);
//  - the anchor write (an annotate with onlyIfAbsent) is conditioned on the resourceVersion the decision
//    saw, so of two writers exactly one wins and the loser's pass ends and starts again from fresh state;
//  - NodeClaim deletes carry a UID precondition, so a claim re-created under the same name is never hit;
//  - "already exists" on create and "not found" on delete mean the work is done, and so does "not found" on a
//    cordon or uncordon: a Node that is gone has no scheduling flag or marker of ours left to set or clear;
//  - any other failure throws: the pass ends, and the next pass resumes from the objects (state lives only on
//    them), after the queue's backoff.
import { A } from '../../src/engine/annotations.js';
import type { Action, Ref } from '../../src/engine/types.js';
import { ApiError, isConflict, isNotFound, type KubeTransport } from '../kube/client.js';

export interface Paths {
  /** The collection path of a kind (and namespace, for Pods). */
  of(kind: Ref['kind'], namespace?: string): string;
}

export const PATHS: Paths = {
  of(kind, namespace) {
    switch (kind) {
      case 'NodePool':
        return '/apis/karpenter.sh/v1/nodepools';
      case 'NodeClaim':
        return '/apis/karpenter.sh/v1/nodeclaims';
      case 'Node':
        return '/api/v1/nodes';
      case 'Pod':
        return `/api/v1/namespaces/${namespace ?? 'default'}/pods`;
    }
  },
};

const MERGE = 'application/merge-patch+json';

/** The merge patch of an annotate action: set keys to their values, removed keys to null. */
export function annotationPatch(set: Record<string, string>, remove: readonly string[]): Record<string, string | null> {
  const patch: Record<string, string | null> = {};
  for (const k of remove) patch[k] = null;
  Object.assign(patch, set);
  return patch;
}

export interface ExecutorDeps {
  client: KubeTransport;
  /** The resourceVersion the decision saw for an object (the anchor write's precondition). */
  resourceVersionOf: (kind: Ref['kind'], name: string, namespace?: string) => string | undefined;
  /** Events and metric samples are not API writes of state: handed to these sinks. */
  onEvent: (a: Extract<Action, { type: 'event' }>) => Promise<void>;
  onObserve: (a: Extract<Action, { type: 'observe' }>) => void;
}

/** Thrown when the anchor write lost a race: not an error, but the pass must end and start again. */
export class LostRace extends Error {}

export async function execute(a: Action, d: ExecutorDeps): Promise<void> {
  switch (a.type) {
    case 'annotate':
      return annotate(a, d);
    case 'cordon':
    case 'uncordon': {
      const on = a.type === 'cordon';
      return ignoreNotFound(
        d.client.request('PATCH', `${PATHS.of('Node')}/${a.node}`, {
          contentType: MERGE,
          body: {
            spec: { unschedulable: on ? true : null },
            metadata: { annotations: { [A.cordoned]: on ? 'true' : null } },
          },
        }),
      );
    }
    case 'createPod': {
      const ns = a.pod.metadata.namespace ?? 'default';
      try {
        await d.client.request('POST', PATHS.of('Pod', ns), { body: { apiVersion: 'v1', kind: 'Pod', ...a.pod } });
      } catch (e) {
        if (!(e instanceof ApiError && e.status === 409)) throw e; // AlreadyExists: created by an earlier pass
      }
      return;
    }
    case 'deletePod':
      return ignoreNotFound(
        d.client.request('DELETE', `${PATHS.of('Pod', a.namespace)}/${a.name}`, {
          body: { apiVersion: 'v1', kind: 'DeleteOptions' },
        }),
      );
    case 'deleteNodeClaim':
      return ignoreNotFound(
        d.client.request('DELETE', `${PATHS.of('NodeClaim')}/${a.name}`, {
          body: {
            apiVersion: 'v1',
            kind: 'DeleteOptions',
            ...(a.uid ? { preconditions: { uid: a.uid } } : {}),
          },
        }),
      );
    case 'event':
      return d.onEvent(a);
    case 'observe':
      d.onObserve(a);
      return;
  }
}

async function annotate(a: Extract<Action, { type: 'annotate' }>, d: ExecutorDeps): Promise<void> {
  const metadata: Record<string, unknown> = { annotations: annotationPatch(a.set, a.remove) };
  if (a.onlyIfAbsent) {
    const rv = d.resourceVersionOf(a.target.kind, a.target.name, a.target.namespace);
    if (!rv) throw new LostRace(`${a.target.kind} ${a.target.name} is not in the cache`);
    // A merge patch that carries metadata.resourceVersion is applied only if it is still current (409 else).
    metadata.resourceVersion = rv;
  }
  try {
    await d.client.request('PATCH', `${PATHS.of(a.target.kind, a.target.namespace)}/${a.target.name}`, {
      contentType: MERGE,
      body: { metadata },
    });
  } catch (e) {
    if (a.onlyIfAbsent && isConflict(e))
      throw new LostRace(`${a.target.kind} ${a.target.name} changed since it was read; deciding again`);
    // The object is gone: nothing of ours to write on it; the next pass sees it gone.
    if (isNotFound(e) && !a.onlyIfAbsent) return;
    throw e;
  }
}

async function ignoreNotFound(p: Promise<unknown>): Promise<void> {
  try {
    await p;
  } catch (e) {
    if (!isNotFound(e)) throw e;
  }
}
