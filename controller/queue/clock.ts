// Time for the controller's shell, injectable so that queues, backoff and leader election are tested without
// waiting. The engine never sees this: it gets `now` as a number.

export interface Timer {
  cancel(): void;
}

export interface Clock {
  now(): number;
  /** Calls `fn` once after `ms` milliseconds (never synchronously). */
  after(ms: number, fn: () => void): Timer;
}

export const realClock: Clock = {
  now: () => Date.now(),
  after(ms, fn) {
    // Node clamps delays above 2^31-1 ms to 1 ms; a requeue that far away is re-armed by the resync anyway.
    const handle = setTimeout(fn, Math.min(Math.max(ms, 0), 2 ** 31 - 1));
    handle.unref?.();
    return { cancel: () => clearTimeout(handle) };
  },
};

/** A clock that only moves when told to: `advance` runs every timer that falls due, in due order. */
export class ManualClock implements Clock {
  private t: number;
  private seq = 0;
  private timers: { at: number; seq: number; fn: () => void; live: boolean }[] = [];

  constructor(start = 0) {
    this.t = start;
  }

  now(): number {
    return this.t;
  }

  after(ms: number, fn: () => void): Timer {
    const timer = { at: this.t + Math.max(ms, 0), seq: this.seq++, fn, live: true };
    this.timers.push(timer);
    return {
      cancel: () => {
        timer.live = false;
      },
    };
  }

  /** Moves time forward by `ms`, firing due timers one at a time (a timer may arm new ones). */
  advance(ms: number): void {
    const end = this.t + ms;
    for (;;) {
      const due = this.timers.filter((x) => x.live && x.at <= end).sort((a, b) => a.at - b.at || a.seq - b.seq)[0];
      if (!due) break;
      due.live = false;
      this.t = Math.max(this.t, due.at);
      due.fn();
    }
    this.timers = this.timers.filter((x) => x.live);
    this.t = end;
  }

  get pending(): number {
    return this.timers.filter((x) => x.live).length;
  }
}
