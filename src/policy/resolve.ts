// Which RotationPolicy governs a NodePool (design §1.4, §5.4). Exact `nodePools` names beat any selector;
// otherwise the selector with the most constraints wins. A tie at the top is an error: that NodePool is not
// rotated, and the conflict is reported rather than broken arbitrarily.
import type { RotationPolicy } from '../generated/api-types.js';
import type { NodePool } from '../karpenter/types.js';
import { matches, specificity } from './selector.js';

/** Exact names outrank every selector (a selector has at most a few dozen constraints). */
const EXACT_NAME = Number.MAX_SAFE_INTEGER;

export type Governance =
  | { kind: 'governed'; policy: RotationPolicy; specificity: number }
  | { kind: 'conflict'; policies: string[]; specificity: number }
  | { kind: 'ungoverned' };

export function policyScore(policy: RotationPolicy, pool: NodePool): number | null {
  const spec = policy.spec;
  if (spec.nodePools) return spec.nodePools.includes(pool.metadata.name) ? EXACT_NAME : null;
  return matches(spec.nodePoolSelector, pool.metadata.labels) ? specificity(spec.nodePoolSelector) : null;
}

export function governingPolicy(pool: NodePool, policies: readonly RotationPolicy[]): Governance {
  let best = -1;
  let winners: RotationPolicy[] = [];
  for (const policy of policies) {
    const score = policyScore(policy, pool);
    if (score === null) continue;
    if (score > best) {
      best = score;
      winners = [policy];
    } else if (score === best) {
      winners.push(policy);
    }
  }
  if (winners.length === 0) return { kind: 'ungoverned' };
  if (winners.length === 1) return { kind: 'governed', policy: winners[0] as RotationPolicy, specificity: best };
  return { kind: 'conflict', policies: winners.map((p) => p.metadata.name).sort(), specificity: best };
}
