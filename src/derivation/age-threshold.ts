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
  /** The NodePool's name: auto's findings are about its expireAfter. */
  nodePool: string;
  /**
   * The largest expireAfter EKS Auto Mode's 21-day node lifetime allows with the pool's grace period
   * (HardCapExceeded above it): a fix that raises expireAfter beyond it would only trade one finding for another.
   */
  maxE: number;
}

export interface AgeThreshold {
  /** A in seconds; null without a deadline. */
  A: number | null;
  /** G; null without a deadline or when A ≤ 0 under auto. */
  G: number | null;
  findings: Finding[];
}

const HOUR = 3600;
/** The smallest whole number of hours at or above `s`: an expireAfter as it is usually written. */
const wholeHoursAbove = (s: number): number => Math.ceil(s / HOUR) * HOUR;

const EXPIRE_AFTER = 'spec.template.spec.expireAfter';
const raiseExpireAfter = (value: number): Fix => ({ object: 'NodePool', path: EXPIRE_AFTER, value: h(value) });

/**
 * Under auto, the expireAfter that clears both age checks: A = E − leadTime ≥ P, so neither NonPositiveAgeThreshold
 * nor AggressiveAgeThreshold (E ≥ (K+1)·P + t_rot, in whole hours). Null when that is beyond the 21-day lifetime:
 * no expireAfter is a way out, and the message says what is (shorterPeriod).
 */
function enoughExpireAfter(t: ChanceTerms): number | null {
  const E = wholeHoursAbove(t.leadTime + t.P);
  return E <= t.maxE ? E : null;
}

/** Fewer chances, at least 2 (one leaves no retry), with the expireAfter that then clears both age checks. */
function fewerChances(t: ChanceTerms): string {
  for (let K = t.K - 1; K >= 2; K--) {
    const E = wholeHoursAbove((K + 1) * t.P + t.tRot);
    if (E <= t.maxE) return `, or lower minRotationChances to ${K} with expireAfter ${h(E)} or more`;
  }
  return '';
}

/**
 * The real way out when no expireAfter within the lifetime is: window days that bring P down to what the
 * pool's expireAfter (at most the lifetime's) leaves room for, (K+1)·P + t_rot ≤ E; or fewer chances.
 */
function shorterPeriod(E: number, t: ChanceTerms): string {
  const base = Math.min(E, t.maxE);
  const P = Math.floor((base - t.tRot) / (t.K + 1) / 60) * 60;
  const days =
    P > 0
      ? `add window days so that no window opens more than ${h(P)} after the one before (P ≤ ${h(P)} with ` +
        `expireAfter ${h(base)})`
      : 'add window days so that P shrinks';
  return (
    `No expireAfter within EKS Auto Mode's 21-day node lifetime (at most ${h(t.maxE)} for this NodePool) is a ` +
    `way out: A ≥ P needs ${h(wholeHoursAbove(t.leadTime + t.P))}. Instead, ${days}${fewerChances(t)}.`
  );
}

/**
 * Under auto, when no expireAfter within the lifetime keeps A ≥ P: what to do instead, for HardCapExceeded, whose
 * fix (expireAfter lowered to the cap) would otherwise lead into AggressiveAgeThreshold or worse. Null otherwise.
 */
export function lifetimeAtCap(auto: boolean, t: ChanceTerms): string | null {
  return auto && t.E !== null && enoughExpireAfter(t) === null ? shorterPeriod(t.maxE, t) : null;
}

