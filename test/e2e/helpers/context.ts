// Per-file wiring for e2e tests: a client, resources cleaned up after each test, and the tails of every
// component's log printed when a test fails (the cluster's own logs are the only way to see why Karpenter
// or the scheduler did not act).
import type * as k8s from '@kubernetes/client-node';
import { afterEach, beforeEach } from 'vitest';
import { NODEPOOL_LABEL } from '../../../src/karpenter/types.js';
import { logTails } from './cluster.js';
import { conditionTrue, Kube, podRunningReady, TestResources, waitFor, type NodePoolTemplateSpec } from './k8s.js';
import type { NodeClaim } from '../../../src/karpenter/types.js';
import { A } from '../../../src/engine/annotations.js';

export function useCluster(): { kube: Kube; res: TestResources } {
  const kube = new Kube();
  const res = new TestResources(kube);
  beforeEach(({ onTestFailed }) => {
    onTestFailed(() => {
      console.error(`\n----- component logs (${kube.env.runDir}/logs) -----\n${logTails(40)}`);
    });
  });
  afterEach(async () => {
    try {
      await res.cleanup();
    } catch (err) {
      console.error(`\n----- cleanup failed; component logs -----\n${logTails(40)}`);
      throw err;
    }
  });
  return { kube, res };
}

/** A container that KWOK "runs": the image is never pulled, only the requests matter. */
export function fakeContainer(cpu: string, memory = '64Mi'): k8s.V1Container {
  return { name: 'app', image: 'registry.k8s.io/pause:3.10', resources: { requests: { cpu, memory } } };
}

/** Pins pods to one test's NodePool (a label Karpenter allows in a nodeSelector). */
export function onPool(pool: string): Record<string, string> {
  return { [NODEPOOL_LABEL]: pool };
}

export function deployment(opts: {
  name: string;
  pool: string;
  replicas: number;
  cpu: string;
  terminationGracePeriodSeconds?: number;
  tolerations?: k8s.V1Toleration[];
  memory?: string;
  /** On every Pod (karpenter.sh/do-not-disrupt, say). */
  annotations?: Record<string, string>;
}): k8s.V1Deployment {
  const labels = { app: opts.name };
  return {
    metadata: { name: opts.name, labels },
    spec: {
      replicas: opts.replicas,
      selector: { matchLabels: labels },
      template: {
        metadata: { labels, ...(opts.annotations ? { annotations: opts.annotations } : {}) },
        spec: {
          nodeSelector: onPool(opts.pool),
          terminationGracePeriodSeconds: opts.terminationGracePeriodSeconds ?? 5,
          ...(opts.tolerations ? { tolerations: opts.tolerations } : {}),
          containers: [fakeContainer(opts.cpu, opts.memory)],
        },
      },
    },
  };
}

/** A template for a NodePool of ordinary on-demand linux/amd64 KWOK nodes that live a month (no expiry in a test). */
export const ON_DEMAND_AMD64: NodePoolTemplateSpec = {
  expireAfter: '720h',
  terminationGracePeriod: '2m',
  requirements: [
    { key: 'kubernetes.io/arch', operator: 'In', values: ['amd64'] },
    { key: 'kubernetes.io/os', operator: 'In', values: ['linux'] },
    { key: 'karpenter.sh/capacity-type', operator: 'In', values: ['on-demand'] },
  ],
};

/**
 * A template for a NodePool of one KWOK instance type (on-demand, living a month): a test that needs to know how
 * much room a node has (`c-2x-amd64-linux`: 1900m allocatable, `c-4x-amd64-linux`: 3900m) pins it.
 */
export function pinnedTo(instanceType: string, terminationGracePeriod = '2m'): NodePoolTemplateSpec {
  return {
    expireAfter: '720h',
    terminationGracePeriod,
    requirements: [
      { key: 'node.kubernetes.io/instance-type', operator: 'In', values: [instanceType] },
      { key: 'karpenter.sh/capacity-type', operator: 'In', values: ['on-demand'] },
    ],
  };
}

/**
 * Pools whose nodes all share one zone (pinnedTo, in KWOK's test-zone-a): the placeholder requires the candidate's
 * zone (matchNodeRequirements), so a spare node only counts (absorbs it, or would were the pool selector missing)
 * in that zone.
 */
export function oneZone(instanceType: string, terminationGracePeriod?: string): NodePoolTemplateSpec {
  const t = pinnedTo(instanceType, terminationGracePeriod);
  return {
    ...t,
    requirements: [...t.requirements, { key: 'topology.kubernetes.io/zone', operator: 'In', values: ['test-zone-a'] }],
  };
}

