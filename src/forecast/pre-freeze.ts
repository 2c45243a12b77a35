// What rotation ahead of a freeze cannot fit (issue 22 item 3), named ahead of time: under
// spec.preFreezeRotation a claim whose forced deadline falls inside a scheduled freeze is due by the freeze's
// start (the engine's dueBy), and the forecast plans it like any other claim. Those the forecast cannot start in
// their turn early enough to finish before the freeze begins are at risk: Karpenter will force them during the
// freeze. One warning per freeze, naming them and the windows it would take.
import { finding, type Finding } from '../derivation/findings.js';
import { policyParams, type PolicyParams } from '../derivation/params.js';
import type { RotationPolicy } from '../generated/api-types.js';
import { rfc3339 } from '../engine/annotations.js';
import { scheduledFreezeAt } from '../engine/freezes.js';
import { formatDuration as h } from '../util/duration.js';
import type { ClaimForecast } from './forecast.js';

/** How many claims a message names before it says "and N more". */
const NAMED = 5;

export interface PreFreezeTerms {
  params: PolicyParams;
  /** P (seconds), as the engine reads it. */
  periodSeconds: number;
  /** C, the derivation's rotations per occurrence; null when unknown (one per window is assumed). */
  capacityPerOccurrence: number | null;
}

/**
 * PreFreezeOverflow: per scheduled freeze, the claims due by its start that the forecast cannot rotate before
 * it, with the number of windows more they would take (⌈k / C⌉) and what gives them: an earlier candidacy by that
 * many periods (minRotationChances under auto, ageThreshold when explicit), more windows before the freeze (when
 * the age threshold is explicit; under auto they shorten P and add no chance), or more starts per window.
 */
export function preFreezeFindings(list: readonly ClaimForecast[], t: PreFreezeTerms): Finding[] {
  const p = t.params;
  if (!p.preFreezeRotation) return [];
  const byFreeze = new Map<number, ClaimForecast[]>();
  for (const f of list) {
    if (f.deadline === null || f.dueBy === null || f.dueBy >= f.deadline || !f.atRisk) continue;
    const group = byFreeze.get(f.dueBy);
    if (group) group.push(f);
    else byFreeze.set(f.dueBy, [f]);
  }
  return [...byFreeze.entries()]
    .sort(([a], [b]) => a - b)
    .map(([start, late]) => {
      const span = scheduledFreezeAt(p, start);
      const end = span ? rfc3339(span.end) : 'its end';
      const due = list.filter((f) => f.dueBy === start && f.deadline !== null && f.deadline > start).length;
      const windows = Math.ceil(late.length / Math.max(1, t.capacityPerOccurrence ?? 1));
      const names = late.slice(0, NAMED).map((f) => f.nodeClaim);
      const more = late.length > NAMED ? ` and ${late.length - NAMED} more` : '';
      // Under auto the lead is K·P: more windows shorten P and add no chance, so the cure is more of them (K) or
      // more starts in each; with an explicit ageThreshold a window added before the freeze is a chance.
      const cure =
        p.ageThresholdOverride === null
          ? `raise minRotationChances to ${p.minRotationChances + windows}, lengthen the windows`
          : `add or lengthen windows before it${
              p.ageThresholdOverride - windows * t.periodSeconds > 0
                ? `, lower ageThreshold to ${h(p.ageThresholdOverride - windows * t.periodSeconds)}`
                : ''
            }`;
      return finding(
        'PreFreezeOverflow',
        'spec.preFreezeRotation',
        `${late.length} of the ${due} NodeClaims whose deadlines fall inside the freeze from ${rfc3339(start)} to ` +
          `${end} cannot be rotated before it begins, so Karpenter will force them during it: ` +
          `${names.join(', ')}${more}. They need ${windows} more maintenance window${windows === 1 ? '' : 's'} ` +
          `before ${rfc3339(start)}: ${cure}, or shorten spec.surge.cooldownAfter.`,
      );
    });
}

/** preFreezeFindings for a NodePool's forecast under its policy, from the figures the derivation gave it. */
export function poolPreFreezeFindings(
  policy: RotationPolicy,
  figures: { windowPeriodSeconds: number | null; capacityPerOccurrence: number | null },
  list: readonly ClaimForecast[] | null,
): Finding[] {
  if (!list || figures.windowPeriodSeconds === null || !policy.spec.preFreezeRotation?.enabled) return [];
  return preFreezeFindings(list, {
    params: policyParams(policy.spec),
    periodSeconds: figures.windowPeriodSeconds,
    capacityPerOccurrence: figures.capacityPerOccurrence,
  });
}
