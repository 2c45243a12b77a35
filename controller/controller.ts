// The controller: keeps the watch caches, maps every change to the NodePools it concerns, and runs one pass
// per NodePool through the work queue — snapshot, decide (the engine), carry the actions out. Every decision
// is the engine's; this file only moves objects in and actions out.
import { setMaxListeners } from 'node:events';
import { A } from '../src/engine/annotations.js';
import { decide } from '../src/engine/decide.js';
import { toEngineSnapshot } from '../src/engine/boundary.js';
import { sweep } from '../src/engine/sweep.js';
import type { Action, PoolDecision, PoolReport, Snapshot } from '../src/engine/types.js';
import type { RotationPolicy } from '../src/generated/api-types.js';
import type { NodeClaim, NodePool } from '../src/karpenter/types.js';
import type { Node, Pod } from '../src/kube/types.js';
import { EventRecorder, type EventInput } from './execute/events.js';
import { executorDeps, versionKey } from './execute/deps.js';
import { execute, LostRace, PATHS, Refused } from './execute/executor.js';
import { podsOfNode } from './execute/fresh.js';
import { failpoint, pausepoint } from './execute/failpoint.js';
import type { KubeApi } from '../runtime/kube/client.js';
import { Reflector } from '../runtime/kube/reflector.js';
import { NODE, NODECLAIM, NODEPOOL, pick, POD, PRIORITYCLASS, ROTATIONPOLICY } from '../runtime/kube/shape.js';
import type { Logger } from './log.js';
import type { ControllerMetrics } from './metrics.js';
import type { Clock } from '../runtime/queue/clock.js';
import { WorkQueue } from '../runtime/queue/work-queue.js';
import { PoolIndex } from './state/pool-index.js';
import { anchoredNodes, poolSnapshot, type PoolWorld } from './state/snapshot.js';
import { policiesOf, PolicyStatusReconciler, ROTATIONPOLICIES } from './status/reconciler.js';
import { sameJson } from '../src/util/canonical.js';

export interface ControllerOptions {
  client: KubeApi;
  clock: Clock;
  log: Logger;
  metrics: ControllerMetrics;
  /** Placeholders, the Lease and Events live here. */
  namespace: string;
  identity: string;
  placeholderImage: string;
  priorityClass: string;
  /** NodePools processed at once (each one always serially). */
  concurrency: number;
  /** Every NodePool is passed at least this often, events or not. */
  resyncMs: number;
}

/** After a write lost its precondition: long enough for the watch to deliver the change that beat it. */
const LOST_RACE_RETRY_MS = 500;
/**
 * Rounds of "the engine names a node whose Pods it needs; list them; decide again" in one pass. Each round
 * adds one node's Pods: the rotation's nodes, then a candidate's, then — when a Pod's do-not-disrupt holds the
 * first candidates — the next ones (the engine looks at up to 8).
 */
const MAX_POD_ROUNDS = 10;
const PRIORITYCLASSES = '/apis/scheduling.k8s.io/v1/priorityclasses';

export class Controller {
  readonly policies: Reflector<RotationPolicy>;
  readonly nodePools: Reflector<NodePool>;
  readonly nodeClaims: Reflector<NodeClaim>;
  readonly nodes: Reflector<Node>;
  readonly placeholders: Reflector<Pod>;
  /** Which PriorityClasses exist: a placeholder naming a missing one is refused by the API. */
  readonly priorityClasses: Reflector<{ metadata: { name: string } }>;
  private readonly index = new PoolIndex();
  private readonly events: EventRecorder;
  private queue: WorkQueue | null = null;
  private readonly reports = new Map<string, PoolReport>();
  /** RotationPolicy statuses, from the reports: a reconciler with a queue of its own (status/reconciler.ts). */
  private readonly statuses: PolicyStatusReconciler;
  /**
   * Stops the watches. Each of the six watches listens on it twice while it runs (its request's and its stream's
   * listener), so Node's default warning threshold of 10 listeners would fire on a healthy controller.
   */
  private readonly abort = stopSignal();
  /** Crash tests only (NODEROTATION_FAILPOINT); a no-op otherwise. */
  private readonly afterWrite = failpoint(process.env);
  /** Race tests only (NODEROTATION_PAUSEPOINT); a no-op otherwise. */
  private readonly beforeWrite = pausepoint(process.env);
  private watching: Promise<void>[] = [];
  private resync: { cancel(): void } | null = null;

