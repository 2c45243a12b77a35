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
    // A member of `x` must be a member of `y` (a member set to undefined is none: {a: null} is not {a: undefined}).
    if (y[k] === undefined || !Object.hasOwn(y, k) || !sameJson(x[k], y[k])) return false;
  }
  for (const k of Object.keys(y)) if (y[k] !== undefined) defined--;
  return defined === 0;
}

/**
 * `next`, with every part that equals (as sameJson sees it) the same part of `prev` taken from `prev` instead:
 * `prev` itself when the two are equal. Neither is changed. A cache that keeps the last version of an object
 * this way hands its readers the same inner objects for what did not change, so their own caches, keyed by
 * object identity, stay warm across versions (a RotationPolicy whose status moved keeps its spec).
 */
export function shareJson<T>(prev: unknown, next: T): T {
  if (prev === next || prev === null || next === null || typeof prev !== 'object' || typeof next !== 'object')
    return next;
  if (Array.isArray(prev) !== Array.isArray(next)) return next;
  if (Array.isArray(next)) {
    const old = prev as unknown[];
    const out = next.map((x: unknown, i) => (i < old.length ? shareJson(old[i], x) : x));
    // In a list, `undefined` is written as null (JSON.stringify's rule, and sameJson's).
    const none = (v: unknown): boolean => v === null || v === undefined;
    const same = out.every((x, i) => x === old[i] || (none(x) && none(old[i])));
    return (old.length === out.length && same ? prev : out) as T;
  }
  const old = prev as Json;
  const out: Json = {};
  let same = true;
  let defined = 0;
  for (const k of Object.keys(next)) {
    const v = (next as Json)[k];
    if (v === undefined) continue;
    defined++;
    const o = old[k];
    const s = o === v || (o !== null && typeof o === 'object') ? shareJson(o, v) : v;
    out[k] = s;
    if (s !== o) same = false;
  }
  if (same) for (const k of Object.keys(old)) if (old[k] !== undefined) defined--;
  return (same && defined === 0 ? prev : out) as T;
}
