// The placeholder's identity and protection (issue 13), against real Karpenter (kwok provider) and the real
// scheduler, the engine's passes run by the test (helpers/engine-shell.ts) so that the gap can be held open, their
// actions carried out by the controller's own executor (preconditions and the fresh judgement of the delete included):
//
// 1. The Pod-level karpenter.sh/do-not-disrupt on the placeholder keeps Karpenter's consolidation off the
//    surge node in the gap between the bind and the engine's node-level freeze. The gap is held open on
//    purpose (no engine pass runs in it) while room appears elsewhere in the pool; a control pool, driven
//    identically except that its placeholder lacks the annotation, shows Karpenter takes such a node as a
//    consolidation candidate (so the test can fail), while for ours Karpenter reports the placeholder's
//    annotation as what blocks it, and our surge node is still there, unfrozen, when the control's was judged.
// (A rotation left in flight in the reference's form is adopted by the controller: controller-takeover.test.ts.)
import type { V1Pod } from '@kubernetes/client-node';
import { afterAll, describe, expect, it } from 'vitest';
import { A } from '../../src/engine/annotations.js';
import { decide } from '../../src/engine/decide.js';
import type { Action } from '../../src/engine/types.js';
import { parseQuantity } from '../../src/util/quantity.js';
import { barePod, deployment, pinnedTo, useCluster } from './helpers/context.js';
import { anytimePolicy, execute, reconcileOnce, snapshot } from './helpers/engine-shell.js';
import { kubectl } from './helpers/kubectl.js';
import { createRotationPolicy, deleteRotationPolicy, installNoderotation } from './helpers/noderotation-api.js';
import type { NodeClaim } from '../../src/karpenter/types.js';
import { conditionTrue, podRunningReady, waitFor, type Kube } from './helpers/k8s.js';

const INSTANCE_TYPE = 'c-4x-amd64-linux';
const SURGE_FOR_SELECTOR = A.surgeFor; // the reference's watch: -l noderotation.io/surge-for

const pinned = pinnedTo(INSTANCE_TYPE, '1m');

const readyClaims = async (kube: Kube, pool: string): Promise<NodeClaim[]> =>
  (await kube.nodeClaims(pool)).filter((c) => conditionTrue(c, 'Ready') && !c.metadata.deletionTimestamp);

/** One Ready NodeClaim running the app; returns it and its node's allocatable cpu (cores). */
async function firstNode(kube: Kube, pool: string, ns: string): Promise<{ claim: NodeClaim; cpu: number }> {
  const claim = await waitFor(
    `the first NodeClaim of ${pool} Ready with the app running`,
    async () => {
      const claims = await readyClaims(kube, pool);
      const pods = await kube.pods(ns, 'app=app');
      return claims.length === 1 && pods.some(podRunningReady) ? claims[0] : undefined;
    },
    { timeoutMs: 180_000 },
  );
  const node = await kube.getNode(claim.status?.nodeName as string);
  return { claim, cpu: parseQuantity(node?.status?.allocatable?.cpu ?? '0') };
}

/**
 * A pool in the state the gap leaves: old node A (the app, frozen and cordoned by the engine's first pass), a
 * second node B that is full while the placeholder is scheduled and empty afterwards (protected by an
 * operator's do-not-disrupt, so Karpenter does not remove B itself), and the surge node S the placeholder
 * made Karpenter launch. No engine pass runs after the first: S carries no node-level freeze.
 */