  constructor(private readonly o: ControllerOptions) {
    const r = <T>(name: string, path: string, shape: Parameters<typeof pick>[1]): Reflector<T> =>
      new Reflector<T>({ name, path, shape }, o.client, o.clock);
    this.policies = r('rotationpolicies', ROTATIONPOLICIES, ROTATIONPOLICY);
    this.nodePools = r('nodepools', PATHS.of('NodePool'), NODEPOOL);
    this.nodeClaims = r('nodeclaims', PATHS.of('NodeClaim'), NODECLAIM);
    this.nodes = r('nodes', PATHS.of('Node'), NODE);
    this.priorityClasses = r('priorityclasses', PRIORITYCLASSES, PRIORITYCLASS);
    // The placeholders in our namespace, by the label both controllers put on them (docs/engine-contract.md),
    // so ours and the reference controller's are found alike during a takeover.
    this.placeholders = new Reflector<Pod>(
      { name: 'placeholders', path: PATHS.of('Pod', o.namespace), shape: POD, query: { labelSelector: A.surgeFor } },
      o.client,
      o.clock,
    );
    this.events = new EventRecorder(o.client, o.identity, o.clock, (m, f) => o.log.warn(m, f));
    this.statuses = new PolicyStatusReconciler({
      client: o.client,
      clock: o.clock,
      log: o.log,
      policies: this.policies,
      reports: this.reports,
    });
    this.wire();
  }

  /** Starts the watches; resolves when every cache has synced. */
  async sync(): Promise<void> {
    const all = this.reflectors();
    this.watching = all.map((r) => r.run(this.abort.signal));
    await Promise.all(all.map((r) => r.whenSynced()));
    // Marks on nodes and placeholders name claims; index them again now that every claim is known.
    for (const n of this.nodes.list()) this.index.node(n.metadata.name, n);
    for (const p of this.placeholders.list()) this.index.placeholder(keyOfPod(p), p);
    this.o.log.info('caches synced', {
      rotationpolicies: this.policies.size,
      nodepools: this.nodePools.size,
      nodeclaims: this.nodeClaims.size,
      nodes: this.nodes.size,
    });
  }

  private reflectors(): Pick<Reflector<unknown>, 'run' | 'whenSynced' | 'health'>[] {
    return [this.policies, this.nodePools, this.nodeClaims, this.nodes, this.placeholders, this.priorityClasses];
  }

  get synced(): boolean {
    return this.reflectors().every((r) => r.health().synced);
  }

  health() {
    return this.reflectors().map((r) => r.health());
  }

  /** Begins acting (the leader, or the only replica): the start-up sweep, then a pass of every NodePool. */
  async startWorking(): Promise<void> {
    // Leadership may have lapsed before (or during the sweep): a fenced client's check ends it; nothing starts.
    if (!this.o.client.fenceUp()) return;
    await this.runSweep();
    if (!this.o.client.fenceUp()) return;
    this.queue = new WorkQueue({
      handler: (pool, signal) => this.pass(pool, signal),
      clock: this.o.clock,
      concurrency: this.o.concurrency,
      baseBackoffMs: 1000,
      maxBackoffMs: 5 * 60_000,
      onFailure: (pool, error, retryInMs) =>
        this.o.log.warn('pass failed; retrying', { nodepool: pool, error: errorText(error), retryInMs }),
      onPass: (_pool, ms, ok) => this.o.metrics.passSeconds.observe({ outcome: ok ? 'ok' : 'error' }, ms / 1000),
    });
    this.statuses.start();
    this.enqueueAll();
    const tick = (): void => {
      this.enqueueAll();
      this.resync = this.o.clock.after(this.o.resyncMs, tick);
    };
    this.resync = this.o.clock.after(this.o.resyncMs, tick);
  }

  /** Stops: the passes in flight finish their current write, the watches end. */
  async stop(): Promise<void> {
    this.resync?.cancel();
    await Promise.all([this.queue?.shutdown(), this.statuses.stop()]);
    this.abort.abort();
    await Promise.allSettled(this.watching);
  }

