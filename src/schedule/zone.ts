// Wall-clock ↔ instant conversion in an IANA zone, with the DST rules written down rather than left to a
// library default:
//  - a wall time skipped by a spring-forward transition moves forward by the length of the gap
//    (02:30 on a day that jumps 02:00→03:00 is 03:30), the same instant a clock keeps counting to;
//  - a wall time that occurs twice at a fall-back transition means its first occurrence (the earlier instant).
// Which names are zones is decided by the list generated from Go's tz database (src/generated/timezones.ts),
// exactly the names the reference controller's time.LoadLocation accepts, case-sensitive; ICU's extra names
// (JST, PST, IST, lower-case spellings) are therefore refused. The offsets are Go's too, from 1970 until the end of
// the generated tables (src/generated/tz-offsets.ts, read by tz-table.ts); only an instant outside them is read
// through Intl (Luxon, loaded then), so that a process whose instants all fall inside never loads ICU's data.
import { TIMEZONES } from '../generated/timezones.js';
import { TZ_OFFSETS_UNTIL_MS, TZ_TABLE_OF, TZ_TABLES } from '../generated/tz-offsets.js';
import { boundedCache } from '../util/bounded-cache.js';
import { describeValue } from '../util/describe.js';
import { onFirstUse } from '../util/on-first-use.js';
import { editDistance, nearNames } from '../util/near-names.js';
import { decodeOffsets, offsetAt, type OffsetTable } from './tz-table.js';
import { suggestedZone } from './zone-advice.js';

const KNOWN: ReadonlySet<string> = new Set(TIMEZONES);

/** True for exactly the tz database names Go's time.LoadLocation accepts (less "Local" and "Factory"). */
export function isValidTimezone(name: unknown): boolean {
  return typeof name === 'string' && KNOWN.has(name);
}

const BY_LOWER_CASE: ReadonlyMap<string, string> = new Map(TIMEZONES.map((n) => [n.toLowerCase(), n]));
const LOWER_CASE_NAMES = [...BY_LOWER_CASE.keys()];

/** The one zone name a typo is nearest to (case aside), at most two edits and under half the name away. */
function nearestZone(name: string): string | undefined {
  const lower = name.toLowerCase();
  const exact = BY_LOWER_CASE.get(lower);
  if (exact !== undefined) return exact;
  const near = nearNames(lower, LOWER_CASE_NAMES).map((n) => ({ n, d: editDistance(lower, n) }));
  const best = near[0];
  // Two names as near as each other ("JST": EST, HST, MST) say nothing about which was meant.
  if (best === undefined || near[1]?.d === best.d || 2 * best.d >= lower.length) return undefined;
  return BY_LOWER_CASE.get(best.n);
}

/**
 * The zone an unknown name likely means, for the error message only: the name with its case fixed
 * ("asia/tokyo" → "Asia/Tokyo") or its typo ("Europe/Berln" → "Europe/Berlin"); a name that would draw
 * MisleadingTimezone is replaced by the zone that warning's fix sets ("est" → "EST" → "America/Panama"), so the
 * suggestion leads to no other finding.
 */
export function suggestTimezone(name: string): string | undefined {
  const hit = nearestZone(name);
  if (hit === undefined) return undefined;
  const use = suggestedZone(hit) ?? hit;
  return use !== name ? use : undefined;
}

// Every zone in use is one of ~600 names, each decoded once (a few hundred numbers).
const tables = new Map<string, OffsetTable>();

function table(name: string): OffsetTable {
  let t = tables.get(name);
  if (!t) {
    const at = isValidTimezone(name) ? TZ_TABLE_OF[name] : undefined;
    if (at === undefined) throw new Error(`unknown time zone ${describeValue(name)}`);
    t = decodeOffsets(TZ_TABLES[at] as string);
    tables.set(name, t);
  }
  return t;
}

const ianaZone = onFirstUse('luxon', (m: typeof import('luxon')) => m.IANAZone);
// Outside the tables, offsets come from Intl, which is slow; every UTC offset in use today is a multiple of 15
// minutes, so transitions fall on 15-minute UTC boundaries and one lookup per quarter hour is exact.
const QUARTER_MS = 900_000;
const intlOffsets = boundedCache<string, number>(10_000);

function intlOffsetMinutes(zoneName: string, epochMs: number): number {
  table(zoneName); // refuses an unknown name as inside the tables
  const bucket = Math.floor(epochMs / QUARTER_MS);
  return intlOffsets.get(`${zoneName}|${bucket}`, () => {
    return ianaZone()
      .create(zoneName)
      .offset(bucket * QUARTER_MS);
  });
}

/** UTC offset in minutes of `zoneName` at the instant `epochMs`. */
export function offsetMinutes(zoneName: string, epochMs: number): number {
  if (epochMs >= 0 && epochMs < TZ_OFFSETS_UNTIL_MS) return offsetAt(table(zoneName), epochMs) / 60;
  return intlOffsetMinutes(zoneName, epochMs);
}

/**
 * Decodes the table of each valid zone of `names` and reads its offset at `epochMs`: what a long-running process
 * would rather do at its start than in its first decisions. Unknown names are left for validation.
 */
export function prepareZones(names: Iterable<unknown>, epochMs: number): void {
  for (const n of new Set(names)) if (typeof n === 'string' && isValidTimezone(n)) offsetMinutes(n, epochMs);
}

const HOUR_MS = 3_600_000;

/**
 * What clocks in `zoneName` read at the instant `epochMs`, as a Date whose UTC fields are that wall time (the
 * inverse of wallToInstant).
 */
export const instantToWall = (zoneName: string, epochMs: number): Date =>
  new Date(epochMs + offsetMinutes(zoneName, epochMs) * 60_000);

/**
 * Every instant at which clocks in `zoneName` read the given wall time (`month` 1-based; day and minute may
 * overflow): one as a rule, none in a spring-forward gap, two in a fall-back overlap (earlier first). The naive
 * instant (the wall time read as UTC) and the offsets around it come with it, for wallToInstant's gap rule.
 */
export function wallInstants(
  zoneName: string,
  year: number,
  month: number,
  day: number,
  minuteOfDay: number,
): { valid: number[]; candidates: number[] } {
  const naive = Date.UTC(year, month - 1, day, 0, minuteOfDay);
  // Offsets in force around this wall time; transitions are never closer together than a day and a half.
  const offsets = new Set<number>([
    offsetMinutes(zoneName, naive - 36 * HOUR_MS),
    offsetMinutes(zoneName, naive),
    offsetMinutes(zoneName, naive + 36 * HOUR_MS),
  ]);
  const candidates = [...offsets].map((o) => naive - o * 60_000);
  const valid = candidates.filter((t) => naive - offsetMinutes(zoneName, t) * 60_000 === t).sort((a, b) => a - b);
  return { valid, candidates };
}

/**
 * The instant (epoch ms) at which clocks in `zoneName` read the given wall time. `month` is 1-based; day and
 * minute may overflow (Date.UTC normalises them), which is how "24:00" or "the next day" are expressed.
 */
export function wallToInstant(zoneName: string, year: number, month: number, day: number, minuteOfDay: number): number {
  const { valid, candidates } = wallInstants(zoneName, year, month, day, minuteOfDay);
  if (valid.length > 0) return Math.min(...valid); // fall-back: the first occurrence
  return Math.max(...candidates); // spring-forward gap: forward by the gap's length
}
