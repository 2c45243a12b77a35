// --from-cluster: the objects explain, validate and render read, listed from the cluster the user is pointed at
// (kubeconfig resolved as kubectl does: --kubeconfig, else KUBECONFIG, else ~/.kube/config, else in-cluster;
// --context picks a context). Read-only and list calls only. The objects become one more input "file", so the
// same validation and messages apply to them as to -f files; an object given with -f replaces the cluster's
// object of the same kind and name, which is how `-f changed-plan.yaml --from-cluster` shows a change against
// the real fleet.
import { ApiError, KubeClient } from '../runtime/kube/client.js';
import { KubeconfigError, resolveKubeconfig, type KubeAuth } from '../runtime/kube/kubeconfig.js';
import { UsageError } from './io.js';

export interface ClusterFlags {
  kubeconfig?: string;
  context?: string;
}

interface Listed {
  kind: 'NodePool' | 'NodeClaim' | 'RotationPolicy' | 'MaintenancePlan';
  path: string;
  /** Karpenter's kinds must be served; ours may not be installed yet (then there are none). */
  required: boolean;
  resource: string;
}

const LISTS: readonly Listed[] = [
  { kind: 'NodePool', path: '/apis/karpenter.sh/v1/nodepools', required: true, resource: 'nodepools.karpenter.sh' },
  { kind: 'NodeClaim', path: '/apis/karpenter.sh/v1/nodeclaims', required: true, resource: 'nodeclaims.karpenter.sh' },
  {
    kind: 'RotationPolicy',
    path: '/apis/noderotation.io/v1alpha1/rotationpolicies',
    required: false,
    resource: 'rotationpolicies.noderotation.io',
  },
  {
    kind: 'MaintenancePlan',
    path: '/apis/noderotation.io/v1alpha1/maintenanceplans',
    required: false,
    resource: 'maintenanceplans.noderotation.io',
  },
];

const SOURCE_PREFIX = 'cluster (';
/** Whether an input's source (its "file") is the cluster rather than a file. */
export const isClusterSource = (file: string): boolean => file.startsWith(SOURCE_PREFIX);

/** Objects a page; a fleet of 10,000 NodeClaims is 20 calls. */
const PAGE = 500;

export interface ClusterObjects {
  /** Where they came from, for messages: `cluster (context NAME)`. */
  source: string;
  objects: Record<string, unknown>[];
  notes: string[];
}

/** The kubeconfig as kubectl resolves it, with --context applied; a UsageError naming what failed. */
export function clusterConfig(flags: ClusterFlags, env: NodeJS.ProcessEnv = process.env): KubeAuth {
  try {
    return resolveKubeconfig(flags, env, 'kubectl').auth;
  } catch (e) {
    if (e instanceof KubeconfigError) throw new UsageError(`--from-cluster: ${e.message}`);
    throw e;
  }
}

/** Every NodePool, NodeClaim, RotationPolicy and MaintenancePlan in the cluster, in name order per kind. */
export async function readCluster(kc: KubeAuth): Promise<ClusterObjects> {
  const client = new KubeClient(kc);
  const source = `${SOURCE_PREFIX}context ${kc.getCurrentContext() || 'in-cluster'})`;
  const objects: Record<string, unknown>[] = [];
  const notes: string[] = [];
  for (const l of LISTS) {
    let items: Record<string, unknown>[];
    try {
      items = await listAll(client, l.path);
    } catch (e) {
      if (e instanceof ApiError && e.status === 404 && !l.required) {
        notes.push(`note: ${source}: ${l.resource} is not installed; none read`);
        continue;
      }
      throw new UsageError(listFailure(source, l, e));
    }
    items.sort((a, b) => nameOf(a).localeCompare(nameOf(b)));
    for (const item of items) objects.push(asInput(l.kind, item));
  }
  return { source, objects, notes };
}

async function listAll(client: KubeClient, path: string): Promise<Record<string, unknown>[]> {
  const out: Record<string, unknown>[] = [];
  let cont: string | undefined;
  do {
    const page = await client.request<{ items?: Record<string, unknown>[]; metadata?: { continue?: string } }>(
      'GET',
      path,
      { query: { limit: PAGE, continue: cont } },
    );
    out.push(...(page.items ?? []));
    cont = page.metadata?.continue || undefined;
  } while (cont);
  return out;
}

/** What a failed list means and what to do about it, in one line. */
function listFailure(source: string, l: Listed, e: unknown): string {
  const what = `--from-cluster: cannot list ${l.resource} in ${source}`;
  if (e instanceof ApiError) {
    if (e.status === 401) return `${what}: not authenticated (401); log in again or check the kubeconfig's user`;
    if (e.status === 403)
      return (
        `${what}: forbidden (403: ${e.message}); ` + `this needs get/list on ${l.resource}, or pass the objects with -f`
      );
    if (e.status === 404) return `${what}: the cluster does not serve ${l.path} (is Karpenter v1 installed?)`;
    return `${what}: ${e.status} ${e.message}`;
  }
  return `${what}: ${(e as Error).message} (is the cluster reachable?)`;
}

/** metadata.name, or '' when absent or not a string. */
export function nameOf(o: Record<string, unknown>): string {
  const name = (o.metadata as { name?: unknown } | undefined)?.name;
  return typeof name === 'string' ? name : '';
}

/**
 * The object as an input document: the fields a person would export for these commands. Server bookkeeping
 * (managedFields, resourceVersion, uid) is dropped; so are a plan's Crossplane fields (`spec.crossplane`) and
 * status, which our schema does not describe (Crossplane adds them to every composite).
 */
function asInput(kind: Listed['kind'], item: Record<string, unknown>): Record<string, unknown> {
  const meta = (item.metadata ?? {}) as Record<string, unknown>;
  const metadata: Record<string, unknown> = { name: meta.name };
  for (const key of ['labels', 'annotations', 'creationTimestamp', 'deletionTimestamp', 'ownerReferences'] as const)
    if (meta[key] !== undefined) metadata[key] = meta[key];
  // List items of custom resources carry apiVersion and kind, but not every server fills them in.
  const apiVersion = kind === 'NodePool' || kind === 'NodeClaim' ? 'karpenter.sh/v1' : 'noderotation.io/v1alpha1';
  const out: Record<string, unknown> = { apiVersion, kind, metadata };
  if (kind === 'MaintenancePlan') {
    const { crossplane: _composition, ...spec } = (item.spec ?? {}) as Record<string, unknown>;
    out.spec = spec;
  } else out.spec = item.spec;
  // Karpenter's status (node names, Ready) is read by the engine; a policy's is what the controller last saw.
  if (kind !== 'MaintenancePlan' && item.status !== undefined) out.status = item.status;
  return out;
}
