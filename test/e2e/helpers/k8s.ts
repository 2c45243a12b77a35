// Kubernetes access for the e2e tests: typed clients on the run directory's kubeconfig, Karpenter objects,
// waiting on conditions with a deadline (never fixed sleeps), and per-test resources that clean up after
// themselves.
import * as k8s from '@kubernetes/client-node';
import { randomBytes } from 'node:crypto';
import {
  NODEPOOL_LABEL,
  type NodeClaim,
  type NodePool,
  type NodeSelectorRequirement,
} from '../../../src/karpenter/types.js';
import { readClusterEnv, type ClusterEnv } from './cluster.js';
import { bury, clearGraveyard, graveyard, type Buried } from './graveyard.js';

// The Karpenter objects are the project's own types (src/karpenter/types.ts): the tests read the API the
// engine reads, so a field the engine relies on and Karpenter does not serve shows up here first.
const KARPENTER_GROUP = 'karpenter.sh';
const KARPENTER_VERSION = 'v1';

/** What a test sets of a NodePool's template spec; nodeClassRef is always the KWOKNodeClass `default`. */
export type NodePoolTemplateSpec = Omit<NodePool['spec']['template']['spec'], 'nodeClassRef'> & {
  // Required by the NodePool CRD (karpenter.sh_nodepools.yaml, v1.14.1).
  requirements: NodeSelectorRequirement[];
};
/** The rest of a NodePool spec a test may set (limits, disruption, weight). */
export type NodePoolSpecExtras = Partial<Omit<NodePool['spec'], 'template'>>;

export class Kube {
  readonly env: ClusterEnv;
  readonly kc = new k8s.KubeConfig();
  readonly core: k8s.CoreV1Api;
  readonly apps: k8s.AppsV1Api;
  readonly policy: k8s.PolicyV1Api;
  readonly scheduling: k8s.SchedulingV1Api;
  readonly custom: k8s.CustomObjectsApi;

  constructor(env: ClusterEnv = readClusterEnv()) {
    this.env = env;
    this.kc.loadFromFile(env.kubeconfig);
    this.core = this.kc.makeApiClient(k8s.CoreV1Api);
    this.apps = this.kc.makeApiClient(k8s.AppsV1Api);
    this.policy = this.kc.makeApiClient(k8s.PolicyV1Api);
    this.scheduling = this.kc.makeApiClient(k8s.SchedulingV1Api);
    this.custom = this.kc.makeApiClient(k8s.CustomObjectsApi);
  }

  // --- Karpenter objects (cluster-scoped custom resources) ---

  async createNodePool(body: Omit<NodePool, 'apiVersion' | 'kind' | 'status'>): Promise<NodePool> {
    return (await this.custom.createClusterCustomObject({
      group: KARPENTER_GROUP,
      version: KARPENTER_VERSION,
      plural: 'nodepools',
      body: { apiVersion: `${KARPENTER_GROUP}/${KARPENTER_VERSION}`, kind: 'NodePool', ...body },
    })) as NodePool;
  }

  async getNodePool(name: string): Promise<NodePool | undefined> {
    return ignoreNotFound(
      this.custom.getClusterCustomObject({
        group: KARPENTER_GROUP,
        version: KARPENTER_VERSION,
        plural: 'nodepools',
        name,
      }),
    ) as Promise<NodePool | undefined>;
  }

  async deleteNodePool(name: string): Promise<void> {
    await ignoreNotFound(
      this.custom.deleteClusterCustomObject({
        group: KARPENTER_GROUP,
        version: KARPENTER_VERSION,
        plural: 'nodepools',
        name,
      }),
    );
  }

  async nodeClaims(pool: string): Promise<NodeClaim[]> {
    const list = (await this.custom.listClusterCustomObject({
      group: KARPENTER_GROUP,
      version: KARPENTER_VERSION,
      plural: 'nodeclaims',
      labelSelector: `${NODEPOOL_LABEL}=${pool}`,
    })) as { items: NodeClaim[] };
    return list.items;
  }

  async getNodeClaim(name: string): Promise<NodeClaim | undefined> {
    return ignoreNotFound(
      this.custom.getClusterCustomObject({
        group: KARPENTER_GROUP,
        version: KARPENTER_VERSION,
        plural: 'nodeclaims',
        name,
      }),
    ) as Promise<NodeClaim | undefined>;
  }

  async deleteNodeClaim(name: string): Promise<void> {
    await ignoreNotFound(
      this.custom.deleteClusterCustomObject({
        group: KARPENTER_GROUP,
        version: KARPENTER_VERSION,
        plural: 'nodeclaims',
        name,
      }),
    );
  }

