import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  DurationError,
  formatGoDuration,
  GO_DURATION_PATTERN,
  parseDuration,
  parseExpireAfter,
  parseGoDurationNanos,
  parseKarpenterDuration,
} from './duration.js';

describe("parseDuration follows Go's time.ParseDuration", () => {
  it.each([
    { reason: 'whole hours', text: '336h', seconds: 1_209_600 },
    { reason: 'several units in a row', text: '1h30m', seconds: 5400 },
    { reason: 'a fraction of an hour', text: '1.5h', seconds: 5400 },
    { reason: 'a fraction without a whole part', text: '.5h', seconds: 1800 },
    { reason: 'a point without fraction digits', text: '5.s', seconds: 5 },
    { reason: '"0" alone needs no unit', text: '0', seconds: 0 },
    { reason: 'a leading plus', text: '+15m', seconds: 900 },
    { reason: 'a sign: negative', text: '-1h', seconds: -3600 },
    { reason: 'milliseconds', text: '1500ms', seconds: 1.5 },
    { reason: 'the micro sign µ (U+00B5)', text: '1000000µs', seconds: 1 },
    { reason: 'the Greek mu μ (U+03BC)', text: '1000000μs', seconds: 1 },
    { reason: 'us for micro', text: '2000000us', seconds: 2 },
    { reason: 'nanoseconds', text: '1ns', seconds: 1e-9 },
    { reason: 'leading zeros', text: '007m', seconds: 420 },
    { reason: 'units repeated (Go sums them)', text: '1h1h', seconds: 7200 },
    { reason: 'the largest Go duration', text: '2562047h47m16.854775807s', seconds: 9_223_372_036.854776 },
  ])('$reason: $text', ({ text, seconds }) => {
    expect(parseDuration(text)).toBeCloseTo(seconds, 9);
  });

  it.each([
    { reason: 'a day unit (Go has none)', text: '1d', why: /unknown unit "d"/ },
    { reason: 'a number without unit', text: '15', why: /missing its unit/ },
    { reason: 'an empty string', text: '', why: /empty/ },
    { reason: 'a sign alone', text: '-', why: /empty/ },
    { reason: 'a point without digits', text: '.h', why: /missing its digits/ },
    { reason: 'upper-case units', text: '1H', why: /unknown unit "H"/ },
    { reason: 'spaces', text: '1h 30m', why: /unknown unit "h "/ },
    { reason: 'one past the largest Go duration', text: '2562047h47m16.854775808s', why: /too large/ },
    { reason: 'a huge number of hours', text: '99999999999999999999h', why: /too large/ },
    { reason: 'an exponent (not Go syntax)', text: '1e3s', why: /unknown unit "e"/ },
    { reason: 'an absurdly long value', text: '1h'.repeat(200), why: /longer than 256/ },
  ])('refuses $reason', ({ text, why }) => {
    expect(() => parseDuration(text)).toThrow(DurationError);
    expect(() => parseDuration(text)).toThrow(why);
  });

  it('reads fractions with Go float64 arithmetic (1.1s is 1100000000ns; 0.3h is 1080s)', () => {
    expect(parseGoDurationNanos('1.1s')).toBe(1_100_000_000n);
    expect(parseGoDurationNanos('0.3h')).toBe(1_080_000_000_000n);
    // Fraction digits beyond what an int64 holds are consumed but ignored, as in Go.
    expect(parseGoDurationNanos('1.00000000000000000000000000001s')).toBe(1_000_000_000n);
  });

  it('messages name the value, truncated', () => {
    expect(() => parseDuration(`${'9'.repeat(300)}`)).toThrow(/^"9{77}…" is not a Go duration/);
  });

  it('GO_DURATION_PATTERN accepts exactly what the parser accepts among unsigned strings', () => {
    const pattern = new RegExp(GO_DURATION_PATTERN);
    const alphabet = fc.constantFrom('0', '1', '5', '.', 'h', 'm', 's', 'n', 'u', 'µ', 'μ', 'd');
    fc.assert(
      fc.property(fc.array(alphabet, { maxLength: 8 }), (chars) => {
        const text = chars.join('');
        let parses = true;
        try {
          parseGoDurationNanos(text);
        } catch {
          parses = false;
        }
        expect(pattern.test(text)).toBe(parses);
      }),
      { numRuns: 3000, seed: 7 },
    );
  });
});

describe('Karpenter durations: its CRD patterns, read by the same parser', () => {
  it.each([
    { reason: 'whole hours', text: '336h', ok: true },
    { reason: 'hours and minutes', text: '1h30m', ok: true },
    { reason: 'a fraction (the Karpenter CRD refuses it)', text: '1.5h', ok: false },
    { reason: 'milliseconds (not in the CRD pattern)', text: '1500ms', ok: false },
    { reason: 'a sign', text: '-1h', ok: false },
    { reason: 'Never is only for expireAfter', text: 'Never', ok: false },
  ])('terminationGracePeriod: $reason', ({ text, ok }) => {
    if (ok) expect(parseKarpenterDuration(text)).toBe(parseDuration(text));
    else expect(() => parseKarpenterDuration(text)).toThrow(/not a Karpenter duration/);
  });

  it.each([
    { reason: 'Never means no expiry', text: 'Never', want: null },
    { reason: 'a duration', text: '720h', want: 2_592_000 },
    { reason: 'a fraction is refused, as by the apiserver', text: '1.5h', want: 'error' },
    { reason: 'never in lower case is not Never', text: 'never', want: 'error' },
    { reason: 'pattern-valid but beyond Go', text: '9999999999999999h', want: 'error' },
  ])('expireAfter: $reason', ({ text, want }) => {
    if (want === 'error') expect(() => parseExpireAfter(text)).toThrow(DurationError);
    else expect(parseExpireAfter(text)).toBe(want);
  });
});

describe("formatGoDuration is Go's Duration.String()", () => {
  it.each([
    { reason: 'zero', seconds: 0, text: '0s' },
    { reason: 'hours, minutes and seconds', seconds: 4620, text: '1h17m0s' },
    { reason: 'minutes and seconds', seconds: 90, text: '1m30s' },
    { reason: 'seconds only', seconds: 5, text: '5s' },
    { reason: 'a fraction of a second', seconds: 1.5, text: '1.5s' },
    { reason: 'milliseconds below a second', seconds: 0.002, text: '2ms' },
    { reason: 'microseconds', seconds: 0.0000015, text: '1.5µs' },
    { reason: 'nanoseconds', seconds: 1e-9, text: '1ns' },
    { reason: 'negative', seconds: -90, text: '-1m30s' },
    { reason: 'many hours', seconds: 1_209_600, text: '336h0m0s' },
  ])('$reason: $seconds → $text', ({ seconds, text }) => {
    expect(formatGoDuration(seconds)).toBe(text);
  });

  it('refuses NaN and Infinity instead of printing them as durations', () => {
    expect(() => formatGoDuration(NaN)).toThrow(/NaN is not a duration/);
    expect(() => formatGoDuration(Infinity)).toThrow(/Infinity is not a duration/);
  });

  it('round-trips: parse(format(x)) = x for whole and fractional seconds, negative included', () => {
    fc.assert(
      fc.property(fc.integer({ min: -1e12, max: 1e12 }), (ms) => {
        const seconds = ms / 1000;
        expect(parseDuration(formatGoDuration(seconds))).toBeCloseTo(seconds, 6);
      }),
      { numRuns: 2000, seed: 11 },
    );
  });
});