/**
 * A bare Pod (label `app: <name>`) on the pool, requesting `cpu`; `node` binds it to that node (spec.nodeName: KWOK's
 * node names can be longer than a label value may be).
 */
export function barePod(name: string, pool: string, cpu: string, node?: string): k8s.V1Pod {
  return {
    metadata: { name, labels: { app: name } },
    spec: {
      nodeSelector: onPool(pool),
      ...(node ? { nodeName: node } : {}),
      terminationGracePeriodSeconds: 0,
      containers: [fakeContainer(cpu)],
    },
  };
}

/**
 * A fresh namespace and NodePool with one app Pod (Deployment `app`, 1 cpu unless `app` says otherwise, 512Mi, with
 * `app`'s annotations) on it, tainted when `taint` is given (the app tolerates it); resolves once the pool's only
 * NodeClaim is Ready and the app runs.
 */
export async function poolWithApp(
  kube: Kube,
  res: TestResources,
  prefix: string,
  template: NodePoolTemplateSpec,
  taint?: string,
  app: { cpu?: string; annotations?: Record<string, string> } = {},
): Promise<{ ns: string; pool: string; claim: NodeClaim }> {
  const ns = await res.namespace(prefix);
  const pool = await res.nodePool(prefix, {
    ...template,
    ...(taint ? { taints: [{ key: 'e2e', value: taint, effect: 'NoSchedule' as const }] } : {}),
  });
  await kube.apps.createNamespacedDeployment({
    namespace: ns,
    body: deployment({
      name: 'app',
      pool,
      replicas: 1,
      cpu: app.cpu ?? '1',
      memory: '512Mi',
      terminationGracePeriodSeconds: 1,
      ...(app.annotations ? { annotations: app.annotations } : {}),
      ...(taint ? { tolerations: [{ key: 'e2e', operator: 'Equal', value: taint, effect: 'NoSchedule' }] } : {}),
    }),
  });
  const claim = await waitFor(
    'the first NodeClaim Ready with the app running on it',
    async () => {
      const claims = (await kube.nodeClaims(pool)).filter((c) => conditionTrue(c, 'Ready'));
      return claims.length === 1 && (await kube.pods(ns, 'app=app')).some(podRunningReady) ? claims[0] : undefined;
    },
    { timeoutMs: 180_000 },
  );
  return { ns, pool, claim };
}

/**
 * A NodePool of 1-cpu nodes whose limits (1 cpu) leave room for exactly one, with an app of 500m on it: a surge
 * node can never be launched there. Resolves once the node is Ready, counted in the pool status, and runs the app.
 * `lifetime` overrides the template's expireAfter (720h) and terminationGracePeriod (2m).
 */
export async function limitedPoolWithApp(
  kube: Kube,
  res: TestResources,
  prefix: string,
  lifetime: Pick<NodePoolTemplateSpec, 'expireAfter' | 'terminationGracePeriod'> = {},
): Promise<{ ns: string; pool: string; claim: NodeClaim }> {
  const ns = await res.namespace(prefix);
  const pool = await res.nodePool(
    prefix,
    {
      expireAfter: '720h',
      terminationGracePeriod: '2m',
      ...lifetime,
      requirements: [
        { key: 'node.kubernetes.io/instance-type', operator: 'In', values: ['c-1x-amd64-linux'] },
        { key: 'karpenter.sh/capacity-type', operator: 'In', values: ['on-demand'] },
      ],
    },
    { limits: { cpu: '1' } },
  );
  await kube.apps.createNamespacedDeployment({
    namespace: ns,
    body: deployment({ name: 'app', pool, replicas: 1, cpu: '500m' }),
  });
  const claim = await waitFor(
    'one Ready NodeClaim running the app, counted in the pool status',
    async () => {
      const claims = (await kube.nodeClaims(pool)).filter((c) => conditionTrue(c, 'Ready'));
      const counted = (await kube.getNodePool(pool))?.status?.resources?.cpu;
      return claims.length === 1 && counted === '500m' && (await kube.pods(ns, 'app=app')).some(podRunningReady)
        ? claims[0]
        : undefined;
    },
    { timeoutMs: 180_000 },
  );
  return { ns, pool, claim };
}

/** The annotation keys of ours (and the do-not-disrupt we may have set) on an object, sorted. */
export function ourMarkers(annotations: Record<string, string> | undefined): string[] {
  return Object.keys(annotations ?? {})
    .filter((k) => k.startsWith('noderotation.io/') || k === A.doNotDisrupt)
    .sort();
}
