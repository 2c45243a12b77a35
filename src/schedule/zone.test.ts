import fc from 'fast-check';
import { IANAZone } from 'luxon';
import { describe, expect, it } from 'vitest';
import { TIMEZONES, TZDATA_VERSION } from '../generated/timezones.js';
import { TZ_TABLE_OF, TZ_TABLES } from '../generated/tz-offsets.js';
import { intlOffsetSeconds } from '../../test/support/intl-clock.js';
import { decodeOffsets, encodeOffsets, offsetAt } from './tz-table.js';
import { isValidTimezone, offsetMinutes, suggestTimezone } from './zone.js';

describe("time zones: exactly the names Go's time.LoadLocation accepts", () => {
  it.each([
    { reason: 'a canonical zone', name: 'Asia/Tokyo', valid: true },
    { reason: 'UTC', name: 'UTC', valid: true },
    { reason: 'a backward link', name: 'US/Pacific', valid: true },
    { reason: 'a link to a country', name: 'Japan', valid: true },
    { reason: 'a POSIX-style zone that is in the tz database', name: 'EST5EDT', valid: true },
    { reason: 'a fixed-offset Etc zone', name: 'Etc/GMT+5', valid: true },
    { reason: 'JST: an ICU abbreviation, not a zone', name: 'JST', valid: false },
    { reason: 'PST: an ICU abbreviation', name: 'PST', valid: false },
    { reason: 'IST: India, Israel or Ireland', name: 'IST', valid: false },
    { reason: 'BST: ICU reads it as +06:00', name: 'BST', valid: false },
    { reason: 'CST: ambiguous abbreviation', name: 'CST', valid: false },
    { reason: 'wrong case', name: 'asia/tokyo', valid: false },
    { reason: 'upper case', name: 'UTC'.toLowerCase(), valid: false },
    { reason: 'Local: the controller host zone, meaningless for a cluster-wide policy', name: 'Local', valid: false },
    { reason: 'Factory: the tz placeholder for "unset"', name: 'Factory', valid: false },
    { reason: 'an empty name (Go reads it as UTC; we require a name)', name: '', valid: false },
    { reason: 'a made-up zone', name: 'Asia/Atlantis', valid: false },
    { reason: 'a path', name: '../../etc/passwd', valid: false },
  ])('$reason: $name', ({ name, valid }) => {
    expect(isValidTimezone(name)).toBe(valid);
  });

  it('non-strings are not zones', () => {
    expect(isValidTimezone(42)).toBe(false);
    expect(isValidTimezone(null)).toBe(false);
  });

  it.each([
    { reason: 'a wrongly-cased name', name: 'asia/tokyo', suggested: 'Asia/Tokyo' },
    { reason: 'a valid name needs nothing', name: 'Asia/Tokyo', suggested: undefined },
    { reason: 'a letter left out', name: 'Europe/Berln', suggested: 'Europe/Berlin' },
    { reason: 'two letters swapped, and the case', name: 'america/new_yrok', suggested: 'America/New_York' },
    { reason: 'JST is as near EST, HST and MST: no guess', name: 'JST', suggested: undefined },
    { reason: 'too far from every name', name: 'Mars/Olympus', suggested: undefined },
    { reason: 'a short name is not guessed from half of it', name: 'XY', suggested: undefined },
    {
      reason: '"est" is EST, which would warn MisleadingTimezone: the zone that warning sets instead',
      name: 'est',
      suggested: 'America/Panama',
    },
    {
      reason: 'likewise a misspelt Etc/GMT name: the zone with its offset',
      name: 'etc/gmt-9',
      suggested: 'Asia/Tokyo',
    },
  ])('suggests the zone meant: $reason ($name)', ({ name, suggested }) => {
    expect(suggestTimezone(name)).toBe(suggested);
  });

  it('the list is sorted, without duplicates, and every name works in the offset engine (Luxon/Intl)', () => {
    expect([...TIMEZONES].sort()).toEqual(TIMEZONES);
    expect(new Set(TIMEZONES).size).toBe(TIMEZONES.length);
    expect(TIMEZONES.length).toBeGreaterThan(500);
    const broken = TIMEZONES.filter((n) => !IANAZone.isValidZone(n));
    expect(broken).toEqual([]);
  });

  it('an unknown zone reaching the offset engine is an error naming it, not a wrong offset', () => {
    expect(() => offsetMinutes('JST', 0)).toThrow('unknown time zone "JST"');
  });
});

