// Operator protection (issue 17, S2): what tells noderotation to keep its hands off a node, read the way
// Karpenter reads it. A claim under protection is never selected, never deleted, and a rotation it is part of
// is rolled back rather than escalated.
//  - `karpenter.sh/do-not-disrupt: "true"` on the Node (unless it carries our own ownership marker), or on the
//    NodeClaim (we never write it there);
//  - the same annotation on a Pod on the Node: "true", or a Go duration that has not yet elapsed since the
//    Pod started (Karpenter's form); any other value but "false"/"" is read as protection (fail closed);
//  - the NodePool's `spec.disruption.budgets` (decision, docs/safety.md): a budget applies to a rotation when
//    it names no reasons or names `Drifted` (a planned replacement, like drift); it is active always, or for
//    `duration` after each firing of its UTC cron `schedule`; it allows `nodes` (a count, or a percentage of
//    the pool's NodeClaims rounded up) minus the pool's claims already being deleted. A budget this code cannot
//    read blocks.
import type { NodeClaim, NodePool } from '../karpenter/types.js';
import type { Node, Pod } from '../kube/types.js';
import { activeAt, parseCron } from '../schedule/cron.js';
import { boundedCache } from '../util/bounded-cache.js';
import { parseDuration } from '../util/duration.js';
import { A, parseTime } from './annotations.js';
import { isPlaceholder } from './identity.js';
import type { PoolContext } from './context.js';

/** Why the Node or NodeClaim itself is protected by the operator, or null. */
export function objectProtection(claim: NodeClaim, node: Node | undefined): string | null {
  if (claim.metadata.annotations?.[A.doNotDisrupt] === 'true')
    return `the operator set ${A.doNotDisrupt} on NodeClaim ${claim.metadata.name}`;
  const ann = node?.metadata.annotations ?? {};
  if (ann[A.doNotDisrupt] === 'true' && ann[A.doNotDisruptOwned] !== 'true')
    return `the operator set ${A.doNotDisrupt} on Node ${node?.metadata.name ?? ''}`;
  return null;
}

const durations = boundedCache<string, number | null>(1024);
const seconds = (v: string): number | null =>
  durations.get(v, (t) => {
    try {
      return parseDuration(t);
    } catch {
      return null;
    }
  });

/** Why a Pod on the node protects it (do-not-disrupt), or null. Our placeholders and finished Pods never do. */
export function podProtection(pods: readonly Pod[], now: number): string | null {
  for (const p of pods) {
    if (isPlaceholder(p) || p.status?.phase === 'Succeeded' || p.status?.phase === 'Failed') continue;
    const v = p.metadata.annotations?.[A.doNotDisrupt];
    if (v === undefined || v === '' || v === 'false') continue;
    const who = `Pod ${p.metadata.namespace ?? ''}/${p.metadata.name}`;
    if (v === 'true') return `${who} has ${A.doNotDisrupt}: "true"`;
    const d = seconds(v);
    const started = parseTime(p.status?.startTime);
    if (d === null)
      return `${who} has ${A.doNotDisrupt}: ${JSON.stringify(v.slice(0, 40))} (unreadable: read as protection)`;
    if (started === null || now < started + d * 1000) return `${who} has ${A.doNotDisrupt}: ${v} (not yet elapsed)`;
  }
  return null;
}

interface Budget {
  nodes?: string | number;
  schedule?: string;
  duration?: string;
  reasons?: string[];
}

const DEFAULT_BUDGETS: Budget[] = [{ nodes: '10%' }];

/**
 * Why the NodePool's disruption budgets forbid disrupting one more of its nodes now, or null. `claims` are the
 * pool's NodeClaims; `except` is the claim being judged (not counted as already disrupting).
 */
export function budgetBlocks(
  pool: NodePool,
  claims: readonly NodeClaim[],
  now: number,
  except?: string,
): string | null {
  const disruption = (pool.spec.disruption ?? {}) as { budgets?: unknown };
  const budgets = Array.isArray(disruption.budgets) ? (disruption.budgets as Budget[]) : DEFAULT_BUDGETS;
  const total = claims.length;
  const deleting = claims.filter((c) => c.metadata.deletionTimestamp && c.metadata.name !== except).length;
  for (const [i, b] of budgets.entries()) {
    const where = `NodePool ${pool.metadata.name} spec.disruption.budgets[${i}]`;
    if (b.reasons && b.reasons.length > 0 && !b.reasons.includes('Drifted')) continue;
    if (b.schedule !== undefined || b.duration !== undefined) {
      const cron = b.schedule === undefined ? null : parseCron(b.schedule);
      const d = b.duration === undefined ? null : seconds(b.duration);
      if (cron === null || d === null) return `${where} has a schedule or duration this controller cannot read`;
      if (!activeAt(cron, d * 1000, now)) continue;
    }
    const allowed = allowedBy(b.nodes ?? '10%', total);
    if (allowed === null) return `${where}.nodes ${JSON.stringify(b.nodes)} is neither a count nor a percentage`;
    if (deleting + 1 > allowed)
      return `${where} allows ${allowed} disrupted node(s) now and ${deleting} already being deleted`;
  }
  return null;
}

function allowedBy(nodes: string | number, total: number): number | null {
  const text = String(nodes).trim();
  if (/^\d+$/.test(text)) return Number(text);
  const pct = /^(\d+)%$/.exec(text);
  return pct ? Math.ceil((Number(pct[1]) * total) / 100) : null;
}

/** Operator protection on the claim, its Node, the Pods on it, and the NodePool's disruption budgets. */
export function protection(c: PoolContext, claim: NodeClaim): string | null {
  const node = c.idx.nodeOfClaim(claim);
  return (
    objectProtection(claim, node) ??
    (node ? podProtection(c.idx.podsOn(node.metadata.name), c.now) : null) ??
    budgetBlocks(c.pool, c.idx.claimsOf(c.pool.metadata.name), c.now, claim.metadata.name)
  );
}
