// Layer 3 (design §3.2): the template-level checks do not prove that every existing NodeClaim can be
// served. Each claim carries its own spec.expireAfter and terminationGracePeriod; a claim whose own lifetime
// is not longer than K·P + t_rot can no longer be guaranteed K windows. It is still rotated, as early as it can.
import type { NodeClaim } from '../karpenter/types.js';
import { formatDuration as h, parseDuration, parseExpireAfter } from '../util/duration.js';
import { rotationBound } from './terms.js';
import { finding, type Finding } from './findings.js';

export interface ShortLeadInput {
  claims: readonly NodeClaim[];
  minRotationChances: number;
  periodSeconds: number;
  readyTimeout: number;
}

/** The claims (not being deleted) whose own expireAfter ≤ K·P + t_rot, sorted by name. */
export function shortLeadClaims(input: ShortLeadInput): { claim: NodeClaim; expireAfter: number; leadTime: number }[] {
  const out: { claim: NodeClaim; expireAfter: number; leadTime: number }[] = [];
  for (const claim of input.claims) {
    if (claim.metadata.deletionTimestamp) continue; // already leaving: the abort path applies, not selection
    const E = parseExpireAfter(claim.spec.expireAfter ?? 'Never');
    if (E === null) continue;
    const tgp =
      claim.spec.terminationGracePeriod === undefined ? null : parseDuration(claim.spec.terminationGracePeriod);
    const leadTime = input.minRotationChances * input.periodSeconds + rotationBound(input.readyTimeout, tgp);
    if (E <= leadTime) out.push({ claim, expireAfter: E, leadTime });
  }
  return out.sort((a, b) => a.claim.metadata.name.localeCompare(b.claim.metadata.name));
}

export function shortLeadFindings(input: ShortLeadInput): Finding[] {
  return shortLeadClaims(input).map(({ claim, expireAfter, leadTime }) => {
    const name = claim.metadata.name;
    const message =
      `NodeClaim ${name} has expireAfter ${h(expireAfter)}, not longer than its lead time ${h(leadTime)}: ` +
      `it cannot be guaranteed ${input.minRotationChances} windows and is rotated at the earliest opportunity. ` +
      "Replace it or lengthen the NodePool's expireAfter.";
    return finding('ShortLead', `NodeClaim ${name} spec.expireAfter`, message);
  });
}