  // --- core objects ---

  async nodes(pool: string): Promise<k8s.V1Node[]> {
    return (await this.core.listNode({ labelSelector: `${NODEPOOL_LABEL}=${pool}` })).items;
  }

  async getNode(name: string): Promise<k8s.V1Node | undefined> {
    return ignoreNotFound(this.core.readNode({ name }));
  }

  async pods(namespace: string, labelSelector?: string): Promise<k8s.V1Pod[]> {
    return (await this.core.listNamespacedPod({ namespace, ...(labelSelector ? { labelSelector } : {}) })).items;
  }

  async getPod(namespace: string, name: string): Promise<k8s.V1Pod | undefined> {
    return ignoreNotFound(this.core.readNamespacedPod({ namespace, name }));
  }

  /**
   * core/v1 Events about an object (or every object of a kind in a namespace when `name` is left out).
   * Events about cluster-scoped objects such as Nodes land in `default`, so by default all namespaces are
   * searched. Karpenter, the scheduler and the controllers all record there.
   */
  async events(about: {
    kind: string;
    name?: string;
    uid?: string;
    reason?: string;
    namespace?: string;
  }): Promise<k8s.CoreV1Event[]> {
    const fields = [`involvedObject.kind=${about.kind}`];
    if (about.name) fields.push(`involvedObject.name=${about.name}`);
    if (about.uid) fields.push(`involvedObject.uid=${about.uid}`);
    if (about.reason) fields.push(`reason=${about.reason}`);
    const fieldSelector = fields.join(',');
    const list = about.namespace
      ? await this.core.listNamespacedEvent({ namespace: about.namespace, fieldSelector })
      : await this.core.listEventForAllNamespaces({ fieldSelector });
    return list.items;
  }

  /** Karpenter's Prometheus metrics endpoint, as text. */
  async karpenterMetrics(): Promise<string> {
    const res = await fetch(`http://127.0.0.1:${this.env.karpenterMetricsPort}/metrics`);
    if (!res.ok) throw new Error(`karpenter /metrics: HTTP ${res.status}`);
    return res.text();
  }
}

/**
 * Sum of the samples of a Prometheus counter whose labels include all of `labels`, from /metrics text.
 * Enough for Karpenter's counters (no escaping in the label values the tests use).
 */
export function metricSum(metricsText: string, name: string, labels: Record<string, string> = {}): number {
  let total = 0;
  for (const line of metricsText.split('\n')) {
    if (!line.startsWith(`${name}{`) && !line.startsWith(`${name} `)) continue;
    if (!Object.entries(labels).every(([k, v]) => line.includes(`${k}="${v}"`))) continue;
    total += Number(line.slice(line.lastIndexOf(' ') + 1));
  }
  return total;
}

// --- small predicates ---

/**
 * True when the object has condition `type` with status True. The conditions are read as unknown: the
 * project's NodePool type leaves them untyped (the engine never reads them), Karpenter serves the usual
 * {type, status} entries.
 */
export function conditionTrue(
  obj: { status?: { conditions?: readonly unknown[] } } | undefined,
  type: string,
): boolean {
  return obj?.status?.conditions?.some((c) => isCondition(c) && c.type === type && c.status === 'True') ?? false;
}

function isCondition(c: unknown): c is { type: string; status: string } {
  return typeof c === 'object' && c !== null && 'type' in c && 'status' in c;
}

export function nodeReady(node: k8s.V1Node | undefined): boolean {
  return node?.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') ?? false;
}

