// Forceful fallback (ADR-0001, docs/state.md) under the controller: two NodePools, identical but for
// surge.forcefulFallback, whose limits leave no room for a surge node and whose nodes expire after a few
// minutes. While another chance remains, both try a surge, which cannot land and is rolled back. Once a node
// is in its last chance before Karpenter's expiry, the enabled pool rotates it surge-less (drained and deleted,
// inside the window, counted); the disabled pool only ever tries another surge and never deletes a node.
import { describe, expect, it } from 'vitest';
import { A, parseTime } from '../../src/engine/annotations.js';
import type { NodeClaim } from '../../src/karpenter/types.js';
import { limitedPoolWithApp, ourMarkers } from './helpers/context.js';
import { ALWAYS_OPEN, useController } from './helpers/controller-context.js';
import type { LogLine } from './helpers/controller-process.js';
import { anchorWrites, logTime, PoolSampler, reasonsAbout, setOf, writes } from './helpers/controller-observe.js';
import { metricSum, podRunningReady, waitFor } from './helpers/k8s.js';
import { eventsV1 } from './helpers/noderotation-api.js';

// t_rot = readyTimeout + the NodeClaim's terminationGracePeriod + 2 min of detection buffer (design §3.2).
const READY_TIMEOUT = 15;
const GRACE = 10;
const T_ROT = READY_TIMEOUT + GRACE + 120;
const TICK = 60;
const EXPIRE_AFTER = 250;
// In an always-open window the next chance is one tick away, so the fallback rule (b) holds once
// deadline − now < t_rot + tick, i.e. past this age (45 s). The explicit ageThreshold of 1 s leaves
// G = floor((E − A − t_rot) / P) = 1 chance, the least a policy may have (OverrideRejected below it).
const FALLBACK_AGE = EXPIRE_AFTER - T_ROT - TICK;
// The engine decides at `now`; the log line of the write it leads to comes a pass's latency later.
const SLACK = 10;
// A retry after an attempt that failed at readyTimeout is then past FALLBACK_AGE + SLACK however early the
// attempt began, and the retry after that (twice the backoff) lies beyond the end of the test.
const PAUSE = FALLBACK_AGE - READY_TIMEOUT + SLACK;

