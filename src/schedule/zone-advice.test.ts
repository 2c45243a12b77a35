import { describe, expect, it } from 'vitest';
import { TIMEZONES } from '../generated/timezones.js';
import { isValidTimezone, offsetMinutes } from './zone.js';
import { FIXED_OFFSET_ZONES, misleadingTimezone, suggestedZone } from './zone-advice.js';

/** The 15th of every month of 2027: a zone with daylight saving shows two offsets among them. */
const YEAR = Array.from({ length: 12 }, (_, m) => Date.UTC(2027, m, 15));
/** Every six hours of 2027: the offsets a zone's clock keeps, in order, transitions to within hours. */
const YEAR_QUARTERS = Array.from({ length: 365 * 4 }, (_, i) => Date.UTC(2027, 0, 1) + i * 6 * 3_600_000);
const clock = (zone: string): number[] => YEAR_QUARTERS.map((t) => offsetMinutes(zone, t));

describe('zone advice', () => {
  it.each(Object.entries(FIXED_OFFSET_ZONES))('UTC%s h: %s keeps that offset all year', (hours, zone) => {
    expect(isValidTimezone(zone)).toBe(true);
    expect(new Set(YEAR.map((t) => offsetMinutes(zone, t)))).toEqual(new Set([Number(hours) * 60]));
  });

  it('flags the legacy names and Etc/GMT±1…14; every zone it suggests is valid and draws no advice', () => {
    const flagged: string[] = [];
    for (const zone of TIMEZONES) {
      const why = misleadingTimezone(zone);
      if (why === null) continue;
      flagged.push(zone);
      const suggested = [...why.matchAll(/\b[A-Z][A-Za-z_]+\/[A-Za-z_]+(?:\/[A-Za-z_]+)?/g)].map(([z]) => z);
      expect(suggested.length, why).toBeGreaterThan(0);
      for (const fix of suggested)
        expect({ fix, valid: isValidTimezone(fix), advice: misleadingTimezone(fix) }, why).toEqual({
          fix,
          valid: true,
          advice: null,
        });
    }
    expect(flagged.filter((z) => !z.startsWith('Etc/')).sort()).toEqual(
      ['CET', 'CST6CDT', 'EET', 'EST', 'EST5EDT', 'HST', 'MET', 'MST', 'MST7MDT', 'PST8PDT', 'WET'].sort(),
    );
    expect(flagged.filter((z) => z.startsWith('Etc/'))).toHaveLength(26);
  });

  // The test above checks that each suggestion is valid and quiet, not what it does to the schedule: so the fix
  // for Etc/GMT-9 (UTC+09:00) could be Pacific/Gambier (UTC-09:00), moving every window by 18 hours.
  it('the zone a fix sets keeps the clock the windows have now, all year', () => {
    const fixed = TIMEZONES.flatMap((zone) => {
      const use = suggestedZone(zone);
      return use === null ? [] : [{ zone, use }];
    });
    expect(fixed.length).toBeGreaterThan(30);
    for (const { zone, use } of fixed)
      expect({ zone, use, clock: clock(use) }).toEqual({ zone, use, clock: clock(zone) });
  });

  it.each([
    {
      reason: 'Etc/GMT+9 reads as Tokyo but is 9 h behind UTC: the fix keeps that, Tokyo is offered in words',
      zone: 'Etc/GMT+9',
      says:
        '"Etc/GMT+9" is UTC-09:00: Etc/GMT names carry the POSIX sign, the inverse of ISO 8601\'s. Use ' +
        'Pacific/Gambier, which says UTC-09:00 without the trap, or Asia/Tokyo if you meant UTC+09:00.',
      fix: 'Pacific/Gambier',
    },
    {
      reason: 'Etc/GMT-9 is UTC+09:00, Tokyo: the fix keeps it (not Pacific/Gambier, the sign written)',
      zone: 'Etc/GMT-9',
      says:
        '"Etc/GMT-9" is UTC+09:00: Etc/GMT names carry the POSIX sign, the inverse of ISO 8601\'s. Use ' +
        'Asia/Tokyo, which says UTC+09:00 without the trap, or Pacific/Gambier if you meant UTC-09:00.',
      fix: 'Asia/Tokyo',
    },
    {
      reason: 'UTC-12 has no city: the other reading is offered in words, and no zone as the fix',
      zone: 'Etc/GMT+12',
      says:
        '"Etc/GMT+12" is UTC-12:00: Etc/GMT names carry the POSIX sign, the inverse of ISO 8601\'s. Use ' +
        'Pacific/Tarawa if you meant UTC+12:00.',
      fix: null,
    },
    {
      reason: 'EST is not New York; the fix keeps its fixed UTC-05:00',
      zone: 'EST',
      says: /Use America\/New_York for US Eastern time, or America\/Panama for a fixed UTC-05:00/,
      fix: 'America/Panama',
    },
    { reason: 'Etc/GMT-0 is UTC whichever the sign', zone: 'Etc/GMT-0', says: null, fix: null },
    { reason: 'a city zone needs no advice', zone: 'Europe/Berlin', says: null, fix: null },
  ])('$reason', ({ zone, says, fix }) => {
    const why = misleadingTimezone(zone);
    if (says instanceof RegExp) expect(why).toMatch(says);
    else expect(why).toBe(says);
    expect(suggestedZone(zone)).toBe(fix);
  });
});
