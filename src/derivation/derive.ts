// The §3.2 derivation for one NodePool under its governing policy: the figures (P, t_rot, leadTime, A, G,
// t_rot_est, C) and the layer-1 and layer-2 findings, in named steps (docs/design.md §3.2):
//   resolve the terms → check the inputs (zones) → the figures that need no K → layer-1 checks
//   → leadTime and C → A and G → layer-2 throughput → scheduled freezes against the span A leaves.
// Pure: the window figures are computed by the caller from an injected clock, which also comes in as `now`.
import type { NodeClaim, NodePool } from '../karpenter/types.js';
import type { WindowFigures } from '../schedule/windows.js';
import { ageThreshold, lifetimeAtCap } from './age-threshold.js';
import { drainEstimate, provisioningEstimate } from './estimates.js';
import {
  chancesFindings,
  invalidTimezoneFinding,
  misleadingTimezoneFindings,
  isValidChances,
  noWindowsFindings,
  surgeSettingFindings,
  templateFindings,
} from './feasibility.js';
import { withoutFix, type Finding } from './findings.js';
import { freezeFindings } from './freezes.js';
import { freezeImpact, recurringFreezeFindings } from './recurring-freezes.js';
import { headroomFindings } from './headroom.js';
import type { PolicyParams } from './params.js';
import { effectiveGracePeriod, HARD_CAP_SECONDS, poolTerms, rotationBound, type PoolTerms } from './terms.js';
import { capacityPerOccurrence, throughputFindings } from './throughput.js';

export {
  BUFFER_SECONDS,
  HARD_CAP_SECONDS,
  poolTerms,
  rotationBound,
  UNSET_TGP_FALLBACK_SECONDS,
  type PoolTerms,
} from './terms.js';

export interface Figures {
  windowPeriodSeconds: number | null;
  rotationBoundSeconds: number | null;
  leadTimeSeconds: number | null;
  ageThresholdSeconds: number | null;
  guaranteedChances: number | null;
  expectedRotationSeconds: number | null;
  capacityPerOccurrence: number | null;
}

export interface DerivationInput {
  params: PolicyParams;
  pool: NodePool;
  windows: WindowFigures;
  /** N: the NodePool's node count, when known (NodeClaims given, or status.nodes). */
  nodeCount: number | null;
  /** The pool's NodeClaims, for the size of one node in the headroom check. */
  nodeClaims?: readonly NodeClaim[];
  /** The injected clock (epoch ms): a freeze already over by then is not checked. */
  now: number;
}

/** The terms behind the figures, resolved against the NodePool: for messages and for the controller. */
export type DerivedTerms = PoolTerms & { tgpEffective: number; provisioningEstimate: number; drainEstimate: number };

export interface Derivation {
  figures: Figures;
  findings: Finding[];
  /** Intermediate terms, for messages and for the controller. */
  terms: DerivedTerms;
}

/** Every figure unknown: a NodePool nobody governs, or one whose policy cannot be evaluated. */
export const NULL_FIGURES: Figures = {
  windowPeriodSeconds: null,
  rotationBoundSeconds: null,
  leadTimeSeconds: null,
  ageThresholdSeconds: null,
  guaranteedChances: null,
  expectedRotationSeconds: null,
  capacityPerOccurrence: null,
};

/** Step 1: E and tGP from the NodePool, and the two forecast estimates (clamped to their bounds). */
function resolveTerms(p: PolicyParams, pool: NodePool): { terms: DerivedTerms; findings: Finding[] } {
  const base = poolTerms(pool);
  const provisioning = provisioningEstimate(p);
  const drain = drainEstimate(p, base.terminationGracePeriod);
  const terms: DerivedTerms = {
    ...base,
    tgpEffective: effectiveGracePeriod(base.terminationGracePeriod),
    provisioningEstimate: provisioning.seconds,
    drainEstimate: drain.seconds,
  };
  const findings = [provisioning.clamped, drain.clamped].filter((f): f is Finding => f !== null);
  return { terms, findings };
}