/** A = E − leadTime. Not positive means E is too short for K windows: fatal, with the ways out. */
function autoAgeThreshold(E: number, t: ChanceTerms): AgeThreshold {
  const A = E - t.leadTime;
  if (A <= 0) {
    const enough = enoughExpireAfter(t);
    const way =
      enough !== null
        ? `Raise the NodePool's expireAfter to ${h(enough)} or more (that leaves A ≥ P = ${h(t.P)}, so the ` +
          'NodePool does not rotate almost continuously either), add window days so that P shrinks, or lower ' +
          'minRotationChances.'
        : shorterPeriod(E, t);
    const message =
      `expireAfter ${h(E)} is not longer than the lead time K·P + t_rot = ${t.K}×${h(t.P)} + ${h(t.tRot)} = ` +
      `${h(t.leadTime)}, so no node can be guaranteed ${t.K} windows. ${way}`;
    const field = `NodePool ${t.nodePool} ${EXPIRE_AFTER}`;
    const fix = enough !== null ? raiseExpireAfter(enough) : undefined;
    return { A, G: null, findings: [finding('NonPositiveAgeThreshold', field, message, fix)] };
  }
  return { A, G: t.K, findings: [] };
}

/**
 * The fix offered for an override that weakens the guarantee: the largest A that keeps K, when one exists;
 * else, for a positive A, the expireAfter that keeps K with it (E ≥ A + K·P + t_rot, in whole hours), when that
 * is within the 21-day lifetime.
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
  const value = wholeHoursAbove(A + t.leadTime);
  if (value > t.maxE)
    return {
      text:
        `Keeping ${t.K} with it needs expireAfter ${h(value)}, beyond EKS Auto Mode's 21-day node lifetime ` +
        `(at most ${h(t.maxE)} here): lower ageThreshold, or add window days.`,
    };
  return {
    text: `Raise the NodePool's expireAfter to ${h(value)} or more (that keeps ${t.K}), or add window days.`,
    fix: raiseExpireAfter(value),
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

/**
 * 0 < A < P: nodes qualify almost as soon as they exist, so the pool rotates nearly continuously. The fix, when
 * one value is enough: under auto the expireAfter that makes A ≥ P (within the lifetime); for an explicit A,
 * ageThreshold P itself when that still keeps K windows (E − P − t_rot ≥ K·P).
 */
function aggressiveFindings(A: number | null, E: number, t: ChanceTerms, auto: boolean): Finding[] {
  if (A === null || !(A > 0 && A < t.P)) return [];
  const head =
    `the age threshold ${h(A)} is shorter than the window period P = ${h(t.P)}: nodes become candidates soon ` +
    'after they are created, so the NodePool rotates almost continuously.';
  if (auto) {
    const enough = enoughExpireAfter(t);
    const field = `NodePool ${t.nodePool} ${EXPIRE_AFTER}`;
    if (enough === null) return [finding('AggressiveAgeThreshold', field, `${head} ${shorterPeriod(E, t)}`)];
    const message = `${head} Raise the NodePool's expireAfter to ${h(enough)} or more (A ≥ P), or add window days.`;
    return [finding('AggressiveAgeThreshold', field, message, raiseExpireAfter(enough))];
  }
  if (E - t.P - t.tRot >= t.K * t.P) {
    const value = h(t.P);
    const message = `${head} Raise ageThreshold to ${value} (that still keeps ${t.K}), or use auto.`;
    const fix: Fix = { object: 'RotationPolicy', path: 'spec.ageThreshold', value };
    return [finding('AggressiveAgeThreshold', 'spec.ageThreshold', message, fix)];
  }
  return [finding('AggressiveAgeThreshold', 'spec.ageThreshold', `${head} Add window days so that P shrinks.`)];
}

/** A and G for the pool, with the layer-1 findings about them; override is null for "auto". */
export function ageThreshold(override: number | null, t: ChanceTerms): AgeThreshold {
  // No deadline: nothing can be late, so there is no threshold to derive and nothing to check.
  if (t.E === null) return { A: null, G: null, findings: [] };
  const derived = override === null ? autoAgeThreshold(t.E, t) : explicitAgeThreshold(override, t.E, t);
  const aggressive = aggressiveFindings(derived.A, t.E, t, override === null);
  return { ...derived, findings: [...derived.findings, ...aggressive] };
}
