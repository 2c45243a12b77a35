import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { ManualClock } from './clock.js';
import { WorkQueue, type Handler, type PassResult } from './work-queue.js';

const settle = async (): Promise<void> => {
  for (let i = 0; i < 5; i++) await new Promise((r) => setImmediate(r));
};

/** A handler whose passes the test ends by hand, recording which keys ran and how many ran at once. */
function gatedHandler() {
  const runs: string[] = [];
  const open = new Map<string, ((r: PassResult | Error) => void)[]>();
  let concurrent = 0;
  let maxConcurrent = 0;
  const perKey = new Map<string, number>();
  let maxPerKey = 0;
  const handler: Handler = (key) => {
    runs.push(key);
    concurrent++;
    maxConcurrent = Math.max(maxConcurrent, concurrent);
    perKey.set(key, (perKey.get(key) ?? 0) + 1);
    maxPerKey = Math.max(maxPerKey, perKey.get(key) as number);
    return new Promise<PassResult>((resolve, reject) => {
      const list = open.get(key) ?? [];
      list.push((r) => {
        concurrent--;
        perKey.set(key, (perKey.get(key) as number) - 1);
        if (r instanceof Error) reject(r);
        else resolve(r);
      });
      open.set(key, list);
    });
  };
  const finish = async (key: string, r: PassResult | Error = {}): Promise<void> => {
    const fn = open.get(key)?.shift();
    if (!fn) throw new Error(`no pass of ${key} in flight`);
    fn(r);
    await settle();
  };
  return {
    handler,
    runs,
    finish,
    stats: () => ({ maxConcurrent, maxPerKey }),
    inFlight: () => [...open.entries()].filter(([, l]) => l.length > 0).map(([k]) => k),
  };
}

const options = (handler: Handler, clock: ManualClock, concurrency = 2) => ({
  handler,
  clock,
  concurrency,
  baseBackoffMs: 1000,
  maxBackoffMs: 8000,
});

