// Go durations ("1h30m", "336h", "1.5h", ".5h"), the format Karpenter and the RotationPolicy API use. ONE parser,
// with the grammar and the arithmetic of Go's time.ParseDuration, so that what we accept and the value we read
// are what the reference controller (and the apiserver's CEL `duration()`) accept and read. Which values a given
// field allows (Karpenter's narrower pattern, our per-field bounds) is decided on top of it, never by a second
// grammar. Internally a duration is a number of seconds (parsed exactly in nanoseconds first).
import { boundedCache } from './bounded-cache.js';
import { describeValue } from './describe.js';

/** Nanoseconds per unit; µ (U+00B5, micro sign) and μ (U+03BC, Greek mu) are both accepted, as Go does. */
const UNIT_NS: Readonly<Record<string, bigint>> = {
  ns: 1n,
  us: 1_000n,
  µs: 1_000n,
  μs: 1_000n,
  ms: 1_000_000n,
  s: 1_000_000_000n,
  m: 60_000_000_000n,
  h: 3_600_000_000_000n,
};

/** Go's time.Duration is an int64 of nanoseconds: about 2562047h47m16.854775807s at most. */
export const MAX_DURATION_NS = (1n << 63n) - 1n;

/**
 * The non-negative, unsigned part of Go's grammar as a JSON-Schema/CRD pattern ("0" alone, or one or more
 * number+unit parts, a number having digits before or after its point). Every duration pattern in schemas/
 * is this one (a test checks), so the schema and the parser cannot disagree.
 */
export const GO_DURATION_PATTERN = '^(0|(([0-9]+(\\.[0-9]*)?|\\.[0-9]+)(ns|us|µs|μs|ms|s|m|h))+)$';

/** Karpenter's own CRD patterns (karpenter.sh_nodepools.yaml v1.14.1): integers and s, m, h only. */
export const KARPENTER_DURATION = /^([0-9]+(s|m|h))+$/;
export const KARPENTER_EXPIRE_AFTER = /^(([0-9]+(s|m|h))+|Never)$/;

const UNITS_TEXT = 'units ns, us, µs, ms, s, m, h; no days';

export class DurationError extends Error {}

interface Cursor {
  s: string;
  i: number;
}

/** Leading decimal digits as an exact integer; `digits` counts them (Go's leadingInt). */
function leadingInt(c: Cursor): { value: bigint; digits: number } {
  const start = c.i;
  while (c.i < c.s.length && c.s[c.i]! >= '0' && c.s[c.i]! <= '9') c.i++;
  const digits = c.i - start;
  return { value: digits === 0 ? 0n : BigInt(c.s.slice(start, c.i)), digits };
}

/**
 * The fraction digits after a point, as Go's leadingFraction reads them: digits beyond int64 precision are
 * consumed but ignored, and the scale is a float64 power of ten.
 */
function leadingFraction(c: Cursor): { value: bigint; scale: number; digits: number } {
  let value = 0n;
  let scale = 1;
  let overflow = false;
  const start = c.i;
  while (c.i < c.s.length && c.s[c.i]! >= '0' && c.s[c.i]! <= '9') {
    if (!overflow) {
      const next = value * 10n + BigInt(c.s.charCodeAt(c.i) - 48);
      if (next > MAX_DURATION_NS) overflow = true;
      else {
        value = next;
        scale *= 10;
      }
    }
    c.i++;
  }
  return { value, scale, digits: c.i - start };
}

function fail(text: string, why: string): never {
  throw new DurationError(
    `${describeValue(text)} is not a Go duration (${why}; examples: 15m, 1h30m, 1.5h; ${UNITS_TEXT})`,
  );
}

/** Go's time.ParseDuration, exactly: the signed number of nanoseconds, or a DurationError saying why not. */
export function parseGoDurationNanos(text: string): bigint {
  if (typeof text !== 'string') fail(String(text), 'not a string');
  if (text.length > 256) fail(text, 'longer than 256 characters');
  const c: Cursor = { s: text, i: 0 };
  let negative = false;
  if (c.s[0] === '-' || c.s[0] === '+') {
    negative = c.s[0] === '-';
    c.i++;
  }
  if (c.s.slice(c.i) === '0') return 0n;
  if (c.i === c.s.length) fail(text, 'empty');
  let total = 0n;
  while (c.i < c.s.length) {
    const whole = leadingInt(c);
    let fraction = { value: 0n, scale: 1, digits: 0 };
    const point = c.s[c.i] === '.';
    if (point) {
      c.i++;
      fraction = leadingFraction(c);
    }
    if (whole.digits === 0 && fraction.digits === 0) fail(text, 'a number is missing its digits');
    const unitStart = c.i;
    while (c.i < c.s.length && c.s[c.i] !== '.' && !(c.s[c.i]! >= '0' && c.s[c.i]! <= '9')) c.i++;
    if (unitStart === c.i) fail(text, 'a number is missing its unit');
    const unitText = c.s.slice(unitStart, c.i);
    const unit = UNIT_NS[unitText];
    if (unit === undefined) fail(text, `unknown unit ${describeValue(unitText)}`);
    if (whole.value > MAX_DURATION_NS / unit) fail(text, 'too large: Go durations end at about 2562047h');
    let part = whole.value * unit;
    if (fraction.value > 0n) {
      // float64 arithmetic, truncated, exactly as Go computes the fractional part.
      part += BigInt(Math.trunc(Number(fraction.value) * (Number(unit) / fraction.scale)));
    }
    total += part;
    if (total > MAX_DURATION_NS) fail(text, 'too large: Go durations end at about 2562047h');
  }
  return negative ? -total : total;
}

