// The placeholder holds the surge capacity until the drain is over (issue 23; design §3.3 "Capacity reservation
// semantics", "Placeholder priority and preemption"), with the controller as a process against real Karpenter and
// kube-scheduler. Each test samples the pool every 200 ms (anchor, NodeClaims, placeholder, workload; the
// placeholder read after the claims) and asserts over the whole sequence, which a failed assertion prints with
// timestamps:
// - new-provision: the placeholder is bound and Running on the freshly provisioned surge node while the old
//   NodeClaim is being deleted, and stays there until that claim is gone; the workload lands on the surge node;
//   then the controller removes the placeholder; another NodePool's spare node, with room, is never used;
// - absorb: the same on a spare node the pool already had, and no NodeClaim is created;
// - preemption: with the drain held by a PodDisruptionBudget, the evicted workload's replacement (priority 0)
//   preempts the placeholder, the scheduler's only victim; it is not recreated while draining.
// Before issue 23 the controller deleted the placeholder at surge_ready, in the same pass and just before the old
// NodeClaim: each assertion says what that would have shown.
import { describe, expect, it } from 'vitest';
import { A } from '../../src/engine/annotations.js';
import type { NodeClaim } from '../../src/karpenter/types.js';
import { barePod, deployment, oneZone, pinnedTo, poolWithApp } from './helpers/context.js';
import { ALWAYS_OPEN, useController } from './helpers/controller-context.js';
import { PoolSampler, writes, type PoolSample } from './helpers/controller-observe.js';
import type { ControllerProcess } from './helpers/controller-process.js';
import { kubectl } from './helpers/kubectl.js';
import { keepWhenDeleted, podRunningReady, releaseKept, waitFor } from './helpers/k8s.js';
import { rotatedAndClean } from './helpers/windows.js';

/** 3900m allocatable: room for the placeholder (1 cpu, the app's request) and the app side by side. */
const ROOMY = 'c-4x-amd64-linux';
/** 1900m allocatable: the placeholder (1100m) leaves less than the app's 1 cpu. */
const TIGHT = 'c-2x-amd64-linux';

const nodeOf = (claims: NodeClaim[], name: string): string | undefined =>
  claims.find((c) => c.metadata.name === name)?.status?.nodeName;

/** The placeholder as bound and holding its room in a sample: Running, not terminating, on `host`. */
const holding = (s: PoolSample, host: string): boolean =>
  s.placeholderPods.length === 1 &&
  s.placeholderPods.every((p) => p.node === host && p.phase === 'Running' && !p.terminating);

