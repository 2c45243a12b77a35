// The benchmark's kwok fleet: N NodePools, NodeClaims created directly and launched — by Karpenter's kwok
// provider (a fake Node for each, KWOK marks it Ready), or with `direct` by the benchmark itself writing what
// that launch writes — and Pods bound to those Nodes by spec.nodeName (KWOK runs them, no scheduler involved).
// Every object carries the label FLEET so the fleet is found, repaired and reset without touching anything
// else. Karpenter must never disrupt it: consolidateAfter Never, a budget of nodes "0" for consolidation,
// expireAfter 720h.
import type { KubeClient } from '../../runtime/kube/client.js';
import { ApiError } from '../../runtime/kube/client.js';

export const FLEET = 'bench.noderotation.io/fleet';
export const POOL_LABEL = 'bench.noderotation.io/pool';
export const POD_NAMESPACE = 'bench-fleet';
const NODEPOOLS = '/apis/karpenter.sh/v1/nodepools';
const NODECLAIMS = '/apis/karpenter.sh/v1/nodeclaims';
const NODES = '/api/v1/nodes';
const INSTANCE_TYPE = 'c-4x-amd64-linux';
const MERGE = 'application/merge-patch+json';

export interface FleetSize {
  pools: number;
  claims: number;
  pods: number;
}

interface Meta {
  name: string;
  uid?: string;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
  deletionTimestamp?: string;
}
export interface Obj {
  metadata: Meta;
  spec?: { unschedulable?: boolean; nodeName?: string };
  status?: { nodeName?: string; phase?: string; conditions?: { type: string; status: string }[] };
}

export const poolName = (i: number): string => `bench-${String(i).padStart(2, '0')}`;
const claimName = (pool: number, i: number): string => `${poolName(pool)}-${String(i).padStart(4, '0')}`;

/** Runs `fn` over `items` with at most `limit` in flight. */
export async function parallel<T>(items: readonly T[], limit: number, fn: (t: T) => Promise<void>): Promise<void> {
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < items.length) await fn(items[next++] as T);
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
}

/**
 * A request retried on what a loaded apiserver answers (timeouts, 429, 5xx, "Too large resource version"), at
 * most 6 times over about a minute: the fleet is built while other work shares the two cores.
 */
export async function retry<T>(what: string, fn: () => Promise<T>): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await fn();
    } catch (e) {
      const transient = !(e instanceof ApiError) || e.status === 429 || e.status >= 500;
      if (!transient || attempt >= 6) throw e;
      await sleep(1000 * 2 ** (attempt - 1));
    }
  }
}

/**
 * Every object of a collection, from the apiserver's watch cache (resourceVersion=0, one response): on this
 * loaded machine a consistent paginated list of thousands of NodeClaims took over a minute in etcd and timed
 * out, while the cache answered in seconds. The benchmark only needs the objects, not the newest revision.
 */
export async function listAll(client: KubeClient, path: string, query: Record<string, string> = {}): Promise<Obj[]> {
  const list = await retry(`list ${path}`, () =>
    client.request<{ items: Obj[] }>('GET', path, { query: { ...query, resourceVersion: '0' } }),
  );
  return list.items;
}

/**
 * The number of objects a query matches. Without selectors, one item and remainingItemCount; the apiserver
 * leaves remainingItemCount out when a selector filters, so then the matching objects are listed (from the
 * cache; callers ask when few are left to match).
 */
export async function count(client: KubeClient, path: string, query: Record<string, string>): Promise<number> {
  if (query.labelSelector !== undefined || query.fieldSelector !== undefined) {
    return (await listAll(client, path, query)).length;
  }
  const page = await retry(`count ${path}`, () =>
    client.request<{ items: Obj[]; metadata: { remainingItemCount?: number } }>('GET', path, {
      query: { ...query, limit: 1 },
    }),
  );
  return page.items.length + (page.metadata.remainingItemCount ?? 0);
}

/** POST, "already exists" meaning done. */
async function create(client: KubeClient, path: string, body: unknown): Promise<void> {
  try {
    await retry(`create in ${path}`, () => client.request('POST', path, { body }));
  } catch (e) {
    if (!(e instanceof ApiError && e.status === 409)) throw e;
  }
}

/** POST, or the object already there. */
async function createOrGet(client: KubeClient, path: string, name: string, body: unknown): Promise<Obj> {
  try {
    return await retry(`create in ${path}`, () => client.request<Obj>('POST', path, { body }));
  } catch (e) {
    if (!(e instanceof ApiError && e.status === 409)) throw e;
    return retry(`get ${path}/${name}`, () => client.request<Obj>('GET', `${path}/${name}`));
  }
}

