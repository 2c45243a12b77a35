// The §3.2 derivation for one NodePool under its governing policy: the figures (P, t_rot, leadTime, A, G,
// t_rot_est, C) and the layer-1 and layer-2 findings. Pure: the window figures are computed by the caller
// from an injected clock.
import type { NodeClaim, NodePool } from '../karpenter/types.js';
import { DEFAULT_EXPIRE_AFTER } from '../karpenter/types.js';
import { isValidTimezone } from '../schedule/zone.js';
import type { WindowFigures } from '../schedule/windows.js';
import { formatHuman as h, parseDuration, parseExpireAfter } from '../util/duration.js';
import { parseQuantity } from '../util/quantity.js';
import { finding, type Finding } from './findings.js';
import type { PolicyParams } from './params.js';
import { ZONE_KEY } from '../policy/defaults.js';

/** Detection lag covered by t_rot: 4 × the 30 s short requeue (design §3.2). */
export const BUFFER_SECONDS = 120;
/** t_rot's drain term when the NodePool sets no terminationGracePeriod (design §3.2). */
export const UNSET_TGP_FALLBACK_SECONDS = 3600;
/** EKS Auto Mode's cap on expireAfter + terminationGracePeriod. */
export const HARD_CAP_SECONDS = 21 * 86400;
const DEFAULT_PROVISIONING_CAP = 300;
const DEFAULT_DRAIN_CAP = 600;

export interface Figures {
  windowPeriodSeconds: number | null;
  rotationBoundSeconds: number | null;
  leadTimeSeconds: number | null;
  ageThresholdSeconds: number | null;
  guaranteedChances: number | null;
  expectedRotationSeconds: number | null;
  capacityPerOccurrence: number | null;
}

export interface PoolTerms {
  /** E in seconds; null for expireAfter: Never. */
  expireAfter: number | null;
  /** tGP as set; null when unset. */
  terminationGracePeriod: number | null;
}

export function poolTerms(pool: NodePool): PoolTerms {
  const t = pool.spec.template.spec;
  return {
    expireAfter: parseExpireAfter(t.expireAfter ?? DEFAULT_EXPIRE_AFTER),
    terminationGracePeriod: t.terminationGracePeriod === undefined ? null : parseDuration(t.terminationGracePeriod),
  };
}

/** t_rot = readyTimeout + tGP + buffer, with the 1h fallback for an unset tGP. */
export function rotationBound(readyTimeout: number, tgp: number | null): number {
  return readyTimeout + (tgp ?? UNSET_TGP_FALLBACK_SECONDS) + BUFFER_SECONDS;
}

export interface DerivationInput {
  params: PolicyParams;
  pool: NodePool;
  windows: WindowFigures;
  /** N: the NodePool's node count, when known (NodeClaims given, or status.nodes). */
  nodeCount: number | null;
  /** The pool's NodeClaims, for the size of one node in the headroom check. */
  nodeClaims?: readonly NodeClaim[];
}

