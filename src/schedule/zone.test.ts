import { IANAZone } from 'luxon';
import { describe, expect, it } from 'vitest';
import { TIMEZONES } from '../generated/timezones.js';
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
