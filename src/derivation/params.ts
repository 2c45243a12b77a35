// A policy spec turned into numbers (seconds), with every default and every cross-field default resolved.
import type { Freeze, MaintenanceWindow, RecurringFreeze, RotationPolicySpec } from '../generated/api-types.js';
import { DEFAULT_REQUIRED_KEYS, FAILURE_PAUSE_FLOOR_SECONDS, withSchemaDefaults } from '../policy/defaults.js';
import { parseDuration } from '../util/duration.js';

export interface PolicyParams {
  windows: MaintenanceWindow[];
  /** spec.freezes as written (RFC 3339 strings; the engine and the freeze check read them). */
  freezes: Freeze[];
  /** spec.recurringFreezes as written (expanded into occurrences by schedule/recurring-freezes.ts). */
  recurringFreezes: RecurringFreeze[];
  /** K */
  minRotationChances: number;
  /** null: "auto" */
  ageThresholdOverride: number | null;
  maxUnavailable: number;
  readyTimeout: number;
  cooldownAfter: number;
  failurePause: number;
  retryBackoff: number;
  /** As written; null when unset (resolved against the NodePool in the derivation). */
  drainEstimate: number | null;
  provisioningEstimate: number | null;
  requiredKeys: string[];
  preferredKeys: string[];
  /** The required list was written by the user (not the default set). */
  requiredKeysExplicit: boolean;
  forcefulFallback: boolean;
  wholeNodeReservation: boolean;
  /** spec.preFreezeRotation.enabled: a claim whose deadline falls inside a scheduled freeze is due by its start. */
  preFreezeRotation: boolean;
  suspend: boolean;
}

export function policyParams(spec: RotationPolicySpec): PolicyParams {
  const s = withSchemaDefaults(spec);
  const surge = s.surge ?? {};
  const opt = (v: string | undefined): number | null => (v === undefined ? null : parseDuration(v));
  const cooldownAfter = parseDuration(surge.cooldownAfter as string);
  const required = surge.matchNodeRequirements?.required;
  const requiredKeysExplicit = required !== undefined && required.length > 0;
  return {
    windows: [...(s.maintenanceWindows ?? [])],
    freezes: [...(s.freezes ?? [])],
    recurringFreezes: [...(s.recurringFreezes ?? [])],
    minRotationChances: s.minRotationChances as number,
    ageThresholdOverride:
      s.ageThreshold === undefined || s.ageThreshold === 'auto' ? null : parseDuration(s.ageThreshold),
    maxUnavailable: surge.maxUnavailable as number,
    readyTimeout: parseDuration(surge.readyTimeout as string),
    cooldownAfter,
    failurePause:
      surge.failurePause !== undefined
        ? parseDuration(surge.failurePause)
        : Math.max(FAILURE_PAUSE_FLOOR_SECONDS, cooldownAfter),
    retryBackoff: parseDuration(surge.retryBackoff as string),
    drainEstimate: opt(surge.drainEstimate),
    provisioningEstimate: opt(surge.provisioningEstimate),
    requiredKeys: requiredKeysExplicit ? [...required] : [...DEFAULT_REQUIRED_KEYS],
    preferredKeys: [...(surge.matchNodeRequirements?.preferred ?? [])],
    requiredKeysExplicit,
    forcefulFallback: surge.forcefulFallback?.enabled === true,
    wholeNodeReservation: surge.wholeNodeReservation?.enabled === true,
    preFreezeRotation: s.preFreezeRotation?.enabled === true,
    suspend: s.suspend === true,
  };
}
