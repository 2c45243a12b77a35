// The watch caches the reconcilers read: one Reflector per resource (list + watch, each object cut down to the
// fields the engine reads: runtime/kube/shape.ts, and frozen as JSON the API served, which the engine reads
// without a copy: src/engine/boundary.ts), and the pool index over them, which maps a change of a
// NodeClaim, Node or placeholder to the NodePools it concerns (`onPools`). No cluster-wide Pod cache: the only
// Pods watched are the placeholders in the controller's namespace.
import { setMaxListeners } from 'node:events';
import { A } from '../src/engine/annotations.js';
import { served } from '../src/engine/boundary.js';
import type { RotationPolicy } from '../src/generated/api-types.js';
import type { NodeClaim, NodePool } from '../src/karpenter/types.js';
import type { Node, Pod } from '../src/kube/types.js';
import type { KubeApi } from '../runtime/kube/client.js';
import { Reflector, type ReflectorHealth } from '../runtime/kube/reflector.js';
import { NODE, NODECLAIM, NODEPOOL, pick, POD, PRIORITYCLASS, ROTATIONPOLICY } from '../runtime/kube/shape.js';
import type { Clock } from '../runtime/queue/clock.js';
import { PATHS } from './execute/executor.js';
import { ROTATIONPOLICIES } from './status/reconciler.js';
import { PoolIndex } from './state/pool-index.js';

const PRIORITYCLASSES = '/apis/scheduling.k8s.io/v1/priorityclasses';

export class Caches {
  readonly policies: Reflector<RotationPolicy>;
  readonly nodePools: Reflector<NodePool>;
  readonly nodeClaims: Reflector<NodeClaim>;
  readonly nodes: Reflector<Node>;
  readonly placeholders: Reflector<Pod>;
  /** Which PriorityClasses exist: a placeholder naming a missing one is refused by the API. */
  readonly priorityClasses: Reflector<{ metadata: { name: string } }>;
  /** Which NodeClaims, Nodes and placeholders concern which NodePool. */
  readonly index = new PoolIndex();
  /**
   * Stops the watches. Each of the six watches listens on it twice while it runs (its request's and its stream's
   * listener), so Node's default warning threshold of 10 listeners would fire on a healthy controller.
   */
  private readonly abort = stopSignal();
  private watching: Promise<void>[] = [];
  private readonly poolHandlers: ((pools: readonly string[]) => void)[] = [];

  constructor(client: KubeApi, clock: Clock, namespace: string) {
    const r = <T>(name: string, path: string, shape: Parameters<typeof pick>[1]): Reflector<T> =>
      new Reflector<T>({ name, path, shape, seal: served }, client, clock);
    this.policies = r('rotationpolicies', ROTATIONPOLICIES, ROTATIONPOLICY);
    this.nodePools = r('nodepools', PATHS.of('NodePool'), NODEPOOL);
    this.nodeClaims = r('nodeclaims', PATHS.of('NodeClaim'), NODECLAIM);
    this.nodes = r('nodes', PATHS.of('Node'), NODE);
    this.priorityClasses = r('priorityclasses', PRIORITYCLASSES, PRIORITYCLASS);
    // The placeholders in our namespace, by the label both controllers put on them (docs/engine-contract.md),
    // so ours and the reference controller's are found alike during a takeover.
    this.placeholders = new Reflector<Pod>(
      {
        name: 'placeholders',
        path: PATHS.of('Pod', namespace),
        shape: POD,
        query: { labelSelector: A.surgeFor },
        seal: served,
      },
      client,
      clock,
    );
    this.nodeClaims.onChange((key, _prev, cur) => this.touched(this.index.claim(key, cur)));
    this.nodes.onChange((key, _prev, cur) => this.touched(this.index.node(key, cur)));
    this.placeholders.onChange((key, _prev, cur) => this.touched(this.index.placeholder(key, cur)));
  }

  /** Told the NodePools that a change of a NodeClaim, Node or placeholder concerned, before and after it. */
  onPools(h: (pools: readonly string[]) => void): void {
    this.poolHandlers.push(h);
  }

  /** Starts the watches; resolves when every cache has synced. */
  async sync(): Promise<void> {
    const all = this.reflectors();
    this.watching = all.map((r) => r.run(this.abort.signal));
    await Promise.all(all.map((r) => r.whenSynced()));
    // Marks on nodes and placeholders name claims; index them again now that every claim is known.
    for (const n of this.nodes.list()) this.index.node(n.metadata.name, n);
    for (const p of this.placeholders.list()) this.index.placeholder(keyOfPod(p), p);
  }

  /** Ends the watches. */
  async stop(): Promise<void> {
    this.abort.abort();
    await Promise.allSettled(this.watching);
  }

  /**
   * Of the caches of what the rotation writes (NodePools, NodeClaims, Nodes, placeholders), those that do not yet
   * show their resource at `resourceVersion` (Reflector.caughtUpTo), by name.
   */
  behind(resourceVersion: string): string[] {
    return [this.nodePools, this.nodeClaims, this.nodes, this.placeholders]
      .filter((r) => !r.caughtUpTo(resourceVersion))
      .map((r) => r.health().name);
  }

  get stopped(): boolean {
    return this.abort.signal.aborted;
  }

  health(): ReflectorHealth[] {
    return this.reflectors().map((r) => r.health());
  }

  private reflectors(): Pick<Reflector<unknown>, 'run' | 'whenSynced' | 'health'>[] {
    return [this.policies, this.nodePools, this.nodeClaims, this.nodes, this.placeholders, this.priorityClasses];
  }

  private touched(pools: readonly string[]): void {
    for (const h of this.poolHandlers) h(pools);
  }
}

const keyOfPod = (p: Pod): string => `${p.metadata.namespace ?? ''}/${p.metadata.name}`;

/** An AbortController whose signal may carry a listener per watch and request in flight without a warning. */
function stopSignal(): AbortController {
  const c = new AbortController();
  setMaxListeners(64, c.signal);
  return c;
}