const requirements = (pool: string) => [
  { key: 'kubernetes.io/os', operator: 'In', values: ['linux'] },
  { key: 'kubernetes.io/arch', operator: 'In', values: ['amd64'] },
  { key: 'karpenter.sh/capacity-type', operator: 'In', values: ['on-demand'] },
  { key: 'node.kubernetes.io/instance-type', operator: 'In', values: [INSTANCE_TYPE] },
  ...(pool ? [{ key: 'karpenter.sh/nodepool', operator: 'In', values: [pool] }] : []),
];
const nodeClassRef = { group: 'karpenter.kwok.sh', kind: 'KWOKNodeClass', name: 'default' };

function nodePool(name: string): unknown {
  return {
    apiVersion: 'karpenter.sh/v1',
    kind: 'NodePool',
    metadata: { name, labels: { [FLEET]: 'true', [POOL_LABEL]: name } },
    spec: {
      // No voluntary disruption of the fleet by Karpenter (the surge claims the controllers ask for included). The
      // budget names the consolidation reasons only: a budget for every reason (or for Drifted) holds back our
      // rotations too, as Karpenter's own replacements (src/engine/protection.ts); the reference ignores budgets.
      disruption: {
        consolidationPolicy: 'WhenEmpty',
        consolidateAfter: 'Never',
        budgets: [{ nodes: '0', reasons: ['Empty', 'Underutilized'] }],
      },
      template: { spec: { expireAfter: '720h', requirements: requirements(''), nodeClassRef } },
    },
  };
}

function nodeClaim(pool: string, poolUid: string, name: string, launched: Record<string, string> = {}): unknown {
  return {
    apiVersion: 'karpenter.sh/v1',
    kind: 'NodeClaim',
    metadata: {
      name,
      labels: { [FLEET]: 'true', 'karpenter.sh/nodepool': pool, ...launched },
      // As Karpenter's own claims: deleting the NodePool deletes them.
      ownerReferences: [{ apiVersion: 'karpenter.sh/v1', kind: 'NodePool', name: pool, uid: poolUid }],
    },
    spec: {
      expireAfter: '720h',
      requirements: requirements(pool),
      nodeClassRef,
      // As Karpenter's provisioner writes on every claim it makes (its Pods' requests). Without it, a client that
      // round-trips the claim through Karpenter's Go types sends `resources: {}` back, which the CRD's
      // immutable-spec rule rejects: the reference's NodeClaim updates failed with 422 "spec is immutable".
      resources: { requests: { cpu: '100m', memory: '160Mi', pods: '10' } },
    },
  };
}

// What Karpenter's launch of one NodeClaim writes with its kwok provider (c-4x-amd64-linux, zone test-zone-a;
// copied from a claim it launched on this cluster): labels on the claim, a Node owned by the claim carrying the
// same labels plus registered/initialized and the providerID, and the claim's status (Launched, Registered,
// Initialized, Ready; providerID, nodeName, capacity, allocatable). KWOK then makes the Node Ready and runs its
// Pods, as for a Node Karpenter created. Left out: Karpenter's karpenter.sh/termination finalizers (no
// Karpenter runs to remove them; neither controller reaches a deletion in the benchmark).
const launchLabels = (claim: string): Record<string, string> => ({
  'karpenter.kwok.sh/instance-cpu': '4',
  'karpenter.kwok.sh/instance-family': 'c',
  'karpenter.kwok.sh/instance-memory': '8Gi',
  'karpenter.kwok.sh/instance-size': '4',
  'karpenter.kwok.sh/kwoknodeclass': 'default',
  'karpenter.sh/capacity-type': 'on-demand',
  'kubernetes.io/arch': 'amd64',
  'kubernetes.io/os': 'linux',
  'kubernetes.io/hostname': claim,
  'node.kubernetes.io/instance-type': INSTANCE_TYPE,
  'topology.kubernetes.io/zone': 'test-zone-a',
  'kwok-partition': 'a',
  'kwok.x-k8s.io/node': 'fake',
});
const CAPACITY = { cpu: '4', memory: '8Gi', pods: '64', 'ephemeral-storage': '20Gi' };
const ALLOCATABLE = { cpu: '3900m', memory: '8182Mi', pods: '64', 'ephemeral-storage': '20Gi' };
const directNodeName = (claim: string): string => `kwok-${claim}`;

function conditions(types: readonly string[], at: string): unknown[] {
  return types.map((type) => ({
    type,
    status: 'True',
    reason: type,
    message: '',
    lastTransitionTime: at,
    observedGeneration: 1,
  }));
}