export function podRunningReady(pod: k8s.V1Pod | undefined): boolean {
  return (
    pod?.status?.phase === 'Running' &&
    !pod.metadata?.deletionTimestamp &&
    (pod.status.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') ?? false)
  );
}

export function isNotFound(err: unknown): boolean {
  return err instanceof k8s.ApiException && err.code === 404;
}

export async function ignoreNotFound<T>(p: Promise<T>): Promise<T | undefined> {
  try {
    return await p;
  } catch (err) {
    if (isNotFound(err)) return undefined;
    throw err;
  }
}

/** A DNS-1123 name unique to this run: tests never collide with leftovers of an earlier run. */
export function uniqueName(prefix: string): string {
  return `${prefix}-${randomBytes(3).toString('hex')}`;
}

/** Parses a Kubernetes timestamp field (the client returns Date objects, YAML/JSON may give strings). */
export function toDate(t: Date | string | undefined): Date | undefined {
  if (t === undefined) return undefined;
  return t instanceof Date ? t : new Date(t);
}

/** A finalizer of the tests': keeps a deleted Pod readable (Terminating) until the test has seen why it went. */
export const KEEP_FINALIZER = 'noderotation.test/observe-preemption';

/** Adds KEEP_FINALIZER to a Pod that exists. */
export async function keepWhenDeleted(kube: Kube, namespace: string, name: string): Promise<void> {
  await kube.core.patchNamespacedPod({
    namespace,
    name,
    body: [{ op: 'add', path: '/metadata/finalizers', value: [KEEP_FINALIZER] }],
  });
}

/** Removes the finalizers of a Pod kept by KEEP_FINALIZER (nothing when it is gone or has none left). */
export async function releaseKept(kube: Kube, namespace: string, name: string): Promise<void> {
  const pod = await kube.getPod(namespace, name);
  if (!pod?.metadata?.finalizers?.length) return;
  await ignoreNotFound(
    kube.core.patchNamespacedPod({ namespace, name, body: [{ op: 'remove', path: '/metadata/finalizers' }] }),
  );
}

// --- waiting ---

export interface WaitOptions {
  /** Give up after this long (default 120 s). */
  timeoutMs?: number;
  /** Poll interval (default 500 ms). */
  intervalMs?: number;
  /** Called on timeout to explain the state that was seen; its text goes into the error. */
  describe?: () => Promise<string> | string;
}

/**
 * Polls `probe` until it returns a value other than undefined/null/false, and returns that value.
 * A probe that throws is retried (the last error is reported on timeout): the API server answers
 * transient errors during CRD establishment and the like.
 */
export async function waitFor<T>(
  what: string,
  probe: () => Promise<T | undefined | null | false> | T | undefined | null | false,
  opts: WaitOptions = {},
): Promise<T> {
  const timeoutMs = opts.timeoutMs ?? 120_000;
  const intervalMs = opts.intervalMs ?? 500;
  const started = Date.now();
  const deadline = started + timeoutMs;
  let lastError: unknown;
  for (;;) {
    try {
      const v = await probe();
      if (v !== undefined && v !== null && v !== false) {
        trace(started, what);
        return v;
      }
      lastError = undefined;
    } catch (err) {
      lastError = err;
    }
    if (Date.now() >= deadline) {
      let state = '';
      if (opts.describe) {
        try {
          state = `\nstate: ${await opts.describe()}`;
        } catch (err) {
          state = `\n(describe failed: ${String(err)})`;
        }
      }
      const last = lastError === undefined ? '' : `\nlast error: ${errorText(lastError)}`;
      throw new Error(`timed out after ${timeoutMs / 1000}s waiting for ${what}${last}${state}`);
    }
    await new Promise((r) => setTimeout(r, intervalMs));
  }
}

/** With E2E_TRACE=1, each wait says how long it took: where an e2e file spends its time. */
function trace(started: number, what: string): void {
  if (process.env.E2E_TRACE === '1')
    process.stderr.write(`[wait ${((Date.now() - started) / 1000).toFixed(1)}s] ${what}\n`);
}

function errorText(err: unknown): string {
  if (err instanceof k8s.ApiException) return `HTTP ${err.code}: ${JSON.stringify(err.body)}`;
  return err instanceof Error ? err.message : String(err);
}

// --- per-test resources ---

/** Everything a test creates is registered here and deleted by `cleanup()` (which says what it waits for). */
export class TestResources {
  private namespaces: string[] = [];
  private pools: string[] = [];
  private priorityClasses: string[] = [];

  constructor(private readonly kube: Kube) {}

  async namespace(prefix: string): Promise<string> {
    const name = uniqueName(prefix);
    await this.kube.core.createNamespace({ body: { metadata: { name, labels: { 'noderotation.test/e2e': 'true' } } } });
    this.namespaces.push(name);
    // The default ServiceAccount is created asynchronously by kube-controller-manager; pods need it.
    await waitFor(`ServiceAccount ${name}/default`, () =>
      ignoreNotFound(this.kube.core.readNamespacedServiceAccount({ namespace: name, name: 'default' })),
    );
    return name;
  }

  /** Creates a NodePool on the KWOKNodeClass `default` and waits until Karpenter reports it Ready. */
  async nodePool(prefix: string, template: NodePoolTemplateSpec, spec: NodePoolSpecExtras = {}): Promise<string> {
    const name = uniqueName(prefix);
    await this.kube.createNodePool({
      metadata: { name },
      spec: {
        disruption: { consolidationPolicy: 'WhenEmpty', consolidateAfter: 'Never' },
        ...spec,
        template: {
          metadata: { labels: { 'noderotation.test/e2e': 'true' } },
          spec: {
            nodeClassRef: { group: 'karpenter.kwok.sh', kind: 'KWOKNodeClass', name: 'default' },
            expireAfter: 'Never',
            ...template,
          },
        },
      },
    });
    this.pools.push(name);
    await waitFor(`NodePool ${name} Ready`, async () => conditionTrue(await this.kube.getNodePool(name), 'Ready'), {
      describe: async () => JSON.stringify((await this.kube.getNodePool(name))?.status),
    });
    return name;
  }

  async priorityClass(
    prefix: string,
    value: number,
    preemptionPolicy: 'Never' | 'PreemptLowerPriority',
  ): Promise<string> {
    const name = uniqueName(prefix);
    await this.kube.scheduling.createPriorityClass({
      body: { metadata: { name }, value, preemptionPolicy, globalDefault: false, description: 'noderotation e2e' },
    });
    this.priorityClasses.push(name);
    return name;
  }

  /**
   * Deletes everything registered: namespaces first (their Pods go), then the NodePools (Karpenter deletes their
   * NodeClaims, which drain and go), then PriorityClasses. It does not wait for them to be gone: they are recorded
   * in the suite's graveyard (graveyard.ts), and the next test runs while Karpenter removes them — they are
   * ungoverned, labelled for no selector a test uses, and no Pod can land on them. What needs a cluster without
   * them waits (`awaitGraveyard`), and the suite's last phase checks that every one of them is gone.
   */
  async cleanup(): Promise<void> {
    const { kube } = this;
    for (const ns of this.namespaces) await ignoreNotFound(kube.core.deleteNamespace({ name: ns }));
    for (const pool of this.pools) await kube.deleteNodePool(pool);
    for (const pc of this.priorityClasses) await ignoreNotFound(kube.scheduling.deletePriorityClass({ name: pc }));
    bury({ pools: this.pools, namespaces: this.namespaces });
    this.namespaces = [];
    this.pools = [];
    this.priorityClasses = [];
  }
}

/** Waits until everything buried is gone (NodeClaims, Nodes, NodePools, namespaces); then empties the graveyard. */
export async function awaitGraveyard(kube: Kube, timeoutMs = 180_000): Promise<Buried> {
  const dead = graveyard();
  for (const pool of dead.pools) {
    const describe = async () =>
      JSON.stringify({
        claims: (await kube.nodeClaims(pool)).map((c) => ({ name: c.metadata.name, status: c.status })),
        nodes: (await kube.nodes(pool)).map((n) => ({
          name: n.metadata?.name,
          deletionTimestamp: n.metadata?.deletionTimestamp,
          finalizers: n.metadata?.finalizers,
          taints: n.spec?.taints,
        })),
      });
    await waitFor(`NodeClaims of NodePool ${pool} gone`, async () => (await kube.nodeClaims(pool)).length === 0, {
      timeoutMs,
      describe,
    });
    // Once its claims are gone Karpenter has nothing left to remove a Node by: a Node of the pool still there a
    // minute later (seen once in CI) is an orphan of the cluster's own, reported and removed so that it is not
    // hidden and cannot take another test's Pods.
    const orphans = await waitFor(
      `Nodes of NodePool ${pool} gone with their claims`,
      async () => ((await kube.nodes(pool)).length === 0 ? [] : undefined),
      { timeoutMs: 60_000 },
    ).catch(async () => kube.nodes(pool));
    for (const n of orphans) {
      const name = n.metadata!.name!;
      console.error(`graveyard: Node ${name} of NodePool ${pool} outlived its NodeClaim: ${await describe()}`);
      if (n.metadata?.finalizers?.length)
        await ignoreNotFound(
          kube.core.patchNode(
            { name, body: { metadata: { finalizers: null } } },
            k8s.setHeaderOptions('Content-Type', k8s.PatchStrategy.MergePatch),
          ),
        );
      await ignoreNotFound(kube.core.deleteNode({ name }));
    }
    await waitFor(`Nodes of NodePool ${pool} gone`, async () => (await kube.nodes(pool)).length === 0, { describe });
    await waitFor(`NodePool ${pool} gone`, async () => (await kube.getNodePool(pool)) === undefined);
  }
  for (const ns of dead.namespaces)
    await waitFor(
      `namespace ${ns} gone`,
      async () => (await ignoreNotFound(kube.core.readNamespace({ name: ns }))) === undefined,
      { timeoutMs },
    );
  clearGraveyard();
  return dead;
}
