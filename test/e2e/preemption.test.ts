// kube-scheduler preempts a negative-priority placeholder pod for a normal pod that needs its room. The
// rotation controller's surge placeholders rely on this. Room is made tight: the NodePool allows one
// instance type (1 CPU, 900m allocatable after the kwok provider's 100m kube-reserved) and limits.cpu = 1,
// so Karpenter cannot add a second node and the only way in is preemption.
import { describe, expect, it, onTestFinished } from 'vitest';
import { fakeContainer, onPool, useCluster } from './helpers/context.js';
import { conditionTrue, KEEP_FINALIZER, podRunningReady, releaseKept, waitFor, type Kube } from './helpers/k8s.js';

const INSTANCE_TYPE = 'c-1x-amd64-linux';

/** What a timeout reports: the pods (where, phase, conditions) and the pool's NodeClaims (conditions). */
async function state(kube: Kube, ns: string, pool: string): Promise<string> {
  const pods = (await kube.pods(ns)).map((p) => [
    p.metadata?.name,
    p.spec?.nodeName,
    p.status?.phase,
    p.status?.conditions,
  ]);
  const claims = (await kube.nodeClaims(pool)).map((c) => [c.metadata.name, c.status?.nodeName, c.status?.conditions]);
  return JSON.stringify({ pods, claims });
}

describe('preemption', () => {
  const { kube, res } = useCluster();

  it('preempts a negative-priority pod for a normal pod that needs its room', async () => {
    const ns = await res.namespace('e2e-preempt');
    const pool = await res.nodePool(
      'e2e-preempt',
      {
        requirements: [
          { key: 'node.kubernetes.io/instance-type', operator: 'In', values: [INSTANCE_TYPE] },
          { key: 'karpenter.sh/capacity-type', operator: 'In', values: ['on-demand'] },
        ],
      },
      { limits: { cpu: '1' } },
    );
    const low = await res.priorityClass('e2e-placeholder', -10, 'Never');

    // The placeholder takes most of the node.
    await kube.core.createNamespacedPod({
      namespace: ns,
      body: {
        // The finalizer keeps the preempted Pod readable (Terminating) until the test has seen why it went.
        metadata: { name: 'placeholder', labels: { role: 'placeholder' }, finalizers: [KEEP_FINALIZER] },
        spec: {
          priorityClassName: low,
          nodeSelector: onPool(pool),
          terminationGracePeriodSeconds: 1,
          containers: [fakeContainer('600m')],
        },
      },
    });
    // Whatever happens below, the finalizer must not hold the namespace's deletion in clean-up.
    onTestFinished(() => releaseKept(kube, ns, 'placeholder'));
    const placeholder = await waitFor(
      'the placeholder running on the pool’s only node',
      async () => {
        const p = await kube.getPod(ns, 'placeholder');
        const claims = await kube.nodeClaims(pool);
        return podRunningReady(p) && claims.length === 1 && conditionTrue(claims[0], 'Ready') ? p : undefined;
      },
      { describe: async () => state(kube, ns, pool) },
    );
    expect(placeholder?.spec?.priority).toBe(-10);
    expect(placeholder?.spec?.preemptionPolicy).toBe('Never');
    const [claim] = await kube.nodeClaims(pool);
    const nodeName = String(claim?.status?.nodeName);
    expect(placeholder?.spec?.nodeName).toBe(nodeName);
    const node = await kube.getNode(nodeName);
    expect(node?.metadata?.labels?.['node.kubernetes.io/instance-type']).toBe(INSTANCE_TYPE);
    expect(node?.status?.allocatable?.cpu).toBe('900m');

    // A normal (priority 0) pod that fits only if the placeholder goes.
    await kube.core.createNamespacedPod({
      namespace: ns,
      body: {
        metadata: { name: 'workload' },
        spec: { nodeSelector: onPool(pool), terminationGracePeriodSeconds: 1, containers: [fakeContainer('600m')] },
      },
    });

    // The scheduler says why the placeholder goes: it marks the victim before deleting it (a Preempted event
    // follows, but events are best-effort: it was missing once in a few runs, so the test reads the condition).
    const victim = await waitFor(
      'the placeholder deleted by the scheduler, marked DisruptionTarget',
      async () => {
        const p = await kube.getPod(ns, 'placeholder');
        const target = p?.status?.conditions?.find((c) => c.type === 'DisruptionTarget');
        return p?.metadata?.deletionTimestamp && target?.status === 'True' ? target : undefined;
      },
      { describe: async () => state(kube, ns, pool) },
    );
    expect(victim.reason).toBe('PreemptionByScheduler');
    expect(victim.message).toContain('preempting to accommodate a higher priority pod');
    expect(await kube.getPod(ns, 'workload').then((w) => w?.spec?.nodeName)).toBeUndefined(); // it waits for the room
    await releaseKept(kube, ns, 'placeholder');

    const workload = await waitFor(
      'the workload running on the node, the placeholder gone',
      async () => {
        const w = await kube.getPod(ns, 'workload');
        const p = await kube.getPod(ns, 'placeholder');
        return podRunningReady(w) && p === undefined ? w : undefined;
      },
      { describe: async () => state(kube, ns, pool) },
    );
    expect(workload.spec?.nodeName).toBe(nodeName);
    // Karpenter could not add room (limits): still the one NodeClaim.
    const claims = await kube.nodeClaims(pool);
    expect(claims.map((c) => c.metadata.name)).toEqual([claim?.metadata.name]);
  });
});
