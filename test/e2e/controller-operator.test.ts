// An operator's own markers are theirs: a Node with their karpenter.sh/do-not-disrupt is never a candidate and
// keeps the annotation; a Node they cordoned is rotated like any other, and when the attempt rolls back their
// cordon stays (we never adopt, and so never remove, a cordon that is not ours).
import { describe, expect, it } from 'vitest';
import { A } from '../../src/engine/annotations.js';
import type { RotationPolicySpec } from '../../src/generated/api-types.js';
import { limitedPoolWithApp, ON_DEMAND_AMD64, ourMarkers, poolWithApp } from './helpers/context.js';
import { ALWAYS_OPEN, useController } from './helpers/controller-context.js';
import { kubectl } from './helpers/kubectl.js';
import { waitFor } from './helpers/k8s.js';

describe("an operator's markers", () => {
  const ctx = useController();
  const { kube, res } = ctx;

  it("never touches the operator's do-not-disrupt or cordon", async () => {
    const held = await poolWithApp(kube, res, 'e2e-op-dnd', ON_DEMAND_AMD64);
    const cordoned = await limitedPoolWithApp(kube, res, 'e2e-op-cordon');
    const heldNode = held.claim.status?.nodeName as string;
    const cordonedNode = cordoned.claim.status?.nodeName as string;
    kubectl(['annotate', 'node', heldNode, `${A.doNotDisrupt}=true`]);
    kubectl(['cordon', cordonedNode]);

    const spec = (pool: string): RotationPolicySpec => ({
      nodePools: [pool],
      maintenanceWindows: ALWAYS_OPEN,
      ageThreshold: '1s',
      surge: { readyTimeout: '20s', failurePause: '30m', retryBackoff: '30m' },
    });
    await ctx.policy(`${held.pool}-p`, spec(held.pool));
    await ctx.policy(`${cordoned.pool}-p`, spec(cordoned.pool));
    const controller = await ctx.controller(held.ns);

    // The cordoned node is a candidate: its attempt cannot land (no room) and is rolled back.
    await waitFor(
      'the attempt on the cordoned node rolled back',
      async () => (await kube.getNodeClaim(cordoned.claim.metadata.name))?.metadata.annotations?.[A.state] === 'failed',
      { timeoutMs: 120_000, intervalMs: 1000, describe: () => controller.tail(15) },
    );
    const after = await kube.getNode(cordonedNode);
    expect(after?.spec?.unschedulable).toBe(true); // still the operator's cordon
    expect(ourMarkers(after?.metadata?.annotations)).toEqual([]);
    expect(controller.logs.filter((l) => l.action === 'cordon' || l.action === 'uncordon')).toEqual([]);

    // The held node was never a candidate: no anchor, its claim and annotation as the operator left them.
    await waitFor('a full pass of the held pool', async () =>
      (await controller.metrics()).includes(`noderotation_in_progress{nodepool="${held.pool}"} 0`),
    );
    expect((await kube.getNodePool(held.pool))?.metadata.annotations?.[A.activeRotation]).toBeUndefined();
    const heldAfter = await kube.getNode(heldNode);
    expect(ourMarkers(heldAfter?.metadata?.annotations)).toEqual([A.doNotDisrupt]);
    expect(heldAfter?.spec?.unschedulable ?? false).toBe(false);
    expect(controller.logs.filter((l) => l.nodepool === held.pool && l.action !== undefined)).toEqual([]);
  });
});
