// Findings about a NodePool a MaintenancePlan governs (issue 21): its RotationPolicy is generated, so a field
// of that policy is named, and a fix to it is applied, in the plan. Both ask the same question of the rule
// that decided the pool: does its override set the field (or a parent of it), or is it inherited from
// spec.defaults? The Crossplane function and `explain` share these answers, so they name the same plan paths.
import type { Finding } from '../derivation/findings.js';
export { withoutFix } from '../derivation/findings.js';
import type { MaintenancePlan } from '../generated/api-types.js';

type Json = Record<string, unknown>;

const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);

/**
 * Whether the rule's override sets a settings path (`surge.retryBackoff`, `maintenanceWindows[0].timezone`), or
 * a parent of it. Lists replace whole, so a list item is the rule's when the rule sets its list.
 */
function setByRule(overrides: unknown, inner: string): boolean {
  const bracket = inner.indexOf('[');
  let node = overrides;
  for (const key of (bracket < 0 ? inner : inner.slice(0, bracket)).split('.')) {
    if (!isObject(node) || !(key in node)) return false;
    node = node[key];
    // A scalar or a list set here covers everything below it.
    if (!isObject(node)) return true;
  }
  return true;
}

const overridesOf = (plan: MaintenancePlan, ruleIndex: number): unknown =>
  ruleIndex >= 0 ? plan.spec.rules?.[ruleIndex]?.overrides : undefined;

const settingsPath = (policyPath: string): string => policyPath.replace(/^spec\./, '');

/**
 * Where a field of the generated policy came from: the deciding rule's override when it sets the field (or
 * a parent of it), else spec.defaults (where it came from, or where an unset field is set for every pool).
 * `ruleIndex` is the deciding rule's index, −1 when none matched.
 */
export function planOrigin(plan: MaintenancePlan, ruleIndex: number, policyPath: string): string {
  const inner = settingsPath(policyPath);
  return setByRule(overridesOf(plan, ruleIndex), inner)
    ? `spec.rules[${ruleIndex}].overrides.${inner}`
    : `spec.defaults.${inner}`;
}

/**
 * Where a fix to a field of the generated policy goes in the plan:
 *  - no rule decides the pool: spec.defaults, the only place its settings come from;
 *  - an item of a list the rule takes from the defaults: spec.defaults, the only place that item exists (an
 *    override of one item would replace the whole list with that item alone, and be invalid);
 *  - otherwise the deciding rule's override, local to the NodePools that rule decides.
 */
export function planTarget(plan: MaintenancePlan, ruleIndex: number, policyPath: string): string {
  const inner = settingsPath(policyPath);
  const inDefaults = ruleIndex < 0 || (inner.includes('[') && !setByRule(overridesOf(plan, ruleIndex), inner));
  return inDefaults ? `spec.defaults.${inner}` : `spec.rules[${ruleIndex}].overrides.${inner}`;
}

/**
 * A finding about a NodePool the plan governs, its RotationPolicy fix moved into the plan (the message says
 * where); NodePool fixes stay as they are.
 */
export function planFinding(plan: MaintenancePlan, ruleIndex: number, f: Finding): Finding {
  if (f.fix?.object !== 'RotationPolicy') return f;
  const name = plan.metadata.name;
  const path = planTarget(plan, ruleIndex, f.fix.path);
  return {
    ...f,
    message: `${f.message} Set it in MaintenancePlan ${name} at ${path}.`,
    fix: { object: 'MaintenancePlan', name, path, value: f.fix.value },
  };
}
