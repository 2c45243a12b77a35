// Switching from the reference controller: a rotation it left mid-surge, in its exact annotation and
// placeholder form, is adopted by our controller (process, own ServiceAccount) and completed — its placeholder
// used, not replaced, holding the room until the drained app takes it — with nothing of either controller left.
import { describe, expect, it } from 'vitest';
import { A } from '../../src/engine/annotations.js';
import { poolWithApp } from './helpers/context.js';
import { ALWAYS_OPEN, useController } from './helpers/controller-context.js';
import { waitFor } from './helpers/k8s.js';
import { eventsV1 } from './helpers/noderotation-api.js';
import { writeReferenceRotation } from './helpers/reference-state.js';

describe('takeover from the reference controller', () => {
  const ctx = useController();
  const { kube, res } = ctx;

  it("resumes a rotation left in flight in the reference's form and completes it, leaving nothing", async () => {
    const priorityClass = await res.priorityClass('e2e-tko-ph', -10, 'Never');
    const { ns, pool, claim } = await poolWithApp(kube, res, 'e2e-tko', {
      expireAfter: '720h',
      terminationGracePeriod: '1m',
      requirements: [
        { key: 'kubernetes.io/arch', operator: 'In', values: ['amd64'] },
        { key: 'karpenter.sh/capacity-type', operator: 'In', values: ['on-demand'] },
      ],
    });
    const name = claim.metadata.name;
    const placeholder = await writeReferenceRotation(kube, {
      pool,
      namespace: ns,
      claim: name,
      node: claim.status?.nodeName as string,
      priorityClass,
      cpu: '1',
    });

    // The same policy the reference governed the pool with (window always open; one rotation).
    await ctx.policy(`${pool}-policy`, {
      nodePools: [pool],
      maintenanceWindows: ALWAYS_OPEN,
      surge: { readyTimeout: '10m', cooldownAfter: '30m', placeholder: { priorityClassName: priorityClass } },
    });
    const controller = await ctx.controller(ns);

    await waitFor(
      'the adopted rotation to complete',
      async () => {
        const claims = await kube.nodeClaims(pool);
        const reasons = (await eventsV1(kube, 'default'))
          .filter((e) => e.regarding?.name === pool)
          .map((e) => e.reason);
        return !claims.some((c) => c.metadata.name === name) && reasons.includes('RotationCompleted');
      },
      { timeoutMs: 300_000, intervalMs: 1000, describe: () => controller.tail(20) },
    );

    // Adopted, not restarted: no RotationStarted, no placeholder of ours; the reference's one held the surge room
    // through the drain (issue 23): preempted there by the app's replacement, or removed by us once the old claim
    // was gone, never when the drain began.
    const actions = controller.logs.filter((l) => typeof l.action === 'string').map((l) => `${String(l.action)}`);
    expect(actions).not.toContain('createPod');
    const deletes = controller.logs.filter((l) => l.action === 'deletePod');
    expect(deletes.every((l) => l.pod === placeholder && l.msg === `rotation of ${name} finished`)).toBe(true);
    const reasons = (await eventsV1(kube, 'default')).filter((e) => e.regarding?.name === pool).map((e) => e.reason);
    expect(reasons).not.toContain('RotationStarted');
    expect(reasons).toEqual(expect.arrayContaining(['DrainStarted', 'RotationCompleted']));

    // Nothing of ours, or of the reference's, is left.
    for (const n of await kube.nodes(pool)) {
      const ann = Object.keys(n.metadata?.annotations ?? {});
      expect(ann.filter((k) => k.startsWith('noderotation.io/') || k === A.doNotDisrupt)).toEqual([]);
      expect(n.spec?.unschedulable ?? false).toBe(false);
    }
    const poolAnn = (await kube.getNodePool(pool))?.metadata.annotations ?? {};
    expect(Object.keys(poolAnn).filter((k) => k.startsWith('noderotation.io/'))).toEqual([A.lastRotationAt]);
    await waitFor('no placeholder left', async () => (await kube.pods(ns, A.surgeFor)).length === 0);
    expect(await controller.stop()).toBe(0);
    expect(controller.errors()).toEqual([]);
  });
});
