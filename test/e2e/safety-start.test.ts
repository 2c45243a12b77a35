// Issue 17 findings 5, 6 and 8 on the real cluster: what holds a rotation. Each pool is staged by hand as an
// operator would — Karpenter's do-not-disrupt on the NodeClaim or on a Pod of the candidate's node, a NodePool
// disruption budget of 0, a freeze annotation the controller cannot read, a policy the apiserver admitted (under
// an older, looser CRD) that the controller finds invalid — then one controller is started. A control pool under
// the same policy, held by nothing, starts its rotation: the policy would rotate every one of them now.
//
// The wait: the controller writes each governed pool's state into its policy's status at the end of every pass,
// after the pass's writes, `waiting` saying why nothing started (helpers/staged-state.ts idleBecause). The tests
// wait until it names the protection staged, then check that the pool is exactly as the operator left it.
//
// Before the fix, the controller started a rotation in every one of these pools (anchor written, node cordoned
// and frozen, placeholder created); with a pending rotation under an unreadable freeze it escalated (placeholder).
import { describe, expect, it } from 'vitest';
import { A } from '../../src/engine/annotations.js';
import type { RotationPolicySpec } from '../../src/generated/api-types.js';
import { fakeContainer } from './helpers/context.js';
import { ALWAYS_OPEN, useController } from './helpers/controller-context.js';
import { anchorWrites, writes } from './helpers/controller-observe.js';
import { kubectl } from './helpers/kubectl.js';
import { podRunningReady, waitFor } from './helpers/k8s.js';
import { getRotationPolicy } from './helpers/noderotation-api.js';
import { writeReferenceMarkers } from './helpers/reference-state.js';
import { untouched } from './helpers/windows.js';
import {
  idleBecause,
  serveLooserPolicyCrd,
  stagedPool,
  surgeRunning,
  type StagedPool,
} from './helpers/staged-state.js';

/** Every node old enough, the window always open, one rotation at a time: a pool held by nothing rotates now. */
const SURGE = { readyTimeout: '10m', cooldownAfter: '30m', failurePause: '30m', retryBackoff: '30m' };
const rotateNow = (first: StagedPool, ...rest: StagedPool[]): RotationPolicySpec => ({
  nodePools: [first.pool, ...rest.map((s) => s.pool)],
  maintenanceWindows: ALWAYS_OPEN,
  ageThreshold: '1s',
  surge: SURGE,
});

/** The freeze annotations of the issue: none is RFC 3339 (`Date.parse` accepts the last two). */
const UNREADABLE_FREEZES = ['next tuesday', '2027-01-20T00:00:00 JST', '2027-01-32T00:00:00Z'];

