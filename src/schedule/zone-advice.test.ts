import { describe, expect, it } from 'vitest';
import { TIMEZONES } from '../generated/timezones.js';
import { isValidTimezone, offsetMinutes } from './zone.js';
import { FIXED_OFFSET_ZONES, misleadingTimezone } from './zone-advice.js';

/** The 15th of every month of 2027: a zone with daylight saving shows two offsets among them. */
const YEAR = Array.from({ length: 12 }, (_, m) => Date.UTC(2027, m, 15));

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

  it.each([
    {
      reason: 'Etc/GMT+9 reads as Tokyo but is 9 h behind UTC',
      zone: 'Etc/GMT+9',
      says:
        '"Etc/GMT+9" is UTC-09:00: Etc/GMT names carry the POSIX sign, the inverse of ISO 8601\'s. Use ' +
        'Asia/Tokyo if you meant UTC+09:00, or Pacific/Gambier, which says UTC-09:00 without the trap.',
    },
    {
      reason: 'UTC-12 has no city: only the zone it was probably meant to be is offered',
      zone: 'Etc/GMT+12',
      says:
        '"Etc/GMT+12" is UTC-12:00: Etc/GMT names carry the POSIX sign, the inverse of ISO 8601\'s. Use ' +
        'Pacific/Tarawa if you meant UTC+12:00.',
    },
    { reason: 'EST is not New York', zone: 'EST', says: /Use America\/New_York for US Eastern time/ },
    { reason: 'Etc/GMT-0 is UTC whichever the sign', zone: 'Etc/GMT-0', says: null },
    { reason: 'a city zone needs no advice', zone: 'Europe/Berlin', says: null },
  ])('$reason', ({ zone, says }) => {
    const why = misleadingTimezone(zone);
    if (says instanceof RegExp) expect(why).toMatch(says);
    else expect(why).toBe(says);
  });
});