  private enqueueAll(): void {
    for (const p of this.nodePools.list()) this.queue?.add(p.metadata.name);
    this.o.metrics.queueDepth.set(this.queue?.depth ?? 0);
  }

  private enqueue(pools: readonly string[]): void {
    for (const p of pools) this.queue?.add(p);
    this.o.metrics.queueDepth.set(this.queue?.depth ?? 0);
  }

  private wire(): void {
    // Our own status writes change a policy too; only what the engine reads is worth a pass of every pool.
    this.policies.onChange((_key, prev, cur) => {
      if (!prev || !cur || specOrMetaChanged(prev, cur)) this.enqueueAll();
    });
    this.priorityClasses.onChange(() => this.enqueueAll());
    this.nodePools.onChange((key, _prev, cur) => {
      if (!cur) {
        this.statuses.enqueue(policiesOf(this.reports.get(key)));
        this.reports.delete(key);
        this.o.metrics.forgetPool(key);
        this.events.forgetPool(key);
      }
      this.enqueue([key]);
    });
    this.nodeClaims.onChange((key, _prev, cur) => this.enqueue(this.index.claim(key, cur)));
    this.nodes.onChange((key, _prev, cur) => this.enqueue(this.index.node(key, cur)));
    this.placeholders.onChange((key, _prev, cur) => this.enqueue(this.index.placeholder(key, cur)));
  }

  /** The policies as the engine sees them: the controller's placeholder defaults filled in where unset. */
  private enginePolicies(): RotationPolicy[] {
    return this.policies.list().map((p) => this.withDefaults(p));
  }

  private readonly defaulted = new WeakMap<RotationPolicy, RotationPolicy>();
  /** Per spec object: a policy whose status moved keeps its spec object (the reflector shares it), and so this. */
  private readonly defaultedSpecs = new WeakMap<RotationPolicy['spec'], RotationPolicy['spec']>();
  private withDefaults(p: RotationPolicy): RotationPolicy {
    let out = this.defaulted.get(p);
    if (!out) {
      let spec = this.defaultedSpecs.get(p.spec);
      if (!spec) {
        const placeholder = {
          image: this.o.placeholderImage,
          priorityClassName: this.o.priorityClass,
          ...(p.spec.surge?.placeholder ?? {}),
        };
        spec = { ...p.spec, surge: { ...(p.spec.surge ?? {}), placeholder } };
        this.defaultedSpecs.set(p.spec, spec);
      }
      out = { ...p, spec };
      this.defaulted.set(p, out);
    }
    return out;
  }

  private world(pool: NodePool): PoolWorld {
    const name = pool.metadata.name;
    const get = <T>(r: Reflector<T>, keys: string[]): T[] =>
      keys.map((k) => r.get(k)).filter((x): x is T => x !== undefined);
    return {
      policies: this.enginePolicies(),
      nodePools: [pool],
      nodeClaims: get(this.nodeClaims, this.index.claims.keys(name)),
      nodes: get(this.nodes, this.index.nodes.keys(name)),
      placeholders: get(this.placeholders, this.index.placeholders.keys(name)),
      namespace: this.o.namespace,
      priorityClasses: this.priorityClasses.list().map((c) => c.metadata.name),
    };
  }

  /** The Pods of the nodes, every page, bounded per node (a larger list is not trusted: the pass fails). */
  private async podsOn(nodes: readonly string[], signal: AbortSignal): Promise<Pod[]> {
    const out: Pod[] = [];
    for (const node of nodes) out.push(...(await podsOfNode(this.o.client, node, signal)));
    return out;
  }

  /**
   * The resourceVersion of every object of a decision, taken in the same synchronous step as the objects: the
   * preconditions of the writes the decision makes (a watch event that arrives while the pass awaits moves the
   * cache, never these).
   */
  private versionsOf(w: {
    nodePools: readonly NodePool[];
    nodeClaims: readonly NodeClaim[];
    nodes: readonly Node[];
  }): Map<string, string> {
    const out = new Map<string, string>();
    const take = <T extends { metadata: { name: string } }>(kind: string, r: Reflector<T>, list: readonly T[]) => {
      for (const o of list) {
        const rv = r.resourceVersionOf(o.metadata.name);
        if (rv) out.set(versionKey(kind, o.metadata.name), rv);
      }
    };
    take('NodePool', this.nodePools, w.nodePools);
    take('NodeClaim', this.nodeClaims, w.nodeClaims);
    take('Node', this.nodes, w.nodes);
    return out;
  }