const parsed = boundedCache<string, number>(4096);

/** Parses a Go duration into seconds (Go's grammar and rounding). Throws DurationError naming the value. */
export function parseDuration(text: string): number {
  return parsed.get(text, (t) => Number(parseGoDurationNanos(t)) / 1e9);
}

export const NEVER = 'Never';

/** Karpenter's terminationGracePeriod: its CRD pattern (integers; s, m, h), read with the one parser. */
export function parseKarpenterDuration(text: string): number {
  if (typeof text !== 'string' || !KARPENTER_DURATION.test(text)) {
    throw new DurationError(
      `${describeValue(text)} is not a Karpenter duration (whole numbers with units s, m and h, such as 1h or 90m)`,
    );
  }
  return parseDuration(text);
}

/** Karpenter's expireAfter: its CRD pattern, a duration or "Never" (null). */
export function parseExpireAfter(text: string): number | null {
  if (typeof text !== 'string' || !KARPENTER_EXPIRE_AFTER.test(text)) {
    throw new DurationError(
      `${describeValue(text)} is not a Karpenter expireAfter ` +
        '(whole numbers with units s, m and h such as 336h, or Never)',
    );
  }
  return text === NEVER ? null : parseDuration(text);
}

/**
 * Go's time.Duration.String() for a number of seconds, e.g. 4620 → "1h17m0s", 1.5 → "1.5s", -90 → "-1m30s",
 * 0.002 → "2ms". Exact to the nanosecond (the value is rounded to whole nanoseconds first).
 */
export function formatGoDuration(seconds: number): string {
  if (!Number.isFinite(seconds)) throw new RangeError(`formatGoDuration: ${String(seconds)} is not a duration`);
  const ns = BigInt(Math.round(seconds * 1e9));
  if (ns === 0n) return '0s';
  const sign = ns < 0n ? '-' : '';
  const abs = ns < 0n ? -ns : ns;
  if (abs < 1_000_000_000n) {
    // Below a second Go picks the largest unit that keeps an integer part: ns, µs or ms.
    if (abs < 1_000n) return `${sign}${abs}ns`;
    if (abs < 1_000_000n) return `${sign}${fixed(abs, 1_000n)}µs`;
    return `${sign}${fixed(abs, 1_000_000n)}ms`;
  }
  const h = abs / 3_600_000_000_000n;
  const m = (abs / 60_000_000_000n) % 60n;
  const s = fixed(abs % 60_000_000_000n, 1_000_000_000n);
  if (h > 0n) return `${sign}${h}h${m}m${s}s`;
  if (m > 0n) return `${sign}${m}m${s}s`;
  return `${sign}${s}s`;
}

/** value/unit as a decimal without trailing zeros (Go's fmtFrac + fmtInt). */
function fixed(value: bigint, unit: bigint): string {
  const whole = value / unit;
  const frac = value % unit;
  if (frac === 0n) return String(whole);
  const digits = String(unit).length - 1;
  return `${whole}.${String(frac).padStart(digits, '0').replace(/0+$/, '')}`;
}

/**
 * A duration as every duration field accepts it (RotationPolicy's, Karpenter's expireAfter, Go's
 * time.ParseDuration): hours, minutes and seconds, exact to the second, zero units left out — 513780 →
 * "142h43m", 4620 → "1h17m", 90 → "1m30s". Tables, findings and their fixes all print this form, so a figure
 * or a suggested value can be pasted into a manifest as it is (no days: no duration field takes them).
 */
export function formatDuration(seconds: number): string {
  if (seconds === 0) return '0s';
  const sign = seconds < 0 ? '-' : '';
  let rest = Math.round(Math.abs(seconds));
  const parts: string[] = [];
  for (const [unit, size] of [
    ['h', 3600],
    ['m', 60],
    ['s', 1],
  ] as const) {
    const n = Math.floor(rest / size);
    rest -= n * size;
    if (n > 0) parts.push(`${n}${unit}`);
  }
  return sign + parts.join('');
}