export interface Derivation {
  figures: Figures;
  findings: Finding[];
  /** Intermediate terms, for messages and for the controller. */
  terms: PoolTerms & { tgpEffective: number; provisioningEstimate: number; drainEstimate: number };
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

export function derive(input: DerivationInput): Derivation {
  const { params: p, pool, windows: w } = input;
  const findings: Finding[] = [];
  const terms = poolTerms(pool);
  const E = terms.expireAfter;
  const tgp = terms.terminationGracePeriod;
  const tgpEff = tgp ?? UNSET_TGP_FALLBACK_SECONDS;
  const K = p.minRotationChances;

  // Estimates: unset → min(bound, default cap); set above the bound → unreachable, clamped and warned.
  let provisioning = p.provisioningEstimate ?? Math.min(p.readyTimeout, DEFAULT_PROVISIONING_CAP);
  if (p.provisioningEstimate !== null && p.provisioningEstimate > p.readyTimeout) {
    findings.push(
      finding(
        'ProvisioningEstimateAboveReadyTimeout',
        'spec.surge.provisioningEstimate',
        `provisioningEstimate ${h(p.provisioningEstimate)} exceeds readyTimeout ${h(p.readyTimeout)}, which abandons the surge first; it is clamped to ${h(p.readyTimeout)}. Lower provisioningEstimate or raise readyTimeout.`,
      ),
    );
    provisioning = p.readyTimeout;
  }
  let drain = p.drainEstimate ?? Math.min(tgpEff, DEFAULT_DRAIN_CAP);
  if (p.drainEstimate !== null && tgp !== null && p.drainEstimate > tgp) {
    findings.push(
      finding(
        'DrainEstimateAboveTGP',
        'spec.surge.drainEstimate',
        `drainEstimate ${h(p.drainEstimate)} exceeds the NodePool's terminationGracePeriod ${h(tgp)}, after which Karpenter force-completes the drain; it is clamped to ${h(tgp)}. Lower drainEstimate.`,
      ),
    );
    drain = tgp;
  }
  const derivedTerms = { ...terms, tgpEffective: tgpEff, provisioningEstimate: provisioning, drainEstimate: drain };

  const badZones = [...new Set(p.windows.map((x) => x.timezone).filter((z) => !isValidTimezone(z)))].sort();
  if (badZones.length > 0) {
    findings.push(
      finding(
        'InvalidTimezone',
        'spec.maintenanceWindows',
        `unknown time zone ${badZones.map((z) => `"${z}"`).join(', ')}; use an IANA name such as Asia/Tokyo, Europe/Berlin or UTC.`,
      ),
    );
    return { figures: NULL_FIGURES, findings, terms: derivedTerms };
  }

  const tRot = rotationBound(p.readyTimeout, tgp);
  const tRotEst = provisioning + drain;
  const P = w.periodSeconds;
  const figures: Figures = {
    ...NULL_FIGURES,
    windowPeriodSeconds: P,
    rotationBoundSeconds: tRot,
    expectedRotationSeconds: tRotEst,
  };

  if (K < 1 || !Number.isInteger(K)) {
    findings.push(
      finding(
        'InvalidMinRotationChances',
        'spec.minRotationChances',
        `minRotationChances is ${K}; it is the number of windows every node is guaranteed and must be an integer of at least 1 (2 recommended).`,
      ),
    );
  } else if (K === 1) {
    findings.push(
      finding(
        'SingleRotationChance',
        'spec.minRotationChances',
        'minRotationChances is 1: a node whose one window fails is force-expired by Karpenter with no retry. Set minRotationChances: 2 or more.',
      ),
    );
  }

  if (w.empty) {
    findings.push(
      finding(
        'NoWindows',
        'spec.maintenanceWindows',
        'the maintenance windows never open, so no node could ever be rotated. Add at least one window with days, start and end.',
      ),
    );
    figures.capacityPerOccurrence = 0;
  }

  if (tgp === null) {
    findings.push(
      finding(
        'UnboundedDrain',
        `NodePool ${pool.metadata.name} spec.template.spec.terminationGracePeriod`,
        `the NodePool sets no terminationGracePeriod, so a drain blocked by a PodDisruptionBudget can last forever; t_rot assumes ${h(UNSET_TGP_FALLBACK_SECONDS)}. Set spec.template.spec.terminationGracePeriod on the NodePool.`,
      ),
    );
  }
  if (E !== null && E + tgpEff > HARD_CAP_SECONDS) {
    findings.push(
      finding(
        'HardCapExceeded',
        `NodePool ${pool.metadata.name} spec.template.spec.expireAfter`,
        `expireAfter ${h(E)} + terminationGracePeriod ${h(tgpEff)} = ${h(E + tgpEff)} exceeds EKS Auto Mode's 21-day node lifetime. Lower expireAfter to at most ${h(HARD_CAP_SECONDS - tgpEff)}.`,
      ),
    );
  }
  if (p.retryBackoff < p.readyTimeout) {
    findings.push(
      finding(
        'RetryFasterThanAttempt',
        'spec.surge.retryBackoff',
        `retryBackoff ${h(p.retryBackoff)} is shorter than readyTimeout ${h(p.readyTimeout)}: a failed node is retried before one attempt could even finish. Set retryBackoff to at least ${h(p.readyTimeout)}.`,
      ),
    );
  }
  if (p.requiredKeysExplicit && !p.requiredKeys.includes(ZONE_KEY)) {
    findings.push(
      finding(
        'ZoneRequirementRemoved',
        'spec.surge.matchNodeRequirements.required',
        `${ZONE_KEY} is not required, so the surge node may land in another zone and Pods bound to zonal volumes stay Pending. Add ${ZONE_KEY} to surge.matchNodeRequirements.required.`,
      ),
    );
  }
  findings.push(...headroomFindings(pool, input.nodeClaims ?? []));

  if (w.empty || K < 1 || !Number.isInteger(K)) return { figures, findings, terms: derivedTerms };

  const leadTime = K * P + tRot;
  figures.leadTimeSeconds = leadTime;
  const D = w.minDurationSeconds;
  figures.capacityPerOccurrence = p.maxUnavailable * Math.ceil(D / (tRotEst + p.cooldownAfter));
  const C = figures.capacityPerOccurrence;

  // A and G need a deadline; expireAfter: Never has none, so nothing is derived and nothing can be late.
  let A: number | null = null;
  let G: number | null = null;
  if (E !== null) {
    if (p.ageThresholdOverride === null) {
      A = E - leadTime;
      if (A <= 0) {
        findings.push(
          finding(
            'NonPositiveAgeThreshold',
            'spec.ageThreshold',
            `expireAfter ${h(E)} is not longer than the lead time K·P + t_rot = ${K}×${h(P)} + ${h(tRot)} = ${h(leadTime)}, so no node can be guaranteed ${K} windows. Raise the NodePool's expireAfter above ${h(leadTime)}, add window days so that P shrinks, or lower minRotationChances.`,
          ),
        );
      } else {
        G = K;
      }
    } else {
      A = p.ageThresholdOverride;
      if (A <= 0) {
        findings.push(
          finding(
            'NonPositiveAgeThreshold',
            'spec.ageThreshold',
            `ageThreshold ${h(A)} is not positive. Use auto, or a duration above 0.`,
          ),
        );
      } else {
        G = Math.floor((E - A - tRot) / P);
        const maxForK = E - leadTime;
        const fix =
          maxForK > 0
            ? `Lower ageThreshold to at most ${h(maxForK)} (that keeps ${K}) or use auto.`
            : 'Use auto, raise expireAfter or add window days.';
        if (G < 1) {
          findings.push(
            finding(
              'OverrideRejected',
              'spec.ageThreshold',
              `ageThreshold ${h(A)} leaves ${Math.max(G, 0)} guaranteed windows before expireAfter ${h(E)} (G = floor((E − A − t_rot) / P)), so nodes would be force-expired. ${fix}`,
            ),
          );
          G = Math.max(G, 0);
        } else if (G < K) {
          findings.push(
            finding(
              'WeakenedChances',
              'spec.ageThreshold',
              `ageThreshold ${h(A)} guarantees ${G} window${G === 1 ? '' : 's'} before expireAfter, fewer than minRotationChances ${K}. ${fix}`,
            ),
          );
        }
      }
    }
    if (A !== null && A > 0 && A < P) {
      findings.push(
        finding(
          'AggressiveAgeThreshold',
          'spec.ageThreshold',
          `the age threshold ${h(A)} is shorter than the window period P = ${h(P)}: nodes become candidates soon after they are created, so the NodePool rotates almost continuously. Raise expireAfter or add window days.`,
        ),
      );
    }
  }
  figures.ageThresholdSeconds = A;
  figures.guaranteedChances = G;

  findings.push(...throughputFindings(p, w, { A, G, C, N: input.nodeCount, tRotEst }));
  return { figures, findings, terms: derivedTerms };
}

function throughputFindings(
  p: PolicyParams,
  w: WindowFigures,
  f: { A: number | null; G: number | null; C: number; N: number | null; tRotEst: number },
): Finding[] {
  const out: Finding[] = [];
  const { A, G, C, N, tRotEst } = f;
  const service = tRotEst + p.cooldownAfter;
  if (N !== null && N > 0 && A !== null && A > 0) {
    // Arrival: N nodes each need one rotation per A of age; the windows serve C per period P. A continuous
    // window serves one rotation per (t_rot_est + cooldownAfter) per unit of maxUnavailable instead.
    const capacityOverA = w.continuous ? (p.maxUnavailable * A) / service : (C * A) / w.periodSeconds;
    if (capacityOverA < N) {
      out.push(
        finding(
          'ThroughputShortfall',
          'spec.maintenanceWindows',
          `the windows can rotate about ${Math.floor(capacityOverA)} nodes per age threshold (${h(A)}) but the NodePool has ${N}, so some nodes will reach expireAfter. Widen the windows, add occurrences, or lower cooldownAfter.`,
        ),
      );
    }
  }
  if (N !== null && N > 0 && G !== null && G >= 1 && G * C < N) {
    out.push(
      finding(
        'ThroughputBurstShortfall',
        'spec.maintenanceWindows',
        `a batch of ${N} nodes created together shares one deadline, but ${G} window${G === 1 ? '' : 's'} × ${C} rotations per occurrence = ${G * C}; ${N - G * C} would be force-expired. Widen the windows, raise minRotationChances${p.forcefulFallback ? '' : ', or enable surge.forcefulFallback'}.`,
      ),
    );
  }
  if (w.minGapSeconds !== null && service > w.minGapSeconds) {
    out.push(
      finding(
        'RotationSpansNextWindow',
        'spec.maintenanceWindows',
        `one rotation plus cooldown (${h(tRotEst)} + ${h(p.cooldownAfter)}) is longer than the shortest pause between windows (${h(w.minGapSeconds)}), so a late rotation runs into the next occurrence and neighbouring occurrences do not each deliver ${C}. Merge the windows or shorten cooldownAfter.`,
      ),
    );
  }
  return out;
}

/** spec.limits must leave room for one more node, or the surge node can never be created. */
function headroomFindings(pool: NodePool, claims: readonly NodeClaim[]): Finding[] {
  const limits = pool.spec.limits ?? {};
  const used = pool.status?.resources ?? {};
  const short: string[] = [];
  for (const key of Object.keys(limits).sort()) {
    const limit = parseQuantity(limits[key] as string | number);
    const inUse =
      key === 'nodes'
        ? (pool.status?.nodes ?? (used.nodes !== undefined ? parseQuantity(used.nodes) : claims.length))
        : parseQuantity(used[key] ?? 0);
    const nodeSize =
      key === 'nodes'
        ? 1
        : Math.max(
            0,
            ...claims.map((c) => parseQuantity(c.status?.capacity?.[key] ?? c.status?.allocatable?.[key] ?? 0)),
          );
    const room = limit - inUse;
    if (room <= 0 || room < nodeSize) short.push(`${key} (limit ${limits[key]}, in use ${used[key] ?? inUse})`);
  }
  if (short.length === 0) return [];
  return [
    finding(
      'NoSurgeHeadroom',
      `NodePool ${pool.metadata.name} spec.limits`,
      `spec.limits leave no room for one more node in ${short.join(', ')}, so the surge node can never be created and every rotation rolls back. Raise the NodePool's limits by at least one node.`,
    ),
  ];
}
