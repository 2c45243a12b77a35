// kube-scheduler preempts a negative-priority placeholder pod for a normal pod that needs its room. The
// rotation controller's surge placeholders rely on this. Room is made tight: the NodePool allows one
// instance type (1 CPU, 900m allocatable after the kwok provider's 100m kube-reserved) and limits.cpu = 1,
// so Karpenter cannot add a second node and the only way in is preemption.
import { describe, expect, it } from 'vitest';
import { fakeContainer, onPool, useCluster } from './helpers/context.js';
import { conditionTrue, podRunningReady, waitFor } from './helpers/k8s.js';

const INSTANCE_TYPE = 'c-1x-amd64-linux';

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
        metadata: { name: 'placeholder', labels: { role: 'placeholder' } },
        spec: {
          priorityClassName: low,
          nodeSelector: onPool(pool),
          terminationGracePeriodSeconds: 1,
          containers: [fakeContainer('600m')],
        },
      },
    });
    const placeholder = await waitFor('the placeholder running on the pool’s only node', async () => {
      const p = await kube.getPod(ns, 'placeholder');
      const claims = await kube.nodeClaims(pool);
      return podRunningReady(p) && claims.length === 1 && conditionTrue(claims[0], 'Ready') ? p : undefined;
    });
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

    const workload = await waitFor(
      'the workload running on the node, the placeholder preempted',
      async () => {
        const w = await kube.getPod(ns, 'workload');
        const p = await kube.getPod(ns, 'placeholder');
        return podRunningReady(w) && p === undefined ? w : undefined;
      },
      {
        describe: async () =>
          JSON.stringify(
            (await kube.pods(ns)).map((p) => [
              p.metadata?.name,
              p.spec?.nodeName,
              p.status?.phase,
              p.status?.conditions,
            ]),
          ),
      },
    );
    expect(workload.spec?.nodeName).toBe(nodeName);
    // The scheduler says why the placeholder went.
    const preempted = await waitFor('a Preempted event on the placeholder', async () => {
      const evs = await kube.events({ kind: 'Pod', name: 'placeholder', reason: 'Preempted' });
      return evs[0];
    });
    expect(`${preempted.source?.component ?? ''} ${preempted.reportingComponent ?? ''}`).toContain('scheduler');
    // Karpenter could not add room (limits): still the one NodeClaim.
    const claims = await kube.nodeClaims(pool);
    expect(claims.map((c) => c.metadata.name)).toEqual([claim?.metadata.name]);
  });
});
