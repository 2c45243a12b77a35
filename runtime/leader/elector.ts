// The leader-election loop around the pure lease step: read, decide, write conditioned on resourceVersion.
// client-go's semantics, every duration on the monotonic clock (a wall-clock step changes nothing):
//  - each try is bounded: its requests carry a signal that aborts at the renew deadline, renewDeadline after
//    the start of the last successful renew (a campaigning try gets renewDeadline from its own start);
//  - a leader that has not renewed by then stops leading at that moment, calls onStoppedLeading and never acts
//    again (the process exits; a fresh start campaigns from scratch);
//  - a leader renews with one write, conditioned on the resourceVersion its own last write produced (client-go's
//    "fast path"); only when that write fails does it read the Lease and decide afresh (the slow path), so an
//    idle leader sends one request per retry period, not two;
//  - a leader tries again retryPeriod after each try; a candidate after a jittered period, retryPeriod × (1 + 1.2 ×
//    a random fraction), so that standbys started together do not poll in step (client-go's acquire loop:
//    wait.JitterUntil with leaderelection.JitterFactor = 1.2);
//  - `fence()` is the synchronous check made right before every write: true only while leading and less than
//    renewDeadline after the start of the last successful renew. A paused process (SIGSTOP, a long GC) sees
//    the time it lost there, before any of its timers runs, and refuses the write.
// Since the Lease's holder is respected for leaseDuration (> renewDeadline) after a follower last saw it
// change, and the renew was sent after the moment the fence counts from, no two controllers write at once.
import type { Clock, Timer } from '../queue/clock.js';
import { leaseStep, observe, released, type LeaseObservation, type LeaseRecord } from './lease.js';

export interface StoredLease {
  record: LeaseRecord | null;
  resourceVersion: string;
}

/**
 * Reads and writes the one Lease; `update` rejects (any error) when resourceVersion no longer matches. Each
 * request carries the try's signal, which aborts it at the renew deadline. A write resolves to the
 * resourceVersion it produced.
 */
export interface LeaseStore {
  get(signal?: AbortSignal): Promise<StoredLease | null>;
  create(record: LeaseRecord, signal?: AbortSignal): Promise<string>;
  update(record: LeaseRecord, resourceVersion: string, signal?: AbortSignal): Promise<string>;
}

export interface ElectorOptions {
  identity: string;
  store: LeaseStore;
  clock: Clock;
  /** client-go's defaults: 15 s, 10 s, 2 s. */
  leaseDurationSeconds: number;
  renewDeadlineMs: number;
  retryPeriodMs: number;
  /**
   * Leadership began with the Lease write that answered `since`. An earlier leader's fence fell before the Lease
   * could be taken, so its writes are older (but one already on the wire, which its precondition guards): caches
   * at or past this version show them. Null when this replica created the Lease: there was no earlier leader.
   */
  onStartedLeading: (since: string | null) => void;
  onStoppedLeading: (why: string) => void;
  log?: (msg: string, fields?: Record<string, unknown>) => void;
  /** A fraction in [0, 1) for the candidate's jitter; Math.random when absent (the simulation seeds it). */
  random?: () => number;
}

/** client-go's leaderelection.JitterFactor: a candidate waits retryPeriod × (1 + JITTER_FACTOR × [0, 1)). */
export const JITTER_FACTOR = 1.2;

type TryOutcome = { renewed: true } | { renewed: false; why: string };

export class LeaderElector {
  private obs: LeaseObservation | null = null;
  /** Our last successful write, while leading: the next renew is conditioned on its resourceVersion. */
  private written: StoredLease | null = null;
  private leading = false;
  /** The try that made this replica leader created the Lease (no earlier holder). */
  private createdLease = false;
  /** Monotonic start of the last try that acquired or renewed the Lease: the fence counts from here. */
  private renewedAt = 0;
  private timer: Timer | null = null;
  /** While leading: fires at the renew deadline unless a renew moved it. */
  private lapse: Timer | null = null;
  /** The try in flight; aborted at its deadline or when leadership is lost. */
  private attempt: AbortController | null = null;
  private stopped = false;
  private running: Promise<void> | null = null;

  constructor(private readonly o: ElectorOptions) {}

  get isLeader(): boolean {
    return this.leading;
  }

  /**
   * The fence, checked synchronously right before every write: true only while leading and less than
   * renewDeadline (monotonic) after the start of the last successful renew. When it fails while we believed we
   * led, leadership is lost here and now (onStoppedLeading, once).
   */
  fence(): boolean {
    if (!this.leading) return false;
    const age = this.o.clock.mono() - this.renewedAt;
    if (age < this.o.renewDeadlineMs) return true;
    this.lose(`the last renew began ${age} ms ago, past the renew deadline (${this.o.renewDeadlineMs} ms)`);
    return false;
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
    this.lapse?.cancel();
    try {
      await this.bounded(this.o.clock.mono(), (signal) => this.release(signal));
    } catch (err) {
      this.o.log?.('could not release the lease; it expires on its own', { error: String(err) });
    }
  }

  private async release(signal: AbortSignal): Promise<void> {
    const cur = await this.o.store.get(signal);
    if (!cur?.record || cur.record.holder !== this.o.identity) return;
    signal.throwIfAborted();
    await this.o.store.update(released(cur.record, this.o.clock.now()), cur.resourceVersion, signal);
  }

