// Checks of flag values the commands share: -o narrowed to a command's formats, and --now.
import { truncate } from '../src/util/describe.js';
import { parseDuration } from '../src/util/duration.js';
import { UsageError } from './io.js';

/** One of the allowed values of an enumerated flag (-o), or a UsageError naming them. */
export function oneOf<T extends string>(flag: string, value: unknown, allowed: readonly T[]): T {
  if (typeof value === 'string' && (allowed as readonly string[]).includes(value)) return value as T;
  const list = allowed.length > 1 ? `${allowed.slice(0, -1).join(', ')} or ${allowed.at(-1)}` : allowed.join('');
  throw new UsageError(`${flag} ${String(value)}: expected ${list}`);
}

// RFC 3339 section 5.6 date-time. The offset is required: without one the time means a different instant on
// every machine.
const RFC3339 = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})(\.\d{1,9})?(Z|[+-](\d{2}):(\d{2}))$/;

function daysInMonth(year: number, month: number): number {
  if (month === 2) return (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0 ? 29 : 28;
  return [4, 6, 9, 11].includes(month) ? 30 : 31;
}

/** Why `value` is not an RFC 3339 date-time with an offset, or null when it is one. */
function rfc3339Problem(value: string): string | null {
  const m = RFC3339.exec(value);
  if (!m) return 'not an RFC 3339 date-time with an offset (YYYY-MM-DDTHH:MM:SSZ or ±HH:MM)';
  const [year, month, day, hour, minute, second] = m.slice(1, 7).map(Number);
  if (year === undefined || month === undefined || day === undefined) return 'not a date';
  if (hour === undefined || minute === undefined || second === undefined) return 'not a time';
  if (year < 1970) return 'a year before 1970';
  if (month < 1 || month > 12) return `month ${m[2]} does not exist`;
  if (day < 1 || day > daysInMonth(year, month)) return `${m[1]}-${m[2]} has no day ${m[3]}`;
  if (hour > 23 || minute > 59 || second > 59) return `${m[4]}:${m[5]}:${m[6]} is not a time of day`;
  if (m[9] !== undefined && (Number(m[9]) > 23 || Number(m[10]) > 59)) return `offset ${m[8]} does not exist`;
  return null;
}

/** --now: the clock for the run; the real clock when unset. */
export function parseNow(value: string | undefined, realNow: () => number): number {
  if (value === undefined) return realNow();
  const problem = rfc3339Problem(value);
  if (problem !== null)
    throw new UsageError(`--now ${value.slice(0, 40)}: ${problem}; expected a time such as 2027-01-04T00:00:00Z`);
  return Date.parse(value);
}

/**
 * A length of time given to a flag (simulate's --duration, calendar's --horizon), in seconds: whole days (60d)
 * or a Go duration (1440h, 90m), positive and at most `maxDays`.
 */
export function parseSpan(flag: string, text: string, maxDays: number, examples: string): number {
  const days = /^(\d{1,4})d$/.exec(text);
  let seconds: number | null = null;
  try {
    seconds = days ? Number(days[1]) * 86400 : parseDuration(text);
  } catch {
    seconds = null;
  }
  if (seconds === null || seconds <= 0 || seconds > maxDays * 86400)
    throw new UsageError(
      `${flag} ${truncate(text, 40)}: expected a positive duration of at most ${maxDays}d (e.g. ${examples})`,
    );
  return seconds;
}