async function holdTheGap(
  kube: Kube,
  pool: string,
  ns: string,
  priorityClass: string,
  withPodAnnotation: boolean,
): Promise<{ oldClaim: string; surgeClaim: string; surgeNode: string; placeholder: string }> {
  await kube.apps.createNamespacedDeployment({
    namespace: ns,
    body: deployment({ name: 'app', pool, replicas: 1, cpu: '1', terminationGracePeriodSeconds: 1 }),
  });
  const { claim: old, cpu } = await firstNode(kube, pool, ns);
  // B: a tenant too big for what is left on A, leaving less free on B than the placeholder requests (1 cpu).
  await kube.core.createNamespacedPod({
    namespace: ns,
    body: barePod('tenant', pool, `${Math.round((cpu - 0.8) * 1000)}m`),
  });
  const b = await waitFor(
    'the tenant running on a second node',
    async () => {
      const p = await kube.getPod(ns, 'tenant');
      return podRunningReady(p) ? p?.spec?.nodeName : undefined;
    },
    { timeoutMs: 180_000 },
  );
  kubectl(['annotate', 'node', b, '--overwrite', `${A.doNotDisrupt}=true`]);

  const policy = anytimePolicy(pool, {
    readyTimeout: '10m',
    cooldownAfter: '30m',
    placeholder: { priorityClassName: priorityClass },
  });
  await createRotationPolicy(kube, policy);
  // The first pass: anchor, markers, cordon and the placeholder (for the control, without its do-not-disrupt).
  // Karpenter keeps updating the NodePool and its nodes, so a write may find its object changed since the read
  // (a lost race, as the controller meets it): the pass is then decided again on a fresh read, until the
  // placeholder is created.
  let created: Extract<Action, { type: 'createPod' }> | undefined;
  for (let pass = 0; !created; pass++) {
    if (pass === 10) throw new Error(`the first pass of ${pool} lost its race 10 times`);
    const seen = snapshot(pool, ns, policy.metadata.name);
    const actions = decide(seen, Date.now()).actions.map((a) => {
      if (a.type !== 'createPod' || withPodAnnotation) return a;
      expect(a.pod.metadata.annotations?.[A.doNotDisrupt], 'the engine annotates its placeholder').toBe('true');
      const { [A.doNotDisrupt]: _dropped, ...annotations } = a.pod.metadata.annotations ?? {};
      return { ...a, pod: { ...a.pod, metadata: { ...a.pod.metadata, annotations } } };
    });
    created = (await execute(actions, seen)).find(
      (a): a is Extract<Action, { type: 'createPod' }> => a.type === 'createPod',
    );
  }
  expect(created.pod.metadata.annotations?.[A.doNotDisrupt]).toBe(withPodAnnotation ? 'true' : undefined);
  const placeholder = created.pod.metadata.name;

  // Kubernetes' taint-eviction controller can delete a Pod bound in the very moment Karpenter lifts the new node's
  // karpenter.sh/unregistered NoExecute taint (it judged the binding on the node as it was just before: seen in
  // kube-controller-manager's log, "Deleting pod" by taint-eviction-controller). The controller would create the
  // placeholder again on its next pass (the placeholder's lifetime, docs/controller.md); no pass runs in the gap
  // this test holds open, so the test creates the same Pod again, as that pass would.
  let recreated = 0;
  const surgeNode = await waitFor(
    `the placeholder of ${pool} running on a new node`,
    async () => {
      const p = await kube.getPod(ns, placeholder);
      if (p === undefined && recreated < 3) {
        recreated++;
        console.warn(`${pool}: the placeholder ${placeholder} was deleted before it ran; creating it again`);
        await kube.core.createNamespacedPod({ namespace: ns, body: created.pod as unknown as V1Pod });
        return undefined;
      }
      const host = p?.spec?.nodeName;
      return p?.status?.phase === 'Running' && host && host !== old.status?.nodeName && host !== b ? host : undefined;
    },
    {
      timeoutMs: 180_000,
      // On a timeout: where the placeholder is, why it is not scheduled, and what Karpenter has launched.
      describe: async () => {
        const p = await kube.getPod(ns, placeholder);
        const conditions = (p?.status?.conditions ?? []).map(
          (c) => `${c.type}=${c.status} ${c.reason ?? ''} ${c.message ?? ''}`,
        );
        const claims = (await kube.nodeClaims(pool)).map(
          (c) => `${c.metadata.name} node=${c.status?.nodeName ?? '-'} ready=${String(conditionTrue(c, 'Ready'))}`,
        );
        return JSON.stringify({
          placeholder: p ? { phase: p.status?.phase, node: p.spec?.nodeName, conditions } : 'absent',
          recreated,
          old: old.status?.nodeName,
          b,
          claims,
        });
      },
    },
  );
  // Karpenter registers the Node (taint removed, so the Pod can run) before it records status.nodeName on the claim.
  const surgeClaim = await waitFor(`the NodeClaim of ${surgeNode}`, async () =>
    (await kube.nodeClaims(pool)).find((c) => c.status?.nodeName === surgeNode),
  );
  // Room appears elsewhere: B empties, so the placeholder alone would fit there and S could be consolidated.
  await kube.core.deleteNamespacedPod({ namespace: ns, name: 'tenant', gracePeriodSeconds: 0 });
  return {
    oldClaim: old.metadata.name,
    surgeClaim: surgeClaim.metadata.name,
    surgeNode,
    placeholder,
  };
}