  /**
   * One NodePool's pass: decide with the Pods of the nodes the anchor names, add the Pods of any node the engine
   * says it is missing and decide again (bounded), then carry the actions out in order.
   */
  private async pass(poolName: string, signal: AbortSignal): Promise<{ requeueAt: number | null }> {
    const pool = this.nodePools.get(poolName);
    if (!pool) return { requeueAt: null };
    const log = this.o.log.with({ nodepool: poolName });
    const w = this.world(pool);
    const versions = this.versionsOf(w);
    const now = this.o.clock.now();
    let nodes = anchoredNodes(w);
    let pods = await this.podsOn(nodes, signal);
    let decision = decide(poolSnapshot(w, pods, nodes), now);
    for (let round = 0; round < MAX_POD_ROUNDS && decision.missingPods.some((n) => !nodes.includes(n)); round++) {
      const more = decision.missingPods.filter((n) => !nodes.includes(n));
      pods = [...pods, ...(await this.podsOn(more, signal))];
      nodes = [...nodes, ...more].sort();
      decision = decide(poolSnapshot(w, pods, nodes), now);
    }
    const mine = decision.pools.find((p) => p.nodePool === poolName) as PoolDecision;
    try {
      await this.carryOut(mine.actions, versions, log.with(activeClaim(mine)), signal);
    } catch (e) {
      // An object changed under the decision: nothing was written on stale state. Decide again shortly, once the
      // watch has delivered the change, without the failure backoff (a busy object is not a failing one).
      if (e instanceof LostRace) return { requeueAt: this.o.clock.now() + LOST_RACE_RETRY_MS };
      throw e;
    }
    const before = policiesOf(this.reports.get(poolName));
    this.reports.set(poolName, mine.report);
    this.statuses.enqueue(new Set([...before, ...policiesOf(mine.report)]));
    this.o.metrics.report(mine.report, mine.report.windowOpen);
    await this.events.level(poolName, levelWarnings(mine.report));
    return { requeueAt: mine.requeueAt };
  }

  private async carryOut(
    actions: readonly Action[],
    versions: Map<string, string>,
    log: Logger,
    signal: AbortSignal,
  ): Promise<void> {
    const deps = executorDeps({
      client: this.o.client,
      namespace: this.o.namespace,
      versions,
      now: () => this.o.clock.now(),
      withDefaults: (p) => this.withDefaults(p),
      onEvent: (a) => this.events.emit({ target: a.target, type: a.eventType, reason: a.eventReason, note: a.message }),
      onObserve: (a) => this.o.metrics.observe(a.metric, a.nodePool, a.value, a.labels),
    });
    for (const a of actions) {
      // SIGTERM: the write in flight finishes; the rest is left for the next leader (the objects hold the state).
      if (signal.aborted) return;
      if (a.type !== 'event' && a.type !== 'observe') log.info(a.reason, describe(a));
      try {
        await this.beforeWrite(a);
        await execute(a, deps);
        this.afterWrite(a);
      } catch (e) {
        if (e instanceof LostRace) {
          log.info('lost a race: the object changed since it was read; deciding again from fresh state', {
            reason: e.message,
          });
          throw e;
        }
        if (e instanceof Refused) {
          log.warn('destructive write refused on fresh state; nothing written, the pass ends', { reason: e.message });
          throw e;
        }
        log.error('write failed; the pass ends and resumes from the objects', { ...describe(a), error: errorText(e) });
        throw e;
      }
    }
  }

