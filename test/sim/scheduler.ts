// The simulation's only source of order and time. Every request's arrival at the server, every answer, every
// watch event's delivery, every model reaction and every timer is a task; a seeded PRNG picks which runnable
// task runs next, and virtual time moves only when nothing is runnable (to the next task or timer due).
// Between two tasks the driver lets every microtask settle, so the controller's code between two awaits runs
// as one step and one seed reproduces one run exactly.
import type { Clock, Timer } from '../../runtime/queue/clock.js';

/** xoshiro128** (Blackman and Vigna) from its four state words: 32-bit outputs. */
export function xoshiro128ss(a: number, b: number, c: number, d: number): () => number {
  return () => {
    const result = Math.imul(rotl(Math.imul(b, 5) >>> 0, 7), 9) >>> 0;
    const t = (b << 9) >>> 0;
    c = (c ^ a) >>> 0;
    d = (d ^ b) >>> 0;
    b = (b ^ c) >>> 0;
    a = (a ^ d) >>> 0;
    c = (c ^ t) >>> 0;
    d = rotl(d, 11);
    return result;
  };
}

/** A stream of floats in [0, 1) from one integer seed: xoshiro128**, its state filled by splitmix32. */
export function seeded(seed: number): () => number {
  let x = seed >>> 0;
  const splitmix = (): number => {
    x = (x + 0x9e3779b9) >>> 0;
    let z = x;
    z = Math.imul(z ^ (z >>> 16), 0x85ebca6b) >>> 0;
    z = Math.imul(z ^ (z >>> 13), 0xc2b2ae35) >>> 0;
    return (z ^ (z >>> 16)) >>> 0;
  };
  const next = xoshiro128ss(splitmix(), splitmix(), splitmix(), splitmix());
  return () => next() / 4294967296;
}

const rotl = (v: number, k: number): number => ((v << k) | (v >>> (32 - k))) >>> 0;

/** A few helpers over one random stream. */
export class Rng {
  constructor(readonly next: () => number) {}
  static of(seed: number): Rng {
    return new Rng(seeded(seed));
  }
  /** An integer in [lo, hi]. */
  int(lo: number, hi: number): number {
    return lo + Math.floor(this.next() * (hi - lo + 1));
  }
  chance(p: number): boolean {
    return p > 0 && this.next() < p;
  }
  pick<T>(xs: readonly T[]): T {
    return xs[Math.floor(this.next() * xs.length)] as T;
  }
  /** A new independent stream (its seed drawn from this one). */
  fork(): Rng {
    return Rng.of(Math.floor(this.next() * 4294967296));
  }
}

export interface Task {
  readonly seq: number;
  /** Runnable from this virtual instant. */
  readonly at: number;
  /** Whose task: a controller process (killed with it) or the world ("world"). */
  readonly owner: string;
  readonly label: string;
  readonly run: () => void;
  /** Timers keep their order among themselves (as setTimeout does); I/O tasks race. */
  readonly timer: boolean;
  live: boolean;
}

export interface Step {
  n: number;
  at: number;
  owner: string;
  label: string;
}

export class Scheduler {
  private t: number;
  private seq = 0;
  private steps = 0;
  private tasks: Task[] = [];
  private readonly trace: Step[] = [];
  /** Per process: how far its wall clock is off (clock jumps); its monotonic clock never is. */
  private readonly wallOffset = new Map<string, number>();
  /** Per process: paused (SIGSTOP) until this virtual instant; none of its tasks runs before. */
  private readonly pausedUntil = new Map<string, number>();

  constructor(
    private readonly rng: Rng,
    start: number,
    private readonly traceSize = 1000,
  ) {
    this.t = start;
  }

  get now(): number {
    return this.t;
  }

  get stepCount(): number {
    return this.steps;
  }

  /** Runs `run` at virtual `now + delayMs` or later, when the scheduler picks it. */
  add(owner: string, label: string, delayMs: number, run: () => void): Task {
    const task: Task = {
      seq: this.seq++,
      at: this.t + Math.max(delayMs, 0),
      owner,
      label,
      run,
      timer: false,
      live: true,
    };
    this.tasks.push(task);
    return task;
  }

