// MaintenancePlan → one RotationPolicy per governed NodePool. The plan's selector picks the NodePools;
// for each (in name order) the first rule that matches decides: exclude it, or deep-merge its overrides over
// the defaults. The Crossplane function and the offline `render`/`explain` all call this one function.
import { createHash } from 'node:crypto';
import type {
  MaintenancePlan,
  PlanRule,
  PolicySettings,
  RotationPolicy,
  RotationPolicySpec,
} from '../generated/api-types.js';
import type { NodePool } from '../karpenter/types.js';
import { resolvePolicySpec } from '../policy/defaults.js';
import { matches } from '../policy/selector.js';
import { validateAgainst, type FieldError } from '../api/validate.js';
import { sortKeys } from '../util/canonical.js';
import { finding, type Finding } from '../derivation/findings.js';
import { nearNames } from '../util/near-names.js';
import { selectorFindings } from '../policy/selector-findings.js';

export const PLAN_LABEL = 'noderotation.io/plan';
export const NODEPOOL_ANNOTATION = 'noderotation.io/nodepool';

export interface ExpandedPolicy {
  nodePool: string;
  /** The rule that decided, or null when the defaults applied unchanged. */
  rule: string | null;
  policy: RotationPolicy;
}

export interface ExpansionError extends FieldError {
  nodePool: string;
}

export interface Expansion {
  policies: ExpandedPolicy[];
  excluded: { nodePool: string; rule: string }[];
  /** The merged spec of a NodePool is not a valid RotationPolicy spec; paths point into the plan. */
  errors: ExpansionError[];
}

const MAX_NAME = 253;
const MAX_LABEL_VALUE = 63;

/** The PLAN_LABEL value of a policy expanded from plan `planName`: the name, shortened past 63 characters. */
export const planLabelValue = (planName: string): string => shortenName(planName, MAX_LABEL_VALUE);

/** Shortens `name` to `max` characters with a stable hash suffix, only when it is too long. */
export function shortenName(name: string, max: number): string {
  if (name.length <= max) return name;
  const hash = createHash('sha256').update(name).digest('hex').slice(0, 10);
  const head = name.slice(0, max - hash.length - 1).replace(/[-.]+$/, '');
  return `${head}-${hash}`;
}

/** `<plan>-<nodepool>`: stable, a valid DNS subdomain (both parts already are), hashed only when too long. */
export function policyName(plan: string, nodePool: string): string {
  return shortenName(`${plan}-${nodePool}`, MAX_NAME);
}

export function ruleMatches(rule: PlanRule, pool: NodePool): boolean {
  if (rule.nodePools) return rule.nodePools.includes(pool.metadata.name);
  return matches(rule.nodePoolSelector, pool.metadata.labels);
}

type Json = Record<string, unknown>;

/**
 * Deep merge for overrides: objects merge field by field, lists and scalars replace, and an explicit null
 * removes the field (so an override can return a field to its default). `origins` records, per merged
 * path, which plan field it came from, so that errors can point at the line to fix.
 */
function merge(base: Json, over: Json, path: string, overOrigin: string, origins: Map<string, string>): Json {
  const out: Json = { ...base };
  for (const [key, value] of Object.entries(over)) {
    const p = path ? `${path}.${key}` : key;
    if (value === null) {
      delete out[key];
      origins.set(p, `${overOrigin}.${p}`);
    } else if (
      typeof value === 'object' &&
      !Array.isArray(value) &&
      typeof out[key] === 'object' &&
      out[key] !== null &&
      !Array.isArray(out[key])
    ) {
      out[key] = merge(out[key] as Json, value as Json, p, overOrigin, origins);
    } else {
      out[key] = structuredClone(value);
      origins.set(p, `${overOrigin}.${p}`);
    }
  }
  return out;
}

function recordOrigins(value: Json, path: string, origin: string, origins: Map<string, string>): void {
  for (const [key, v] of Object.entries(value)) {
    const p = path ? `${path}.${key}` : key;
    origins.set(p, `${origin}.${p}`);
    if (typeof v === 'object' && v !== null && !Array.isArray(v)) recordOrigins(v as Json, p, origin, origins);
  }
}

/** Maps a RotationPolicy field path (spec.surge.readyTimeout) to the plan field that set it. */
function planPath(field: string, origins: Map<string, string>): string {
  const inner = field.replace(/^spec\.?/, '');
  // Try the longest prefix first: a.b[0].c, a.b[0], a.b, a. Lists replace whole, so origins hold no indices.
  for (let probe = inner; probe;) {
    const hit = origins.get(probe);
    if (hit) return hit + inner.slice(probe.length);
    const cut = Math.max(probe.lastIndexOf('.'), probe.lastIndexOf('['));
    probe = cut > 0 ? probe.slice(0, cut) : '';
  }
  return `spec.defaults.${inner}`;
}

