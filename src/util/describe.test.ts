import { describe, expect, it } from 'vitest';
import { describeValue, MAX_ECHO, truncate } from './describe.js';

describe('describeValue: what a message echoes after "found"', () => {
  it.each([
    { reason: 'a missing value', value: undefined, want: 'nothing' },
    { reason: 'a short string, quoted', value: 'abc', want: '"abc"' },
    { reason: 'a number', value: 42, want: '42' },
    { reason: 'NaN by name, never "null"', value: NaN, want: 'NaN' },
    { reason: 'Infinity by name', value: Infinity, want: 'Infinity' },
    { reason: '-Infinity by name', value: -Infinity, want: '-Infinity' },
    { reason: 'a number too large to be exact', value: 1e300, want: '1e+300 (too large)' },
    { reason: 'null as null', value: null, want: 'null' },
    { reason: 'NaN inside an object', value: { a: NaN }, want: '{"a":NaN}' },
    { reason: 'a list', value: [1, 'x'], want: '[1,"x"]' },
  ])('$reason', ({ value, want }) => {
    expect(describeValue(value)).toBe(want);
  });

  it('cuts long strings inside their quotes, and huge objects without stringifying them whole', () => {
    const long = describeValue('x'.repeat(10_000));
    expect(long).toBe(`"${'x'.repeat(MAX_ECHO - 3)}…"`);
    const huge = describeValue(Object.fromEntries(Array.from({ length: 100_000 }, (_, i) => [`k${i}`, i])));
    expect(huge.length).toBeLessThanOrEqual(MAX_ECHO);
    expect(huge.endsWith('…')).toBe(true);
  });

  it('never splits a surrogate pair', () => {
    const cut = truncate('😀'.repeat(100), 10);
    expect(Array.from(cut)).toHaveLength(10);
    expect(cut).toBe(`${'😀'.repeat(9)}…`);
  });
});