describe("offsets: Go's, from the generated tables, and the same as ICU's for the same tz release", () => {
  it(`Node's ICU holds the tz release the tables were generated from (${TZDATA_VERSION})`, () => {
    // Otherwise the comparisons below compare two releases: regenerate (npm run generate) with a Go of the same.
    expect(process.versions.tz).toBe(TZDATA_VERSION);
  });

  it('every zone, a second before and at each of its transitions 1970–2100, and twice a year between', () => {
    const differ: string[] = [];
    const check = (zone: string, ms: number): void => {
      const ours = offsetMinutes(zone, ms) * 60;
      const icu = intlOffsetSeconds(zone, ms);
      if (ours !== icu && differ.length < 20) differ.push(`${zone} at ${new Date(ms).toISOString()}: ${ours} ≠ ${icu}`);
    };
    let transitions = 0;
    for (const zone of TIMEZONES) {
      const { transitions: at } = decodeOffsets(TZ_TABLES[TZ_TABLE_OF[zone] as number] as string);
      for (const t of at) {
        check(zone, t - 1000);
        check(zone, t);
      }
      transitions += at.length;
      for (let year = 1970; year < 2101; year++) {
        check(zone, Date.UTC(year, 0, 15));
        check(zone, Date.UTC(year, 6, 15));
      }
    }
    expect(differ).toEqual([]);
    expect(transitions).toBeGreaterThan(50_000); // the walk saw the tables (55,786 in 2025c)
  });

  it.each([
    { reason: 'before 1970, Berlin in summer (CET then, no DST)', zone: 'Europe/Berlin', at: '1960-07-01T12:00:00Z' },
    { reason: 'after the tables, New York in summer (EDT)', zone: 'America/New_York', at: '2150-07-01T12:00:00Z' },
    { reason: 'after the tables, New York in winter (EST)', zone: 'America/New_York', at: '2150-01-01T12:00:00Z' },
    { reason: 'Monrovia before 1972: −00:44:30', zone: 'Africa/Monrovia', at: '1971-06-01T00:00:00Z' },
  ])('$reason: $zone at $at', ({ zone, at }) => {
    const ms = Date.parse(at);
    expect(offsetMinutes(zone, ms) * 60).toBe(intlOffsetSeconds(zone, ms));
  });
});

describe('tz-table: the text form of offsets, read back', () => {
  const row = fc
    .tuple(
      fc.integer({ min: -50_400, max: 50_400 }),
      fc.uniqueArray(fc.integer({ min: 0, max: 4_133_980_799 }), { maxLength: 40 }),
      fc.array(fc.integer({ min: -50_400, max: 50_400 }), { minLength: 40, maxLength: 40 }),
    )
    .map(([first, at, offsets]) => [first, ...[...at].sort((a, b) => a - b).flatMap((t, i) => [t, offsets[i % 6]])]);

  it('gives the offset of the last transition at or before each instant, the first offset before them all', () => {
    fc.assert(
      fc.property(row, fc.integer({ min: 0, max: 4_133_980_799 }), (r, probe) => {
        const table = decodeOffsets(encodeOffsets(r as number[]));
        const pairs: [number, number][] = [];
        for (let i = 1; i < r.length; i += 2) pairs.push([r[i] as number, r[i + 1] as number]);
        const expected = (s: number): number => pairs.filter(([t]) => t <= s).at(-1)?.[1] ?? (r[0] as number);
        for (const s of [probe, ...pairs.flatMap(([t]) => [t - 1, t, t + 1])].filter((s) => s >= 0)) {
          expect(offsetAt(table, s * 1000)).toBe(expected(s));
        }
      }),
    );
  });

  it('refuses what it cannot write: transitions out of order, before the epoch', () => {
    expect(() => encodeOffsets([0, 10, 3600, 5, 0])).toThrow('out of order');
    expect(() => encodeOffsets([0, -10, 3600])).toThrow('before the epoch');
  });
});
