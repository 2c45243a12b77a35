// Time for the controller's shell, injectable so that queues, backoff and leader election are tested without
// waiting. The engine never sees this: it gets `now` as a number.
//
// Two readings: `now()` is wall time (what is written into objects and compared with their timestamps);
// `mono()` is a monotonic reading that no clock adjustment moves, for measuring how long something took or
// how long ago it happened (leader election measures every duration on it). Timers run on the monotonic clock.

export interface Timer {
  cancel(): void;
}

export interface Clock {
  /** Wall time, epoch ms. */
  now(): number;
  /** Monotonic ms from an arbitrary origin: only differences mean anything. */
  mono(): number;
  /** Calls `fn` once after `ms` milliseconds (never synchronously). */
  after(ms: number, fn: () => void): Timer;
}

export const realClock: Clock = {
  now: () => Date.now(),
  mono: () => performance.now(),
  after(ms, fn) {
    // Node clamps delays above 2^31-1 ms to 1 ms; a requeue that far away is re-armed by the resync anyway.
    const handle = setTimeout(fn, Math.min(Math.max(ms, 0), 2 ** 31 - 1));
    handle.unref?.();
    return { cancel: () => clearTimeout(handle) };
  },
};

/**
 * A clock that only moves when told to: `advance` runs every timer that falls due, in due order; `stall` moves
 * time as a paused process sees it (no timer runs until the next `advance`); `jumpWall` moves the wall clock
 * alone, as an NTP step or an operator's `date -s` does.
 */
export class ManualClock implements Clock {
  private wall: number;
  private m = 0;
  private seq = 0;
  private timers: { at: number; seq: number; fn: () => void; live: boolean }[] = [];

  constructor(start = 0) {
    this.wall = start;
  }

  now(): number {
    return this.wall;
  }

  mono(): number {
    return this.m;
  }

  after(ms: number, fn: () => void): Timer {
    const timer = { at: this.m + Math.max(ms, 0), seq: this.seq++, fn, live: true };
    this.timers.push(timer);
    return {
      cancel: () => {
        timer.live = false;
      },
    };
  }

  /** Moves time forward by `ms`, firing due timers one at a time (a timer may arm new ones). */
  advance(ms: number): void {
    const end = this.m + ms;
    for (;;) {
      const due = this.timers.filter((x) => x.live && x.at <= end).sort((a, b) => a.at - b.at || a.seq - b.seq)[0];
      if (!due) break;
      due.live = false;
      this.move(Math.max(this.m, due.at) - this.m);
      due.fn();
    }
    this.timers = this.timers.filter((x) => x.live);
    this.move(end - this.m);
  }

  /** Moves both readings forward by `ms` without running any timer: the process was paused (SIGSTOP, a GC). */
  stall(ms: number): void {
    this.move(ms);
  }

  /** Moves the wall clock alone by `ms` (either sign); the monotonic reading and the timers are untouched. */
  jumpWall(ms: number): void {
    this.wall += ms;
  }

  get pending(): number {
    return this.timers.filter((x) => x.live).length;
  }

  private move(ms: number): void {
    this.m += ms;
    this.wall += ms;
  }
}
