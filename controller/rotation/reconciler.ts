// The rotation reconciler: one key per NodePool (the controller's work queue). A pass reads the pool's objects
// from the watch caches (once they show the pool's own last writes: ../state/own-writes.ts), decides (the
// engine), lists the Pods of the nodes the decision needs, and carries the actions out through the executor,
// each write conditioned on the versions the decision read. It hands the pool's report to the status reconciler
// (../status/, which computes the policies' status from it); it feeds its own metrics (metrics.ts) and events
// (events.ts). Every decision is the engine's; this file only moves
// objects in and actions out. The start-up sweep (`sweep`) is its once-per-leadership counterpart.
import { decide } from '../../src/engine/decide.js';
import { toEngineSnapshot } from '../../src/engine/boundary.js';
import { sweep } from '../../src/engine/sweep.js';
import type { Action, PoolDecision, PoolReport, Ref, Snapshot } from '../../src/engine/types.js';
import type { RotationPolicy } from '../../src/generated/api-types.js';
import type { NodeClaim, NodePool } from '../../src/karpenter/types.js';
import type { Node, Pod } from '../../src/kube/types.js';
import type { KubeApi } from '../../runtime/kube/client.js';
import type { Reflector } from '../../runtime/kube/reflector.js';
import type { Clock } from '../../runtime/queue/clock.js';
import type { PassResult } from '../../runtime/queue/work-queue.js';
import { executorDeps, versionKey } from '../execute/deps.js';
import { execute, LostRace, Refused } from '../execute/executor.js';
import { failpoint, pausepoint } from '../execute/failpoint.js';
import { podsOfNode } from '../execute/fresh.js';
import { forecastFindings, forecastStatus, poolForecast, type ForecastStatus } from '../../src/forecast/summary.js';
import type { Finding } from '../../src/derivation/findings.js';
import { errorText, type Logger } from '../log.js';
import { OwnWrites, type Follows } from '../state/own-writes.js';
import type { PoolIndex } from '../state/pool-index.js';
import { anchoredNodes, poolSnapshot, type PoolWorld } from '../state/snapshot.js';
import { levelWarnings, type EventRecorder } from './events.js';
import type { RotationMetrics } from './metrics.js';

/** After a write lost its precondition: long enough for the watch to deliver the change that beat it. */
export const LOST_RACE_RETRY_MS = 500;
/**
 * Rounds of "the engine names a node whose Pods it needs; list them; decide again" in one pass. Each round
 * adds one node's Pods: the rotation's nodes, then a candidate's, then — when a Pod's do-not-disrupt holds the
 * first candidates — the next ones (the engine looks at up to 8).
 */
const MAX_POD_ROUNDS = 10;
/**
 * How often a pass that waits for the caches to show the writes of the pass before it looks again
 * (state/own-writes.ts): a healthy watch delivers them within milliseconds, and its event queues the pool at once.
 */
export const OWN_WRITES_RECHECK_MS = 10_000;
/** The start-up sweep's writes, which every pool's first pass waits for. */
const SWEEP = '';

/** What a pass reads of a watch cache. */
type Cache<T> = Pick<Reflector<T>, 'get' | 'list' | 'resourceVersionOf' | 'caughtUpTo'>;

export interface RotationCaches {
  policies: Cache<RotationPolicy>;
  nodePools: Cache<NodePool>;
  nodeClaims: Cache<NodeClaim>;
  nodes: Cache<Node>;
  /** The placeholders in the controller's namespace. */
  placeholders: Cache<Pod>;
  /** Which PriorityClasses exist (names only). */
  priorityClasses: Pick<Reflector<{ metadata: { name: string } }>, 'list'>;
}

export interface RotationReconcilerOptions {
  client: KubeApi;
  clock: Clock;
  log: Logger;
  caches: RotationCaches;
  /** Which cached objects concern which NodePool. */
  index: Pick<PoolIndex, 'claims' | 'nodes' | 'placeholders'>;
  metrics: RotationMetrics;
  events: EventRecorder;
  /** The status reconciler (../status/): told each pool's latest report (undefined: the pool is gone). */
  statuses: { report(nodePool: string, report: PoolReport | undefined, forecast?: ForecastStatus): void };
  /** Placeholders live here. */
  namespace: string;
  /** The placeholder's defaults where a policy sets none. */
  placeholderImage: string;
  priorityClass: string;
}