describe("the placeholder's identity and protection (issue 13)", () => {
  const { kube, res } = useCluster();
  const policies: string[] = [];
  afterAll(async () => {
    for (const name of policies) await deleteRotationPolicy(kube, name);
  });

  it('keeps the surge node out of consolidation between bind and freeze; a control is a candidate', async () => {
    const consolidating = { disruption: { consolidationPolicy: 'WhenEmptyOrUnderutilized', consolidateAfter: '0s' } };
    const priorityClass = await res.priorityClass('e2e-ph', -10, 'Never');
    const nsOurs = await res.namespace('e2e-id-ours');
    const nsCtl = await res.namespace('e2e-id-ctl');
    const ours = await res.nodePool('e2e-id-ours', pinned, consolidating);
    const ctl = await res.nodePool('e2e-id-ctl', pinned, consolidating);

    await installNoderotation();
    policies.push(anytimePolicy(ours, {}).metadata.name, anytimePolicy(ctl, {}).metadata.name);
    const [o, c] = await Promise.all([
      holdTheGap(kube, ours, nsOurs, priorityClass, true),
      holdTheGap(kube, ctl, nsCtl, priorityClass, false),
    ]);

    // The control: Karpenter takes its surge node as a consolidation candidate (it consolidates it, or
    // records why the simulation found no cheaper arrangement): nothing blocks its disruption.
    const candidate = await waitFor(
      `Karpenter to evaluate the control's surge node ${c.surgeNode} for consolidation`,
      async () => {
        const claim = (await kube.nodeClaims(ctl)).find((x) => x.metadata.name === c.surgeClaim);
        if (claim === undefined || claim.metadata.deletionTimestamp !== undefined) return 'consolidated';
        const evs = await kube.events({ kind: 'Node', name: c.surgeNode, reason: 'Unconsolidatable' });
        return evs[0]?.message;
      },
      { timeoutMs: 240_000, intervalMs: 2000 },
    );
    expect(candidate).toBeTruthy();
    const ctlBlocked = await kube.events({ kind: 'Node', name: c.surgeNode, reason: 'DisruptionBlocked' });
    expect(ctlBlocked.map((e) => e.message).filter((m) => m?.includes(c.placeholder))).toEqual([]);
    // Ours: Karpenter itself names our placeholder's Pod-level do-not-disrupt as what blocks the surge node.
    await waitFor(
      `Karpenter to report our surge node ${o.surgeNode} blocked by the placeholder's do-not-disrupt`,
      async () =>
        (await kube.events({ kind: 'Node', name: o.surgeNode, reason: 'DisruptionBlocked' })).some(
          (e) => e.message?.includes(o.placeholder) && e.message.includes(A.doNotDisrupt),
        ),
      { timeoutMs: 240_000, intervalMs: 2000 },
    );
    const oursEvaluated = await kube.events({ kind: 'Node', name: o.surgeNode, reason: 'Unconsolidatable' });
    expect(oursEvaluated).toEqual([]);
    // Ours, under the same conditions at the same time: untouched, its placeholder still holding the room.
    const surge = (await kube.nodeClaims(ours)).find((x) => x.metadata.name === o.surgeClaim);
    expect(surge, 'our surge NodeClaim still exists').toBeDefined();
    expect(surge?.metadata.deletionTimestamp).toBeUndefined();
    expect((await kube.getNode(o.surgeNode))?.metadata?.annotations?.[A.doNotDisrupt]).toBeUndefined(); // no freeze yet
    const ph = await kube.getPod(nsOurs, o.placeholder);
    expect(ph?.status?.phase).toBe('Running');
    expect(ph?.spec?.nodeName).toBe(o.surgeNode);

    // The engine resumes: the freeze lands, surge_ready holds on that very node, the rotation completes.
    const seen: string[] = [];
    await waitFor(
      'the rotation to complete',
      async () => {
        for (const a of (await reconcileOnce(ours, nsOurs, anytimePolicy(ours, {}).metadata.name)).done) {
          if (a.type === 'event') seen.push(a.eventReason);
          if (a.type === 'createPod') seen.push('createPod');
        }
        return seen.includes('RotationCompleted');
      },
      { timeoutMs: 300_000, intervalMs: 1000, describe: () => seen.join(', ') },
    );
    expect(seen).toEqual(['DrainStarted', 'RotationCompleted']);
    const left = await readyClaims(kube, ours);
    expect(left.map((x) => x.metadata.name)).toContain(o.surgeClaim);
    expect(left.map((x) => x.metadata.name)).not.toContain(o.oldClaim);
    // The placeholder held the surge room through the drain (issue 23) and goes with the completion's pass.
    await waitFor('no placeholder left', async () => (await kube.pods(nsOurs, SURGE_FOR_SELECTOR)).length === 0);
  });
});
