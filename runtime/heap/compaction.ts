// Full garbage collections at quiet moments. V8 collects its old generation when the heap nears a limit that
// grows with it, so a process whose watches keep replacing cached objects (every Node's status, from its kubelet,
// every few seconds) keeps their dead copies resident while it has nothing to do: on the 5,000-node benchmark
// fleet the controller idled with 54 MB of heap of which 20 were live, and 111 MiB resident against 92 with a
// full collection a minute (docs/benchmarks.md). One collection of that heap takes 5–10 ms of CPU.
//
// The collector is V8's own `gc`, exposed by `--expose-gc` (NODE_OPTIONS in the Deployment and the chart):
// without it this does nothing. A collection waits while work is queued or in flight.
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

/** V8's collector when the process runs with --expose-gc, else undefined. */
export function exposedGc(): (() => void) | undefined {
  const gc = (globalThis as { gc?: unknown }).gc;
  return typeof gc === 'function' ? () => (gc as () => void)() : undefined;
}
