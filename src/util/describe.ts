// How an input value is echoed back in a message: short (long values are cut, so a megabyte string cannot
// flood a terminal or a Kubernetes condition), and honest about numbers JSON cannot spell — JSON.stringify
// turns NaN and Infinity into "null", which would tell the user they wrote something they did not.

/** Echoed values are cut to this many characters, the cut marked with "…". */
export const MAX_ECHO = 80;

/** The largest integer a JSON number holds exactly; beyond it a value is named as too large. */
const SAFE = Number.MAX_SAFE_INTEGER;

function numberText(n: number): string {
  if (Number.isNaN(n)) return 'NaN';
  if (n === Infinity) return 'Infinity';
  if (n === -Infinity) return '-Infinity';
  return String(n);
}

/** JSON, except that non-finite numbers keep their names (NaN, Infinity, -Infinity) and bigints their digits. */
function stringify(value: unknown): string {
  if (typeof value === 'number') return numberText(value);
  if (typeof value === 'bigint') return value.toString();
  if (typeof value === 'undefined' || typeof value === 'function' || typeof value === 'symbol') return 'nothing';
  if (value === null || typeof value !== 'object') return JSON.stringify(value);
  if (Array.isArray(value)) return `[${value.map(stringify).join(',')}]`;
  const entries = Object.entries(value as Record<string, unknown>).filter(([, v]) => v !== undefined);
  return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${stringify(v)}`).join(',')}}`;
}

/** Cuts `text` to `max` characters (code points, so no half surrogate pair is left), marking the cut. */
export function truncate(text: string, max = MAX_ECHO): string {
  if (text.length <= max) return text;
  // A code point is at most two UTF-16 units: the first 2·max units hold every code point that is kept.
  const points = Array.from(text.slice(0, 2 * max));
  if (points.length <= max && text.length <= 2 * max) return text;
  return `${points.slice(0, max - 1).join('')}…`;
}

/**
 * The value as a message shows it after "found": `"abc"`, `42`, `NaN`, `Infinity`, `1e+300 (too large)`,
 * `{"a":1}`, `nothing` for a missing value — at most MAX_ECHO characters.
 */
export function describeValue(value: unknown): string {
  if (typeof value === 'number' && Number.isFinite(value) && Math.abs(value) > SAFE)
    return `${numberText(value)} (too large)`;
  // A string is cut inside its quotes, so the echo still reads as one (cut) string.
  if (typeof value === 'string')
    return value.length <= MAX_ECHO - 2 ? JSON.stringify(value) : JSON.stringify(truncate(value, MAX_ECHO - 2));
  if (typeof value === 'object' && value !== null) {
    // A huge object is never stringified whole: only as much as is shown.
    return truncate(stringify(shallowPreview(value)));
  }
  return truncate(stringify(value));
}

/** At most MAX_ECHO members at every level: enough to fill the echo, bounded whatever the input's size. */
function shallowPreview(value: object, depth = 0): unknown {
  if (depth > 8) return '…';
  if (Array.isArray(value)) {
    return value
      .slice(0, MAX_ECHO)
      .map((v: unknown) => (typeof v === 'object' && v !== null ? shallowPreview(v, depth + 1) : v));
  }
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value as Record<string, unknown>).slice(0, MAX_ECHO)) {
    out[truncate(k)] =
      typeof v === 'object' && v !== null ? shallowPreview(v, depth + 1) : typeof v === 'string' ? truncate(v) : v;
  }
  return out;
}