export class RotationReconciler {
  /** Crash tests only (NODEROTATION_FAILPOINT); a no-op otherwise. */
  private readonly afterWrite = failpoint(process.env);
  /** Race tests only (NODEROTATION_PAUSEPOINT); a no-op otherwise. */
  private readonly beforeWrite = pausepoint(process.env);
  private readonly defaulted = new WeakMap<RotationPolicy, RotationPolicy>();
  /** Per spec object: a policy whose status moved keeps its spec object (the reflector shares it), and so this. */
  private readonly defaultedSpecs = new WeakMap<RotationPolicy['spec'], RotationPolicy['spec']>();
  private readonly ownWrites: OwnWrites;

  constructor(private readonly o: RotationReconcilerOptions) {
    this.ownWrites = new OwnWrites(o.clock, OWN_WRITES_RECHECK_MS);
  }

  /**
   * One NodePool's pass: decide with the Pods of the nodes the anchor names, add the Pods of any node the engine
   * says it is missing and decide again (bounded), then carry the actions out in order.
   */
  async reconcile(poolName: string, signal: AbortSignal): Promise<PassResult> {
    const pool = this.o.caches.nodePools.get(poolName);
    if (!pool) return { requeueAt: null };
    // Not on caches that do not show this pool's last writes yet: their watch events queue the pool again.
    const waitUntil = this.ownWrites.waitUntil(poolName) ?? this.ownWrites.waitUntil(SWEEP);
    if (waitUntil !== null) return { requeueAt: waitUntil, deferred: true };
    const log = this.o.log.with({ nodepool: poolName });
    const w = this.world(pool);
    const versions = this.versionsOf(w);
    const now = this.o.clock.now();
    let nodes = anchoredNodes(w);
    // A pass with nothing to read or write does not yield: it runs from cache to decision in one turn of the
    // event loop, instead of interleaving with the other passes in flight (which made an idle pass's wall time
    // a multiple of its CPU time when a controller starts).
    let pods = nodes.length > 0 ? await this.podsOn(nodes, signal) : [];
    let snapshot = poolSnapshot(w, pods, nodes);
    let decision = decide(snapshot, now);
    for (let round = 0; round < MAX_POD_ROUNDS && decision.missingPods.some((n) => !nodes.includes(n)); round++) {
      const more = decision.missingPods.filter((n) => !nodes.includes(n));
      pods = [...pods, ...(await this.podsOn(more, signal))];
      nodes = [...nodes, ...more].sort();
      snapshot = poolSnapshot(w, pods, nodes);
      decision = decide(snapshot, now);
    }
    const mine = decision.pools.find((p) => p.nodePool === poolName) as PoolDecision;
    try {
      const writing = this.carryOut(poolName, mine.actions, versions, log.with(activeClaim(mine)), signal);
      if (writing) await writing;
    } catch (e) {
      // An object changed under the decision: nothing was written on stale state. Decide again shortly, once the
      // watch has delivered the change, without the failure backoff (a busy object is not a failing one).
      if (e instanceof LostRace) return { requeueAt: this.o.clock.now() + LOST_RACE_RETRY_MS };
      throw e;
    }
    // The forecast, for the policy's status, dashboards, and the rotations ahead of a freeze that cannot fit: a
    // failure must never fail the pass that has already written.
    let ahead: Finding[] = [];
    let summary: ForecastStatus | undefined;
    try {
      const list = poolForecast(mine.report, snapshot, now);
      this.o.metrics.forecast(poolName, list, now);
      ahead = forecastFindings(mine.report, snapshot, list);
      summary = list ? forecastStatus(list) : undefined;
    } catch (e) {
      log.warn('forecast not computed', { error: errorText(e) });
    }
    this.o.statuses.report(poolName, mine.report, summary);
    this.o.metrics.report(mine.report);
    this.o.events.level(poolName, levelWarnings(mine.report, ahead));
    return { requeueAt: mine.requeueAt };
  }

