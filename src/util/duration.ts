// Go-style durations ("1h30m", "336h", "1.5h"), the format Karpenter and the RotationPolicy API use.
// Internally every duration is a number of seconds (fractions allowed, sub-millisecond precision dropped).

const UNIT_SECONDS: Record<string, number> = {
  ns: 1e-9,
  us: 1e-6,
  µs: 1e-6,
  ms: 1e-3,
  s: 1,
  m: 60,
  h: 3600,
};

const DURATION = /^(?:[0-9]+(?:\.[0-9]+)?(?:ns|us|µs|ms|s|m|h))+$/;
const PART = /([0-9]+(?:\.[0-9]+)?)(ns|us|µs|ms|s|m|h)/g;

export class DurationError extends Error {}

const parsed = new Map<string, number>();

/** Parses a Go duration into seconds. Throws DurationError naming the value when it is not one. */
export function parseDuration(text: string): number {
  const hit = parsed.get(text);
  if (hit !== undefined) return hit;
  if (!DURATION.test(text)) {
    throw new DurationError(`"${text}" is not a Go duration (examples: 15m, 1h30m, 336h; units ns, us, ms, s, m, h)`);
  }
  let total = 0;
  for (const [, value, unit] of text.matchAll(PART)) total += Number(value) * (UNIT_SECONDS[unit as string] as number);
  const seconds = Math.round(total * 1000) / 1000;
  if (parsed.size > 10_000) parsed.clear();
  parsed.set(text, seconds);
  return seconds;
}

export const NEVER = 'Never';

/** Karpenter's expireAfter: a duration, or "Never" (null). */
export function parseExpireAfter(text: string): number | null {
  return text === NEVER ? null : parseDuration(text);
}

/** Go's time.Duration.String() form for whole seconds, e.g. 4620 → "1h17m0s" (used in annotations). */
export function formatGoDuration(seconds: number): string {
  if (seconds === 0) return '0s';
  const sign = seconds < 0 ? '-' : '';
  let rest = Math.abs(seconds);
  const h = Math.floor(rest / 3600);
  rest -= h * 3600;
  const m = Math.floor(rest / 60);
  const s = Math.round((rest - m * 60) * 1000) / 1000;
  if (h > 0) return `${sign}${h}h${m}m${s}s`;
  if (m > 0) return `${sign}${m}m${s}s`;
  return `${sign}${s}s`;
}

/** A compact human form for tables, e.g. 513780 → "5d22h43m", 4620 → "1h17m", 90 → "1m30s". */
export function formatHuman(seconds: number): string {
  if (seconds === 0) return '0s';
  const sign = seconds < 0 ? '-' : '';
  let rest = Math.round(Math.abs(seconds));
  const parts: string[] = [];
  for (const [unit, size] of [
    ['d', 86400],
    ['h', 3600],
    ['m', 60],
    ['s', 1],
  ] as const) {
    const n = Math.floor(rest / size);
    rest -= n * size;
    if (n > 0) parts.push(`${n}${unit}`);
  }
  // Three units are enough for a person; the JSON output carries exact seconds.
  return sign + parts.slice(0, 3).join('');
}
