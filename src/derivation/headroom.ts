// Layer 1 of design §3.2, "spec.limits no headroom": a surge needs room for one more node in the NodePool's
// limits, or the placeholder can never be served and every attempt rolls back at readyTimeout.
import type { NodeClaim, NodePool } from '../karpenter/types.js';
import { parseQuantity } from '../util/quantity.js';
import { finding, type Finding } from './findings.js';

/** How much of a limited resource the pool uses now: `nodes` counts nodes, everything else its status. */
function inUse(pool: NodePool, key: string, claims: readonly NodeClaim[]): number {
  const used = pool.status?.resources ?? {};
  if (key !== 'nodes') return parseQuantity(used[key] ?? 0);
  return pool.status?.nodes ?? (used.nodes !== undefined ? parseQuantity(used.nodes) : claims.length);
}

/** One node's worth of a resource: the largest of the pool's claims (0 when none is known). */
function nodeSize(key: string, claims: readonly NodeClaim[]): number {
  if (key === 'nodes') return 1;
  return Math.max(
    0,
    ...claims.map((c) => parseQuantity(c.status?.capacity?.[key] ?? c.status?.allocatable?.[key] ?? 0)),
  );
}

/** spec.limits must leave room for one more node, or the surge node can never be created. */
export function headroomFindings(pool: NodePool, claims: readonly NodeClaim[]): Finding[] {
  const limits = pool.spec.limits ?? {};
  const used = pool.status?.resources ?? {};
  const short: string[] = [];
  for (const key of Object.keys(limits).sort()) {
    const limit = parseQuantity(limits[key] as string | number);
    const current = inUse(pool, key, claims);
    const room = limit - current;
    if (room <= 0 || room < nodeSize(key, claims)) {
      short.push(`${key} (limit ${limits[key]}, in use ${used[key] ?? current})`);
    }
  }
  if (short.length === 0) return [];
  const message =
    `spec.limits leave no room for one more node in ${short.join(', ')}, so the surge node can never be ` +
    "created and every rotation rolls back. Raise the NodePool's limits by at least one node.";
  return [finding('NoSurgeHeadroom', `NodePool ${pool.metadata.name} spec.limits`, message)];
}