function directNode(pool: string, claim: string, claimUid: string): unknown {
  const name = directNodeName(claim);
  return {
    apiVersion: 'v1',
    kind: 'Node',
    metadata: {
      name,
      annotations: { 'kwok.x-k8s.io/node': 'fake' },
      labels: {
        [FLEET]: 'true',
        'karpenter.sh/nodepool': pool,
        ...launchLabels(claim),
        'karpenter.sh/registered': 'true',
        'karpenter.sh/initialized': 'true',
      },
      ownerReferences: [
        { apiVersion: 'karpenter.sh/v1', kind: 'NodeClaim', name: claim, uid: claimUid, blockOwnerDeletion: true },
      ],
    },
    spec: { providerID: `kwok://${name}` },
    // No capacity: KWOK fills it in (cpu 1k, memory 1Ti, pods 1M), as on the Nodes Karpenter's kwok provider creates.
    status: { allocatable: ALLOCATABLE },
  };
}

/** Launches one claim as Karpenter would (see launchLabels); resumes where an earlier attempt stopped. */
async function launchDirect(
  client: KubeClient,
  w: { pool: string; name: string },
  poolUid: string,
  existing: Obj | undefined,
): Promise<void> {
  const claim =
    existing ??
    (await createOrGet(client, NODECLAIMS, w.name, nodeClaim(w.pool, poolUid, w.name, launchLabels(w.name))));
  const node = directNodeName(w.name);
  await create(client, NODES, directNode(w.pool, w.name, claim.metadata.uid ?? ''));
  const at = new Date().toISOString();
  const status = {
    providerID: `kwok://${node}`,
    nodeName: node,
    capacity: CAPACITY,
    allocatable: ALLOCATABLE,
    conditions: conditions(['Launched', 'ConsistentStateFound', 'Registered', 'Initialized', 'Ready'], at),
  };
  await retry(`status of ${w.name}`, () =>
    client.request('PATCH', `${NODECLAIMS}/${w.name}/status`, { body: { status }, contentType: MERGE }),
  );
}

/** NodePool status as Karpenter's readiness and counter controllers write it (the Node count, resources). */
async function directPoolStatus(client: KubeClient, pool: string, nodes: number): Promise<void> {
  const status = {
    conditions: conditions(
      ['NodeClassReady', 'ValidationSucceeded', 'NodeRegistrationHealthy', 'Ready'],
      new Date().toISOString(),
    ),
    nodeClassObservedGeneration: 1,
    nodes,
    resources: {
      cpu: String(4 * nodes),
      memory: `${8 * nodes}Gi`,
      pods: String(64 * nodes),
      'ephemeral-storage': `${20 * nodes}Gi`,
      nodes: String(nodes),
    },
  };
  await retry(`status of ${pool}`, () =>
    client.request('PATCH', `${NODEPOOLS}/${pool}/status`, { body: { status }, contentType: MERGE }),
  );
}

function pod(name: string, node: string, pool: string): unknown {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, namespace: POD_NAMESPACE, labels: { [FLEET]: 'true', [POOL_LABEL]: pool } },
    spec: {
      nodeName: node,
      terminationGracePeriodSeconds: 0,
      automountServiceAccountToken: false,
      containers: [
        { name: 'app', image: 'registry.k8s.io/pause:3.10', resources: { requests: { cpu: '10m', memory: '16Mi' } } },
      ],
    },
  };
}

const ready = (o: Obj): boolean =>
  o.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') ?? false;

export interface BuildTimes {
  /** How the claims were launched: by Karpenter, or by the benchmark writing what Karpenter's launch writes. */
  launcher: 'karpenter' | 'direct';
  claimsLaunched: number;
  podsCreated: number;
  nodePoolsS: number;
  claimsCreatedS: number;
  claimsReadyS: number;
  podsCreatedS: number;
  podsRunningS: number;
}

/** Polls `probe` every 15 s, logging each new line it returns, until it says done (bounded to an hour). */
async function poll(
  log: (m: string) => void,
  s: () => number,
  hint: string,
  probe: () => Promise<{ line: string; done: boolean }>,
): Promise<void> {
  for (let last = ''; ;) {
    const { line, done } = await probe();
    if (line !== last) log(`${line} (${s().toFixed(0)} s)`);
    last = line;
    if (done) return;
    if (s() > 3600) throw new Error(`${line} after an hour: see ${hint}`);
    await sleep(15_000);
  }
}

