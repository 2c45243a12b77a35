// Carries the engine's actions out through the API, each idempotently, touching only what is ours, and each
// write conditioned on the state the decision read (issue 17, docs/safety.md):
//  - annotations, cordons and uncordons are JSON merge patches of exactly our keys (never the whole map; `null`
//    removes a key) carrying the resourceVersion the decision read (and, after our own write, the version that
//    write returned): if anyone changed the object since, the apiserver answers 409, nothing is written, and the
//    pass ends and decides again from fresh state (LostRace) — so an operator's edit in between is never
//    overwritten by a decision that did not see it;
//  - a NodeClaim delete is judged again (src/engine/justify.ts) on state read from the API for that write
//    (fresh.ts), and is preconditioned on the UID and resourceVersion of exactly the claim judged; a claim with no
//    UID is never deleted; a refusal ends the pass (Refused) and nothing is written;
//  - a placeholder delete is preconditioned on its UID, so a same-named successor is never hit;
//  - "already exists" on create and "not found" on delete mean the work is done, and so does "not found" on a
//    cordon, uncordon or annotation: a Node that is gone has no scheduling flag or marker of ours left;
//  - any other failure throws: the pass ends, and the next pass resumes from the objects (state lives only on
//    them), after the queue's backoff.
import { A } from '../../src/engine/annotations.js';
import { poolContext } from '../../src/engine/decide.js';
import { deleteJustification } from '../../src/engine/justify.js';
import type { Action, Ref, Snapshot } from '../../src/engine/types.js';
import { ApiError, isConflict, isNotFound, type Json, type KubeApi } from '../../runtime/kube/client.js';

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
  client: Pick<KubeApi, 'request'>;
  /**
   * The resourceVersion of the object as the decision read it (then as our own last write left it): the
   * precondition of every patch. Undefined: not read by the decision; the write is not made.
   */
  resourceVersionOf: (kind: Ref['kind'], name: string, namespace?: string) => string | undefined;
  /**
   * Records the resourceVersion a write of ours returned (a patch, create or delete answered with the object):
   * the precondition of the next write to the same object in the pass, and what the caches must reach before
   * the next decision (read-your-writes, rotation/reconciler.ts).
   */
  wrote: (kind: Ref['kind'], name: string, namespace: string | undefined, resourceVersion: string) => void;
  /** State read from the API for one NodeClaim delete (fresh.ts); null when the NodePool is gone. */
  fresh: (a: Extract<Action, { type: 'deleteNodeClaim' }>) => Promise<Snapshot | null>;
  /** Wall-clock now, for the judgement of a delete. */
  now: () => number;
  /** Events and metric samples are not API writes of state: handed to these sinks. */
  onEvent: (a: Extract<Action, { type: 'event' }>) => Promise<void>;
  onObserve: (a: Extract<Action, { type: 'observe' }>) => void;
}

/** The object changed since the decision read it (409 on a conditioned write): end the pass, decide again. */
export class LostRace extends Error {}

/** A destructive write the judgement on fresh state does not allow: nothing is written; the pass ends. */
export class Refused extends Error {}

export async function execute(a: Action, d: ExecutorDeps): Promise<void> {
  switch (a.type) {
    case 'annotate':
      return patch(a.target, { metadata: { annotations: annotationPatch(a.set, a.remove) } }, d);
    case 'cordon':
    case 'uncordon': {
      const on = a.type === 'cordon';
      return patch(
        { kind: 'Node', name: a.node },
        { spec: { unschedulable: on ? true : null }, metadata: { annotations: { [A.cordoned]: on ? 'true' : null } } },
        d,
      );
    }
    case 'createPod': {
      const ns = a.pod.metadata.namespace ?? 'default';
      try {
        const out = await d.client.request<Json>('POST', PATHS.of('Pod', ns), {
          body: { apiVersion: 'v1', kind: 'Pod', ...a.pod },
        });
        recordWrite(d, { kind: 'Pod', name: a.pod.metadata.name, namespace: ns }, out);
      } catch (e) {
        if (!(e instanceof ApiError && e.status === 409)) throw e; // AlreadyExists: created by an earlier pass
      }
      return;
    }
    case 'deletePod':
      return ignoreNotFound(
        d.client
          .request<Json>('DELETE', `${PATHS.of('Pod', a.namespace)}/${a.name}`, {
            body: { apiVersion: 'v1', kind: 'DeleteOptions', ...(a.uid ? { preconditions: { uid: a.uid } } : {}) },
          })
          .then((out) => recordWrite(d, { kind: 'Pod', name: a.name, namespace: a.namespace }, out)),
      );
    case 'deleteNodeClaim':
      return deleteClaim(a, d);
    case 'event':
      return d.onEvent(a);
    case 'observe':
      d.onObserve(a);
      return;
    default:
      return unreachable(a);
  }
}

