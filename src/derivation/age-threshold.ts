// A and G (design §3.2): the age at which a node becomes a candidate, and the windows that age still
// guarantees before the node's deadline. "auto" derives A from K so that G = K exactly; an explicit A is
// taken as given and G is what it leaves. Both need a deadline, so expireAfter: Never derives neither.
import { formatDuration as h } from '../util/duration.js';
import { finding, type Finding, type Fix } from './findings.js';
import { count } from '../util/plural.js';

/** The figures A and G depend on, all in seconds except K. */
export interface ChanceTerms {
  /** E: the NodePool template's expireAfter; null for Never. */
  E: number | null;
  K: number;
  P: number;
  tRot: number;
  /** K·P + t_rot */
  leadTime: number;
}

export interface AgeThreshold {
  /** A in seconds; null without a deadline. */
  A: number | null;
  /** G; null without a deadline or when A ≤ 0 under auto. */
  G: number | null;
  findings: Finding[];
}

/**
 * The smallest whole number of hours above the lead time: an expireAfter that leaves A > 0 and is written as
 * expireAfter usually is.
 */
const expireAfterAbove = (leadTime: number): number => (Math.floor(leadTime / 3600) + 1) * 3600;

const EXPIRE_AFTER = 'spec.template.spec.expireAfter';

/** A = E − leadTime. Not positive means E is too short for K windows: fatal, with the three ways out. */
function autoAgeThreshold(E: number, t: ChanceTerms): AgeThreshold {
  const A = E - t.leadTime;
  if (A <= 0) {
    const raise = h(expireAfterAbove(t.leadTime));
    const message =
      `expireAfter ${h(E)} is not longer than the lead time K·P + t_rot = ${t.K}×${h(t.P)} + ${h(t.tRot)} = ` +
      `${h(t.leadTime)}, so no node can be guaranteed ${t.K} windows. ` +
      `Raise the NodePool's expireAfter to ${raise} or more, add window days so that P shrinks, ` +
      'or lower minRotationChances.';
    const fix: Fix = { object: 'NodePool', path: EXPIRE_AFTER, value: raise };
    return { A, G: null, findings: [finding('NonPositiveAgeThreshold', 'spec.ageThreshold', message, fix)] };
  }
  return { A, G: t.K, findings: [] };
}

/**
 * The fix offered for an override that weakens the guarantee: the largest A that keeps K, when one exists;
 * else, for a positive A, the expireAfter that keeps K with it (E ≥ A + K·P + t_rot, in whole hours).
 */
function overrideFix(A: number, E: number, t: ChanceTerms): { text: string; fix?: Fix } {
  const maxForK = E - t.leadTime;
  if (maxForK > 0) {
    const value = h(maxForK);
    return {
      text: `Lower ageThreshold to ${value} or less (that keeps ${t.K}), or use auto.`,
      fix: { object: 'RotationPolicy', path: 'spec.ageThreshold', value },
    };
  }
  if (A <= 0) return { text: 'Use auto with a longer expireAfter, or add window days.' };
  const value = h(Math.ceil((A + t.leadTime) / 3600) * 3600);
  return {
    text: `Raise the NodePool's expireAfter to ${value} or more (that keeps ${t.K}), or add window days.`,
    fix: { object: 'NodePool', path: EXPIRE_AFTER, value },
  };
}

/** An explicit A: G = floor((E − A − t_rot) / P), fatal below 1 (floored at 0), a warning below K. */
function explicitAgeThreshold(A: number, E: number, t: ChanceTerms): AgeThreshold {
  if (A <= 0) {
    const { text, fix } = overrideFix(A, E, t);
    const message = `ageThreshold ${h(A)} is not positive. ${text}`;
    return { A, G: null, findings: [finding('NonPositiveAgeThreshold', 'spec.ageThreshold', message, fix)] };
  }
  const G = Math.floor((E - A - t.tRot) / t.P);
  if (G < 1) {
    const { text, fix } = overrideFix(A, E, t);
    const message =
      `ageThreshold ${h(A)} leaves ${Math.max(G, 0)} guaranteed windows before expireAfter ${h(E)} ` +
      `(G = floor((E − A − t_rot) / P)), so nodes would be force-expired. ${text}`;
    return { A, G: Math.max(G, 0), findings: [finding('OverrideRejected', 'spec.ageThreshold', message, fix)] };
  }
  if (G < t.K) {
    const { text, fix } = overrideFix(A, E, t);
    const message =
      `ageThreshold ${h(A)} guarantees ${count(G, 'window')} before expireAfter, ` +
      `fewer than minRotationChances ${t.K}. ${text}`;
    return { A, G, findings: [finding('WeakenedChances', 'spec.ageThreshold', message, fix)] };
  }
  return { A, G, findings: [] };
}

/** 0 < A < P: nodes qualify almost as soon as they exist, so the pool rotates nearly continuously. */
function aggressiveFindings(A: number | null, P: number): Finding[] {
  if (A === null || !(A > 0 && A < P)) return [];
  const message =
    `the age threshold ${h(A)} is shorter than the window period P = ${h(P)}: nodes become candidates soon ` +
    'after they are created, so the NodePool rotates almost continuously. Raise expireAfter or add window days.';
  return [finding('AggressiveAgeThreshold', 'spec.ageThreshold', message)];
}

/** A and G for the pool, with the layer-1 findings about them; override is null for "auto". */
export function ageThreshold(override: number | null, t: ChanceTerms): AgeThreshold {
  // No deadline: nothing can be late, so there is no threshold to derive and nothing to check.
  if (t.E === null) return { A: null, G: null, findings: [] };
  const derived = override === null ? autoAgeThreshold(t.E, t) : explicitAgeThreshold(override, t.E, t);
  return { ...derived, findings: [...derived.findings, ...aggressiveFindings(derived.A, t.P)] };
}
