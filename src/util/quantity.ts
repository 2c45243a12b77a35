// Kubernetes resource quantities ("500m", "8Gi", "1.5", "2e3"), enough to compare limits with usage.

const SUFFIX: Record<string, number> = {
  '': 1,
  n: 1e-9,
  u: 1e-6,
  m: 1e-3,
  k: 1e3,
  M: 1e6,
  G: 1e9,
  T: 1e12,
  P: 1e15,
  E: 1e18,
  Ki: 2 ** 10,
  Mi: 2 ** 20,
  Gi: 2 ** 30,
  Ti: 2 ** 40,
  Pi: 2 ** 50,
  Ei: 2 ** 60,
};

const QUANTITY =
  /^([+-]?[0-9]+(?:\.[0-9]*)?|[+-]?\.[0-9]+)(?:([eE][+-]?[0-9]+)|(Ki|Mi|Gi|Ti|Pi|Ei|n|u|m|k|M|G|T|P|E))?$/;

/** Parses a quantity (string or number) into a plain number of base units; throws on malformed input. */
export function parseQuantity(value: string | number): number {
  if (typeof value === 'number') return value;
  const match = QUANTITY.exec(value.trim());
  if (!match) throw new Error(`"${value}" is not a Kubernetes quantity (examples: 500m, 2, 8Gi)`);
  const [, number, exponent, suffix] = match;
  const base = Number(number);
  if (exponent) return base * 10 ** Number(exponent.slice(1));
  return base * (SUFFIX[suffix ?? ''] as number);
}
