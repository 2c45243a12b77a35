// Kubernetes resource quantities ("500m", "8Gi", "1.5", "2e3"), read as resource.ParseQuantity reads them
// (k8s.io/apimachinery): the same grammar, the same suffixes, non-zero values rounded up (away from zero) to a
// whole nano-unit, and the magnitude capped at 2^63-1 base units. Where ParseQuantity is looser than the
// CRD pattern Karpenter declares for limits and resources ("+" alone reads as 0 there; an exponent may have
// a fraction in the pattern but not in the parser), the stricter of the two applies, so that what we read is
// what the apiserver admitted. The arithmetic is exact (integers of nano-units), converted to a number last.
import { describeValue } from './describe.js';

const DECIMAL_SI: Readonly<Record<string, number>> = {
  n: -9,
  u: -6,
  m: -3,
  '': 0,
  k: 3,
  M: 6,
  G: 9,
  T: 12,
  P: 15,
  E: 18,
};
const BINARY_SI: Readonly<Record<string, number>> = { Ki: 10, Mi: 20, Gi: 30, Ti: 40, Pi: 50, Ei: 60 };

/** sign, whole digits, fraction digits, then one suffix: binary SI, decimal SI, or an integer exponent. */
const QUANTITY = /^([+-]?)([0-9]*)(?:\.([0-9]*))?(Ki|Mi|Gi|Ti|Pi|Ei|[numkMGTPE]|[eE][+-]?[0-9]+)?$/;

/** Quantities longer than this are refused: no real resource amount needs more digits. */
export const MAX_QUANTITY_LENGTH = 64;

const NANO = 1_000_000_000n;
/** The cap of resource.Quantity: 2^63-1 base units, here in nano-units. */
const MAX_NANOS = ((1n << 63n) - 1n) * NANO;

export const QUANTITY_ALLOWED =
  'a Kubernetes quantity such as 500m, 4, 8Gi or 1e3 (suffixes n u m k M G T P E, Ki Mi Gi Ti Pi Ei)';

export class QuantityError extends Error {}

function refuse(value: unknown, why: string): never {
  throw new QuantityError(
    `${describeValue(value)} is not a Kubernetes quantity (${why}); allowed: ${QUANTITY_ALLOWED}`,
  );
}

/** ceil(|n| / d) for positive d, as a non-negative bigint. */
function ceilDiv(n: bigint, d: bigint): bigint {
  return (n + d - 1n) / d;
}

/** |digits| · 10^exp10 · 2^exp2 in nano-units, rounded up, capped at MAX_NANOS. */
function toNanos(digits: bigint, exp10: number, exp2: number): bigint {
  if (digits === 0n) return 0n;
  const width = digits.toString().length;
  // Decide the obvious extremes before building any power: a hostile exponent (e999999999) must cost nothing.
  if (width + exp10 + exp2 * 0.302 > 40) return MAX_NANOS;
  if (width + exp10 + exp2 * 0.302 + 9 < -1) return 1n; // below one nano-unit: rounded up to it, as Kubernetes does
  let nanos = digits << BigInt(exp2);
  const shift = exp10 + 9;
  nanos = shift >= 0 ? nanos * 10n ** BigInt(shift) : ceilDiv(nanos, 10n ** BigInt(-shift));
  return nanos > MAX_NANOS ? MAX_NANOS : nanos;
}

/** Parses a quantity (string, or a JSON/YAML number) into a number of base units; throws QuantityError. */
export function parseQuantity(value: string | number): number {
  let text: string;
  if (typeof value === 'number') {
    if (!Number.isFinite(value)) refuse(value, 'not a finite number');
    text = String(value); // 1e+21 and 1.5e-7 are valid quantity spellings too
  } else if (typeof value === 'string') {
    text = value;
  } else {
    refuse(value, 'neither a string nor a number');
  }
  if (text.length === 0) refuse(value, 'empty');
  if (text.length > MAX_QUANTITY_LENGTH) refuse(value, `longer than ${MAX_QUANTITY_LENGTH} characters`);
  const match = QUANTITY.exec(text);
  if (!match) refuse(value, 'not a number with an optional suffix');
  const [, sign, whole = '', fraction = '', suffix = ''] = match;
  if (whole === '' && fraction === '') refuse(value, 'no digits');
  let exp10 = -fraction.length;
  let exp2 = 0;
  if (suffix in BINARY_SI) exp2 = BINARY_SI[suffix] as number;
  else if (suffix in DECIMAL_SI) exp10 += DECIMAL_SI[suffix] as number;
  else {
    const exponent = Number(suffix.slice(1));
    // Kubernetes reads the exponent as an int64; anything that large is capped (or rounded up) below anyway.
    exp10 += Math.max(-1e6, Math.min(1e6, exponent));
  }
  const nanos = toNanos(BigInt(whole + fraction || '0'), exp10, exp2);
  const magnitude = Number(nanos / NANO) + Number(nanos % NANO) / 1e9;
  return sign === '-' && magnitude !== 0 ? -magnitude : magnitude;
}

/** True when `value` is a quantity parseQuantity reads. */
export function isQuantity(value: unknown): boolean {
  if (typeof value !== 'string' && typeof value !== 'number') return false;
  try {
    parseQuantity(value);
    return true;
  } catch {
    return false;
  }
}
