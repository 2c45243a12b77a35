// Setting one field of a document by the path a finding's fix names (docs/api.md, Findings).

/**
 * A copy of `obj` with the field at `path` (dots, and [i] for list items, e.g. spec.freezes[0].end) set to
 * `value`; missing parents are created as objects, as a user adding the field to a manifest would.
 */
export function setPath<T extends object>(obj: T, path: string, value: unknown): T {
  const copy = structuredClone(obj);
  const keys = path.split('.').flatMap((k) => k.split(/\[(\d+)\]/).filter(Boolean));
  let at = copy as Record<string, unknown>;
  for (const k of keys.slice(0, -1)) {
    const next = at[k];
    at = (typeof next === 'object' && next !== null ? next : (at[k] = {})) as Record<string, unknown>;
  }
  at[keys.at(-1) as string] = value;
  return copy;
}