describe('forceful fallback under the controller', () => {
  const ctx = useController();
  const { kube } = ctx;

  it('enabled: surge-less in-window rotation in the last chance, counted; disabled: never', async () => {
    const lifetime = { expireAfter: `${EXPIRE_AFTER}s`, terminationGracePeriod: `${GRACE}s` };
    const [on, off] = await Promise.all([
      limitedPoolWithApp(kube, ctx.res, 'e2e-ffon', lifetime),
      limitedPoolWithApp(kube, ctx.res, 'e2e-ffoff', lifetime),
    ]);
    const onName = on.claim.metadata.name;
    const offName = off.claim.metadata.name;
    const ageAt = (claim: NodeClaim, ms: number): number =>
      (ms - (parseTime(claim.metadata.creationTimestamp) as number)) / 1000;
    const deadline = (claim: NodeClaim): number =>
      (parseTime(claim.metadata.creationTimestamp) as number) + EXPIRE_AFTER * 1000;

    for (const [p, enabled] of [
      [on.pool, true],
      [off.pool, false],
    ] as const)
      await ctx.policy(`${p}-policy`, {
        nodePools: [p],
        maintenanceWindows: ALWAYS_OPEN,
        ageThreshold: '1s',
        surge: {
          readyTimeout: `${READY_TIMEOUT}s`,
          failurePause: `${PAUSE}s`,
          retryBackoff: `${PAUSE}s`,
          cooldownAfter: '30m',
          forcefulFallback: { enabled },
        },
      });
    // Placeholders of both pools live in the controller's namespace.
    const onSampler = new PoolSampler(kube, on.pool, on.ns);
    const offSampler = new PoolSampler(kube, off.pool, on.ns);
    ctx.onCleanup(async () => {
      await onSampler.stop();
      await offSampler.stop();
    });
    const controller = await ctx.controller(on.ns);

    await waitFor(
      'the enabled pool: its node deleted and the rotation completed',
      async () =>
        (await kube.getNodeClaim(onName)) === undefined &&
        (await reasonsAbout(kube, on.pool)).includes('RotationCompleted'),
      { timeoutMs: 240_000, intervalMs: 1000, describe: () => controller.tail(20) },
    );
    // The disabled pool had the same choice past FALLBACK_AGE and tried a surge again, which was rolled back.
    const lastChance = (l: LogLine): boolean => ageAt(off.claim, logTime(l)) - SLACK > FALLBACK_AGE;
    await waitFor(
      'the disabled pool: a surge attempt begun in the last chance, rolled back',
      async () => {
        const starts = anchorWrites(controller, off.pool);
        const ann = (await kube.getNodeClaim(offName))?.metadata.annotations ?? {};
        const pool = (await kube.getNodePool(off.pool))?.metadata.annotations ?? {};
        return (
          starts.some(lastChance) &&
          ann[A.state] === 'failed' &&
          ann[A.retryCount] === String(starts.length) &&
          !(A.activeRotation in pool)
        );
      },
      { timeoutMs: 180_000, intervalMs: 1000, describe: () => controller.tail(20) },
    );
    const ages = (pool: string, claim: NodeClaim): string =>
      anchorWrites(controller, pool)
        .map((l) => `${ageAt(claim, logTime(l)).toFixed(1)}s${setOf(l)[A.rotationMode] ? ' (fallback)' : ''}`)
        .join(', ');
    console.log(`starts at the node's age: enabled ${ages(on.pool, on.claim)}; disabled ${ages(off.pool, off.claim)}`);
    const onSamples = await onSampler.stop();
    const offSamples = await offSampler.stop();

    // The engine's own t_rot is the one this test's timings rest on.
    const metrics = await controller.metrics();
    expect(metricSum(metrics, 'noderotation_t_rot_bound_seconds', { nodepool: on.pool })).toBe(T_ROT);

    // Enabled: every surge start came before FALLBACK_AGE, then exactly one fallback start after it.
    const onStarts = anchorWrites(controller, on.pool);
    const fallbacks = onStarts.filter((l) => setOf(l)[A.rotationMode] === 'forceful-fallback');
    expect(fallbacks, controller.tail(40)).toHaveLength(1);
    const fallback = fallbacks[0]!;
    // draining-at is the decision's own time (to the second, as the engine reads creationTimestamp).
    expect(ageAt(on.claim, parseTime(setOf(fallback)[A.drainingAt]) as number)).toBeGreaterThanOrEqual(FALLBACK_AGE);
    for (const s of onStarts.filter((l) => l !== fallback)) {
      expect(setOf(s)[A.rotationMode]).toBeUndefined();
      expect(ageAt(on.claim, logTime(s)) - SLACK).toBeLessThanOrEqual(FALLBACK_AGE);
    }
    expect(onStarts.at(-1)).toBe(fallback);
    expect(setOf(fallback)).toMatchObject({ [A.activeRotation]: onName, [A.activeRotationState]: 'draining' });
    // Deleted by us, after the fallback began and before Karpenter's own expiry would have.
    const onDeletes = writes(controller, on.pool).filter((l) => l.action === 'deleteNodeClaim');
    expect(onDeletes.map((l) => l.nodeclaim)).toEqual([onName]);
    const deletedAt = logTime(onDeletes[0]!);
    expect(deletedAt).toBeGreaterThanOrEqual(logTime(fallback));
    expect(deletedAt).toBeLessThan(deadline(on.claim));
    // Surge-less: no other NodeClaim in the pool until the old one was deleted (the limits held throughout);
    // its replacement is Karpenter's answer to the drained app, launched once the old node was leaving.
    expect(onSamples.filter((x) => x.at < deletedAt).length).toBeGreaterThan(10);
    for (const s of onSamples.filter((x) => x.at < deletedAt)) expect(s.claims).toEqual([onName]);
    for (const c of await kube.nodeClaims(on.pool))
      expect(parseTime(c.metadata.creationTimestamp)).toBeGreaterThanOrEqual(Math.floor(deletedAt / 1000) * 1000);
    // Counted and recorded.
    expect(metricSum(metrics, 'noderotation_forceful_fallback_total', { nodepool: on.pool })).toBe(1);
    expect(metricSum(metrics, 'noderotation_completed_total', { nodepool: on.pool, outcome: 'success' })).toBe(1);
    const onReasons = await reasonsAbout(kube, on.pool);
    expect(onReasons.filter((r) => r === 'ForcefulFallback')).toHaveLength(1);
    const completed = (await eventsV1(kube, 'default')).find(
      (e) => e.regarding?.name === on.pool && e.reason === 'RotationCompleted',
    );
    expect(completed?.note).toContain('(forceful fallback)');
    expect(onReasons.filter((r) => r === 'RotationStarted')).toHaveLength(onStarts.length - 1);
    // Drained through the voluntary path: the app runs again, on another node; nothing of ours is left.
    await waitFor(
      'the app running again on a new node',
      async () =>
        (await kube.pods(on.ns, 'app=app')).some(
          (p) => podRunningReady(p) && p.spec?.nodeName !== on.claim.status?.nodeName,
        ),
      { timeoutMs: 120_000 },
    );
    const onPoolAnn = ourMarkers((await kube.getNodePool(on.pool))?.metadata.annotations);
    expect(onPoolAnn).toContain(A.lastRotationAt);
    expect(onPoolAnn.filter((k) => k !== A.lastFailureAt)).toEqual([A.lastRotationAt]);
    for (const n of await kube.nodes(on.pool)) {
      expect(ourMarkers(n.metadata?.annotations)).toEqual([]);
      expect(n.spec?.unschedulable ?? false).toBe(false);
    }

    // Disabled: only surge attempts, at least one of them past FALLBACK_AGE; nothing deleted, nothing counted.
    const offStarts = anchorWrites(controller, off.pool);
    expect(offStarts.length).toBeGreaterThanOrEqual(1);
    for (const s of offStarts) expect(setOf(s)[A.rotationMode]).toBeUndefined();
    expect(offStarts.some(lastChance)).toBe(true);
    expect(writes(controller).filter((l) => l.action === 'deleteNodeClaim' && l.nodeclaim === offName)).toEqual([]);
    expect(metricSum(metrics, 'noderotation_forceful_fallback_total', { nodepool: off.pool })).toBe(0);
    const offReasons = await reasonsAbout(kube, off.pool);
    expect(offReasons).not.toContain('ForcefulFallback');
    expect(offReasons).not.toContain('RotationCompleted');
    for (const s of offSamples) expect(s.claims).toEqual([offName]);
    // Each failed attempt was rolled back: the node as it was, only the failure record left.
    const offClaim = await kube.getNodeClaim(offName);
    expect(offClaim?.metadata.deletionTimestamp).toBeUndefined();
    expect(offClaim?.metadata.annotations?.[A.state]).toBe('failed');
    expect(offClaim?.metadata.annotations?.[A.retryCount]).toBe(String(offStarts.length));
    expect(ourMarkers((await kube.getNodePool(off.pool))?.metadata.annotations)).toEqual([A.lastFailureAt]);
    const offNode = await kube.getNode(off.claim.status?.nodeName as string);
    expect(ourMarkers(offNode?.metadata?.annotations)).toEqual([]);
    expect(offNode?.spec?.unschedulable ?? false).toBe(false);
    await waitFor('no placeholder left', async () => (await kube.pods(on.ns, A.surgeFor)).length === 0);

    expect(await controller.stop()).toBe(0);
    expect(controller.errors()).toEqual([]);
  });
});
