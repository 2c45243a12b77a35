// Full garbage collections at quiet moments. V8 collects its old generation when the heap nears a limit that
// grows with it, so a process whose watches keep replacing cached objects (every Node's status, from its kubelet,
// every few seconds) keeps their dead copies resident while it has nothing to do: on the 5,000-node benchmark
// fleet the controller idled with 54 MB of heap of which 20 were live, and 111 MiB resident against 92 with a
// full collection a minute (docs/benchmarks.md). And one collection frees the dead objects but keeps the pages
// they leave sparse: a turn collects until the committed heap stops shrinking (collectUntilSteady). On that
// fleet, with --single-threaded, the first turn after start-up took three collections and 110 ms of CPU (used
// 43 → 21 MB, committed 46 → 45 → 26 MB); a turn while idle takes tens of milliseconds.
//
// The collector is V8's own `gc`, exposed by `--expose-gc` (NODE_OPTIONS in the Deployment and the chart):
// without it this does nothing. A collection waits while work is queued or in flight.
import v8 from 'node:v8';
import type { Clock, Timer } from '../queue/clock.js';

export interface HeapCompactionOptions {
  clock: Clock;
  /** V8's full collection (globalThis.gc under --expose-gc), or undefined: then nothing is scheduled. */
  gc: (() => void) | undefined;
  /** True while there is work: the collection is then left to the next turn. */
  busy: () => boolean;
  /** The first turn, after start-up (the caches' initial lists leave the most garbage). */
  firstMs: number;
  /** Every turn after it. */
  everyMs: number;
}

/** Schedules the collections; `stop` cancels the next one, `runs` says how many have run. */
export function startHeapCompaction(o: HeapCompactionOptions): { stop(): void; runs(): number } {
  const gc = o.gc;
  let runs = 0;
  if (!gc) return { stop: () => undefined, runs: () => runs };
  let timer: Timer;
  const turn = (): void => {
    if (!o.busy()) {
      gc();
      runs++;
    }
    timer = o.clock.after(o.everyMs, turn);
  };
  timer = o.clock.after(o.firstMs, turn);
  return { stop: () => timer.cancel(), runs: () => runs };
}

/** At most this many collections in one turn. */
export const MAX_ROUNDS = 4;

/**
 * Full collections until one no longer shrinks the committed heap, at most `max`: the first frees the dead
 * objects, and the next ones evacuate the pages they left sparse and give those back to the system, which one
 * collection alone does not. Returns how many ran.
 */
export function collectUntilSteady(gc: () => void, committed: () => number, max = MAX_ROUNDS): number {
  let before = committed();
  for (let round = 1; ; round++) {
    gc();
    const after = committed();
    if (round >= max || after >= before) return round;
    before = after;
  }
}

/** V8's collector when the process runs with --expose-gc (collecting until steady), else undefined. */
export function exposedGc(): (() => void) | undefined {
  const gc = (globalThis as { gc?: unknown }).gc;
  if (typeof gc !== 'function') return undefined;
  return () => {
    collectUntilSteady(
      () => (gc as () => void)(),
      () => v8.getHeapStatistics().total_heap_size,
    );
  };
}
