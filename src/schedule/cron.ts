// Standard five-field cron (minute hour day-of-month month day-of-week, UTC) and the @-macros, as Karpenter's
// NodePool disruption budgets write their `schedule`. Used only to tell whether a budget is active; a schedule
// this parser cannot read is reported as such and the caller fails closed.

export interface Cron {
  minute: Set<number>;
  hour: Set<number>;
  dom: Set<number>;
  month: Set<number>;
  dow: Set<number>;
  /** Day-of-month or day-of-week restricted (not `*`/`?`): cron matches either when both are. */
  domStar: boolean;
  dowStar: boolean;
}

const MACROS: Record<string, string> = {
  '@yearly': '0 0 1 1 *',
  '@annually': '0 0 1 1 *',
  '@monthly': '0 0 1 * *',
  '@weekly': '0 0 * * 0',
  '@daily': '0 0 * * *',
  '@midnight': '0 0 * * *',
  '@hourly': '0 * * * *',
};
const MONTHS = ['jan', 'feb', 'mar', 'apr', 'may', 'jun', 'jul', 'aug', 'sep', 'oct', 'nov', 'dec'];
const DAYS = ['sun', 'mon', 'tue', 'wed', 'thu', 'fri', 'sat'];

function field(text: string, lo: number, hi: number, names: string[] = [], nameBase = 0): Set<number> | null {
  const out = new Set<number>();
  const value = (v: string): number | null => {
    const i = names.indexOf(v.toLowerCase());
    if (i >= 0) return i + nameBase;
    return /^\d+$/.test(v) ? Number(v) : null;
  };
  for (const part of text.split(',')) {
    const [range, stepText] = part.split('/') as [string, string | undefined];
    const step = stepText === undefined ? 1 : /^\d+$/.test(stepText) ? Number(stepText) : 0;
    if (step < 1) return null;
    let from: number | null;
    let to: number | null;
    if (range === '*' || range === '?') [from, to] = [lo, hi];
    else if (range.includes('-')) {
      const [a, b] = range.split('-') as [string, string];
      [from, to] = [value(a), value(b)];
    } else {
      from = value(range);
      to = stepText === undefined ? from : hi;
    }
    if (from === null || to === null || from < lo || to > hi || from > to) return null;
    for (let v = from; v <= to; v += step) out.add(v);
  }
  return out;
}

/** Parses a schedule, or returns null when it is not one this parser reads. */
export function parseCron(text: string): Cron | null {
  const spec = MACROS[text.trim().toLowerCase()] ?? text.trim();
  const parts = spec.split(/\s+/);
  if (parts.length !== 5) return null;
  const [mi, h, dom, mo, dow] = parts as [string, string, string, string, string];
  const minute = field(mi, 0, 59);
  const hour = field(h, 0, 23);
  const days = field(dom, 1, 31);
  const month = field(mo, 1, 12, MONTHS, 1);
  const weekdays = field(dow, 0, 7, DAYS);
  if (!minute || !hour || !days || !month || !weekdays) return null;
  if (weekdays.delete(7)) weekdays.add(0); // 7 is Sunday too
  const star = (f: string): boolean => f === '*' || f === '?';
  return { minute, hour, dom: days, month, dow: weekdays, domStar: star(dom), dowStar: star(dow) };
}

/** Whether the schedule fires at the minute starting at `ms` (UTC). */
export function firesAt(c: Cron, ms: number): boolean {
  const d = new Date(ms);
  if (!c.minute.has(d.getUTCMinutes()) || !c.hour.has(d.getUTCHours()) || !c.month.has(d.getUTCMonth() + 1))
    return false;
  const domOk = c.dom.has(d.getUTCDate());
  const dowOk = c.dow.has(d.getUTCDay());
  if (c.domStar || c.dowStar) return domOk && dowOk;
  return domOk || dowOk;
}

const MINUTE = 60_000;

/**
 * Whether a firing of the schedule at t makes [t, t + duration) contain `now`. Scans back minute by minute over
 * at most `durationMs` (a budget's duration is hours, rarely days), so it is exact and needs no calendar maths.
 */
export function activeAt(c: Cron, durationMs: number, now: number): boolean {
  const latest = Math.floor(now / MINUTE) * MINUTE;
  for (let t = latest; t > now - durationMs; t -= MINUTE) if (firesAt(c, t)) return true;
  return false;
}
