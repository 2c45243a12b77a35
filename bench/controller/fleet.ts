// The benchmark's kwok fleet: N NodePools, NodeClaims created directly (Karpenter's kwok provider launches a
// fake Node for each, KWOK marks it Ready) and Pods bound to those Nodes by spec.nodeName (KWOK runs them, no
// scheduler involved). Every object carries the label FLEET so the fleet is found, repaired and reset without
// touching anything else. Karpenter must never disrupt it: budgets nodes "0", consolidateAfter Never,
// expireAfter 720h.
import type { KubeClient } from '../../controller/kube/client.js';
import { ApiError } from '../../controller/kube/client.js';

export const FLEET = 'bench.noderotation.io/fleet';
export const POOL_LABEL = 'bench.noderotation.io/pool';
export const POD_NAMESPACE = 'bench-fleet';
const NODEPOOLS = '/apis/karpenter.sh/v1/nodepools';
const NODECLAIMS = '/apis/karpenter.sh/v1/nodeclaims';
const NODES = '/api/v1/nodes';
const INSTANCE_TYPE = 'c-4x-amd64-linux';

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
      // No voluntary disruption of the fleet by Karpenter (the surge claims the controllers ask for included).
      disruption: { consolidationPolicy: 'WhenEmpty', consolidateAfter: 'Never', budgets: [{ nodes: '0' }] },
      template: { spec: { expireAfter: '720h', requirements: requirements(''), nodeClassRef } },
    },
  };
}

function nodeClaim(pool: string, poolUid: string, name: string): unknown {
  return {
    apiVersion: 'karpenter.sh/v1',
    kind: 'NodeClaim',
    metadata: {
      name,
      labels: { [FLEET]: 'true', 'karpenter.sh/nodepool': pool },
      // As Karpenter's own claims: deleting the NodePool deletes them.
      ownerReferences: [{ apiVersion: 'karpenter.sh/v1', kind: 'NodePool', name: pool, uid: poolUid }],
    },
    spec: { expireAfter: '720h', requirements: requirements(pool), nodeClassRef },
  };
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
  nodePoolsS: number;
  claimsCreatedS: number;
  claimsReadyS: number;
  podsCreatedS: number;
  podsRunningS: number;
}

/**
 * Creates what is missing of the fleet and waits until every NodeClaim is Ready and every Pod Running.
 * Idempotent: a second call on a complete fleet only checks it.
 */
export async function ensureFleet(
  client: KubeClient,
  size: FleetSize,
  log: (m: string) => void,
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
  const have = new Set((await listAll(client, NODECLAIMS, { labelSelector: FLEET })).map((c) => c.metadata.name));
  const missing = wanted.filter((w) => !have.has(w.name));
  log(`NodeClaims: ${have.size} present, creating ${missing.length}`);
  await parallel(missing, concurrency, (w) =>
    create(client, NODECLAIMS, nodeClaim(w.pool, uid.get(w.pool)?.metadata.uid ?? '', w.name)),
  );
  const claimsCreatedS = s();
  let claims: Obj[] = [];
  for (let last = ''; ;) {
    claims = await listAll(client, NODECLAIMS, { labelSelector: FLEET });
    const up = claims.filter((c) => ready(c) && c.status?.nodeName && !c.metadata.deletionTimestamp).length;
    const line = `NodeClaims Ready: ${up}/${wanted.length}`;
    if (line !== last) log(`${line} (${s().toFixed(0)} s)`);
    last = line;
    if (up >= wanted.length) break;
    if (s() > 3600) throw new Error(`${line} after an hour: see karpenter-kwok.log and kwok.log`);
    await sleep(15_000);
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
  for (let last = ''; ;) {
    const notRunning = await count(client, podsPath, { fieldSelector: 'status.phase!=Running' });
    const line = `Pods not Running: ${notRunning}`;
    if (line !== last) log(`${line} (${s().toFixed(0)} s)`);
    last = line;
    if (notRunning === 0) break;
    if (s() > 3600) throw new Error(`${line} after an hour: see kwok.log`);
    await sleep(15_000);
  }
  return { nodePoolsS, claimsCreatedS, claimsReadyS, podsCreatedS, podsRunningS: s() };
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
