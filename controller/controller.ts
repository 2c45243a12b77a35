// The controller: keeps the watch caches, maps every change to the NodePools it concerns, and hands each key to
// its reconciler — a NodePool to the rotation reconciler (rotation/), through the work queue; a RotationPolicy's
// status to the status reconciler (status/), which runs a queue of its own. This file is only the wiring: the
// caches (caches.ts) to the queue, the queue to the reconcilers, the start-up sweep's retries and the resync.
import { prepareValidators } from '../src/api/validate.js';
import type { RotationPolicy } from '../src/generated/api-types.js';
import { prepareZones } from '../src/schedule/zone.js';
import { sameJson } from '../src/util/canonical.js';
import type { KubeApi } from '../runtime/kube/client.js';
import type { ReflectorHealth } from '../runtime/kube/reflector.js';
import type { Clock } from '../runtime/queue/clock.js';
import { WorkQueue } from '../runtime/queue/work-queue.js';
import { Caches } from './caches.js';
import { cachedCalendar } from './calendar.js';
import { LostRace } from './execute/executor.js';
import { errorText, type Logger } from './log.js';
import type { ControllerMetrics } from './metrics.js';
import { EventRecorder } from './rotation/events.js';
import { LOST_RACE_RETRY_MS, RotationReconciler } from './rotation/reconciler.js';
import { PolicyStatusReconciler } from './status/reconciler.js';

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

/** What a new leader logs while its caches do not yet show the resources at its Lease write. */
export const CATCHING_UP = "waiting for the caches to show the previous leader's writes";

/** How often a new leader looks again whether its caches show the resources at its Lease write. */
export const CATCH_UP_RECHECK_MS = 1_000;

/** How long a stopping controller waits for its queued Events. */
const EVENTS_FLUSH_MS = 3_000;

export class Controller {
  private readonly caches: Caches;
  private queue: WorkQueue | null = null;
  /** Rotations, one NodePool a key, on this controller's queue (rotation/reconciler.ts). */
  private readonly rotation: RotationReconciler;
  /** RotationPolicy statuses, from the rotation's reports: a reconciler with a queue of its own (status/). */
  private readonly statuses: PolicyStatusReconciler;
  private resync: { cancel(): void } | null = null;
  /** The rotation's Events, sent after the passes that made them (rotation/events.ts). */
  private readonly events: EventRecorder;

  constructor(private readonly o: ControllerOptions) {
    const { client, clock, log } = o;
    this.events = new EventRecorder(client, o.identity, clock, (m, f) => log.warn(m, f));
    this.caches = new Caches(client, clock, o.namespace);
    this.statuses = new PolicyStatusReconciler({ client, clock, log, policies: this.caches.policies });
    this.rotation = new RotationReconciler({
      client,
      clock,
      log,
      caches: this.caches,
      index: this.caches.index,
      metrics: o.metrics.rotation,
      events: this.events,
      statuses: this.statuses,
      namespace: o.namespace,
      placeholderImage: o.placeholderImage,
      priorityClass: o.priorityClass,
    });
    this.wire();
  }

  /**
   * Starts the watches; resolves when every cache has synced. Meanwhile, the one-time work the first passes
   * would otherwise pay: the RotationPolicy schema compiled while the lists stream in, and once the policies
   * are known, their windows' time zones loaded.
   */
  async sync(): Promise<void> {
    const c = this.caches;
    const syncing = c.sync();
    prepareValidators(['rotationPolicy']);
    await syncing;
    // Any policy, valid or not (the engine judges them): only what is a zone's name is loaded.
    const zones = c.policies.list().flatMap((p) => {
      const windows: unknown = (p as { spec?: { maintenanceWindows?: unknown } }).spec?.maintenanceWindows;
      return Array.isArray(windows) ? windows.map((w) => (w as { timezone?: unknown } | null)?.timezone) : [];
    });
    prepareZones(zones, this.o.clock.now());
    this.o.log.info('caches synced', {
      rotationpolicies: c.policies.size,
      nodepools: c.nodePools.size,
      nodeclaims: c.nodeClaims.size,
      nodes: c.nodes.size,
    });
  }

  health(): ReflectorHealth[] {
    return this.caches.health();
  }

  /** The calendar (GET /calendar.ics) from the caches as they are; null until every cache has synced. */
  calendar(now: number): string | null {
    return this.health().every((h) => h.synced) ? cachedCalendar(this.caches, now) : null;
  }