function unreachable(a: never): never {
  throw new Error(`unknown action ${JSON.stringify(a)}`);
}

/** A merge patch conditioned on the resourceVersion the decision read. */
async function patch(target: Ref, body: { metadata: Record<string, unknown>; spec?: unknown }, d: ExecutorDeps) {
  const rv = d.resourceVersionOf(target.kind, target.name, target.namespace);
  if (!rv) throw new LostRace(`${target.kind} ${target.name} was not read by this decision`);
  try {
    const out = await d.client.request<Json>('PATCH', `${PATHS.of(target.kind, target.namespace)}/${target.name}`, {
      contentType: MERGE,
      body: { ...body, metadata: { ...body.metadata, resourceVersion: rv } },
    });
    recordWrite(d, target, out);
  } catch (e) {
    if (isConflict(e)) throw new LostRace(`${target.kind} ${target.name} changed since it was read; deciding again`);
    // The object is gone: nothing of ours to write on it; the next pass sees it gone.
    if (isNotFound(e)) return;
    throw e;
  }
}

/** The S2 judgement again, on state read now from the API, then a delete of exactly the claim judged. */
async function deleteClaim(a: Extract<Action, { type: 'deleteNodeClaim' }>, d: ExecutorDeps): Promise<void> {
  const refuse = (why: string): never => {
    throw new Refused(`delete of NodeClaim ${a.name} refused on state read for it: ${why}`);
  };
  if (!a.uid) refuse('the decision knew no UID for it');
  const snapshot = await d.fresh(a);
  const c = snapshot ? poolContext(snapshot, a.nodePool, d.now()) : null;
  if (!c) return refuse(`NodePool ${a.nodePool} is gone`);
  const claim = c.idx.claim(a.name);
  if (!claim) return; // already gone: done
  if (claim.metadata.uid !== a.uid) refuse('a different NodeClaim of that name exists now');
  const why = deleteJustification(c, a.target);
  if (why !== null) refuse(why);
  if (c.idx.missingPods().length > 0) refuse(`the Pods of ${c.idx.missingPods().join(', ')} were not read`);
  const rv = claim.metadata.resourceVersion;
  if (!rv) refuse('it has no resourceVersion to precondition the delete on');
  try {
    const out = await d.client.request<Json>('DELETE', `${PATHS.of('NodeClaim')}/${a.name}`, {
      body: { apiVersion: 'v1', kind: 'DeleteOptions', preconditions: { uid: a.uid, resourceVersion: rv } },
    });
    recordWrite(d, { kind: 'NodeClaim', name: a.name }, out);
  } catch (e) {
    if (isNotFound(e)) return;
    if (isConflict(e)) throw new LostRace(`NodeClaim ${a.name} changed between its judgement and its delete`);
    throw e;
  }
}

/** The version a write's answer carries (an object; a delete may answer with a Status, which has none). */
function recordWrite(d: ExecutorDeps, target: Ref, answer: Json): void {
  const rv = (answer as { metadata?: { resourceVersion?: string } }).metadata?.resourceVersion;
  if (rv) d.wrote(target.kind, target.name, target.namespace, rv);
}

async function ignoreNotFound(p: Promise<unknown>): Promise<void> {
  try {
    await p;
  } catch (e) {
    if (!isNotFound(e)) throw e;
  }
}
