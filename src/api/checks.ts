// The CEL rules of our schemas (x-kubernetes-validations) enforce at admission what plain OpenAPI cannot
// express. The apiserver runs the CEL; offline validation runs these equivalents, keyed by each rule's
// `x-check` name. A test asserts every rule in every schema names a check that exists here, and the table
// tests in validate.test.ts run each check on both sides of its bounds.
import { rrulePartsWellFormed, rruleProblem } from '../schedule/rrule-subset.js';
import { GO_DURATION_PATTERN, parseGoDurationNanos } from '../util/duration.js';

type Obj = Record<string, unknown>;

const SECOND = 1_000_000_000n;
const HOUR = 3600n * SECOND;
const GO_DURATION = new RegExp(GO_DURATION_PATTERN);

/**
 * CEL's duration(self) compared with [min, max], in nanoseconds. A string the pattern refuses is left to the
 * pattern's own error (one message per mistake); a pattern-valid value too large for Go is out of range.
 */
function durationWithin(self: unknown, min: bigint, max: bigint, zeroAllowed = false): boolean {
  if (typeof self !== 'string' || !GO_DURATION.test(self)) return true;
  let ns: bigint;
  try {
    ns = parseGoDurationNanos(self);
  } catch {
    return false;
  }
  return (zeroAllowed && ns === 0n) || (ns >= min && ns <= max);
}

/** Checks on objects see only objects: a wrong type is the `type` keyword's error, not theirs. */
const onObject =
  (check: (self: Obj) => boolean) =>
  (self: unknown): boolean =>
    typeof self !== 'object' || self === null || Array.isArray(self) || check(self as Obj);

/** Month-days the "MM-DD" pattern lets through that no month has (02-29 exists in leap years). */
const MISSING_DAYS = new Set(['02-30', '02-31', '04-31', '06-31', '09-31', '11-31']);

/**
 * What a failed check adds to its rule's message, naming the part to fix (the CEL message is fixed text; the
 * offline validation can say which part of the value is wrong). rruleSubset details the rrule's pattern
 * (x-noderotation-detail): the subset is a pattern, not CEL, which would exceed the plan CRD's cost budget.
 */
export const checkDetails: Record<string, (self: unknown) => string | undefined> = {
  rruleSubset: (self) => (typeof self === 'string' ? rruleProblem(self) : undefined),
  rrulePartsOnce: (self) => (typeof self === 'string' ? rruleProblem(self) : undefined),
};

export const checks: Record<string, (self: unknown) => boolean> = {
  selectorRequirementValues: onObject((self) => {
    const values = Array.isArray(self.values) ? self.values : [];
    return self.operator === 'In' || self.operator === 'NotIn' ? values.length > 0 : values.length === 0;
  }),
  freezeEndAfterStart: onObject((self) => Date.parse(String(self.end)) > Date.parse(String(self.start))),
  prePullDisabled: onObject((self) => self.enabled !== true),
  exactlyOneRecurrence: onObject(
    (self) => [self.yearly, self.monthly, self.rrule].filter((v) => v !== undefined).length === 1,
  ),
  rruleStartAndDuration: onObject(
    (self) => (self.rrule !== undefined) === (self.start !== undefined && self.duration !== undefined),
  ),
  monthDayExists: (self) => typeof self !== 'string' || !MISSING_DAYS.has(self),
  // Kubernetes' structural schemas have no `const` (a `not: {const: 0}` there refuses every value): CEL instead.
  nonZeroDay: (self) => self !== 0,
  rrulePartsOnce: (self) => typeof self !== 'string' || rrulePartsWellFormed(self),
  exactlyOneTarget: onObject((self) => (self.nodePoolSelector !== undefined) !== (self.nodePools !== undefined)),
  exactlyOneRuleTarget: onObject((self) => (self.nodePoolSelector !== undefined) !== (self.nodePools !== undefined)),
  excludeWithoutOverrides: onObject((self) => !(self.exclude === true && self.overrides !== undefined)),
  surgeTimingInRange: (self) => durationWithin(self, SECOND, 168n * HOUR),
  cooldownInRange: (self) => durationWithin(self, SECOND, 168n * HOUR, true),
  ageThresholdInRange: (self) => self === 'auto' || durationWithin(self, SECOND, 87600n * HOUR),
};
