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
  // scheduled freezes (with the figures: a freeze longer than E − A − t_rot)
  FreezeOutlastsNodes: 'warning',
  // rotation ahead of a freeze (with the forecast: claims due by a freeze's start that cannot all be rotated)
  PreFreezeOverflow: 'warning',
  // recurring freezes: a node left fewer than K windows outside freezes
  FreezeCutsChances: 'warning',
  // cluster prerequisites (controller only: it knows what exists)
  PlaceholderPriorityClassNotFound: 'fatal',
  // targeting
  PolicyConflict: 'fatal',
  NoGovernedNodePools: 'fatal',
  UnknownNodePool: 'warning',
  SelectorMatchesNothing: 'warning',
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
  /** The one change the message suggests, when it is one value; the message prints `value` as it is. */
  fix?: Fix;
}

/**
 * A change that clears its finding: set the field at `path` of the policy (the plan, for a NodePool a plan
 * governs), or of the NodePool the finding is about, to `value`, written as the field accepts it (durations as
 * formatDuration prints them). A property test (fixes.test.ts) applies every fix and checks that the input
 * stays valid and the finding goes.
 */
export interface Fix {
  object: 'RotationPolicy' | 'MaintenancePlan' | 'NodePool';
  /**
   * The object's name, when the report does not already say it: the plan of a NodePool a MaintenancePlan
   * governs (its fixes go into the plan, not into the RotationPolicy generated from it).
   */
  name?: string;
  /** A dotted path with [i] for list items, e.g. spec.maintenanceWindows[0].timezone. */
  path: string;
  value: string | number | readonly string[];
}

export function finding(reason: Reason, field: string, message: string, fix?: Fix): Finding {
  return { severity: REASONS[reason], reason, field, message, ...(fix ? { fix } : {}) };
}

export const hasFatal = (findings: readonly Finding[]): boolean => findings.some((f) => f.severity === 'fatal');

/** The finding without its fix, `note` appended to its message. */
export function withoutFix(f: Finding, note: string): Finding {
  const { fix: _fix, ...rest } = f;
  return { ...rest, message: `${f.message} ${note}` };
}

/**
 * A finding's field as a message about one NodePool prints it: a NodePool field ("NodePool general
 * spec.template.spec.expireAfter") as "NodePool field spec.template.spec.expireAfter", the NodePool being named
 * already; a policy field as it is.
 */
export const fieldLabel = (field: string): string => field.replace(/^NodePool \S+ /, 'NodePool field ');
