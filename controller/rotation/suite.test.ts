// The rotation reconciler in process against the simulation's apiserver (Karpenter's per-controller suite_test
// as the model): the real caches (reflectors and pool index, caches.ts) list from it, and their watches deliver
// only when a case says so, as a watch that lags; each case gives the cluster, what happens before the measured
// pass, and then what that pass stored on the apiserver (objects, Events) and fed to its metrics.
import { describe, expect, it } from 'vitest';
import { A } from '../../src/engine/annotations.js';
import type { PassResult } from '../../runtime/queue/work-queue.js';
import { ManualClock } from '../../runtime/queue/clock.js';
import { ApiServer, type Obj, type Write } from '../../test/sim/apiserver.js';
import { laggingClient } from '../../test/sim/direct.js';
import { claim, IN_WINDOW, nodePool, NS, OLD, OUT_OF_WINDOW, policy, workload } from '../../test/support/fixtures.js';
import { Caches } from '../caches.js';
import { PATHS } from '../execute/executor.js';
import { jsonLogger } from '../log.js';
import { ControllerMetrics } from '../metrics.js';
import { ROTATIONPOLICIES } from '../status/reconciler.js';
import { EventRecorder } from './events.js';
import type { ForecastStatus } from '../../src/forecast/summary.js';
import { LOST_RACE_RETRY_MS, OWN_WRITES_RECHECK_MS, RotationReconciler } from './reconciler.js';

const PRIORITY_CLASS = 'noderotation-placeholder';
const PLACEHOLDER = 'noderotation-surge-old';
const PODS = PATHS.of('Pod', NS);

/** The cluster: the policy's pool `general`, claim `old` (due at IN_WINDOW) and its node, our PriorityClass. */
async function setup(now: number, extra: { pods?: Obj[] } = {}) {
  const clock = new ManualClock(now);
  const server = new ApiServer({ now: () => clock.now() });
  const seed = (path: string, o: object): Obj => server.seed(path, o as Obj);
  seed(ROTATIONPOLICIES, policy());
  seed(PATHS.of('NodePool'), nodePool());
  const old = claim('old', { createdAt: OLD });
  seed(PATHS.of('NodeClaim'), old.claim);
  seed(PATHS.of('Node'), old.node as object);
  seed('/apis/scheduling.k8s.io/v1/priorityclasses', { metadata: { name: PRIORITY_CLASS }, value: 1000 });
  for (const p of extra.pods ?? []) seed(PATHS.of('Pod', p.metadata.namespace), p);

  const { client, deliver } = laggingClient(server);
  const caches = new Caches(client, clock, NS);
  await caches.sync();
  const metrics = new ControllerMetrics();
  const reported: string[] = [];
  const forecasts: ForecastStatus[] = [];
  const events = new EventRecorder(client, 'suite', clock, () => undefined);
  const reconciler = new RotationReconciler({
    client,
    clock,
    log: jsonLogger('error', () => undefined),
    caches,
    index: caches.index,
    metrics: metrics.rotation,
    events,
    statuses: {
      report: (pool, r, forecast) => {
        reported.push(`${pool}:${r ? (r.policy ?? '-') : 'gone'}`);
        if (forecast) forecasts.push(forecast);
      },
    },
    namespace: NS,
    placeholderImage: 'registry.k8s.io/pause:3.10',
    priorityClass: PRIORITY_CLASS,
  });
  return {
    server,
    clock,
    caches,
    reconciler,
    metrics,
    reported,
    forecasts,
    deliver,
    /** One pass of the pool, and then the Events it queued (sent after the pass: events.ts). */
    pass: async (): Promise<PassResult> => {
      const result = await reconciler.reconcile('general', new AbortController().signal);
      await events.idle();
      return result;
    },
    /** As another actor writes it (an operator, Karpenter): through the API, not delivered yet. */
    write(actor: string, method: string, path: string, body: unknown): void {
      const res = server.handle(actor, { method, path, contentType: 'application/merge-patch+json', body });
      expect(res.code, JSON.stringify(res.body)).toBeLessThan(300);
    },
  };
}

type Harness = Awaited<ReturnType<typeof setup>>;

/** Karpenter's part of a surge: the placeholder's claim and Node (Ready, in the pool), the placeholder bound. */
function surgeNodeReady(h: Harness): void {
  const surge = claim('surge-1', { createdAt: h.clock.now() });
  h.server.seed(PATHS.of('NodeClaim'), surge.claim as unknown as Obj);
  h.server.seed(PATHS.of('Node'), surge.node as unknown as Obj);
  h.write('karpenter', 'PATCH', `${PODS}/${PLACEHOLDER}`, { spec: { nodeName: 'node-surge-1' } });
  h.write('karpenter', 'PATCH', `${PODS}/${PLACEHOLDER}/status`, { status: { phase: 'Running' } });
}