describe('WorkQueue', () => {
  it('de-duplicates: many adds of a queued key make one pass', async () => {
    const clock = new ManualClock();
    const h = gatedHandler();
    const q = new WorkQueue(options(h.handler, clock, 1));
    q.add('busy');
    for (let i = 0; i < 10; i++) q.add('a');
    await settle();
    await h.finish('busy');
    await h.finish('a');
    expect(h.runs).toEqual(['busy', 'a']);
  });

  it('never runs one key twice at once; an add during a pass runs it once more afterwards', async () => {
    const clock = new ManualClock();
    const h = gatedHandler();
    const q = new WorkQueue(options(h.handler, clock, 4));
    q.add('a');
    await settle();
    q.add('a');
    q.add('a');
    await settle();
    expect(h.inFlight()).toEqual(['a']);
    await h.finish('a');
    expect(h.runs).toEqual(['a', 'a']);
    await h.finish('a');
    expect(h.runs).toEqual(['a', 'a']);
    expect(h.stats().maxPerKey).toBe(1);
  });

  it('runs different keys concurrently up to the bound', async () => {
    const clock = new ManualClock();
    const h = gatedHandler();
    const q = new WorkQueue(options(h.handler, clock, 2));
    for (const k of ['a', 'b', 'c']) q.add(k);
    await settle();
    expect(h.inFlight().sort()).toEqual(['a', 'b']);
    await h.finish('a');
    expect(h.inFlight().sort()).toEqual(['b', 'c']);
    expect(h.stats().maxConcurrent).toBe(2);
  });

  it('retries a failed pass with exponential backoff capped at the maximum, reset by a success', async () => {
    const clock = new ManualClock();
    const h = gatedHandler();
    const delays: number[] = [];
    const q = new WorkQueue({ ...options(h.handler, clock), onFailure: (_k, _e, d) => delays.push(d) });
    q.add('a');
    await settle();
    for (let i = 0; i < 5; i++) {
      await h.finish('a', new Error('conflict'));
      clock.advance(delays.at(-1) as number);
      await settle();
    }
    expect(delays).toEqual([1000, 2000, 4000, 8000, 8000]);
    expect(q.failureCount('a')).toBe(5);
    await h.finish('a');
    expect(q.failureCount('a')).toBe(0);
    q.add('a');
    await settle();
    await h.finish('a', new Error('again'));
    expect(delays.at(-1)).toBe(1000);
  });

  it('does not retry before the backoff has passed', async () => {
    const clock = new ManualClock();
    const h = gatedHandler();
    const q = new WorkQueue(options(h.handler, clock));
    q.add('a');
    await settle();
    await h.finish('a', new Error('boom'));
    clock.advance(999);
    await settle();
    expect(h.runs).toEqual(['a']);
    clock.advance(1);
    await settle();
    expect(h.runs).toEqual(['a', 'a']);
  });

  it('wakes a key at its requeueAt; each pass replaces the previous wake-up', async () => {
    const clock = new ManualClock(1_000_000);
    const h = gatedHandler();
    const q = new WorkQueue(options(h.handler, clock));
    q.add('a');
    await settle();
    await h.finish('a', { requeueAt: 1_060_000 });
    expect(q.wakeAt('a')).toBe(1_060_000);
    q.add('a'); // an event: runs now, and its pass decides the next wake-up
    await settle();
    await h.finish('a', { requeueAt: 1_500_000 });
    expect(q.wakeAt('a')).toBe(1_500_000);
    expect(clock.pending).toBe(1);
    clock.advance(499_999);
    await settle();
    expect(h.runs).toHaveLength(2);
    clock.advance(1);
    await settle();
    expect(h.runs).toHaveLength(3);
    await h.finish('a', { requeueAt: null });
    expect(q.wakeAt('a')).toBeUndefined();
    expect(clock.pending).toBe(0);
  });

  it('a deferred pass is not reported as a pass; it wakes at its requeueAt or on the next add', async () => {
    const clock = new ManualClock(1_000_000);
    const h = gatedHandler();
    const passes: string[] = [];
    const q = new WorkQueue({ ...options(h.handler, clock), onPass: (key, _ms, ok) => passes.push(`${key}:${ok}`) });
    q.add('a');
    await settle();
    await h.finish('a', { requeueAt: 1_010_000, deferred: true });
    expect(passes).toEqual([]);
    expect(q.wakeAt('a')).toBe(1_010_000);
    q.add('a');
    await settle();
    await h.finish('a', { requeueAt: null });
    expect(passes).toEqual(['a:true']);
    expect(h.runs).toEqual(['a', 'a']);
  });

  it('shutdown signals the passes in flight, waits for them and takes no more keys', async () => {
    const clock = new ManualClock();
    let seen: AbortSignal | undefined;
    let release: (() => void) | undefined;
    const q = new WorkQueue(
      options(
        (_k, signal) => {
          seen = signal;
          return new Promise((r) => (release = () => r({ requeueAt: 5000 })));
        },
        clock,
        1,
      ),
    );
    q.add('a');
    q.add('b');
    await settle();
    const done = q.shutdown();
    expect(seen?.aborted).toBe(true);
    let finished = false;
    void done.then(() => (finished = true));
    await settle();
    expect(finished).toBe(false);
    release?.();
    await done;
    q.add('c');
    expect(q.depth).toBe(0);
    expect(clock.pending).toBe(0);
  });

  it(
    'property: whatever the interleaving of adds, completions and failures, a key is never run twice at once, ' +
      'concurrency stays bounded, and every key added is processed after its last add',
    async () => {
      await fc.assert(
        fc.asyncProperty(
          fc.array(
            fc.oneof(
              fc.record({ op: fc.constant('add' as const), key: fc.constantFrom('a', 'b', 'c', 'd') }),
              fc.record({
                op: fc.constant('finish' as const),
                key: fc.constantFrom('a', 'b', 'c', 'd'),
                fail: fc.boolean(),
              }),
              fc.record({ op: fc.constant('tick' as const), ms: fc.integer({ min: 0, max: 10_000 }) }),
            ),
            { maxLength: 60 },
          ),
          async (ops) => {
            const clock = new ManualClock();
            const h = gatedHandler();
            const q = new WorkQueue(options(h.handler, clock, 2));
            const lastAdd = new Map<string, number>();
            for (const o of ops) {
              if (o.op === 'add') {
                lastAdd.set(o.key, h.runs.length);
                q.add(o.key);
              } else if (o.op === 'finish') {
                if (h.inFlight().includes(o.key)) await h.finish(o.key, o.fail ? new Error('x') : {});
              } else clock.advance(o.ms);
              await settle();
            }
            // Drain: finish everything successfully until nothing runs or waits.
            for (let i = 0; i < 100 && (h.inFlight().length > 0 || clock.pending > 0); i++) {
              for (const k of h.inFlight()) await h.finish(k);
              clock.advance(10_000);
              await settle();
            }
            expect(h.stats().maxPerKey).toBeLessThanOrEqual(1);
            expect(h.stats().maxConcurrent).toBeLessThanOrEqual(2);
            for (const [key, runsBefore] of lastAdd) expect(h.runs.slice(runsBefore)).toContain(key);
          },
        ),
        { numRuns: 150 },
      );
    },
  );
});