/**
 * Creates what is missing of the fleet and waits until every NodeClaim is Ready and every Pod Running.
 * Idempotent: a second call on a complete fleet only checks it. `direct`: the benchmark launches the claims
 * itself (launchDirect) instead of Karpenter, which must not run then (main.ts stops it).
 */
export async function ensureFleet(
  client: KubeClient,
  size: FleetSize,
  log: (m: string) => void,
  direct: boolean,
  concurrency = 24,
): Promise<BuildTimes> {
  const t0 = Date.now();
  const s = (): number => (Date.now() - t0) / 1000;
  await create(client, '/api/v1/namespaces', { metadata: { name: POD_NAMESPACE } });
  const pools = Array.from({ length: size.pools }, (_, i) => poolName(i));
  await parallel(pools, 8, (p) => create(client, NODEPOOLS, nodePool(p)));
  const uid = new Map((await listAll(client, NODEPOOLS, { labelSelector: FLEET })).map((p) => [p.metadata.name, p]));
  const nodePoolsS = s();

  // Claims: spread evenly, pool i gets claims/pools (the first ones one more when it does not divide).
  const wanted: { pool: string; name: string }[] = [];
  for (let i = 0; i < size.pools; i++) {
    const n = Math.floor(size.claims / size.pools) + (i < size.claims % size.pools ? 1 : 0);
    for (let j = 0; j < n; j++) wanted.push({ pool: poolName(i), name: claimName(i, j) });
  }
  const have = new Map(
    (await listAll(client, NODECLAIMS, { labelSelector: FLEET }))
      .filter((c) => !c.metadata.deletionTimestamp)
      .map((c) => [c.metadata.name, c]),
  );
  const up = (c: Obj | undefined): boolean =>
    c !== undefined && ready(c) && c.status?.nodeName !== undefined && !c.metadata.deletionTimestamp;
  let launched = 0;
  if (direct) {
    const todo = wanted.filter((w) => !up(have.get(w.name)));
    log(`NodeClaims: ${wanted.length - todo.length} launched, launching ${todo.length} (direct)`);
    await parallel(todo, concurrency, async (w) => {
      await launchDirect(client, w, uid.get(w.pool)?.metadata.uid ?? '', have.get(w.name));
      if (++launched % 500 === 0) log(`  ${launched} NodeClaims launched (${s().toFixed(0)} s)`);
    });
  } else {
    const missing = wanted.filter((w) => !have.has(w.name));
    log(`NodeClaims: ${have.size} present, creating ${missing.length}`);
    launched = missing.length;
    await parallel(missing, concurrency, (w) =>
      create(client, NODECLAIMS, nodeClaim(w.pool, uid.get(w.pool)?.metadata.uid ?? '', w.name)),
    );
  }
  const claimsCreatedS = s();
  let claims: Obj[] = [];
  await poll(log, s, 'karpenter-kwok.log and kwok.log', async () => {
    claims = await listAll(client, NODECLAIMS, { labelSelector: FLEET });
    const n = claims.filter(up).length;
    return { line: `NodeClaims Ready: ${n}/${wanted.length}`, done: n >= wanted.length };
  });
  if (direct) {
    // Karpenter's claims are Ready only once their Node is; here the claim's status was written, so wait for
    // KWOK to make every Node Ready, then write the pools' status as Karpenter's counter would.
    await poll(log, s, 'kwok.log', async () => {
      const n = (await listAll(client, NODES, { labelSelector: FLEET })).filter(ready).length;
      return { line: `Nodes Ready (KWOK): ${n}/${wanted.length}`, done: n >= wanted.length };
    });
    await parallel(pools, 8, (p) => directPoolStatus(client, p, wanted.filter((w) => w.pool === p).length));
  }
  const claimsReadyS = s();

  // Pods: the same number on every node of a pool (the remainder on the first nodes).
  const byName = new Map(claims.map((c) => [c.metadata.name, c]));
  const podsWanted: { name: string; node: string; pool: string }[] = [];
  wanted.forEach((w, k) => {
    const n = Math.floor(size.pods / size.claims) + (k < size.pods % size.claims ? 1 : 0);
    const node = byName.get(w.name)?.status?.nodeName ?? '';
    for (let j = 0; j < n; j++) podsWanted.push({ name: `${w.name}-${node.slice(-10)}-${j}`, node, pool: w.pool });
  });
  // Listing 50,000 Pods is costly: only when their number says some are missing.
  const podsPath = `/api/v1/namespaces/${POD_NAMESPACE}/pods`;
  const complete = (await count(client, podsPath, {})) === podsWanted.length;
  const podsHave = new Set(
    complete
      ? podsWanted.map((p) => p.name)
      : (await listAll(client, podsPath, { labelSelector: FLEET })).map((p) => p.metadata.name),
  );
  const podsMissing = podsWanted.filter((p) => !podsHave.has(p.name));
  log(`Pods: ${podsHave.size} present, creating ${podsMissing.length}`);
  let done = 0;
  await parallel(podsMissing, concurrency, async (p) => {
    await create(client, `/api/v1/namespaces/${POD_NAMESPACE}/pods`, pod(p.name, p.node, p.pool));
    if (++done % 5000 === 0) log(`  ${done} Pods created (${s().toFixed(0)} s)`);
  });
  const podsCreatedS = s();
  await poll(log, s, 'kwok.log', async () => {
    const notRunning = await count(client, podsPath, { fieldSelector: 'status.phase!=Running' });
    return { line: `Pods not Running: ${notRunning}`, done: notRunning === 0 };
  });
  return {
    launcher: direct ? 'direct' : 'karpenter',
    claimsLaunched: launched,
    podsCreated: podsMissing.length,
    nodePoolsS,
    claimsCreatedS,
    claimsReadyS,
    podsCreatedS,
    podsRunningS: s(),
  };
}