  private schedule(ms: number): void {
    if (this.stopped) return;
    this.timer = this.o.clock.after(ms, () => {
      this.running = this.tryOnce().finally(() => {
        this.running = null;
        this.schedule(this.leading ? this.o.retryPeriodMs : this.candidateWait());
      });
    });
  }

  /** How long a candidate waits before its next try. */
  private candidateWait(): number {
    const r = (this.o.random ?? Math.random)();
    return Math.round(this.o.retryPeriodMs * (1 + JITTER_FACTOR * r));
  }

  /** One try; never throws (a failed try is a try that did not renew). */
  async tryOnce(): Promise<void> {
    const started = this.o.clock.mono();
    let outcome: TryOutcome;
    try {
      outcome = await this.bounded(started, (signal) => this.acquireOrRenew(signal));
    } catch (err) {
      if (!this.stopped) this.o.log?.('lease write failed', { error: String(err) });
      return;
    }
    if (!outcome.renewed) {
      if (this.leading) this.lose(`the Lease is no longer ours: ${outcome.why}`);
      return;
    }
    // An answer that came after the deadline renewed nothing we may count on.
    if (this.stopped || this.o.clock.mono() - started >= this.o.renewDeadlineMs) return;
    this.renewedAt = started;
    this.lapse?.cancel();
    this.lapse = this.o.clock.after(started + this.o.renewDeadlineMs - this.o.clock.mono(), () =>
      this.lose(`could not renew the lease within the renew deadline (${this.o.renewDeadlineMs} ms)`),
    );
    if (!this.leading) {
      this.leading = true;
      this.o.onStartedLeading(this.createdLease ? null : (this.written?.resourceVersion ?? ''));
    }
  }

  /**
   * Runs `fn` with a signal that aborts at the deadline (the renew deadline while leading, else renewDeadline
   * after `started`) or when leadership is lost, and rejects then even if `fn`'s requests ignore the signal.
   */
  private async bounded<T>(started: number, fn: (signal: AbortSignal) => Promise<T>): Promise<T> {
    const attempt = new AbortController();
    this.attempt = attempt;
    const deadline = (this.leading ? this.renewedAt : started) + this.o.renewDeadlineMs;
    const bound = this.o.clock.after(deadline - this.o.clock.mono(), () =>
      attempt.abort(new Error(`no answer by the renew deadline (${this.o.renewDeadlineMs} ms)`)),
    );
    try {
      return await untilAborted(fn(attempt.signal), attempt.signal);
    } finally {
      bound.cancel();
      if (this.attempt === attempt) this.attempt = null;
    }
  }

  private lose(why: string): void {
    if (!this.leading) return;
    this.leading = false;
    this.stopped = true;
    this.timer?.cancel();
    this.lapse?.cancel();
    this.attempt?.abort(new Error(`leadership lost: ${why}`));
    this.o.onStoppedLeading(why);
  }

  private async acquireOrRenew(signal: AbortSignal): Promise<TryOutcome> {
    // Never on an empty resourceVersion: the apiserver takes a PUT without one as unconditional.
    if (this.leading && this.written?.record && this.written.resourceVersion !== '') {
      if (await this.renewOnLastWrite(this.written.record, this.written.resourceVersion, signal)) {
        return { renewed: true };
      }
    }
    const cur = await this.o.store.get(signal);
    const at = { mono: this.o.clock.mono(), wall: this.o.clock.now() };
    this.obs = observe(this.obs, cur?.record ?? null, at.mono);
    const step = leaseStep(
      this.obs,
      cur !== null,
      { identity: this.o.identity, leaseDurationSeconds: this.o.leaseDurationSeconds },
      at,
    );
    if (step.write === null) return { renewed: false, why: step.why };
    signal.throwIfAborted();
    const resourceVersion =
      step.write === 'create'
        ? await this.o.store.create(step.record, signal)
        : await this.o.store.update(step.record, (cur as StoredLease).resourceVersion, signal);
    this.wrote(step.record, resourceVersion, at.mono);
    if (!this.leading) {
      this.createdLease = step.write === 'create';
      this.o.log?.('acquired the lease', { why: step.why });
    }
    return { renewed: true };
  }

  /**
   * The fast path: renew on the resourceVersion of our own last write, without reading first. A conflict (someone
   * wrote since) or any other failure is not a lost lease by itself: the slow path reads the Lease and decides.
   */
  private async renewOnLastWrite(last: LeaseRecord, resourceVersion: string, signal: AbortSignal): Promise<boolean> {
    const at = { mono: this.o.clock.mono(), wall: this.o.clock.now() };
    const record: LeaseRecord = { ...last, durationSeconds: this.o.leaseDurationSeconds, renewTime: at.wall };
    try {
      this.wrote(record, await this.o.store.update(record, resourceVersion, signal), at.mono);
      return true;
    } catch (err) {
      signal.throwIfAborted();
      this.written = null;
      this.o.log?.('renewing on our last write failed; reading the lease', { error: String(err) });
      return false;
    }
  }

  private wrote(record: LeaseRecord, resourceVersion: string, mono: number): void {
    this.obs = { record, seenAt: mono };
    this.written = { record, resourceVersion };
  }
}

/** `p`, or a rejection with the signal's reason as soon as it aborts (a request that ignores it is left behind). */
function untilAborted<T>(p: Promise<T>, signal: AbortSignal): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const onAbort = (): void => reject(signal.reason as Error);
    if (signal.aborted) onAbort();
    signal.addEventListener('abort', onAbort, { once: true });
    void p.then(resolve, reject).finally(() => signal.removeEventListener('abort', onAbort));
  });
}
