import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { boundedCache } from './bounded-cache.js';
import { canonicalJson, sortKeys } from './canonical.js';

describe('boundedCache', () => {
  it('never holds more than max entries and always answers what compute answers', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 8 }),
        fc.array(fc.integer({ min: 0, max: 20 }), { maxLength: 200 }),
        (max, keys) => {
          const cache = boundedCache<number, number>(max);
          for (const k of keys) {
            expect(cache.get(k, (x) => x * 3)).toBe(k * 3);
            expect(cache.size).toBeLessThanOrEqual(max);
          }
        },
      ),
    );
  });

  it('evicts the least recently used entry, not the oldest inserted', () => {
    const cache = boundedCache<string, number>(2);
    let computed = 0;
    const f = (): number => ++computed;
    cache.get('a', f);
    cache.get('b', f);
    cache.get('a', f); // a is now the most recent
    cache.get('c', f); // evicts b
    expect(computed).toBe(3);
    cache.get('a', f);
    expect(computed).toBe(3);
    cache.get('b', f);
    expect(computed).toBe(4);
  });

  it('stores nothing when compute throws', () => {
    const cache = boundedCache<string, number>(2);
    expect(() =>
      cache.get('x', () => {
        throw new Error('bad');
      }),
    ).toThrow('bad');
    expect(cache.size).toBe(0);
  });

  it('refuses a bound that is not a positive integer', () => {
    expect(() => boundedCache(0)).toThrow(RangeError);
  });
});

describe('canonical forms', () => {
  it('equal values in any key order give the same canonical JSON and sortKeys output', () => {
    fc.assert(
      fc.property(fc.dictionary(fc.string(), fc.jsonValue(), { maxKeys: 6 }), (obj) => {
        const reversed = Object.fromEntries(Object.entries(obj).reverse());
        expect(canonicalJson(reversed)).toBe(canonicalJson(obj));
        expect(JSON.stringify(sortKeys(reversed))).toBe(JSON.stringify(sortKeys(obj)));
        expect(JSON.parse(JSON.stringify(sortKeys(obj)))).toEqual(JSON.parse(JSON.stringify(obj)));
      }),
    );
  });

  it('sorts nested keys and keeps list order', () => {
    expect(canonicalJson({ b: [3, { z: 1, a: 2 }], a: null })).toBe('{"a":null,"b":[3,{"a":2,"z":1}]}');
  });
});
