// The leader-election loop around the pure lease step: read, decide, write conditioned on resourceVersion.
// A leader that cannot renew within renewDeadline calls onStoppedLeading and never acts again (the process
// exits; a fresh start campaigns from scratch), so two controllers never write at the same time for longer
// than the gap between the deadline and the Lease's expiry.
import type { Clock, Timer } from '../queue/clock.js';
import { leaseStep, observe, released, type LeaseObservation, type LeaseRecord } from './lease.js';

export interface StoredLease {
  record: LeaseRecord | null;
  resourceVersion: string;
}

/** Reads and writes the one Lease; `update` rejects (any error) when resourceVersion no longer matches. */
export interface LeaseStore {
  get(): Promise<StoredLease | null>;
  create(record: LeaseRecord): Promise<void>;
  update(record: LeaseRecord, resourceVersion: string): Promise<void>;
}

export interface ElectorOptions {
  identity: string;
  store: LeaseStore;
  clock: Clock;
  /** client-go's defaults: 15 s, 10 s, 2 s. */
  leaseDurationSeconds: number;
  renewDeadlineMs: number;
  retryPeriodMs: number;
  onStartedLeading: () => void;
  onStoppedLeading: (why: string) => void;
  log?: (msg: string, fields?: Record<string, unknown>) => void;
}

export class LeaderElector {
  private obs: LeaseObservation | null = null;
  private leading = false;
  private lastRenew = 0;
  private timer: Timer | null = null;
  private stopped = false;
  private running: Promise<void> | null = null;

  constructor(private readonly o: ElectorOptions) {}

  get isLeader(): boolean {
    return this.leading;
  }

  start(): void {
    this.schedule(0);
  }

  /** Stops campaigning; a leader releases the Lease so that a successor need not wait for it to expire. */
  async stop(): Promise<void> {
    this.stopped = true;
    this.timer?.cancel();
    await this.running;
    if (!this.leading) return;
    this.leading = false;
    try {
      const cur = await this.o.store.get();
      if (cur?.record && cur.record.holder === this.o.identity)
        await this.o.store.update(released(cur.record, this.o.clock.now()), cur.resourceVersion);
    } catch (err) {
      this.o.log?.('could not release the lease; it expires on its own', { error: String(err) });
    }
  }

  private schedule(ms: number): void {
    if (this.stopped) return;
    this.timer = this.o.clock.after(ms, () => {
      this.running = this.tryOnce().finally(() => {
        this.running = null;
        this.schedule(this.o.retryPeriodMs);
      });
    });
  }

  /** One try; never throws (a failed try is a try that did not renew). */
  async tryOnce(): Promise<void> {
    let ok = false;
    try {
      ok = await this.acquireOrRenew();
    } catch (err) {
      this.o.log?.('lease write failed', { error: String(err) });
    }
    const now = this.o.clock.now();
    if (ok) {
      this.lastRenew = now;
      if (!this.leading && !this.stopped) {
        this.leading = true;
        this.o.onStartedLeading();
      }
    } else if (this.leading && now - this.lastRenew >= this.o.renewDeadlineMs) {
      this.leading = false;
      this.stopped = true;
      this.o.onStoppedLeading(`could not renew the lease for ${now - this.lastRenew} ms`);
    }
  }

  private async acquireOrRenew(): Promise<boolean> {
    const cur = await this.o.store.get();
    const now = this.o.clock.now();
    this.obs = observe(this.obs, cur?.record ?? null, now);
    const step = leaseStep(
      this.obs,
      cur !== null,
      { identity: this.o.identity, leaseDurationSeconds: this.o.leaseDurationSeconds },
      now,
    );
    if (step.write === null) {
      if (this.leading) this.o.log?.('lost the lease', { why: step.why });
      return false;
    }
    if (step.write === 'create') await this.o.store.create(step.record);
    else await this.o.store.update(step.record, (cur as StoredLease).resourceVersion);
    this.obs = { record: step.record, seenAt: now };
    if (!this.leading) this.o.log?.('acquired the lease', { why: step.why });
    return true;
  }
}
