// §3.8 against the real thing: the surge node cannot be created, readyTimeout
// elapses, and the engine rolls back — placeholder removed, cordon and do-not-disrupt undone, the failure
// recorded — leaving the node exactly as it was, to Karpenter's expiry as before.
//
// How the surge is kept from landing: Karpenter sums its nodes' reported capacity into the NodePool's
// status.resources (pkg/controllers/state/cluster.go, updateNodePoolResources) and only launches instance
// types whose capacity fits limits − status.resources (scheduling/scheduler.go, filterByRemainingResources).
// Under KWOK a Node reports its pods' requests as capacity, so with limits.cpu 1 and a 500m pod the engine's
// headroom check (footprint 500m) passes while no 1-cpu instance type fits the remaining 500m.
import { describe, expect, it } from 'vitest';
import { A } from '../../src/engine/annotations.js';
import { limitedPoolWithApp, ourMarkers, useCluster } from './helpers/context.js';
import { anytimePolicy, reconcileOnce } from './helpers/engine-shell.js';
import { waitFor } from './helpers/k8s.js';

describe('a surge that cannot land', () => {
  const { kube, res } = useCluster();

  it('rolls back after readyTimeout and leaves the old node as it was', async () => {
    const priorityClass = await res.priorityClass('e2e-ph', -10, 'Never');
    const { ns, pool, claim } = await limitedPoolWithApp(kube, res, 'e2e-rb');
    const name = claim.metadata.name;
    const nodeName = claim.status?.nodeName as string;

    // A short readyTimeout keeps the test short; failurePause keeps it to one attempt.
    const policy = anytimePolicy(pool, {
      readyTimeout: '20s',
      failurePause: '30m',
      retryBackoff: '30m',
      placeholder: { priorityClassName: priorityClass },
    });

    const events: string[] = [];
    await waitFor(
      'the attempt to start: the candidate cordoned and protected, the placeholder pending',
      async () => {
        for (const a of reconcileOnce(pool, ns, policy).decision.actions)
          if (a.type === 'event') events.push(a.eventReason);
        const node = await kube.getNode(nodeName);
        const ph = (await kube.pods(ns)).find((p) => p.metadata?.name?.startsWith('noderotation-surge-'));
        return (
          node?.spec?.unschedulable === true &&
          node.metadata?.annotations?.[A.doNotDisruptOwned] === 'true' &&
          ph?.status?.phase === 'Pending'
        );
      },
      { timeoutMs: 60_000, intervalMs: 1000 },
    );

    await waitFor(
      'readyTimeout to roll the attempt back',
      () => {
        for (const a of reconcileOnce(pool, ns, policy).decision.actions)
          if (a.type === 'event') events.push(a.eventReason);
        return events.includes('RotationFailed');
      },
      { timeoutMs: 90_000, intervalMs: 1000, describe: () => events.join(', ') },
    );

    expect(events).toEqual(['RotationStarted', 'RotationFailed']);
    // Karpenter never launched a surge node: the limit held.
    expect((await kube.nodeClaims(pool)).map((c) => c.metadata.name)).toEqual([name]);
    const node = await kube.getNode(nodeName);
    expect(node?.spec?.unschedulable ?? false).toBe(false);
    expect(ourMarkers(node?.metadata?.annotations)).toEqual([]);
    expect((await kube.pods(ns)).filter((p) => p.metadata?.name?.startsWith('noderotation-surge-'))).toEqual([]);
    const claimAnn = (await kube.getNodeClaim(name))?.metadata.annotations ?? {};
    expect(claimAnn).toMatchObject({ [A.state]: 'failed', [A.retryCount]: '1' });
    expect(claimAnn[A.startedAt]).toBeUndefined();
    const poolAnn = (await kube.getNodePool(pool))?.metadata.annotations ?? {};
    expect(Object.keys(poolAnn).filter((k) => k.startsWith('noderotation.io/'))).toEqual([A.lastFailureAt]);
    // Gate B holds: deciding again starts nothing.
    expect(reconcileOnce(pool, ns, policy).decision.actions).toEqual([]);
  });
});
