import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { canonicalJson, sameJson, shareJson } from './canonical.js';

// JSON values with few distinct keys and leaves, so that equal pairs come up, and `undefined` members.
const leaf = fc.oneof(fc.constantFrom(0, 1, 'a', 'b', true, false, null), fc.constant(undefined));
const value = fc.letrec((tie) => ({
  v: fc.oneof(
    { depthSize: 'small' },
    leaf,
    fc.array(tie('v'), { maxLength: 3 }),
    fc.dictionary(fc.constantFrom('a', 'b', 'c'), tie('v'), { maxKeys: 3 }),
  ),
})).v;

/** The same value with its object keys in reverse order at every level. */
const reversed = (v: unknown): unknown =>
  Array.isArray(v)
    ? v.map(reversed)
    : v !== null && typeof v === 'object'
      ? Object.fromEntries(
          Object.entries(v)
            .reverse()
            .map(([k, x]) => [k, reversed(x)]),
        )
      : v;

describe('sameJson', () => {
  it('agrees with comparing canonicalJson strings, on equal and unequal pairs', () => {
    fc.assert(
      fc.property(value, value, (a, b) => {
        expect(sameJson(a, b)).toBe(canonicalJson(a) === canonicalJson(b));
      }),
      { numRuns: 2000 },
    );
  });

  it('ignores key order and undefined members, and nothing else', () => {
    fc.assert(
      fc.property(value, (a) => {
        expect(sameJson(a, reversed(a))).toBe(true);
      }),
    );
    expect(sameJson({ a: 1, b: undefined }, { a: 1 })).toBe(true);
    expect(sameJson({ a: 1 }, { a: 1, b: null })).toBe(false);
    // Found by the property above: a member set to undefined is absent, and the counts of members still match.
    expect(sameJson({ a: null }, { a: undefined, c: [] })).toBe(false);
    expect(sameJson([1, 2], [2, 1])).toBe(false);
    expect(sameJson({ a: [] }, { a: {} })).toBe(false);
  });
});

/**
 * What shareJson promises, position by position: where the old and the new value are equal objects, the result
 * is the old one itself; where both are objects of one kind but differ, the same holds of their members.
 */
function expectShared(a: unknown, b: unknown, s: unknown): void {
  const isObj = (v: unknown): v is object => v !== null && typeof v === 'object';
  if (!isObj(a) || !isObj(b)) return;
  if (sameJson(a, b)) {
    expect(s).toBe(a);
    return;
  }
  if (Array.isArray(a) !== Array.isArray(b)) return;
  for (const [k, v] of Object.entries(b)) {
    if (v !== undefined) expectShared((a as Record<string, unknown>)[k], v, (s as Record<string, unknown>)[k]);
  }
}

describe('shareJson', () => {
  it('equals the new value, changes neither input, and takes every equal object from the old value', () => {
    fc.assert(
      fc.property(value, value, (a, b) => {
        const [a0, b0] = [canonicalJson(a), canonicalJson(b)];
        const s = shareJson(a, b);
        expect(sameJson(s, b)).toBe(true);
        expect([canonicalJson(a), canonicalJson(b)]).toEqual([a0, b0]);
        expectShared(a, b, s);
        // Under keys renamed at the top, nothing can be shared there: the result is the new value's own.
        if (b !== null && typeof b === 'object' && !Array.isArray(b)) {
          expect(shareJson({ other: a }, { mine: b }).mine).toBe(b);
        }
      }),
      { numRuns: 2000 },
    );
  });

  it('keeps the unchanged parts of an object whose status moved', () => {
    const prev = { metadata: { name: 'p', labels: { a: '1' } }, spec: { x: [1, 2] }, status: { n: 1 } };
    const next = shareJson(prev, {
      metadata: { name: 'p', labels: { a: '1' } },
      spec: { x: [1, 2] },
      status: { n: 2 },
    });
    expect(next).not.toBe(prev);
    expect(next.metadata).toBe(prev.metadata);
    expect(next.spec).toBe(prev.spec);
    expect(next.status).toEqual({ n: 2 });
    expect(shareJson(prev, structuredClone(prev))).toBe(prev);
  });
});
