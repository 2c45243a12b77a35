// Findings: what the checks of design §3.2 (layers 1–3) and policy resolution report. The reason codes are
// part of the public API (CLI output, function results, conditions, events): see docs/api.md.

export type Severity = 'fatal' | 'warning';

export const REASONS = {
  // layer 1 — scheduling feasibility
  NoWindows: 'fatal',
  InvalidMinRotationChances: 'fatal',
  SingleRotationChance: 'warning',
  NonPositiveAgeThreshold: 'fatal',
  AggressiveAgeThreshold: 'warning',
  OverrideRejected: 'fatal',
  WeakenedChances: 'warning',
  HardCapExceeded: 'warning',
  UnboundedDrain: 'warning',
  RetryFasterThanAttempt: 'warning',
  NoSurgeHeadroom: 'warning',
  DrainEstimateAboveTGP: 'warning',
  ProvisioningEstimateAboveReadyTimeout: 'warning',
  ZoneRequirementRemoved: 'warning',
  InvalidTimezone: 'fatal',
  MisleadingTimezone: 'warning',
  // layer 2 — throughput
  ThroughputShortfall: 'warning',
  ThroughputBurstShortfall: 'warning',
  RotationSpansNextWindow: 'warning',
  // layer 3 — per node
  ShortLead: 'warning',
  // cluster prerequisites (controller only: it knows what exists)
  PlaceholderPriorityClassNotFound: 'fatal',
  // targeting
  PolicyConflict: 'fatal',
  NoGovernedNodePools: 'fatal',
  UnknownNodePool: 'warning',
  InvalidPolicy: 'fatal',
} as const satisfies Record<string, Severity>;

export type Reason = keyof typeof REASONS;

export interface Finding {
  severity: Severity;
  reason: Reason;
  /** The policy field the finding is about, as a path in the RotationPolicy (e.g. spec.surge.retryBackoff). */
  field: string;
  /** What is wrong and how to fix it, in one or two sentences. */
  message: string;
}

export function finding(reason: Reason, field: string, message: string): Finding {
  return { severity: REASONS[reason], reason, field, message };
}

export const hasFatal = (findings: readonly Finding[]): boolean => findings.some((f) => f.severity === 'fatal');