/**
 * Undoes what a controller did to the fleet after its window opened, so the next controller starts from the
 * same idle fleet: placeholders deleted, surge NodeClaims (in a fleet pool, without the fleet label) deleted,
 * every noderotation.io/ annotation and karpenter.sh/do-not-disrupt removed, cordoned Nodes uncordoned. A
 * NodeClaim a controller already deleted is recreated (with its Pods) by ensureFleet afterwards.
 */
export async function resetFleet(client: KubeClient, controllerNamespaces: readonly string[]): Promise<void> {
  for (const ns of controllerNamespaces) {
    await client.request('DELETE', `/api/v1/namespaces/${ns}/pods`, { query: { gracePeriodSeconds: 0 } });
  }
  const surge = (await listAll(client, NODECLAIMS, { labelSelector: `karpenter.sh/nodepool,!${FLEET}` })).filter((c) =>
    c.metadata.labels?.['karpenter.sh/nodepool']?.startsWith('bench-'),
  );
  await parallel(surge, 8, async (c) => {
    await client.request('DELETE', `${NODECLAIMS}/${c.metadata.name}`).catch(ignore404);
  });
  const ours = (k: string): boolean => k.startsWith('noderotation.io/') || k === 'karpenter.sh/do-not-disrupt';
  for (const path of [NODEPOOLS, NODECLAIMS, NODES]) {
    const items = await listAll(client, path, path === NODES ? {} : { labelSelector: FLEET });
    const dirty = items.filter(
      (o) => Object.keys(o.metadata.annotations ?? {}).some(ours) || (path === NODES && o.spec?.unschedulable),
    );
    await parallel(dirty, 8, async (o) => {
      const annotations = Object.fromEntries(
        Object.keys(o.metadata.annotations ?? {})
          .filter(ours)
          .map((k) => [k, null]),
      );
      const body = { metadata: { annotations }, ...(path === NODES ? { spec: { unschedulable: null } } : {}) };
      await client
        .request('PATCH', `${path}/${o.metadata.name}`, { body, contentType: 'application/merge-patch+json' })
        .catch(ignore404);
    });
  }
  // Surge claims are gone before the next controller starts, or it would see them as another rotation's.
  for (let i = 0; ; i++) {
    const left = (await listAll(client, NODECLAIMS, { labelSelector: `karpenter.sh/nodepool,!${FLEET}` })).filter((c) =>
      c.metadata.labels?.['karpenter.sh/nodepool']?.startsWith('bench-'),
    );
    if (left.length === 0) break;
    if (i > 120)
      throw new Error(`surge NodeClaims still present after 10 min: ${left.map((c) => c.metadata.name).join(', ')}`);
    await sleep(5000);
  }
}

/** Deletes the fleet: the pods' namespace and the NodePools (their NodeClaims follow by owner reference). */
export async function deleteFleet(client: KubeClient): Promise<void> {
  await client.request('DELETE', `/api/v1/namespaces/${POD_NAMESPACE}`).catch(ignore404);
  const pools = await listAll(client, NODEPOOLS, { labelSelector: FLEET });
  await parallel(pools, 8, (p) => client.request('DELETE', `${NODEPOOLS}/${p.metadata.name}`).then(() => undefined));
}

function ignore404(e: unknown): void {
  if (!(e instanceof ApiError && e.status === 404)) throw e;
}

export const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));