  /** The Clock a process sees: its timers are tasks of its own, dropped when it is killed. */
  clock(owner: string): Clock {
    return {
      // The wall clock may jump (jumpWall); the monotonic reading is virtual time itself.
      now: () => this.t + (this.wallOffset.get(owner) ?? 0),
      mono: () => this.t,
      after: (ms: number, fn: () => void): Timer => {
        const task: Task = {
          seq: this.seq++,
          at: this.t + Math.max(ms, 0),
          owner,
          label: `timer ${ms} ms`,
          run: fn,
          timer: true,
          live: true,
        };
        this.tasks.push(task);
        return { cancel: () => void (task.live = false) };
      },
    };
  }

  /** Steps the wall clock `owner` reads by `ms` (either sign), as an NTP step or `date -s` does. */
  jumpWall(owner: string, ms: number): void {
    this.wallOffset.set(owner, (this.wallOffset.get(owner) ?? 0) + ms);
  }

  /** The wall clock `owner` reads is right again. */
  resetWall(owner: string): void {
    this.wallOffset.delete(owner);
  }

  wallOffsetOf(owner: string): number {
    return this.wallOffset.get(owner) ?? 0;
  }

  /**
   * Pauses `owner` for `ms` (SIGSTOP, a long GC): none of its tasks — answers, watch events, timers — runs
   * before; its requests already on the wire (owner "… (wire)") still arrive. Time goes on for its clocks.
   */
  pause(owner: string, ms: number): void {
    this.pausedUntil.set(owner, Math.max(this.pausedUntil.get(owner) ?? 0, this.t + ms));
  }

  isPaused(owner: string): boolean {
    return (this.pausedUntil.get(owner) ?? -Infinity) > this.t;
  }

  /** When a task may run: its own instant, or its process's resumption. */
  private due(x: Task): number {
    if (this.pausedUntil.size === 0) return x.at;
    return Math.max(x.at, this.pausedUntil.get(x.owner) ?? -Infinity);
  }

  /** Drops every task of `owner` (a killed process): its answers never arrive, its timers never fire. */
  kill(owner: string): void {
    for (const t of this.tasks) if (t.owner === owner) t.live = false;
  }

  /**
   * Runs one task: a random one among those runnable now (each timer only once every earlier timer has run);
   * when none is, time moves to the earliest due. Returns null when nothing is left, or nothing before `until`.
   */
  step(until = Infinity): Step | null {
    // One pass drops the dead tasks (in place, order kept), gathers the runnable ones in task order with the
    // first timer due last, and finds the earliest instant any task is due.
    for (const [owner, until] of this.pausedUntil) if (until <= this.t) this.pausedUntil.delete(owner);
    let firstTimer: Task | undefined;
    let next = Infinity;
    const runnable: Task[] = [];
    let kept = 0;
    for (const x of this.tasks) {
      if (!x.live) continue;
      this.tasks[kept++] = x;
      const due = this.due(x);
      if (due < next) next = due;
      if (due > this.t) continue;
      if (!x.timer) runnable.push(x);
      else if (!firstTimer || x.at < firstTimer.at || (x.at === firstTimer.at && x.seq < firstTimer.seq))
        firstTimer = x;
    }
    this.tasks.length = kept;
    if (kept === 0) return null;
    if (firstTimer) runnable.push(firstTimer);
    if (runnable.length === 0) {
      if (next > until) return null;
      this.t = next;
      return this.step(until);
    }
    const task = this.rng.pick(runnable);
    task.live = false;
    const step = { n: this.steps++, at: this.t, owner: task.owner, label: task.label };
    this.trace.push(step);
    // Trimmed in halves, not a shift a step: lastSteps() reads the newest traceSize.
    if (this.trace.length >= 2 * this.traceSize) this.trace.splice(0, this.trace.length - this.traceSize);
    task.run();
    return step;
  }

  /** The last steps, oldest first. */
  lastSteps(): readonly Step[] {
    return this.trace.slice(-this.traceSize);
  }
}

/** Lets every pending microtask run (the controller's code up to its next await on a task). */
export const settle = (): Promise<void> => new Promise((r) => setImmediate(r));
