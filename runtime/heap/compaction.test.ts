import { describe, expect, it } from 'vitest';
import { ManualClock } from '../queue/clock.js';
import { collectUntilSteady, MAX_ROUNDS, startHeapCompaction } from './compaction.js';

describe('heap compaction: a full collection at quiet moments', () => {
  const setup = (opts: { busy?: () => boolean; gc?: boolean } = {}) => {
    const clock = new ManualClock();
    const calls: number[] = [];
    const c = startHeapCompaction({
      clock,
      gc: opts.gc === false ? undefined : () => calls.push(clock.mono()),
      busy: opts.busy ?? (() => false),
      firstMs: 20_000,
      everyMs: 60_000,
    });
    return { clock, calls, c };
  };

  it.each([
    { reason: 'idle: first after start-up, then once a turn', busyAt: [] as number[], want: [20_000, 80_000, 140_000] },
    { reason: 'busy at the first turn: skipped, taken at the next', busyAt: [20_000], want: [80_000, 140_000] },
    { reason: 'busy at every turn: never', busyAt: [20_000, 80_000, 140_000], want: [] },
  ])('$reason', ({ busyAt, want }) => {
    const at: { clock?: ManualClock } = {};
    const s = setup({ busy: () => busyAt.includes(at.clock?.mono() ?? -1) });
    at.clock = s.clock;
    s.clock.advance(150_000);
    expect(s.calls).toEqual(want);
    expect(s.c.runs()).toBe(want.length);
  });

  it('without an exposed collector, schedules nothing', () => {
    const s = setup({ gc: false });
    s.clock.advance(600_000);
    expect(s.calls).toEqual([]);
    expect(s.c.runs()).toBe(0);
  });

  it('stop cancels the next turn', () => {
    const s = setup();
    s.clock.advance(30_000);
    s.c.stop();
    s.clock.advance(600_000);
    expect(s.calls).toEqual([20_000]);
  });
});

describe('collectUntilSteady: collections until the committed heap stops shrinking', () => {
  it.each([
    { reason: 'the second gives pages back, the third does not: three', sizes: [46, 45, 26, 26], want: 3 },
    { reason: 'the first frees nothing: one', sizes: [30, 30], want: 1 },
    { reason: 'the heap grew (an allocation in between): one', sizes: [30, 31], want: 1 },
    { reason: 'still shrinking at the bound: stops there', sizes: [50, 45, 40, 35, 30, 25], want: MAX_ROUNDS },
  ])('$reason', ({ sizes, want }) => {
    let committed = sizes[0] as number;
    let runs = 0;
    const gc = (): void => {
      runs++;
      committed = sizes[Math.min(runs, sizes.length - 1)] as number;
    };
    expect(collectUntilSteady(gc, () => committed)).toBe(want);
    expect(runs).toBe(want);
  });
});
