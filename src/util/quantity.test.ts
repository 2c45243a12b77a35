import { describe, expect, it } from 'vitest';
import { isQuantity, parseQuantity, QuantityError } from './quantity.js';

describe("parseQuantity follows Kubernetes' resource.ParseQuantity", () => {
  it.each([
    { reason: 'a plain integer', value: '4', want: 4 },
    { reason: 'a JSON number', value: 4, want: 4 },
    { reason: 'milli', value: '500m', want: 0.5 },
    { reason: 'binary SI', value: '8Gi', want: 8 * 2 ** 30 },
    { reason: 'decimal SI', value: '2k', want: 2000 },
    { reason: 'exa (E alone is a suffix)', value: '1E', want: 1e18 },
    { reason: 'an exponent', value: '2e3', want: 2000 },
    { reason: 'an upper-case exponent', value: '2E3', want: 2000 },
    { reason: 'a negative exponent', value: '5e-1', want: 0.5 },
    { reason: 'a fraction', value: '1.5', want: 1.5 },
    { reason: 'a point without fraction digits', value: '1.', want: 1 },
    { reason: 'a fraction without a whole part', value: '.5Gi', want: 2 ** 29 },
    { reason: 'a sign', value: '-1', want: -1 },
    { reason: 'a plus sign', value: '+2', want: 2 },
    { reason: 'nano', value: '3n', want: 3e-9 },
    { reason: 'below a nano-unit rounds up to one, as Kubernetes does', value: '1e-12', want: 1e-9 },
    { reason: 'a fraction of a nano rounds up', value: '1.5n', want: 2e-9 },
    { reason: 'beyond 2^63-1 caps there', value: '1e400', want: 2 ** 63 - 1 },
    { reason: 'a huge exponent costs nothing and caps', value: '1e999999999', want: 2 ** 63 - 1 },
    { reason: 'a JSON number in exponent form', value: 1e21, want: 2 ** 63 - 1 },
    { reason: 'zero', value: '0', want: 0 },
  ])('$reason: $value', ({ value, want }) => {
    expect(parseQuantity(value)).toBeCloseTo(want, 12);
  });

  it.each([
    { reason: 'a word', value: 'lots', why: /"lots" is not a Kubernetes quantity/ },
    { reason: 'an empty string', value: '', why: /empty/ },
    { reason: 'a sign alone (ParseQuantity reads 0; the CRD pattern refuses it)', value: '+', why: /no digits/ },
    { reason: 'a point alone', value: '.', why: /no digits/ },
    { reason: 'an unknown suffix', value: '1K', why: /not a number with an optional suffix/ },
    { reason: 'two suffixes', value: '1Gi1', why: /not a number/ },
    { reason: 'a fractional exponent', value: '1e1.5', why: /not a number/ },
    { reason: 'an exponent without digits', value: '1e', why: /not a number/ },
    { reason: 'spaces', value: ' 1', why: /not a number/ },
    { reason: 'NaN', value: NaN, why: /^NaN is not a Kubernetes quantity \(not a finite number\)/ },
    { reason: 'Infinity', value: Infinity, why: /^Infinity is not/ },
    { reason: 'a very long string', value: '1'.repeat(65), why: /longer than 64/ },
  ])('refuses $reason', ({ value, why }) => {
    expect(() => parseQuantity(value)).toThrow(QuantityError);
    expect(() => parseQuantity(value)).toThrow(why);
  });

  it('refuses values that are neither strings nor numbers, naming them', () => {
    expect(() => parseQuantity({ a: 1 } as never)).toThrow(/^\{"a":1\} is not a Kubernetes quantity/);
    expect(isQuantity(null)).toBe(false);
    expect(isQuantity(true)).toBe(false);
    expect(isQuantity('250m')).toBe(true);
  });
});
