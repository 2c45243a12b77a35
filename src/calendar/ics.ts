// The RFC 5545 text form, written here rather than by a library (decision, docs/calendar.md): the calendar uses
// a handful of properties, and what a serializer must get exactly right is small — content lines folded at 75
// octets without splitting a UTF-8 character (RFC 5545 section 3.1), TEXT escaped (3.3.11), CRLF line ends,
// DATE-TIME in UTC or as a local time with a TZID (3.3.5). Pure and deterministic: the same lines give the same
// bytes. The section numbers below are RFC 5545's.

const FOLD_OCTETS = 75;

/** A TEXT value (section 3.3.11): backslash, semicolon and comma escaped, line breaks as \n, other controls dropped. */
export function escapeText(value: string): string {
  return value
    .replace(/\r\n?/g, '\n')
    .replace(/[\\;,]/g, (c) => `\\${c}`)
    .replace(/\n/g, '\\n')
    .replace(/[\x00-\x08\x0a-\x1f\x7f]/g, ''); // eslint-disable-line no-control-regex
}

/**
 * One content line folded (section 3.1): no line longer than 75 octets, each continuation starting with one space,
 * and never inside a UTF-8 sequence (characters are kept whole).
 */
export function fold(line: string): string {
  const out: string[] = [];
  let current = '';
  let octets = 0;
  for (const ch of line) {
    const size = Buffer.byteLength(ch, 'utf8');
    if (octets + size > FOLD_OCTETS) {
      out.push(current);
      current = ' ';
      octets = 1;
    }
    current += ch;
    octets += size;
  }
  out.push(current);
  return out.join('\r\n');
}

/** Content lines (unfolded) as the calendar's bytes: each folded, CRLF after every line. */
export function serialize(lines: readonly string[]): string {
  return lines.map((l) => `${fold(l)}\r\n`).join('');
}

const pad = (n: number, width = 2): string => String(n).padStart(width, '0');

/** The DATE-TIME form of a Date's UTC fields, without the Z: YYYYMMDDTHHMMSS. */
function dateTime(d: Date): string {
  return (
    `${pad(d.getUTCFullYear(), 4)}${pad(d.getUTCMonth() + 1)}${pad(d.getUTCDate())}` +
    `T${pad(d.getUTCHours())}${pad(d.getUTCMinutes())}${pad(d.getUTCSeconds())}`
  );
}

/** An instant as a UTC DATE-TIME (section 3.3.5, form 2), whole seconds (a fraction rounds up, as in the forecast). */
export const utcTime = (ms: number): string => `${dateTime(new Date(Math.ceil(ms / 1000) * 1000))}Z`;

/** A wall-clock time as a local DATE-TIME (section 3.3.5, form 3, with a TZID): year, month (1-based), day, minute. */
export const localTime = (year: number, month: number, day: number, minuteOfDay: number): string =>
  dateTime(new Date(Date.UTC(year, month - 1, day, 0, minuteOfDay)));

/** A UTC offset (section 3.3.14) from minutes: +0100, -0430. */
export function utcOffset(minutes: number): string {
  const sign = minutes < 0 ? '-' : '+';
  const m = Math.abs(minutes);
  return `${sign}${pad(Math.floor(m / 60))}${pad(m % 60)}`;
}
