// Controller.startWorking under the leadership fence: leadership that lapsed before the work started, or during
// the start-up sweep, starts nothing (no pass, no queue, no resync timer); a new leader acts only once its caches
// show the resources at its Lease write. The client is a scripted one: lists answer from fixed objects, watches
// wait until stopped (or pass on a bookmark), writes are recorded, and its fence is a flag.
import { describe, expect, it } from 'vitest';
import { A } from '../src/engine/annotations.js';
import { CATCH_UP_RECHECK_MS, Controller } from './controller.js';
import { PATHS } from './execute/executor.js';
import type { Json, KubeApi, Query, RequestOptions } from '../runtime/kube/client.js';
import { jsonLogger } from './log.js';
import { ControllerMetrics } from './metrics.js';
import { ManualClock } from '../runtime/queue/clock.js';

const NS = 'node-rotation-system';

class ScriptedApi implements KubeApi {
  readonly requests: string[] = [];
  up = true;
  /** The fence goes down once this many writes have been sent (leadership lapses during the sweep). */
  downAfterWrites = Infinity;
  private writes = 0;
  private readonly watchers = new Map<string, (type: string, object: Json) => void>();
  constructor(private readonly lists: Record<string, Json[]>) {}

  /** A BOOKMARK at `resourceVersion` on the open watch of each of `paths`. */
  bookmark(resourceVersion: string, paths: readonly string[]): void {
    for (const p of paths) this.watchers.get(p)?.('BOOKMARK', { metadata: { resourceVersion } });
  }

  fenceUp(): boolean {
    return this.up;
  }

  request<T = Json>(method: string, path: string, _opts?: RequestOptions): Promise<T> {
    this.requests.push(`${method} ${path}`);
    if (method !== 'GET') {
      if (++this.writes >= this.downAfterWrites) this.up = false;
      return Promise.resolve({} as T);
    }
    return Promise.resolve({ items: this.lists[path] ?? [], metadata: { resourceVersion: '1' } } as T);
  }

  /** A streaming list of the fixed objects (ended by its bookmark), then a watch that waits until stopped. */
  watch(path: string, q: Query, onEvent: (type: string, object: Json) => void, signal: AbortSignal): Promise<void> {
    if (q.sendInitialEvents) {
      for (const o of this.lists[path] ?? []) onEvent('ADDED', o);
      const end = { 'k8s.io/initial-events-end': 'true' };
      onEvent('BOOKMARK', { metadata: { resourceVersion: '1', annotations: end } });
    }
    this.watchers.set(path, onEvent);
    return new Promise((resolve) => signal.addEventListener('abort', () => resolve(), { once: true }));
  }
}

/** A NodePool (a started queue passes it) and a placeholder no rotation anchors (the sweep deletes it). */
const world = (): Record<string, Json[]> => ({
  [PATHS.of('NodePool')]: [
    { metadata: { name: 'pool', uid: 'u-pool', resourceVersion: '1' }, spec: { template: { spec: {} } } },
  ],
  [PATHS.of('Pod', NS)]: [
    {
      metadata: { name: 'stale', namespace: NS, uid: 'u-pod', resourceVersion: '1', labels: { [A.surgeFor]: 'gone' } },
      spec: { nodeName: 'n1', containers: [] },
    },
  ],
});

const controllerOn = (api: ScriptedApi, clock: ManualClock): Controller =>
  new Controller({
    client: api,
    clock,
    log: jsonLogger('error', () => undefined),
    metrics: new ControllerMetrics(),
    namespace: NS,
    identity: 'me',
    placeholderImage: 'registry.k8s.io/pause:3.10',
    priorityClass: 'noderotation-placeholder',
    concurrency: 1,
    resyncMs: 600_000,
  });

const settle = () => new Promise<void>((r) => setImmediate(r));

/** A controller whose caches synced on `world()`, and the writes it sends from then on. */
async function synced() {
  const api = new ScriptedApi(world());
  const clock = new ManualClock(1_700_000_000_000);
  const controller = controllerOn(api, clock);
  await controller.sync();
  const listed = api.requests.length;
  const writes = () => api.requests.slice(listed).filter((r) => !r.startsWith('GET '));
  return { api, clock, controller, writes };
}

describe('Controller.startWorking under the leadership fence', () => {
  it.each([
    {
      reason: 'the fence is up: the sweep deletes the stale placeholder and the queue starts (resync timer armed)',
      up: true,
      downAfterWrites: Infinity,
      writes: [`DELETE ${PATHS.of('Pod', NS)}/stale`],
      started: true,
    },
    {
      reason: 'leadership lapsed before the work started: no sweep, no queue, no timer',
      up: false,
      downAfterWrites: Infinity,
      writes: [],
      started: false,
    },
    {
      reason: 'leadership lapsed during the start-up sweep: the queue never starts',
      up: true,
      downAfterWrites: 1,
      writes: [`DELETE ${PATHS.of('Pod', NS)}/stale`],
      started: false,
    },
  ])('$reason', async ({ up, downAfterWrites, writes: want, started }) => {
    const { api, clock, controller, writes } = await synced();
    api.up = up;
    api.downAfterWrites = downAfterWrites;
    await controller.startWorking();
    expect(writes()).toEqual(want);
    // A started queue arms the resync timer at once; a pass of the pool would follow.
    expect(clock.pending > 0).toBe(started);
    await controller.stop();
  });
});

describe('a new leader acts on caches that show its Lease write', () => {
  it('writes nothing until every cache of what it writes is at or past the Lease write; then sweeps', async () => {
    const { api, clock, controller, writes } = await synced();
    let done = false;
    const working = controller.startWorking('5').then(() => (done = true));
    const tick = async (ms: number) => {
      clock.advance(ms);
      await settle();
    };
    await tick(30_000);
    // Three of the four caches have seen a later version; the Nodes' has not: still nothing.
    api.bookmark('6', [PATHS.of('NodePool'), PATHS.of('NodeClaim'), PATHS.of('Pod', NS)]);
    await tick(30_000);
    expect({ writes: writes(), done }).toEqual({ writes: [], done: false });
    api.bookmark('5', [PATHS.of('Node')]);
    await tick(CATCH_UP_RECHECK_MS);
    await working;
    expect(writes()).toEqual([`DELETE ${PATHS.of('Pod', NS)}/stale`]);
    await controller.stop();
  });

  it('leadership lost while waiting: nothing written, nothing started', async () => {
    const { api, clock, controller, writes } = await synced();
    const working = controller.startWorking('5');
    clock.advance(CATCH_UP_RECHECK_MS);
    await settle();
    api.up = false;
    clock.advance(CATCH_UP_RECHECK_MS);
    await working;
    expect(writes()).toEqual([]);
    expect(clock.pending).toBe(0);
    await controller.stop();
  });
});
