// Issue 17 finding 3 on the real cluster: a NodeClaim marked `state=draining` by hand, the pool's anchor naming it
// and draining too (what a crash between the engine's draining writes and its delete leaves, or what an operator
// writes), is deleted only when the delete is justified now (S2, docs/safety.md). Each pool is staged mid-surge
// in the reference's form with its placeholder running on a Ready surge node (the state in which the engine
// itself deletes), then marked draining by hand, then changed in one respect; one controller is then started over
// all of them. The baseline pool, changed in nothing, is deleted (the crash resumed): so the controller could
// delete every one of the others, and the pools it spares are spared for the reason each was given.
//
// Before the fix, the controller deleted every one of these claims on its first pass (the reproduction:
// "it even deleted a claim whose pool no policy governed any more and whose Node carried the operator's own
// do-not-disrupt, six seconds after it started").
import { describe, expect, it } from 'vitest';
import { A, ANCHOR_SET, rfc3339 } from '../../src/engine/annotations.js';
import { ourMarkers } from './helpers/context.js';
import { ALWAYS_OPEN, useController } from './helpers/controller-context.js';
import { writes } from './helpers/controller-observe.js';
import { kubectl } from './helpers/kubectl.js';
import { waitFor } from './helpers/k8s.js';
import { eventsV1 } from './helpers/noderotation-api.js';
import { markDraining, stageSurgeReady, type SurgeReady } from './helpers/staged-state.js';

const HOUR = 3_600_000;

describe('a NodeClaim marked draining by hand', () => {
  const ctx = useController();
  const { kube, res } = ctx;

  it('is deleted only when justified: not ungoverned, operator-held, frozen or hours late', async () => {
    const ctlNs = await res.namespace('e2e-sd-ctl');
    const stage = (prefix: string): Promise<SurgeReady> => stageSurgeReady(kube, res, prefix, ctlNs);
    const [baseline, ungoverned, held, frozen, late, repro] = await Promise.all([
      stage('e2e-sd-base'),
      stage('e2e-sd-ungov'),
      stage('e2e-sd-dnd'),
      stage('e2e-sd-frz'),
      stage('e2e-sd-late'),
      stage('e2e-sd-repro'),
    ]);
    // One policy governs the pools that should be governed; `ungoverned` and `repro` are named by none (their
    // policy is gone). No node of any pool is old enough to be a candidate (ageThreshold auto, expireAfter 720h),
    // and a failed attempt pauses the pool for 30m: nothing but the staged rotations can happen here.
    const policy = `${baseline.pool}-policy`;
    await ctx.policy(policy, {
      nodePools: [baseline.pool, held.pool, frozen.pool, late.pool],
      maintenanceWindows: ALWAYS_OPEN,
      surge: { readyTimeout: '10m', cooldownAfter: '30m', failurePause: '30m', retryBackoff: '30m' },
    });

    const now = Date.now();
    for (const s of [baseline, ungoverned, held, frozen, repro]) markDraining(s, { startedAt: now, drainingAt: now });
    // A restart hours later: the rotation started, and its drain was marked, three hours ago.
    markDraining(late, { startedAt: now - 3 * HOUR, drainingAt: now - 3 * HOUR });
    // The operator's own do-not-disrupt on the Node (without our ownership marker, it is theirs).
    for (const s of [held, repro])
      kubectl(['annotate', '--overwrite', 'node', s.node, `${A.doNotDisrupt}=true`, `${A.doNotDisruptOwned}-`]);
    kubectl(['annotate', 'nodepool', frozen.pool, `${A.freeze}=${rfc3339(now + HOUR)}`]);

    const controller = await ctx.controller(ctlNs);

    // The signals: the baseline's delete (the crash resumed), and each other claim's attempt abandoned, which the
    // engine writes in the same pass in which it would otherwise have deleted the claim.
    const name = (s: SurgeReady): string => s.claim.metadata.name;
    await waitFor(
      'the baseline claim deleted (its drain resumed; gone already if Karpenter finished it between two polls)',
      async () => {
        const c = await kube.getNodeClaim(name(baseline));
        return c === undefined || c.metadata.deletionTimestamp !== undefined;
      },
      { timeoutMs: 120_000, intervalMs: 1000, describe: () => controller.tail(20) },
    );
    expect(writes(controller, baseline.pool).filter((l) => l.action === 'deleteNodeClaim')).toMatchObject([
      { nodeclaim: name(baseline) },
    ]);

    const spared: [SurgeReady, RegExp][] = [
      [ungoverned, /is not governed by exactly one valid RotationPolicy/],
      [held, new RegExp(`the operator set ${A.doNotDisrupt} on Node ${held.node}`)],
      [frozen, /frozen until/],
      [late, /outside readyTimeout of now/],
      // Governance is judged first; the Node's do-not-disrupt alone would also refuse it (`held`).
      [repro, /is not governed by exactly one valid RotationPolicy/],
    ];
    for (const [s, why] of spared) {
      const claim = await waitFor(
        `the attempt on ${name(s)} (NodePool ${s.pool}) abandoned`,
        async () => {
          const c = await kube.getNodeClaim(name(s));
          return c?.metadata.annotations?.[A.state] === 'failed' ? c : undefined;
        },
        { timeoutMs: 60_000, intervalMs: 1000, describe: () => controller.tail(20) },
      );
      // Not deleted, never even attempted: the unsafe controller deleted it here.
      expect(claim.metadata.deletionTimestamp, s.pool).toBeUndefined();
      expect(
        writes(controller, s.pool).filter((l) => l.action === 'deleteNodeClaim'),
        s.pool,
      ).toEqual([]);
      // The attempt abandoned: the gate released, the failure recorded, the reason in the event.
      expect(claim.metadata.annotations?.[A.startedAt], s.pool).toBeUndefined();
      const poolAnn = (await kube.getNodePool(s.pool))?.metadata.annotations ?? {};
      expect(
        ANCHOR_SET.filter((k) => k in poolAnn),
        s.pool,
      ).toEqual([]);
      expect(poolAnn[A.lastFailureAt], s.pool).toBeDefined();
      const note = await waitFor(
        `RotationFailed recorded for ${name(s)}`,
        async () =>
          (await eventsV1(kube, 'default')).find((e) => e.regarding?.name === name(s) && e.reason === 'RotationFailed')
            ?.note,
      );
      expect(note, s.pool).toMatch(why);
      expect(note, s.pool).toMatch(/nothing was deleted/);
      // What the operator set stays; what we set is gone (the cordon lifted, our markers removed).
      const node = await kube.getNode(s.node);
      const operatorHeld = s === held || s === repro;
      expect(ourMarkers(node?.metadata?.annotations), s.pool).toEqual(operatorHeld ? [A.doNotDisrupt] : []);
      expect(node?.metadata?.annotations?.[A.doNotDisrupt], s.pool).toBe(operatorHeld ? 'true' : undefined);
      expect(node?.spec?.unschedulable ?? false, s.pool).toBe(false);
    }
    expect(controller.errors()).toEqual([]);
  });
});