/**
 * The controller's writes to objects (Events apart) after write `seq`: "verb resource name", then for a patch what
 * it changed (annotation keys without our prefix, `unschedulable`), for a delete its UID precondition.
 */
function objectWrites(server: ApiServer, seq: number): string[] {
  return server.writes
    .filter((w) => w.seq > seq && w.actor === 'controller' && !w.resource.endsWith('/events'))
    .map((w) => [w.verb, w.resource.split('/').pop(), w.name, ...detail(w)].join(' '));
}

function detail(w: Write): string[] {
  if (w.verb === 'delete')
    return [w.preconditions?.uid === w.before?.metadata.uid ? 'on-its-uid' : `uid=${w.preconditions?.uid}`];
  if (w.verb !== 'patch') return [];
  const [a, b] = [w.before?.metadata.annotations ?? {}, w.after?.metadata.annotations ?? {}];
  const keys = [...new Set([...Object.keys(a), ...Object.keys(b)])].filter((k) => a[k] !== b[k]).sort();
  const cordon = (o?: Obj) => (o?.spec as { unschedulable?: boolean } | undefined)?.unschedulable;
  return [
    ...keys.map((k) => k.replace('noderotation.io/', '')),
    ...(cordon(w.before) !== cordon(w.after) ? ['unschedulable'] : []),
  ];
}

const eventReasons = (server: ApiServer): string[] =>
  server.list('events.k8s.io/v1/events').map((e) => `${(e.regarding as { name: string }).name}:${String(e.reason)}`);

const annotations = (server: ApiServer, resource: string, name: string): Record<string, string> =>
  server.get(resource, name)?.metadata.annotations ?? {};