export function expandPlan(plan: MaintenancePlan, nodePools: readonly NodePool[]): Expansion {
  const result: Expansion = { policies: [], excluded: [], errors: [] };
  const planName = plan.metadata.name;
  const rules = plan.spec.rules ?? [];
  const pools = [...nodePools]
    .filter((pool) => matches(plan.spec.nodePoolSelector, pool.metadata.labels))
    .sort((a, b) => a.metadata.name.localeCompare(b.metadata.name));
  for (const pool of pools) {
    const name = pool.metadata.name;
    const index = rules.findIndex((r) => ruleMatches(r, pool));
    const rule = index >= 0 ? (rules[index] as PlanRule) : undefined;
    if (rule?.exclude) {
      result.excluded.push({ nodePool: name, rule: rule.name });
      continue;
    }
    const origins = new Map<string, string>();
    const defaults = (plan.spec.defaults ?? {}) as Json;
    recordOrigins(defaults, '', 'spec.defaults', origins);
    const merged = rule?.overrides
      ? merge(defaults, rule.overrides as Json, '', `spec.rules[${index}].overrides`, origins)
      : structuredClone(defaults);
    const spec = resolvePolicySpec({ ...(merged as PolicySettings), nodePools: [name] } as RotationPolicySpec);
    const policy: RotationPolicy = {
      apiVersion: 'noderotation.io/v1alpha1',
      kind: 'RotationPolicy',
      metadata: {
        name: policyName(planName, name),
        labels: { [PLAN_LABEL]: planLabelValue(planName) },
        annotations: { [NODEPOOL_ANNOTATION]: name },
      },
      spec: sortKeys(spec) as RotationPolicySpec,
    };
    const errors = validateAgainst('rotationPolicy', policy);
    if (errors.length > 0) {
      for (const e of errors) result.errors.push({ ...e, path: planPath(e.path, origins), nodePool: name });
      continue;
    }
    result.policies.push({ nodePool: name, rule: rule?.name ?? null, policy });
  }
  return result;
}

/**
 * A NodePool named in `names` (at `path`) that is not among `nodePools`, or that the plan's selector leaves out:
 * the name matches nothing, so the pool it was meant for silently gets other settings. One UnknownNodePool
 * warning per such name, with the nearest existing names as the fix.
 */
export function unknownNodePoolFindings(
  names: readonly string[],
  path: string,
  nodePools: readonly NodePool[],
  owner: string,
  kind: 'RotationPolicy' | 'MaintenancePlan',
  selected: (pool: NodePool) => boolean = () => true,
): Finding[] {
  const byName = new Map(nodePools.map((p) => [p.metadata.name, p]));
  return names.flatMap((name, j) => {
    const pool = byName.get(name);
    const field = `${path}[${j}]`;
    if (pool && selected(pool)) return [];
    if (pool)
      return [
        finding(
          'UnknownNodePool',
          field,
          `${owner} names NodePool ${name}, which spec.nodePoolSelector does not select, so it never applies there. ` +
            'Widen spec.nodePoolSelector or remove the name.',
        ),
      ];
    const near = nearNames(name, [...byName.keys()]);
    const text =
      `${owner} names NodePool "${name}", which is not among the ${byName.size} NodePools given, ` +
      'so it matches nothing.';
    const meant = near.length === 1 ? (near[0] as string) : undefined;
    // The name meant is already in the list: renaming would list it twice (invalid), so the fix removes the typo.
    if (meant !== undefined && names.includes(meant)) {
      const value = names.filter((_, k) => k !== j);
      const message = `${text} Did you mean "${meant}"? It is already named: remove "${name}" from ${path}.`;
      return [finding('UnknownNodePool', field, message, { object: kind, path, value })];
    }
    const hint = near.length > 0 ? `Did you mean ${near.map((n) => `"${n}"`).join(' or ')}? Fix` : 'Fix';
    const fix = meant !== undefined ? { object: kind, path: field, value: meant } : undefined;
    return [finding('UnknownNodePool', field, `${text} ${hint} the name or remove it.`, fix)];
  });
}

/**
 * What the plan's rules target that is not there: UnknownNodePool for every name no selected NodePool has, and
 * SelectorMatchesNothing for every selector that matches none of them.
 */
export function planTargetFindings(plan: MaintenancePlan, nodePools: readonly NodePool[]): Finding[] {
  const selected = (p: NodePool): boolean => matches(plan.spec.nodePoolSelector, p.metadata.labels);
  const inPlan = nodePools.filter(selected);
  const others = nodePools.filter((p) => !selected(p));
  return (plan.spec.rules ?? []).flatMap((rule, i) =>
    rule.nodePools
      ? unknownNodePoolFindings(
          rule.nodePools,
          `spec.rules[${i}].nodePools`,
          nodePools,
          `rule ${rule.name}`,
          'MaintenancePlan',
          selected,
        )
      : selectorFindings(
          {
            selector: rule.nodePoolSelector ?? {},
            path: `spec.rules[${i}].nodePoolSelector`,
            owner: `rule ${rule.name}`,
            kind: 'MaintenancePlan',
            effect: rule.exclude ? 'it excludes no NodePool' : 'its overrides reach no NodePool',
          },
          inPlan,
          others,
        ),
  );
}
