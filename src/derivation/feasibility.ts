// Layer 1 of design §3.2, the checks that need no derived figure: the policy's own settings and the NodePool
// template. Each function decides one thing and returns its findings (empty when all is well), so derive()
// reads as the list of checks in the order they are reported.
import type { NodePool } from '../karpenter/types.js';
import { ZONE_KEY } from '../policy/defaults.js';
import { isValidTimezone } from '../schedule/zone.js';
import { misleadingTimezone, suggestedZone } from '../schedule/zone-advice.js';
import type { WindowFigures } from '../schedule/windows.js';
import { formatDuration as h } from '../util/duration.js';
import { finding, type Finding } from './findings.js';
import type { PolicyParams } from './params.js';
import { effectiveGracePeriod, HARD_CAP_SECONDS, UNSET_TGP_FALLBACK_SECONDS, type PoolTerms } from './terms.js';

/** Zones the IANA database does not know: without them no occurrence, hence no figure, can be computed. */
export function invalidTimezoneFinding(p: PolicyParams): Finding | null {
  const badZones = [...new Set(p.windows.map((x) => x.timezone).filter((z) => !isValidTimezone(z)))].sort();
  if (badZones.length === 0) return null;
  const message =
    `unknown time zone ${badZones.map((z) => `"${z}"`).join(', ')}; ` +
    'use an IANA name such as Asia/Tokyo, Europe/Berlin or UTC.';
  return finding('InvalidTimezone', 'spec.maintenanceWindows', message);
}

/**
 * Windows whose zone is valid but misleading (misleadingTimezone), one finding each, at the zone's own path (the
 * message names it too, for the text output); the fix is the zone with the same clock, when there is one.
 */
export function misleadingTimezoneFindings(p: PolicyParams): Finding[] {
  return p.windows.flatMap((w, i) => {
    const why = misleadingTimezone(w.timezone);
    if (why === null) return [];
    const use = suggestedZone(w.timezone);
    const path = `spec.maintenanceWindows[${i}].timezone`;
    const fix = use === null ? undefined : ({ object: 'RotationPolicy', path, value: use } as const);
    return [finding('MisleadingTimezone', path, `${path}: ${why}`, fix)];
  });
}

/** K must be a whole number of windows; K < 1 leaves nothing to derive. */
export function isValidChances(K: number): boolean {
  return K >= 1 && Number.isInteger(K);
}

/** K < 1 is fatal; K = 1 works but leaves no retry when the one window fails. */
export function chancesFindings(K: number): Finding[] {
  if (!isValidChances(K)) {
    const message =
      `minRotationChances is ${K}; it is the number of windows every node is guaranteed ` +
      'and must be an integer of at least 1 (2 recommended).';
    return [finding('InvalidMinRotationChances', 'spec.minRotationChances', message)];
  }
  if (K === 1) {
    const message =
      'minRotationChances is 1: a node whose one window fails is force-expired by Karpenter with no retry. ' +
      'Set minRotationChances to 2 or more.';
    const fix = { object: 'RotationPolicy', path: 'spec.minRotationChances', value: 2 } as const;
    return [finding('SingleRotationChance', 'spec.minRotationChances', message, fix)];
  }
  return [];
}

/** A union with no occurrence (P = 0) can never start a rotation. */
export function noWindowsFindings(w: WindowFigures): Finding[] {
  if (!w.empty) return [];
  const message =
    'the maintenance windows never open, so no node could ever be rotated. ' +
    'Add at least one window with days, start and end.';
  return [finding('NoWindows', 'spec.maintenanceWindows', message)];
}

/** The NodePool template: an unbounded drain, and EKS Auto Mode's 21-day cap on E + tGP. */
export function templateFindings(pool: NodePool, terms: PoolTerms): Finding[] {
  const out: Finding[] = [];
  const name = pool.metadata.name;
  const tgp = terms.terminationGracePeriod;
  if (tgp === null) {
    const assumed = h(UNSET_TGP_FALLBACK_SECONDS);
    const message =
      'the NodePool sets no terminationGracePeriod, so a drain blocked by a PodDisruptionBudget can last ' +
      `forever; t_rot assumes ${assumed}. Set spec.template.spec.terminationGracePeriod on the NodePool, ` +
      `e.g. to ${assumed}.`;
    const path = 'spec.template.spec.terminationGracePeriod';
    const fix = { object: 'NodePool', path, value: assumed } as const;
    out.push(finding('UnboundedDrain', `NodePool ${name} ${path}`, message, fix));
  }
  const E = terms.expireAfter;
  const tgpEff = effectiveGracePeriod(tgp);
  if (E !== null && E + tgpEff > HARD_CAP_SECONDS) {
    const message =
      `expireAfter ${h(E)} + terminationGracePeriod ${h(tgpEff)} = ${h(E + tgpEff)} exceeds EKS Auto Mode's ` +
      `21-day node lifetime. Lower expireAfter to ${h(HARD_CAP_SECONDS - tgpEff)} or less.`;
    const path = 'spec.template.spec.expireAfter';
    const fix = { object: 'NodePool', path, value: h(HARD_CAP_SECONDS - tgpEff) } as const;
    out.push(finding('HardCapExceeded', `NodePool ${name} ${path}`, message, fix));
  }
  return out;
}

/** Surge settings that defeat themselves: retries faster than one attempt, a surge free to change zone. */
export function surgeSettingFindings(p: PolicyParams): Finding[] {
  const out: Finding[] = [];
  if (p.retryBackoff < p.readyTimeout) {
    const message =
      `retryBackoff ${h(p.retryBackoff)} is shorter than readyTimeout ${h(p.readyTimeout)}: a failed node is ` +
      `retried before one attempt could even finish. Set retryBackoff to ${h(p.readyTimeout)} or more.`;
    const fix = { object: 'RotationPolicy', path: 'spec.surge.retryBackoff', value: h(p.readyTimeout) } as const;
    out.push(finding('RetryFasterThanAttempt', 'spec.surge.retryBackoff', message, fix));
  }
  if (p.requiredKeysExplicit && !p.requiredKeys.includes(ZONE_KEY)) {
    const message =
      `${ZONE_KEY} is not required, so the surge node may land in another zone and Pods bound to zonal ` +
      `volumes stay Pending. Add ${ZONE_KEY} to surge.matchNodeRequirements.required.`;
    out.push(finding('ZoneRequirementRemoved', 'spec.surge.matchNodeRequirements.required', message));
  }
  return out;
}
