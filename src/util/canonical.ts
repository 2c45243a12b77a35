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

/**
 * Whether two JSON values are equal as canonicalJson sees them (`canonicalJson(a) === canonicalJson(b)`), without
 * building either string: key order and `undefined` members do not count. For JSON values (no NaN, functions).
 */
export function sameJson(a: unknown, b: unknown): boolean {
  // As canonicalJson writes them: `undefined` is null, but for an object's member, which is left out.
  if (a === undefined) a = null;
  if (b === undefined) b = null;
  if (a === b) return true;
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false;
  if (Array.isArray(a) || Array.isArray(b)) {
    if (!Array.isArray(a) || !Array.isArray(b) || a.length !== b.length) return false;
    return a.every((x, i) => sameJson(x, b[i]));
  }
  const x = a as Json;
  const y = b as Json;
  let defined = 0;
  for (const k of Object.keys(x)) {
    if (x[k] === undefined) continue;
    defined++;
    if (!Object.hasOwn(y, k) || !sameJson(x[k], y[k])) return false;
  }
  for (const k of Object.keys(y)) if (y[k] !== undefined) defined--;
  return defined === 0;
}