/** Step 3: the figures that do not depend on K: P, t_rot, t_rot_est, and C = 0 when no window ever opens. */
function kIndependentFigures(w: WindowFigures, tRot: number, tRotEst: number): Figures {
  return {
    ...NULL_FIGURES,
    windowPeriodSeconds: w.periodSeconds,
    rotationBoundSeconds: tRot,
    expectedRotationSeconds: tRotEst,
    capacityPerOccurrence: w.empty ? 0 : null,
  };
}

/** Step 4: layer 1, the checks that need no K-dependent figure, in the order they are reported. */
function layerOneFindings(input: DerivationInput, terms: PoolTerms): Finding[] {
  const { params: p, pool, windows: w } = input;
  return [
    ...chancesFindings(p.minRotationChances),
    ...misleadingTimezoneFindings(p),
    ...noWindowsFindings(w),
    ...templateFindings(pool, terms),
    ...surgeSettingFindings(p),
    ...headroomFindings(pool, input.nodeClaims ?? []),
  ];
}

export function derive(input: DerivationInput): Derivation {
  const { params: p, windows: w } = input;
  const resolved = resolveTerms(p, input.pool);
  const terms = resolved.terms;
  const findings = [...resolved.findings];

  // Step 2: an unknown zone has no occurrences to compute from, so no figure is reported at all.
  const badZone = invalidTimezoneFinding(p);
  if (badZone !== null) return { figures: NULL_FIGURES, findings: [...findings, badZone], terms };

  const tRot = rotationBound(p.readyTimeout, terms.terminationGracePeriod);
  const tRotEst = terms.provisioningEstimate + terms.drainEstimate;
  const figures = kIndependentFigures(w, tRot, tRotEst);
  findings.push(...layerOneFindings(input, terms));
  // Without a window or a valid K, leadTime (and everything after it) has no meaning.
  if (w.empty || !isValidChances(p.minRotationChances)) return { figures, findings, terms };

  // Step 5: leadTime and C, for a valid K and at least one occurrence.
  const K = p.minRotationChances;
  const P = w.periodSeconds;
  const leadTime = K * P + tRot;
  const C = capacityPerOccurrence(p, w.minDurationSeconds, tRotEst);

  // Step 6: A and G, and the layer-1 checks on them. Step 7: layer 2. Step 8: the freezes against A and G.
  const chances = {
    E: terms.expireAfter,
    K,
    P,
    tRot,
    leadTime,
    nodePool: input.pool.metadata.name,
    maxE: HARD_CAP_SECONDS - terms.tgpEffective,
  };
  const { A, G, findings: chanceChecks } = ageThreshold(p.ageThresholdOverride, chances);
  // HardCapExceeded lowers expireAfter to the cap: no fix when that leaves no room for A ≥ P (a dead end).
  const atCap = lifetimeAtCap(p.ageThresholdOverride === null, chances);
  if (atCap !== null)
    findings.forEach((f, i) => {
      if (f.reason === 'HardCapExceeded') findings[i] = withoutFix(f, atCap);
    });
  const freezeTerms = { E: terms.expireAfter, A, G, K, P, tRot, auto: p.ageThresholdOverride === null };
  findings.push(
    ...chanceChecks,
    ...throughputFindings(p, w, {
      A,
      G,
      C,
      N: input.nodeCount,
      tRotEst,
      ...freezeImpact(p, freezeTerms, input.now, A),
    }),
    ...freezeFindings(p.freezes, freezeTerms, input.now),
    ...recurringFreezeFindings(p, freezeTerms, input.now),
  );
  return {
    figures: {
      ...figures,
      leadTimeSeconds: leadTime,
      ageThresholdSeconds: A,
      guaranteedChances: G,
      capacityPerOccurrence: C,
    },
    findings,
    terms,
  };
}