  /** A NodePool that is gone: its report, series and active warnings go; the policies it concerned are recounted. */
  forget(poolName: string): void {
    this.o.statuses.report(poolName, undefined);
    this.o.metrics.forgetPool(poolName);
    this.o.events.forgetPool(poolName);
    this.ownWrites.forget(poolName);
  }

  /**
   * The start-up sweep, once, on the caches as they are now (docs/engine-contract.md): throws LostRace when an
   * object changed under it, for the caller to start over on newer caches.
   */
  async sweep(): Promise<void> {
    const { caches } = this.o;
    const s: Snapshot = toEngineSnapshot({
      policies: this.enginePolicies(),
      nodePools: caches.nodePools.list(),
      nodeClaims: caches.nodeClaims.list(),
      nodes: caches.nodes.list(),
      pods: caches.placeholders.list(),
      namespace: this.o.namespace,
      podsOfNodes: [],
    });
    const versions = this.versionsOf(s);
    const actions = sweep(s);
    if (actions.length > 0) this.o.log.info('start-up sweep', { actions: actions.length });
    await this.carryOut(SWEEP, actions, versions, this.o.log.with({ phase: 'sweep' }), new AbortController().signal);
  }

  /** The policies as the engine sees them: the controller's placeholder defaults filled in where unset. */
  private enginePolicies(): RotationPolicy[] {
    return this.o.caches.policies.list().map((p) => this.withDefaults(p));
  }

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

  /** The cache that shows the objects of a kind the executor writes. */
  private cacheOf(kind: Ref['kind']): Follows {
    const { caches } = this.o;
    switch (kind) {
      case 'NodePool':
        return caches.nodePools;
      case 'NodeClaim':
        return caches.nodeClaims;
      case 'Node':
        return caches.nodes;
      case 'Pod':
        return caches.placeholders;
    }
  }

  private world(pool: NodePool): PoolWorld {
    const { caches, index } = this.o;
    const name = pool.metadata.name;
    const get = <T>(r: Cache<T>, keys: string[]): T[] =>
      keys.map((k) => r.get(k)).filter((x): x is T => x !== undefined);
    return {
      policies: this.enginePolicies(),
      nodePools: [pool],
      nodeClaims: get(caches.nodeClaims, index.claims.keys(name)),
      nodes: get(caches.nodes, index.nodes.keys(name)),
      placeholders: get(caches.placeholders, index.placeholders.keys(name)),
      namespace: this.o.namespace,
      priorityClasses: caches.priorityClasses.list().map((c) => c.metadata.name),
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
    const take = <T extends { metadata: { name: string } }>(kind: string, r: Cache<T>, list: readonly T[]) => {
      for (const o of list) {
        const rv = r.resourceVersionOf(o.metadata.name);
        if (rv) out.set(versionKey(kind, o.metadata.name), rv);
      }
    };
    take('NodePool', this.o.caches.nodePools, w.nodePools);
    take('NodeClaim', this.o.caches.nodeClaims, w.nodeClaims);
    take('Node', this.o.caches.nodes, w.nodes);
    return out;
  }

  /**
   * The actions carried out in order; null, at once, when there are none (an idle pass, a sweep that found
   * nothing). An idle pass then ends in the turn it began: awaiting even an empty async call would yield, and
   * its time would take in the decisions of every other pass in flight (four at start-up).
   */
  private carryOut(
    /** Whose writes these are: the NodePool, or the sweep. */
    key: string,
    actions: readonly Action[],
    versions: Map<string, string>,
    log: Logger,
    signal: AbortSignal,
  ): Promise<void> | null {
    return actions.length === 0 ? null : this.perform(key, actions, versions, log, signal);
  }

  private async perform(
    key: string,
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
      onEvent: (a) =>
        this.o.events.record({ target: a.target, type: a.eventType, reason: a.eventReason, note: a.message }),
      onObserve: (a) => this.o.metrics.observe(a.metric, a.nodePool, a.value, a.labels),
      written: (kind, rv) => this.ownWrites.wrote(key, this.cacheOf(kind), rv),
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
