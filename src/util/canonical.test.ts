import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { canonicalJson, sameJson } from './canonical.js';

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
    expect(sameJson([1, 2], [2, 1])).toBe(false);
    expect(sameJson({ a: [] }, { a: {} })).toBe(false);
  });
});
