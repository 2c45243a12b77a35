import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { compareResourceVersion } from './resource-version.js';

describe('compareResourceVersion (KEP-5504)', () => {
  it.each([
    { reason: 'equal', a: '42', b: '42', want: 0 },
    { reason: 'a shorter number is earlier, whatever its digits', a: '999', b: '1000', want: -1 },
    { reason: 'same length: by digits', a: '1001', b: '1000', want: 1 },
    { reason: 'leading zero: not a resourceVersion an apiserver issues', a: '0042', b: '42', want: null },
    { reason: 'zero is the special "any" value, never a live version', a: '0', b: '1', want: null },
    { reason: 'an opaque string', a: 'abc', b: '1', want: null },
    { reason: 'empty', a: '', b: '1', want: null },
  ])('$reason', ({ a, b, want }) => {
    expect(compareResourceVersion(a, b)).toBe(want);
  });

  it('orders positive integers of any length as BigInt does', () => {
    const rv = fc.bigInt({ min: 1n, max: 10n ** 40n });
    fc.assert(
      fc.property(rv, rv, (x, y) => {
        const want = x === y ? 0 : x < y ? -1 : 1;
        expect(compareResourceVersion(String(x), String(y))).toBe(want);
      }),
    );
  });
});