describe('the rotation reconciler, one pass of NodePool general', () => {
  it.each([
    {
      reason: 'outside the window: a due claim waits, nothing is written; the pass wakes at the window',
      now: OUT_OF_WINDOW,
      writes: [],
      requeue: (r: PassResult, now: number) => expect(r.requeueAt).toBeGreaterThan(now),
      series: [
        'noderotation_window_active{nodepool="general"} 0',
        'noderotation_in_progress{nodepool="general"} 0',
        // The forecast of the pass: the due claim planned at the next opening, none at risk.
        'noderotation_nodepool_claims_at_risk{nodepool="general"} 0',
        'noderotation_nodeclaim_time_until_forced_expiry_seconds_count{nodepool="general"} 1',
      ],
      events: [],
    },
    {
      reason: 'inside the window: the due claim is anchored, its node cordoned, a placeholder created',
      now: IN_WINDOW,
      writes: [
        'patch nodepools general active-rotation',
        'patch nodeclaims old started-at state',
        'patch nodes node-old karpenter.sh/do-not-disrupt do-not-disrupt-owned surge-for',
        'patch nodes node-old cordoned unschedulable',
        `create pods ${PLACEHOLDER}`,
      ],
      series: ['noderotation_window_active{nodepool="general"} 1', 'noderotation_in_progress{nodepool="general"} 1'],
      events: ['general:RotationStarted'],
    },
    {
      reason: 'the surge node is Ready: the old claim is marked draining and deleted on exactly its UID',
      now: IN_WINDOW,
      before: async (h: Harness) => {
        await h.pass();
        surgeNodeReady(h);
        h.deliver();
      },
      writes: [
        'patch nodeclaims old surge-claim',
        'patch nodeclaims surge-1 surge-for',
        'patch nodes node-surge-1 karpenter.sh/do-not-disrupt do-not-disrupt-owned surge-for',
        'patch nodepools general active-rotation-state draining-at surge-path surge-wait',
        'patch nodeclaims old state',
        'delete nodeclaims old on-its-uid',
      ],
      series: [
        'noderotation_draining{nodepool="general"} 1',
        'noderotation_duration_seconds_count{nodepool="general",phase="surge_wait"} 1',
      ],
      events: ['general:RotationStarted', 'general:DrainStarted'],
    },
    {
      reason: "an operator's do-not-disrupt Pod on the candidate's node holds it: nothing is written",
      now: IN_WINDOW,
      pods: [
        workload(
          'app',
          'node-old',
          { cpu: '1' },
          {
            metadata: { name: 'app', namespace: 'default', annotations: { [A.doNotDisrupt]: 'true' } },
          },
        ) as unknown as Obj,
      ],
      writes: [],
      series: ['noderotation_window_active{nodepool="general"} 1', 'noderotation_in_progress{nodepool="general"} 0'],
      events: [],
    },
    {
      reason: 'a lost race: the NodePool changed after the caches read it; nothing is written, decided again soon',
      now: IN_WINDOW,
      before: (h: Harness) =>
        h.write('operator', 'PATCH', `${PATHS.of('NodePool')}/general`, { metadata: { labels: { team: 'x' } } }),
      writes: [],
      requeue: (r: PassResult, now: number) => expect(r.requeueAt).toBe(now + LOST_RACE_RETRY_MS),
      series: [],
      events: [],
    },
  ])('$reason', async ({ now, pods, before, writes, requeue, series, events }) => {
    const h = await setup(now, { pods: pods ?? [] });
    await before?.(h);
    const from = h.server.resourceVersion;
    const seq = h.server.writes.at(-1)?.seq ?? 0;
    const result = await h.pass();
    expect(objectWrites(h.server, seq)).toEqual(writes);
    if (writes.length === 0) expect(h.server.resourceVersion).toBe(from);
    requeue?.(result, h.clock.now());
    const text = await h.metrics.text();
    for (const s of series) expect(text).toContain(s);
    expect(eventReasons(h.server).sort()).toEqual([...events].sort());
    await h.caches.stop();
  });

  it("hands the policy's status the forecast: the due claim planned in the next window, none at risk", async () => {
    const h = await setup(OUT_OF_WINDOW);
    await h.pass();
    expect(h.forecasts).toEqual([
      {
        // Saturday 02:00 in Tokyo; the claim's deadline is 336h after OLD.
        nextRotations: [{ nodeClaim: 'old', window: '2027-01-08T17:00:00Z', dueBy: '2027-01-09T18:00:00Z' }],
        claimsAtRisk: 0,
        atRisk: [],
      },
    ]);
    await h.caches.stop();
  });

  it('read back: the pool names the claim, the claim is pending, the placeholder surges for it', async () => {
    const h = await setup(IN_WINDOW);
    await h.pass();
    expect(annotations(h.server, 'karpenter.sh/v1/nodepools', 'general')).toMatchObject({ [A.activeRotation]: 'old' });
    expect(annotations(h.server, 'karpenter.sh/v1/nodeclaims', 'old')).toMatchObject({ [A.state]: 'pending' });
    expect(h.server.get('/v1/pods', PLACEHOLDER, NS)?.metadata.labels).toMatchObject({ [A.surgeFor]: 'old' });
    expect(h.reported).toEqual(['general:general']);
    // Once the watch delivers its own writes, the next pass finds nothing to do until the surge is ready.
    h.deliver();
    const seq = h.server.writes.at(-1)?.seq ?? 0;
    await h.pass();
    expect(objectWrites(h.server, seq)).toEqual([]);
    await h.caches.stop();
  });

  it("a pass waits until the watch shows the last pass's writes: deferred, nothing written", async () => {
    const h = await setup(IN_WINDOW);
    await h.pass();
    const seq = h.server.writes.at(-1)?.seq ?? 0;
    const early = await h.pass();
    expect(early).toEqual({ requeueAt: h.clock.now() + OWN_WRITES_RECHECK_MS, deferred: true });
    expect(objectWrites(h.server, seq)).toEqual([]);
    h.deliver();
    const next = await h.pass();
    expect(next.deferred).toBeUndefined();
    expect(objectWrites(h.server, seq)).toEqual([]);
    await h.caches.stop();
  });

  it('without delivery a pass keeps waiting, however long: never a decision on a cache before its writes', async () => {
    const h = await setup(IN_WINDOW);
    await h.pass();
    const seq = h.server.writes.at(-1)?.seq ?? 0;
    for (let i = 0; i < 30; i++) {
      h.clock.advance(OWN_WRITES_RECHECK_MS);
      expect(await h.pass()).toEqual({ requeueAt: h.clock.now() + OWN_WRITES_RECHECK_MS, deferred: true });
    }
    expect(objectWrites(h.server, seq)).toEqual([]);
    h.deliver();
    expect((await h.pass()).deferred).toBeUndefined();
    await h.caches.stop();
  });

  it('after a lost race, the watch catches up and the next pass anchors on the newer NodePool', async () => {
    const h = await setup(IN_WINDOW);
    h.write('operator', 'PATCH', `${PATHS.of('NodePool')}/general`, { metadata: { labels: { team: 'x' } } });
    expect(await h.pass()).toEqual({ requeueAt: h.clock.now() + LOST_RACE_RETRY_MS });
    h.deliver();
    await h.pass();
    const pool = h.server.get('karpenter.sh/v1/nodepools', 'general');
    expect(pool?.metadata.labels).toEqual({ team: 'x' });
    expect(pool?.metadata.annotations).toMatchObject({ [A.activeRotation]: 'old' });
    await h.caches.stop();
  });

  it('a NodePool that is gone: its series go, and the status reconciler is told', async () => {
    const h = await setup(IN_WINDOW);
    await h.pass();
    expect(await h.metrics.text()).toContain('nodepool="general"');
    h.reported.length = 0;
    h.reconciler.forget('general');
    expect(await h.metrics.text()).not.toContain('nodepool="general"');
    expect(h.reported).toEqual(['general:gone']);
    await h.caches.stop();
  });
});
