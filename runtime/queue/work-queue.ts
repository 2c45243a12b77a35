// A work queue keyed by NodePool, with the guarantees client-go's workqueue gives a controller:
//  - de-duplicated: a key is queued at most once, however many watch events arrive for it;
//  - serial per key: a key being processed is never handed to a second worker; an add that arrives meanwhile
//    marks it dirty, and it runs once more when the current pass ends (so no event is lost);
//  - bounded concurrency across keys;
//  - rate-limited retries: a pass that fails is retried after a per-key exponential backoff, reset by the
//    first pass that succeeds;
//  - one delayed wake-up per key: a successful pass may ask to run again at an instant (the engine's
//    requeueAt); each pass replaces the previous wake-up, since the latest decision is the one that counts.
import type { Clock, Timer } from './clock.js';

export interface PassResult {
  /** Epoch ms at which to run this key again without any event; null or absent: only on events. */
  requeueAt?: number | null;
  /**
   * The handler did not process the key yet (it waits for the caches to show its own last writes): not a pass,
   * so not reported to onPass; the key runs again at requeueAt or on its next add.
   */
  deferred?: boolean;
}

export type Handler = (key: string, signal: AbortSignal) => Promise<PassResult>;

export interface WorkQueueOptions {
  handler: Handler;
  clock: Clock;
  /** Keys processed at the same time (different keys; one key is always serial). */
  concurrency: number;
  /** First retry delay after a failed pass; doubles per consecutive failure up to maxBackoffMs. */
  baseBackoffMs: number;
  maxBackoffMs: number;
  /** Told about every failed pass, with the delay before its retry (logging, metrics). */
  onFailure?: (key: string, error: unknown, retryInMs: number) => void;
  /** Told about every finished pass (metrics). */
  onPass?: (key: string, durationMs: number, ok: boolean) => void;
}

interface Wake {
  at: number;
  timer: Timer;
}

export class WorkQueue {
  private readonly queue: string[] = [];
  private readonly queued = new Set<string>();
  private readonly processing = new Set<string>();
  private readonly dirty = new Set<string>();
  private readonly wakes = new Map<string, Wake>();
  private readonly failures = new Map<string, number>();
  private readonly inFlight = new Set<Promise<void>>();
  private readonly abort = new AbortController();
  private stopped = false;
  /** A pump is queued (kick). */
  private kicked = false;

  constructor(private readonly opts: WorkQueueOptions) {
    if (!Number.isInteger(opts.concurrency) || opts.concurrency < 1)
      throw new RangeError('concurrency must be a positive integer');
  }

  /** Queue `key` now (de-duplicated; a key in progress runs once more afterwards). */
  add(key: string): void {
    if (this.stopped) return;
    if (this.processing.has(key)) {
      this.dirty.add(key);
      return;
    }
    if (this.queued.has(key)) return;
    this.queued.add(key);
    this.queue.push(key);
    this.kick();
  }

  /** Queue `key` at epoch ms `at`, replacing any earlier-armed wake-up of that key. */
  addAt(key: string, at: number): void {
    if (this.stopped) return;
    this.clearWake(key);
    const delay = at - this.opts.clock.now();
    if (delay <= 0) {
      this.add(key);
      return;
    }
    const timer = this.opts.clock.after(delay, () => {
      this.wakes.delete(key);
      this.add(key);
    });
    this.wakes.set(key, { at, timer });
  }

  /** The wake-up armed for `key` (epoch ms), if any. */
  wakeAt(key: string): number | undefined {
    return this.wakes.get(key)?.at;
  }

  /** Consecutive failed passes of `key` (0 after a success). */
  failureCount(key: string): number {
    return this.failures.get(key) ?? 0;
  }

  get depth(): number {
    return this.queue.length;
  }

  get busy(): number {
    return this.processing.size;
  }

  /**
   * Stops taking keys, cancels every wake-up, signals the passes in flight to stop after their current write,
   * and resolves when they have ended.
   */
  async shutdown(): Promise<void> {
    this.stopped = true;
    this.abort.abort();
    for (const key of [...this.wakes.keys()]) this.clearWake(key);
    this.queue.length = 0;
    this.queued.clear();
    await Promise.allSettled([...this.inFlight]);
  }

  private clearWake(key: string): void {
    const w = this.wakes.get(key);
    if (!w) return;
    w.timer.cancel();
    this.wakes.delete(key);
  }

  /**
   * Starts queued keys, one a microtask, while there is room. A pass that runs to its end without yielding (an
   * idle one) is then timed when it ends — run's continuation comes before the next start — instead of over every
   * pass started in the same turn (`add` of twenty pools, each starting one, would time the first four together).
   */
  private kick(): void {
    if (this.kicked) return;
    this.kicked = true;
    queueMicrotask(() => {
      this.kicked = false;
      this.pump();
    });
  }

  private pump(): void {
    if (this.stopped || this.processing.size >= this.opts.concurrency || this.queue.length === 0) return;
    const key = this.queue.shift() as string;
    this.queued.delete(key);
    this.processing.add(key);
    const run = this.run(key).finally(() => this.inFlight.delete(run));
    this.inFlight.add(run);
    this.kick();
  }

  private async run(key: string): Promise<void> {
    const started = this.opts.clock.now();
    let ok = false;
    let deferred = false;
    try {
      const result = await this.opts.handler(key, this.abort.signal);
      ok = true;
      deferred = result.deferred === true;
      this.failures.delete(key);
      if (result.requeueAt !== undefined && result.requeueAt !== null) this.addAt(key, result.requeueAt);
      else this.clearWake(key);
    } catch (error) {
      const n = (this.failures.get(key) ?? 0) + 1;
      this.failures.set(key, n);
      const delay = Math.min(this.opts.baseBackoffMs * 2 ** (n - 1), this.opts.maxBackoffMs);
      this.opts.onFailure?.(key, error, delay);
      this.addAt(key, this.opts.clock.now() + delay);
    } finally {
      if (!deferred) this.opts.onPass?.(key, this.opts.clock.now() - started, ok);
      this.processing.delete(key);
      if (this.dirty.delete(key)) this.add(key);
      this.kick();
    }
  }
}
