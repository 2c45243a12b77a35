// Whether a RotationPolicy passes its own schema, judged on what the engine reads of it — apiVersion, kind, spec
// and the metadata fields the schema constrains — and nothing else: callers may carry more (the CLI its
// documents' origin, the controller a status of its own making), which is not the policy's to fail on. One
// judgement for the engine (which rotates nothing under an invalid policy) and the controller's status (which
// says why).
import type { RotationPolicy } from '../generated/api-types.js';
import { validateAgainst, type FieldError } from '../api/validate.js';

/** The metadata fields the policy's schema constrains (definitions/object-meta.schema.json allows any other). */
const METADATA_READ = ['name', 'labels', 'annotations', 'creationTimestamp', 'deletionTimestamp'] as const;

const byObject = new WeakMap<RotationPolicy, readonly FieldError[]>();
/**
 * The same judgement by what it reads, for a policy that is a new object but reads the same: a status write makes
 * a new RotationPolicy while the controller's cache keeps its spec, labels and annotations the same objects
 * (runtime/kube/reflector.ts). Per spec object, the last judgement and the key it was made under.
 */
const bySpec = new WeakMap<object, { key: string; errors: readonly FieldError[] }>();
const ids = new WeakMap<object, number>();
let nextId = 0;
/** A part of a memo key: a scalar as itself, an object by its identity. */
const idOf = (v: unknown): { v: unknown } | { id: number } | { absent: true } => {
  if (v === undefined) return { absent: true };
  if (v === null || typeof v !== 'object') return { v };
  let id = ids.get(v);
  if (id === undefined) ids.set(v, (id = ++nextId));
  return { id };
};

/** The policy's schema errors (sorted by path, as validateAgainst gives them); none when it is valid. */
export function policyErrors(policy: RotationPolicy): readonly FieldError[] {
  let errors = byObject.get(policy);
  if (errors) return errors;
  const { apiVersion, kind, metadata, spec } = policy;
  const m = metadata as unknown as Record<string, unknown> | null;
  const plainObject = m !== null && typeof m === 'object' && !Array.isArray(m);
  const key =
    plainObject && spec !== null && typeof spec === 'object'
      ? JSON.stringify([idOf(apiVersion), idOf(kind), ...METADATA_READ.map((k) => idOf(m[k]))])
      : null;
  const known = key === null ? undefined : bySpec.get(spec);
  if (known && known.key === key) errors = known.errors;
  else {
    const meta = plainObject
      ? Object.fromEntries(METADATA_READ.filter((k) => m[k] !== undefined).map((k) => [k, m[k]]))
      : metadata;
    errors = Object.freeze(validateAgainst('rotationPolicy', { apiVersion, kind, metadata: meta, spec }));
    if (key !== null) bySpec.set(spec, { key, errors });
  }
  byObject.set(policy, errors);
  return errors;
}
