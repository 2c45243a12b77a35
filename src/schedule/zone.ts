// Wall-clock ↔ instant conversion in an IANA zone, with the DST rules written down rather than left to a
// library default:
//  - a wall time skipped by a spring-forward transition moves forward by the length of the gap
//    (02:30 on a day that jumps 02:00→03:00 is 03:30), the same instant a clock keeps counting to;
//  - a wall time that occurs twice at a fall-back transition means its first occurrence (the earlier instant).
import { IANAZone } from 'luxon';

const zones = new Map<string, IANAZone>();
const validity = new Map<string, boolean>();

export function isValidTimezone(name: string): boolean {
  let ok = validity.get(name);
  if (ok === undefined) {
    ok = IANAZone.isValidZone(name);
    validity.set(name, ok);
  }
  return ok;
}

function zone(name: string): IANAZone {
  let z = zones.get(name);
  if (!z) {
    if (!IANAZone.isValidZone(name)) throw new Error(`unknown time zone "${name}"`);
    z = IANAZone.create(name);
    zones.set(name, z);
  }
  return z;
}

// Offsets are looked up through Intl, which is slow; every UTC offset in use today is a multiple of 15
// minutes, so transitions fall on 15-minute UTC boundaries and one lookup per quarter hour is exact.
const QUARTER_MS = 900_000;
const offsets = new Map<string, number>();

/** UTC offset in minutes of `zoneName` at the instant `epochMs`. */
export function offsetMinutes(zoneName: string, epochMs: number): number {
  const bucket = Math.floor(epochMs / QUARTER_MS);
  const key = `${zoneName}|${bucket}`;
  let o = offsets.get(key);
  if (o === undefined) {
    if (offsets.size > 200_000) offsets.clear();
    o = zone(zoneName).offset(bucket * QUARTER_MS);
    offsets.set(key, o);
  }
  return o;
}

const HOUR_MS = 3_600_000;

/**
 * The instant (epoch ms) at which clocks in `zoneName` read the given wall time. `month` is 1-based; day and
 * minute may overflow (Date.UTC normalises them), which is how "24:00" or "the next day" are expressed.
 */
export function wallToInstant(zoneName: string, year: number, month: number, day: number, minuteOfDay: number): number {
  const naive = Date.UTC(year, month - 1, day, 0, minuteOfDay);
  // Offsets in force around this wall time; transitions are never closer together than a day and a half.
  const candidates = new Set<number>([
    offsetMinutes(zoneName, naive - 36 * HOUR_MS),
    offsetMinutes(zoneName, naive),
    offsetMinutes(zoneName, naive + 36 * HOUR_MS),
  ]);
  const instants = [...candidates].map((o) => naive - o * 60_000);
  const valid = instants.filter((t) => naive - offsetMinutes(zoneName, t) * 60_000 === t);
  if (valid.length > 0) return Math.min(...valid); // fall-back: the first occurrence
  return Math.max(...instants); // spring-forward gap: forward by the gap's length
}
