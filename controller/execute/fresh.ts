// State read for one destructive write (issue 17, S2): before a NodeClaim delete, everything the judgement of
// src/engine/justify.ts reads is read again from the API — not from the watch caches — and the delete is then
// preconditioned on the UID and resourceVersion of exactly the claim that was judged.
import { surgeForLabelValue } from '../../src/engine/identity.js';
import type { DeleteTarget, Snapshot } from '../../src/engine/types.js';
import type { RotationPolicy } from '../../src/generated/api-types.js';
import { NODEPOOL_LABEL, type NodeClaim, type NodePool } from '../../src/karpenter/types.js';
import type { Node, Pod } from '../../src/kube/types.js';
import { A } from '../../src/engine/annotations.js';
import { isNotFound, typedItems, type Json, type KubeApi, type Query } from '../../runtime/kube/client.js';
import { poolSnapshot } from '../state/snapshot.js';
import { NODE, NODECLAIM, NODEPOOL, pick, POD, ROTATIONPOLICY, type Shape } from '../../runtime/kube/shape.js';

const PAGE = 500;
/** A node runs at most a few hundred Pods; more than this and the read is not trusted (the write is refused). */
export const MAX_PODS_PER_NODE = 2000;

export class IncompleteRead extends Error {}

/** Every item of a collection, page by page (`limit`/`continue`), at most `max` items. */
export async function listAll(
  client: Pick<KubeApi, 'request'>,
  path: string,
  query: Query,
  max: number,
  signal?: AbortSignal,
): Promise<Json[]> {
  const out: Json[] = [];
  let cont: string | undefined;
  do {
    const page = await client.request<{
      apiVersion?: string;
      kind?: string;
      items: Json[];
      metadata?: { continue?: string };
    }>('GET', path, { query: { ...query, limit: PAGE, continue: cont }, signal });
    // A list's items carry no apiVersion and kind (the list does): filled in, so an item reads as the object it
    // is (a RotationPolicy without them fails its own schema, and would read as invalid).
    out.push(...typedItems(page));
    if (out.length > max) throw new IncompleteRead(`${path}: more than ${max} items; not trusted for a decision`);
    cont = page.metadata?.continue || undefined;
  } while (cont);
  return out;
}

async function getOrNull<T>(client: Pick<KubeApi, 'request'>, path: string, shape: Shape): Promise<T | null> {
  try {
    return pick(await client.request('GET', path), shape) as T;
  } catch (e) {
    if (isNotFound(e)) return null;
    throw e;
  }
}

export interface FreshDeps {
  client: Pick<KubeApi, 'request'>;
  namespace: string;
  /** The controller's defaults for the policies (placeholder image, PriorityClass), as for every decision. */
  withDefaults: (p: RotationPolicy) => RotationPolicy;
}

/** The Pods of a node, every page, bounded. */
export async function podsOfNode(client: Pick<KubeApi, 'request'>, node: string, signal?: AbortSignal) {
  const items = await listAll(
    client,
    '/api/v1/pods',
    { fieldSelector: `spec.nodeName=${node}` },
    MAX_PODS_PER_NODE,
    signal,
  );
  return items.map((i) => pick(i, POD) as Pod);
}

/**
 * The snapshot the judgement of one NodeClaim delete reads, all of it from the API now: the NodePool, every
 * RotationPolicy, the pool's NodeClaims, the nodes of the claims concerned and of the placeholder's host, the
 * placeholders of the rotation, and every Pod of the nodes whose Pods the judgement reads (`podsOfNodes`).
 */
export async function freshSnapshot(d: FreshDeps, pool: string, target: DeleteTarget): Promise<Snapshot | null> {
  const { client } = d;
  const nodePool = await getOrNull<NodePool>(client, `/apis/karpenter.sh/v1/nodepools/${pool}`, NODEPOOL);
  if (!nodePool) return null;
  const policies = (await listAll(client, '/apis/noderotation.io/v1alpha1/rotationpolicies', {}, 10_000)).map((p) =>
    d.withDefaults(pick(p, ROTATIONPOLICY) as RotationPolicy),
  );
  const claims = new Map<string, NodeClaim>();
  for (const c of await listAll(
    client,
    '/apis/karpenter.sh/v1/nodeclaims',
    { labelSelector: `${NODEPOOL_LABEL}=${pool}` },
    100_000,
  ))
    claims.set((c as { metadata: { name: string } }).metadata.name, pick(c, NODECLAIM) as NodeClaim);
  const rotation = target.role === 'candidate' ? target.claim : target.of;
  for (const name of new Set([target.claim, rotation])) {
    if (claims.has(name)) continue;
    const c = await getOrNull<NodeClaim>(client, `/apis/karpenter.sh/v1/nodeclaims/${name}`, NODECLAIM);
    if (c) claims.set(name, c);
  }
  const placeholders = (
    await listAll(
      client,
      `/api/v1/namespaces/${d.namespace}/pods`,
      { labelSelector: `${A.surgeFor}=${surgeForLabelValue(rotation)}` },
      100,
    )
  ).map((p) => pick(p, POD) as Pod);
  const nodeNames = new Set<string>();
  for (const name of [target.claim, rotation]) {
    const n = claims.get(name)?.status?.nodeName;
    if (n) nodeNames.add(n);
  }
  for (const p of placeholders) if (p.spec.nodeName) nodeNames.add(p.spec.nodeName);
  const nodes: Node[] = [];
  for (const n of [...nodeNames].sort()) {
    const node = await getOrNull<Node>(client, `/api/v1/nodes/${n}`, NODE);
    if (node) nodes.push(node);
  }
  // The Pods the judgement reads: the node of the claim to be deleted (do-not-disrupt, the reap guard).
  const targetNode = claims.get(target.claim)?.status?.nodeName;
  const podsOfNodes = targetNode ? [targetNode] : [];
  const pods = targetNode ? await podsOfNode(client, targetNode) : [];
  return poolSnapshot(
    { policies, nodePools: [nodePool], nodeClaims: [...claims.values()], nodes, placeholders, namespace: d.namespace },
    pods,
    podsOfNodes,
  );
}
