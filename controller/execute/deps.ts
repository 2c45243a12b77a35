// The executor's dependencies, wired one way for every caller that carries a decision out (the controller's
// pass and start-up sweep, the e2e tests' engine passes, the equivalence property): the resourceVersions the
// decision read are the preconditions of its writes, a write's returned version replaces its object's, and a
// NodeClaim delete is judged again on state read for it from the API (fresh.ts).
import type { RotationPolicy } from '../../src/generated/api-types.js';
import type { Ref, Snapshot } from '../../src/engine/types.js';
import type { KubeApi } from '../../runtime/kube/client.js';
import type { ExecutorDeps } from './executor.js';
import { freshSnapshot } from './fresh.js';

/** The key of one object's resourceVersion: kind, namespace (none for cluster-scoped objects) and name. */
export const versionKey = (kind: string, name: string, namespace?: string): string =>
  `${kind}/${namespace ?? ''}/${name}`;

/** The resourceVersion of every object of a snapshot read as a whole (the objects carry their own). */
export function snapshotVersions(s: Snapshot): Map<string, string> {
  const out = new Map<string, string>();
  const take = (
    kind: string,
    list: readonly { metadata: { name?: string; namespace?: string; resourceVersion?: string } }[],
  ) => {
    for (const o of list)
      if (o.metadata.name && o.metadata.resourceVersion)
        out.set(versionKey(kind, o.metadata.name, o.metadata.namespace), o.metadata.resourceVersion);
  };
  take('NodePool', s.nodePools);
  take('NodeClaim', s.nodeClaims);
  take('Node', s.nodes);
  take('Pod', s.pods);
  return out;
}

export interface DepsOptions {
  client: KubeApi;
  /** The controller's namespace: where placeholders live. */
  namespace: string;
  /** The decision's preconditions (versionKey → resourceVersion); updated by the writes. */
  versions: Map<string, string>;
  now: () => number;
  /** The controller's defaults for the policies a delete's judgement reads; none by default. */
  withDefaults?: (p: RotationPolicy) => RotationPolicy;
  onEvent?: ExecutorDeps['onEvent'];
  onObserve?: ExecutorDeps['onObserve'];
  /** Told the resourceVersion of every write's answer, by kind (read-your-writes). */
  written?: (kind: Ref['kind'], resourceVersion: string) => void;
}

export function executorDeps(o: DepsOptions): ExecutorDeps {
  const withDefaults = o.withDefaults ?? ((p: RotationPolicy) => p);
  return {
    client: o.client,
    resourceVersionOf: (kind, name, ns) => o.versions.get(versionKey(kind, name, ns)),
    wrote: (kind, name, ns, rv) => {
      o.versions.set(versionKey(kind, name, ns), rv);
      o.written?.(kind, rv);
    },
    fresh: (a) => freshSnapshot({ client: o.client, namespace: o.namespace, withDefaults }, a.nodePool, a.target),
    now: o.now,
    onEvent: o.onEvent ?? (async () => {}),
    onObserve: o.onObserve ?? (() => {}),
  };
}