  /**
   * The start-up sweep, on the caches as they are now; an object that changed under it (a lost precondition)
   * makes it start over on the newer caches, a few times, before the start fails.
   */
  private async runSweep(): Promise<void> {
    for (let attempt = 1; ; attempt++) {
      try {
        return await this.sweepOnce();
      } catch (e) {
        // A lost precondition or a failed write leaves the sweep to be done again on newer caches: never give up
        // for good (the queue would never start, with the process up and ready), unless leadership is gone.
        if (this.abort.signal.aborted || !this.o.client.fenceUp()) throw e;
        const ms = e instanceof LostRace ? LOST_RACE_RETRY_MS : Math.min(1000 * 2 ** Math.min(attempt - 1, 5), 30_000);
        this.o.log.warn('start-up sweep failed; trying again', { error: errorText(e), retryInMs: ms, attempt });
        await new Promise<void>((resolve) => this.o.clock.after(ms, resolve));
      }
    }
  }

  private async sweepOnce(): Promise<void> {
    const s: Snapshot = toEngineSnapshot({
      policies: this.enginePolicies(),
      nodePools: this.nodePools.list(),
      nodeClaims: this.nodeClaims.list(),
      nodes: this.nodes.list(),
      pods: this.placeholders.list(),
      namespace: this.o.namespace,
      podsOfNodes: [],
    });
    const versions = this.versionsOf(s);
    const actions = sweep(s);
    if (actions.length > 0) this.o.log.info('start-up sweep', { actions: actions.length });
    await this.carryOut(actions, versions, this.o.log.with({ phase: 'sweep' }), new AbortController().signal);
  }
}

/** The level-triggered warnings of a report: warning findings and ShortLead claims (fatal ones are conditions). */
function levelWarnings(r: PoolReport): EventInput[] {
  return [
    ...r.findings
      .filter((f) => f.severity === 'warning' && f.reason !== 'ShortLead')
      .map((f) => ({
        target: { kind: 'NodePool' as const, name: r.nodePool },
        type: 'Warning' as const,
        reason: f.reason,
        note: `${f.field}: ${f.message}`,
      })),
    ...(r.governance === 'conflict'
      ? [
          {
            target: { kind: 'NodePool' as const, name: r.nodePool },
            type: 'Warning' as const,
            reason: 'PolicyConflict' as const,
            note: `RotationPolicies ${r.conflictingPolicies.join(', ')} match this NodePool equally specifically.`,
          },
        ]
      : []),
    ...r.shortLead.map((claim) => ({
      target: { kind: 'NodeClaim' as const, name: claim },
      type: 'Warning' as const,
      reason: 'ShortLead' as const,
      note: `NodeClaim ${claim}'s own expireAfter cannot guarantee minRotationChances windows.`,
    })),
  ];
}

/** The claim of the rotation in flight (or just started), for every log line of the pass. */
function activeClaim(d: PoolDecision): Record<string, string> {
  return d.report.activeRotation ? { nodeclaim: d.report.activeRotation } : {};
}

function describe(a: Action): Record<string, unknown> {
  switch (a.type) {
    case 'annotate':
      return { action: a.type, kind: a.target.kind, name: a.target.name, set: a.set, remove: a.remove };
    case 'cordon':
    case 'uncordon':
      return { action: a.type, node: a.node };
    case 'createPod':
      return { action: a.type, pod: a.pod.metadata.name };
    case 'deletePod':
      return { action: a.type, pod: a.name };
    case 'deleteNodeClaim':
      return { action: a.type, nodeclaim: a.name };
    default:
      return { action: a.type };
  }
}

/** Whether anything but the status (and the resourceVersion that follows it) differs. */
function specOrMetaChanged(prev: RotationPolicy, cur: RotationPolicy): boolean {
  const { resourceVersion: _a, ...prevMeta } = prev.metadata as RotationPolicy['metadata'] & {
    resourceVersion?: string;
  };
  const { resourceVersion: _b, ...curMeta } = cur.metadata as RotationPolicy['metadata'] & { resourceVersion?: string };
  return !sameJson([prevMeta, prev.spec], [curMeta, cur.spec]);
}

const keyOfPod = (p: Pod): string => `${p.metadata.namespace ?? ''}/${p.metadata.name}`;
const errorText = (e: unknown): string => (e instanceof Error ? e.message : String(e));

/** An AbortController whose signal may carry a listener per watch and request in flight without a warning. */
function stopSignal(): AbortController {
  const c = new AbortController();
  setMaxListeners(64, c.signal);
  return c;
}