describe('what holds a rotation', () => {
  const ctx = useController();
  const { kube, res } = ctx;

  it("no rotation starts under the operator's do-not-disrupt, a budget of 0, or a freeze it cannot read", async () => {
    const stage = (prefix: string): Promise<StagedPool> => stagedPool(kube, res, prefix);
    const [control, claimHeld, podHeld, budget, ...frozen] = await Promise.all([
      stage('e2e-ss-ctl'),
      stage('e2e-ss-claim'),
      stage('e2e-ss-pod'),
      stage('e2e-ss-budget'),
      ...UNREADABLE_FREEZES.map((_, i) => stage(`e2e-ss-frz${i}`)),
    ]);
    kubectl(['annotate', 'nodeclaim', claimHeld.claim.metadata.name, `${A.doNotDisrupt}=true`]);
    // A Pod of the operator's on the candidate's node, with Karpenter's do-not-disrupt.
    await kube.core.createNamespacedPod({
      namespace: podHeld.ns,
      body: {
        metadata: { name: 'precious', annotations: { [A.doNotDisrupt]: 'true' } },
        spec: { nodeName: podHeld.node, terminationGracePeriodSeconds: 1, containers: [fakeContainer('10m', '16Mi')] },
      },
    });
    await waitFor('the do-not-disrupt Pod running', async () =>
      podRunningReady(await kube.getPod(podHeld.ns, 'precious')),
    );
    kubectl([
      'patch',
      'nodepool',
      budget.pool,
      '--type=merge',
      '-p',
      JSON.stringify({ spec: { disruption: { budgets: [{ nodes: '0' }] } } }),
    ]);
    UNREADABLE_FREEZES.forEach((v, i) =>
      kubectl(['annotate', 'nodepool', (frozen[i] as StagedPool).pool, `${A.freeze}=${v}`]),
    );
    const held = [claimHeld, podHeld, budget, ...frozen];
    const policy = `${control.pool}-policy`;
    await ctx.policy(policy, rotateNow(control, ...held));

    const controller = await ctx.controller(control.ns);
    await waitFor('the control pool rotation started', () => anchorWrites(controller, control.pool).length > 0, {
      timeoutMs: 90_000,
      describe: () => controller.tail(15),
    });

    // The do-not-disrupt claim is no candidate at all; the others are held at the start.
    await idleBecause(kube, controller, policy, claimHeld.pool, /^no candidate$/);
    await idleBecause(
      kube,
      controller,
      policy,
      podHeld.pool,
      new RegExp(`protected by their Pods \\(Pod ${podHeld.ns}/precious has ${A.doNotDisrupt}: "true"\\)`),
    );
    await idleBecause(kube, controller, policy, budget.pool, /^disruption budget: .*budgets\[0\] allows 0 disrupted/);
    for (const [i, v] of UNREADABLE_FREEZES.entries())
      await idleBecause(
        kube,
        controller,
        policy,
        (frozen[i] as StagedPool).pool,
        new RegExp(`^frozen: .*${A.freeze} annotation ${JSON.stringify(v)} is not an RFC 3339 time`),
      );

    // Nothing of ours on any of them (the operator's own do-not-disrupt and freezes stay), no write logged.
    expect(await untouched(kube, controller, control.ns, claimHeld.pool, 1, [A.doNotDisrupt])).toBeNull();
    for (const s of [podHeld, budget]) expect(await untouched(kube, controller, control.ns, s.pool, 1)).toBeNull();
    for (const s of frozen) expect(await untouched(kube, controller, control.ns, s.pool, 1, [A.freeze])).toBeNull();
    expect((await kube.getPod(podHeld.ns, 'precious'))?.metadata?.deletionTimestamp).toBeUndefined();
    expect(controller.errors()).toEqual([]);
    await surgeRunning(kube, control.ns, control); // the control's surge launched: the pools can go
  });

  it('a pending rotation does not escalate under a freeze it cannot read', async () => {
    const stage = (prefix: string): Promise<StagedPool> => stagedPool(kube, res, prefix);
    const [control, ...frozen] = await Promise.all([
      stage('e2e-ss-pend'),
      ...UNREADABLE_FREEZES.map((_, i) => stage(`e2e-ss-pfrz${i}`)),
    ]);
    // Rotations the reference (or we) left pending a moment ago, before any placeholder was created.
    for (const s of [control, ...frozen])
      writeReferenceMarkers({ pool: s.pool, claim: s.claim.metadata.name, node: s.node });
    UNREADABLE_FREEZES.forEach((v, i) =>
      kubectl(['annotate', 'nodepool', (frozen[i] as StagedPool).pool, `${A.freeze}=${v}`]),
    );
    const policy = `${control.pool}-policy`;
    await ctx.policy(policy, rotateNow(control, ...frozen));

    const controller = await ctx.controller(control.ns);
    // The control escalates: its placeholder is created.
    await waitFor(
      'the control rotation escalated (placeholder created)',
      () => writes(controller, control.pool).some((l) => l.action === 'createPod'),
      { timeoutMs: 90_000, describe: () => controller.tail(15) },
    );
    for (const s of frozen) {
      await idleBecause(kube, controller, policy, s.pool, /^frozen: .*: escalation is suspended$/);
      // Still pending (readyTimeout is 10m), never escalated: the unsafe controller created the placeholder and
      // went on to the delete.
      const claim = await kube.getNodeClaim(s.claim.metadata.name);
      expect(claim?.metadata.annotations?.[A.state], s.pool).toBe('pending');
      expect(claim?.metadata.deletionTimestamp, s.pool).toBeUndefined();
      expect((await kube.getNodePool(s.pool))?.metadata.annotations?.[A.activeRotation], s.pool).toBe(
        s.claim.metadata.name,
      );
      expect(
        writes(controller, s.pool).filter((l) => l.action === 'createPod' || l.action === 'deleteNodeClaim'),
        s.pool,
      ).toEqual([]);
      expect(await kube.pods(control.ns, `${A.surgeFor}=${s.claim.metadata.name}`), s.pool).toEqual([]);
    }
    expect(controller.errors()).toEqual([]);
    await surgeRunning(kube, control.ns, control); // the control's surge launched: the pools can go
  });

  it('a policy the apiserver admitted but the controller finds invalid rotates nothing (InvalidPolicy)', async () => {
    // The CRD as an upgrade that left `crds/` behind serves it: no lower bound on ageThreshold, no upper one on
    // surge.maxUnavailable. Restored after the test (registered first, so it runs after the policies are gone).
    ctx.onCleanup(serveLooserPolicyCrd());
    const [short, wide] = await Promise.all([stagedPool(kube, res, 'e2e-ss-age'), stagedPool(kube, res, 'e2e-ss-max')]);
    const invalid: [StagedPool, string, RotationPolicySpec, RegExp][] = [
      [short, `${short.pool}-policy`, { ...rotateNow(short), ageThreshold: '0.5s' }, /spec\.ageThreshold/],
      [
        wide,
        `${wide.pool}-policy`,
        { ...rotateNow(wide), surge: { ...SURGE, maxUnavailable: 3 } },
        /spec\.surge\.maxUnavailable/,
      ],
    ];
    for (const [, name, spec] of invalid)
      // The apiserver serves the looser schema within moments of the apply.
      await waitFor(`RotationPolicy ${name} admitted`, () => ctx.policy(name, spec).then(() => true));

    const controller = await ctx.controller(short.ns);
    for (const [s, name, , field] of invalid) {
      await idleBecause(kube, controller, name, s.pool, /InvalidPolicy/);
      const ready = await waitFor(`RotationPolicy ${name} Ready=False (Invalid)`, async () => {
        const st = (await getRotationPolicy(kube, name))?.status as
          { conditions?: { type: string; status: string; reason: string; message: string }[] } | undefined;
        const c = st?.conditions?.find((x) => x.type === 'Ready');
        return c?.status === 'False' ? c : undefined;
      });
      expect(ready.reason).toBe('Invalid');
      expect(ready.message).toMatch(field);
      // The unsafe controller rotated under it as if it were valid (every node past 0.5s; maxUnavailable ignored).
      expect(await untouched(kube, controller, short.ns, s.pool, 1)).toBeNull();
    }
    expect(controller.errors()).toEqual([]);
  });
});
