// Defaulting, driven by the `default` keywords of the schema (the single source of the defaults), with the
// apiserver's structural-defaulting semantics: a missing field whose parent object exists gets its default;
// an object default of {} makes its own children's defaults apply.
import type { RotationPolicySpec } from '../generated/api-types.js';
import { dereferenced, schemaIds } from '../api/registry.js';
import type { JsonSchema } from '../schema-tools/deref.js';

function applyTo(value: unknown, schema: JsonSchema): unknown {
  if (Array.isArray(value)) {
    const items = schema.items as JsonSchema | undefined;
    return items ? value.map((v) => applyTo(v, items)) : value;
  }
  if (typeof value !== 'object' || value === null) return value;
  const props = (schema.properties ?? {}) as Record<string, JsonSchema>;
  const out: Record<string, unknown> = { ...(value as Record<string, unknown>) };
  for (const [key, sub] of Object.entries(props)) {
    if (out[key] === undefined && sub.default !== undefined) out[key] = structuredClone(sub.default);
    if (out[key] !== undefined) out[key] = applyTo(out[key], sub);
  }
  return out;
}

/** The policy spec with every schema default filled in; the input is not modified. */
export function withSchemaDefaults(spec: RotationPolicySpec): RotationPolicySpec {
  return applyTo(
    spec,
    dereferenced(`${schemaIds.rotationPolicy}#/definitions/RotationPolicySpec`),
  ) as RotationPolicySpec;
}

/** Default keys of surge.matchNodeRequirements.required (design §3.7), used when the list is unset or empty. */
export const DEFAULT_REQUIRED_KEYS = [
  'topology.kubernetes.io/zone',
  'kubernetes.io/arch',
  'karpenter.sh/capacity-type',
] as const;

export const ZONE_KEY = 'topology.kubernetes.io/zone';

/** failurePause unset resolves to max(10m, cooldownAfter) (gate B; reference §5.4). */
export const FAILURE_PAUSE_FLOOR_SECONDS = 600;

/** Fully resolved: schema defaults plus the defaults that depend on other fields of the same policy. */
export function resolvePolicySpec(spec: RotationPolicySpec): RotationPolicySpec {
  const out = withSchemaDefaults(spec);
  const surge = { ...(out.surge ?? {}) };
  const req = surge.matchNodeRequirements ?? {};
  surge.matchNodeRequirements = {
    ...req,
    required: req.required && req.required.length > 0 ? req.required : [...DEFAULT_REQUIRED_KEYS],
    preferred: req.preferred ?? [],
  };
  out.surge = surge;
  return out;
}