describe('the placeholder holds the surge capacity until the drain is over (issue 23)', () => {
  const ctx = useController();
  const { kube, res } = ctx;

  /** The policy (always open, every node old enough, one rotation) and the controller, in `ns`. */
  async function rotate(pool: string, ns: string): Promise<ControllerProcess> {
    const priorityClass = await res.priorityClass('e2e-phl-ph', -10, 'Never');
    await ctx.policy(`${pool}-policy`, {
      nodePools: [pool],
      maintenanceWindows: ALWAYS_OPEN,
      ageThreshold: '1s',
      surge: { readyTimeout: '5m', cooldownAfter: '30m', placeholder: { priorityClassName: priorityClass } },
    });
    return ctx.controller(ns);
  }

  /** Samples the pool with the Pods labelled `app` in `ns`; stopped after the test whatever happens. */
  function sample(pool: string, ns: string): PoolSampler {
    const sampler = new PoolSampler(kube, pool, ns, 200, { namespace: ns, selector: 'app' });
    ctx.onCleanup(async () => {
      await sampler.stop();
    });
    return sampler;
  }

  /**
   * The surge paths without preemption: the placeholder seen holding its room on `host` while `old` was being
   * deleted, holding it in every sample until `old` was gone, removed by the controller only after that (its one
   * delete is the completion's), and the app running on `host`. Returns the samples.
   */
  async function heldThroughTheDrain(
    sampler: PoolSampler,
    controller: ControllerProcess,
    pool: string,
    ns: string,
    old: string,
    host: () => Promise<string>,
  ): Promise<{ samples: PoolSample[]; host: string }> {
    await rotatedAndClean(kube, controller, ns, pool, old);
    const surge = await host();
    await waitFor('the app running on the surge node', async () =>
      (await kube.pods(ns, 'app=app')).some((p) => podRunningReady(p) && p.spec?.nodeName === surge),
    );
    const samples = await sampler.stop();
    const seen = `${sampler.timeline()}\n${controller.tail(30)}`;

    // Bound to the surge node while the old NodeClaim was being deleted. The old controller deleted the placeholder
    // before the old claim in the same pass: a sample reading the claim deleting, then the placeholder, could never
    // find it alive.
    const held = samples.findIndex((s) => s.deleting.includes(old) && holding(s, surge));
    expect(held, `the placeholder bound to ${surge} while ${old} was being deleted\n${seen}`).toBeGreaterThanOrEqual(0);
    // And held without a gap from then until the old claim was gone: one placeholder, the same Pod, on the surge
    // node, Running (the old controller's placeholder was gone from the first draining sample on).
    const gone = samples.findIndex((s, i) => i > held && !s.claims.includes(old));
    expect(gone, `${old} gone after the placeholder was seen holding\n${seen}`).toBeGreaterThan(held);
    const uid = samples[held]?.placeholderPods[0]?.uid;
    // A sample in which the old claim vanished between its reads (claims, then Pods, then claims again) may show
    // the completion's delete already: it says nothing about the drain.
    for (const s of samples.slice(held, gone).filter((x) => x.claimsAfter.includes(old))) {
      expect(holding(s, surge) && s.placeholderPods[0]?.uid === uid, `held at every sample of the drain\n${seen}`).toBe(
        true,
      );
    }
    // Removed by the controller once the rotation was over, never before: its only delete of the placeholder is
    // the completion's (the old controller's had the reason "surge node … is Ready").
    const deletes = writes(controller, pool).filter((l) => l.action === 'deletePod');
    expect(
      deletes.map((l) => l.msg),
      seen,
    ).toEqual([`rotation of ${old} finished`]);
    const removed = samples.findIndex((s, i) => i >= gone && s.placeholderPods.length === 0);
    expect(removed, `the placeholder gone after ${old}\n${seen}`).toBeGreaterThanOrEqual(gone);
    // The evicted workload landed on the surge node, nowhere else, and nothing waited on new capacity: the app's
    // Pods were only ever on the old node or the surge node (or just created, not yet bound).
    const oldNode = samples[0]?.workload.find((p) => p.name.startsWith('app-'))?.node;
    for (const s of samples)
      for (const p of s.workload.filter((w) => w.name.startsWith('app-')))
        expect([oldNode, surge, undefined], `${p.name} on ${String(p.node)}\n${seen}`).toContain(p.node);
    return { samples, host: surge };
  }

  it('new-provision: held on the fresh surge node through the drain; another pool’s spare unused', async () => {
    const [{ ns, pool, claim }, other] = await Promise.all([
      poolWithApp(kube, res, 'e2e-phl-new', oneZone(ROOMY)),
      // Another pool's node with 2900m free: the one node in the cluster with room for the placeholder when it is
      // created (ours is cordoned), so a placeholder that did not select its pool would be bound there at once.
      poolWithApp(kube, res, 'e2e-phl-other', oneZone(ROOMY)),
    ]);
    const old = claim.metadata.name;
    const otherNode = other.claim.status?.nodeName as string;
    const sampler = sample(pool, ns);
    const otherSampler = sample(other.pool, ns);
    const controller = await rotate(pool, ns);

    const { samples, host } = await heldThroughTheDrain(sampler, controller, pool, ns, old, async () => {
      const claims = await kube.nodeClaims(pool);
      expect(claims).toHaveLength(1);
      return nodeOf(claims, claims[0]?.metadata.name as string) as string;
    });
    // The surge node was provisioned for the placeholder: a NodeClaim the pool did not have before, the only one.
    const seenClaims = new Set(samples.flatMap((s) => s.claims));
    const surgeClaims = [...seenClaims].filter((c) => c !== old);
    expect(surgeClaims, sampler.timeline()).toHaveLength(1);
    expect(samples[0]?.claims).toEqual([old]);
    expect(nodeOf(await kube.nodeClaims(pool), surgeClaims[0] as string)).toBe(host);

    // The other pool's spare: the placeholder was never bound there, and that pool did not change.
    expect(samples.flatMap((s) => s.placeholderPods).filter((p) => p.node === otherNode)).toEqual([]);
    const otherSamples = await otherSampler.stop();
    expect(new Set(otherSamples.flatMap((s) => s.claims))).toEqual(new Set([other.claim.metadata.name]));
    expect(otherSamples.flatMap((s) => s.placeholderPods)).toEqual([]);
    expect((await kube.getNode(otherNode))?.metadata?.annotations?.[A.surgeFor]).toBeUndefined();
    expect(await controller.stop()).toBe(0);
    expect(controller.errors()).toEqual([]);
  });

  it('absorb path: held on the pool’s spare node through the drain, then removed; no NodeClaim created', async () => {
    const { ns, pool, claim } = await poolWithApp(kube, res, 'e2e-phl-abs', oneZone(ROOMY));
    const old = claim.metadata.name;
    const oldNode = claim.status?.nodeName as string;
    // A spare node in the pool: a 3-cpu Pod fits beside the app on no node, so Karpenter launches a second one
    // (after the first: the older node is the one rotated); once it runs, the Pod goes, and a small resident stays.
    await kube.core.createNamespacedPod({ namespace: ns, body: barePod('filler', pool, '3') });
    const spare = await waitFor(
      'the filler running on a second node',
      async () => {
        const p = await kube.getPod(ns, 'filler');
        return podRunningReady(p) && p?.spec?.nodeName !== oldNode ? p?.spec?.nodeName : undefined;
      },
      { timeoutMs: 180_000 },
    );
    await kube.core.deleteNamespacedPod({ namespace: ns, name: 'filler', gracePeriodSeconds: 0 });
    await kube.core.createNamespacedPod({ namespace: ns, body: barePod('resident', pool, '500m', spare) });
    const resident = await waitFor('the resident running on the spare, the filler gone', async () => {
      const p = await kube.getPod(ns, 'resident');
      return podRunningReady(p) && (await kube.getPod(ns, 'filler')) === undefined ? p : undefined;
    });
    const claimsBefore = (await kube.nodeClaims(pool)).map((c) => c.metadata.name).sort();
    expect(claimsBefore).toHaveLength(2);
    const sampler = sample(pool, ns);
    const controller = await rotate(pool, ns);

    const { samples } = await heldThroughTheDrain(sampler, controller, pool, ns, old, () => Promise.resolve(spare));
    // Absorbed: no NodeClaim was ever created; the spare's claim is the one left.
    expect(new Set(samples.flatMap((s) => s.claims)), sampler.timeline()).toEqual(new Set(claimsBefore));
    expect((await kube.nodeClaims(pool)).map((c) => c.status?.nodeName)).toEqual([spare]);
    // The Pod already on the spare kept running there through it all, never a victim.
    for (const s of samples) {
      const r = s.workload.find((p) => p.name === 'resident');
      expect(
        r !== undefined && r.uid === resident.metadata?.uid && r.node === spare && !r.terminating && !r.preempted,
      ).toBe(true);
    }
    expect(await controller.stop()).toBe(0);
    expect(controller.errors()).toEqual([]);
  });

  it('preemption: drain held by a PDB; the workload preempts it (no other Pod); not recreated', async () => {
    const { ns, pool, claim } = await poolWithApp(kube, res, 'e2e-phl-pre', pinnedTo(TIGHT));
    const old = claim.metadata.name;
    const oldNode = claim.status?.nodeName as string;
    expect((await kube.getNode(oldNode))?.status?.allocatable?.cpu).toBe('1900m');
    // Beside the app, a Pod whose PDB allows no disruption: it holds the drain once the app has been evicted. The
    // placeholder is sized to both (1100m), so the app's replacement (1 cpu) fits on the surge node only in the
    // placeholder's room.
    await kube.apps.createNamespacedDeployment({
      namespace: ns,
      body: deployment({ name: 'guarded', pool, replicas: 1, cpu: '100m' }),
    });
    await kube.policy.createNamespacedPodDisruptionBudget({
      namespace: ns,
      body: { metadata: { name: 'guarded' }, spec: { minAvailable: 1, selector: { matchLabels: { app: 'guarded' } } } },
    });
    await waitFor('the guarded Pod on the old node, its PDB allowing no disruption', async () => {
      const pdb = await kube.policy.readNamespacedPodDisruptionBudget({ namespace: ns, name: 'guarded' });
      const pods = await kube.pods(ns, 'app=guarded');
      return (
        pdb.status?.disruptionsAllowed === 0 && pods.some((p) => podRunningReady(p) && p.spec?.nodeName === oldNode)
      );
    });
    const sampler = sample(pool, ns);
    const controller = await rotate(pool, ns);

    // The placeholder, kept readable once deleted (a finalizer of the test) so the reason it went can be read.
    const placeholder = await waitFor(
      'the placeholder created',
      async () => (await kube.pods(ns, `${A.surgeFor}=${old}`))[0]?.metadata?.name,
      { describe: () => controller.tail(20) },
    );
    // Released before the namespace is deleted, whatever happens (the controller's clean-ups run first).
    ctx.onCleanup(() => releaseKept(kube, ns, placeholder));
    await keepWhenDeleted(kube, ns, placeholder);

    // The drain begins; the app is evicted and its replacement preempts the placeholder on the surge node. The old
    // controller's placeholder was gone before the drain began, so the replacement found the room free: no victim.
    const victim = await waitFor(
      'the placeholder preempted by the scheduler while the old claim drains',
      async () => {
        const p = await kube.getPod(ns, placeholder);
        const target = p?.status?.conditions?.find((c) => c.type === 'DisruptionTarget' && c.status === 'True');
        return p?.metadata?.deletionTimestamp && target?.reason === 'PreemptionByScheduler' ? p : undefined;
      },
      { timeoutMs: 180_000, describe: () => `${sampler.timeline()}\n${controller.tail(20)}` },
    );
    const host = victim.spec?.nodeName as string;
    const draining = await kube.getNodeClaim(old);
    expect(draining?.metadata.deletionTimestamp, 'the old claim is draining').toBeTruthy();
    expect(host).not.toBe(oldNode);
    const surgeClaim = (await kube.nodeClaims(pool)).find((c) => c.status?.nodeName === host);
    expect(surgeClaim?.metadata.annotations?.[A.surgeFor]).toBe(old);
    await releaseKept(kube, ns, placeholder);
    await waitFor('the app’s replacement running on the surge node', async () =>
      (await kube.pods(ns, 'app=app')).some((p) => podRunningReady(p) && p.spec?.nodeName === host),
    );

    // Not recreated while draining. A pass after the placeholder is gone is made sure of: the pool's draining
    // mirror is removed, and only a pass of the draining handler writes it back. The drain is still held, and
    // there is no placeholder.
    await waitFor('the placeholder gone', async () => (await kube.getPod(ns, placeholder)) === undefined);
    kubectl(['annotate', 'nodepool', pool, `${A.activeRotationState}-`]);
    await waitFor(
      'a pass of the draining rotation (the mirror written back)',
      async () => (await kube.getNodePool(pool))?.metadata.annotations?.[A.activeRotationState] === 'draining',
      { describe: () => controller.tail(10) },
    );
    expect((await kube.getNodeClaim(old))?.metadata.deletionTimestamp, 'still draining').toBeTruthy();
    expect(await kube.pods(ns, A.surgeFor)).toEqual([]);

    // Release the drain: the guarded Pod is evicted, its replacement lands on the surge node too.
    await kube.policy.deleteNamespacedPodDisruptionBudget({ namespace: ns, name: 'guarded' });
    await rotatedAndClean(kube, controller, ns, pool, old);
    await waitFor('the app and the guarded Pod running on the surge node', async () => {
      const pods = await kube.pods(ns, 'app in (app, guarded)');
      return pods.length === 2 && pods.every((p) => podRunningReady(p) && p.spec?.nodeName === host);
    });
    const samples = await sampler.stop();
    const seen = `${sampler.timeline()}\n${controller.tail(30)}`;

    // One placeholder ever (created once, never again), and after it first went no sample shows one.
    expect(
      writes(controller, pool).filter((l) => l.action === 'createPod'),
      seen,
    ).toHaveLength(1);
    expect(new Set(samples.flatMap((s) => s.placeholderPods.map((p) => p.uid))), seen).toEqual(
      new Set([victim.metadata?.uid]),
    );
    const went = samples.findIndex((s) => s.placeholderPods.length === 0 && s.deleting.includes(old));
    expect(went, seen).toBeGreaterThan(0);
    expect(
      samples.slice(went).flatMap((s) => s.placeholders),
      seen,
    ).toEqual([]);
    // The controller never deleted it: the scheduler did, for the workload.
    expect(
      writes(controller, pool).filter((l) => l.action === 'deletePod'),
      seen,
    ).toEqual([]);
    // The scheduler's only victim: no workload Pod was ever preempted.
    expect(
      samples.flatMap((s) => s.workload.filter((p) => p.preempted).map((p) => p.name)),
      seen,
    ).toEqual([]);
    // Nothing waited on new capacity: the old and the surge claims were the pool's only ones, and the workload's
    // Pods were only ever on the old node or the surge node.
    expect(new Set(samples.flatMap((s) => s.claims)), seen).toEqual(new Set([old, surgeClaim?.metadata.name]));
    for (const p of samples.flatMap((s) => s.workload)) expect([oldNode, host, undefined], seen).toContain(p.node);
    expect(await controller.stop()).toBe(0);
    expect(controller.errors()).toEqual([]);
  });
});
