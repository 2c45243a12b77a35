// The tests' independent model of a zone's wall clock: what Intl (ICU) reads at an instant. The program itself
// reads Go's offsets from generated tables (src/schedule/zone.ts), so agreement between the two is a finding.

export interface Wall {
  year: number;
  month: number;
  day: number;
  hour: number;
  minute: number;
  second: number;
  /** Mon, Tue, … */
  weekday: string;
}

const formatters = new Map<string, Intl.DateTimeFormat>();

/** The wall clock in `zone` at the instant `ms`, as Intl reads it. */
export function intlWall(zone: string, ms: number): Wall {
  let f = formatters.get(zone);
  if (!f) {
    f = new Intl.DateTimeFormat('en-US', {
      timeZone: zone,
      hourCycle: 'h23',
      era: 'short',
      weekday: 'short',
      year: 'numeric',
      month: 'numeric',
      day: 'numeric',
      hour: 'numeric',
      minute: 'numeric',
      second: 'numeric',
    });
    formatters.set(zone, f);
  }
  const p = Object.fromEntries(f.formatToParts(new Date(ms)).map((x) => [x.type, x.value]));
  return {
    year: p.era === 'BC' ? 1 - Number(p.year) : Number(p.year),
    month: Number(p.month),
    day: Number(p.day),
    hour: Number(p.hour),
    minute: Number(p.minute),
    second: Number(p.second),
    weekday: String(p.weekday),
  };
}

/** The UTC offset in seconds in `zone` at `ms`, as Intl reads it: its wall clock less the instant. */
export function intlOffsetSeconds(zone: string, ms: number): number {
  const w = intlWall(zone, ms);
  const wall = Date.UTC(w.year, w.month - 1, w.day, w.hour, w.minute, w.second);
  return (wall - Math.floor(ms / 1000) * 1000) / 1000;
}