  /**
   * Begins acting (the leader, or the only replica): once the caches show the resources at `since` (the Lease
   * write leadership began with), the start-up sweep, then a pass of every NodePool.
   */
  async startWorking(since?: string): Promise<void> {
    // Leadership may have lapsed before (or during the sweep): a fenced client's check ends it; nothing starts.
    if (!this.o.client.fenceUp()) return;
    if (since && !(await this.caughtUp(since))) return;
    await this.runSweep();
    if (!this.o.client.fenceUp()) return;
    this.queue = new WorkQueue({
      handler: (pool, signal) => this.rotation.reconcile(pool, signal),
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
    // The Events of the last passes, while the Lease is still ours (replica.ts releases it after this); a few
    // seconds at most: an Event is a record, and one left unsent loses no state.
    let bound: { cancel(): void } | undefined;
    await Promise.race([
      this.events.idle(),
      new Promise<void>((r) => (bound = this.o.clock.after(EVENTS_FLUSH_MS, r))),
    ]);
    bound?.cancel();
    await this.caches.stop();
  }

  /** True while NodePools are queued or being decided. */
  working(): boolean {
    return (this.queue?.depth ?? 0) + (this.queue?.busy ?? 0) > 0;
  }

  private enqueueAll(): void {
    this.enqueue(this.caches.nodePools.list().map((p) => p.metadata.name));
  }

  private enqueue(pools: readonly string[]): void {
    for (const p of pools) this.queue?.add(p);
    this.o.metrics.queueDepth.set(this.queue?.depth ?? 0);
  }

  private wire(): void {
    const c = this.caches;
    // Our own status writes change a policy too; only what the engine reads is worth a pass of every pool.
    c.policies.onChange((_key, prev, cur) => {
      if (!prev || !cur || specOrMetaChanged(prev, cur)) this.enqueueAll();
    });
    c.priorityClasses.onChange(() => this.enqueueAll());
    c.nodePools.onChange((key, _prev, cur) => {
      if (!cur) this.rotation.forget(key);
      this.enqueue([key]);
    });
    c.onPools((pools) => this.enqueue(pools));
  }

  /**
   * Waits until every cache shows the resources at `since`; false when leadership or the caches ended first.
   * A standby's caches may lag the previous leader's last writes (a stalled watch): a sweep or a pass on them
   * would end a rotation without seeing all its marks, or find marks stale that an anchor it cannot see yet
   * still owns. A cache of a resource that did not change catches up by the apiserver's next bookmark (about one
   * a minute: k8s.io/apiserver's cacher), so a takeover usually waits up to a minute; a watch that keeps being
   * cut waits until its next list or bookmark. Waiting writes nothing: Karpenter's expiry still applies.
   */
  private async caughtUp(since: string): Promise<boolean> {
    const started = this.o.clock.mono();
    let behind = this.caches.behind(since);
    if (behind.length > 0) this.o.log.info(CATCHING_UP, { since, behind });
    while (behind.length > 0) {
      await new Promise<void>((resolve) => this.o.clock.after(CATCH_UP_RECHECK_MS, resolve));
      if (this.caches.stopped || !this.o.client.fenceUp()) return false;
      behind = this.caches.behind(since);
      if (behind.length === 0) this.o.log.info('caches caught up', { since, waitedMs: this.o.clock.mono() - started });
    }
    return true;
  }

  /**
   * The start-up sweep, on the caches as they are now; an object that changed under it (a lost precondition)
   * makes it start over on the newer caches, a few times, before the start fails.
   */
  private async runSweep(): Promise<void> {
    for (let attempt = 1; ; attempt++) {
      try {
        return await this.rotation.sweep();
      } catch (e) {
        // A lost precondition or a failed write leaves the sweep to be done again on newer caches: never give up
        // for good (the queue would never start, with the process up and ready), unless leadership is gone.
        if (this.caches.stopped || !this.o.client.fenceUp()) throw e;
        const ms = e instanceof LostRace ? LOST_RACE_RETRY_MS : Math.min(1000 * 2 ** Math.min(attempt - 1, 5), 30_000);
        this.o.log.warn('start-up sweep failed; trying again', { error: errorText(e), retryInMs: ms, attempt });
        await new Promise<void>((resolve) => this.o.clock.after(ms, resolve));
      }
    }
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
