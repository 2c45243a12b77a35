// Canonical forms of JSON values: the one place that decides key order, so that output is byte-identical
// whatever order the input's keys came in (Go's protobuf encoder, for one, writes Struct maps in random order).

type Json = Record<string, unknown>;

/** A copy with object keys sorted at every level; lists keep their order, `undefined` members are dropped. */
export function sortKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sortKeys);
  if (typeof value !== 'object' || value === null) return value;
  const obj = value as Json;
  return Object.fromEntries(
    Object.keys(obj)
      .filter((k) => obj[k] !== undefined)
      .sort()
      .map((k) => [k, sortKeys(obj[k])]),
  );
}

/** JSON with object keys sorted at every level: equal values give equal strings (cache keys, digests). */
export function canonicalJson(value: unknown): string {
  if (value === null || typeof value !== 'object') return JSON.stringify(value) ?? 'null';
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  const obj = value as Json;
  const keys = Object.keys(obj)
    .filter((k) => obj[k] !== undefined)
    .sort();
  return `{${keys.map((k) => `${JSON.stringify(k)}:${canonicalJson(obj[k])}`).join(',')}}`;
}
