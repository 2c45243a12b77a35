// Valid zone names that seldom mean what their writer meant (issue 21: "mistakes caught, never silent"), and
// the names to write instead. Every name suggested here is itself valid and draws no advice, so a fix pasted
// verbatim silences the warning; and the one offered as the fix keeps every offset the windows have today, so
// pasting it never moves a window (zone-advice.test.ts checks all three over the whole tz list). The other
// reading (Asia/Tokyo for an `Etc/GMT+9` meant as +09:00) is offered in words: it is a change of schedule, for
// the writer to choose.
//  - `Etc/GMT+N` is N hours *behind* UTC: the tz database keeps the POSIX sign, the inverse of ISO 8601's, so
//    `Etc/GMT+9` is UTC-09:00, not Tokyo's +09:00.
//  - The legacy names (EST, CET, PST8PDT, …) are kept for old systems: EST is a fixed -05:00 without daylight
//    saving, not New York's clock; CET follows one country's rules for a whole region.

/** For each whole-hour UTC offset, a zone that keeps it all year (no daylight saving in tz data 2025c). */
export const FIXED_OFFSET_ZONES: Readonly<Record<number, string>> = {
  [-11]: 'Pacific/Pago_Pago',
  [-10]: 'Pacific/Honolulu',
  [-9]: 'Pacific/Gambier',
  [-8]: 'Pacific/Pitcairn',
  [-7]: 'America/Phoenix',
  [-6]: 'America/Regina',
  [-5]: 'America/Panama',
  [-4]: 'America/Puerto_Rico',
  [-3]: 'America/Sao_Paulo',
  [-2]: 'America/Noronha',
  [-1]: 'Atlantic/Cape_Verde',
  1: 'Africa/Lagos',
  2: 'Africa/Johannesburg',
  3: 'Asia/Riyadh',
  4: 'Asia/Dubai',
  5: 'Asia/Karachi',
  6: 'Asia/Dhaka',
  7: 'Asia/Bangkok',
  8: 'Asia/Singapore',
  9: 'Asia/Tokyo',
  10: 'Australia/Brisbane',
  11: 'Pacific/Guadalcanal',
  12: 'Pacific/Tarawa',
  13: 'Pacific/Fakaofo',
  14: 'Pacific/Kiritimati',
};

/** A legacy name that is one city's clock. */
const city = (zone: string): { use: string; same: string } => ({ use: zone, same: zone });
/** A legacy name for a region's rules: the city the nodes are in, the first of the examples being the fix. */
const region = (first: string, second: string): { use: string; same: string } => ({
  use: `the zone of the city the nodes are in, such as ${first} or ${second}`,
  same: first,
});

/** Per legacy name: what to write, in words, and the zone among them with the same offsets all year (the fix). */
const LEGACY_ZONES: Readonly<Record<string, { use: string; same: string }>> = {
  EST: {
    use: 'America/New_York for US Eastern time, or America/Panama for a fixed UTC-05:00',
    same: 'America/Panama',
  },
  MST: {
    use: 'America/Denver for US Mountain time, or America/Phoenix for a fixed UTC-07:00',
    same: 'America/Phoenix',
  },
  HST: city('Pacific/Honolulu'),
  EST5EDT: city('America/New_York'),
  CST6CDT: city('America/Chicago'),
  MST7MDT: city('America/Denver'),
  PST8PDT: city('America/Los_Angeles'),
  CET: region('Europe/Paris', 'Europe/Berlin'),
  MET: region('Europe/Paris', 'Europe/Berlin'),
  EET: region('Europe/Athens', 'Europe/Helsinki'),
  WET: city('Europe/Lisbon'),
};

const ETC_GMT = /^Etc\/GMT([+-])(\d{1,2})$/;

const utc = (hours: number): string => `UTC${hours < 0 ? '-' : '+'}${String(Math.abs(hours)).padStart(2, '0')}:00`;

/** Why a valid zone name likely means something else than its writer meant, and what to write; null if nothing. */
export function misleadingTimezone(zone: string): string | null {
  return zoneAdvice(zone)?.message ?? null;
}

/**
 * The zone to write instead of `zone` with the same clock: the one its fix sets. Null when nothing is needed,
 * or when no zone without the trap keeps its offset (UTC-12:00 has only `Etc/GMT+12`).
 */
export function suggestedZone(zone: string): string | null {
  return zoneAdvice(zone)?.use ?? null;
}

function zoneAdvice(zone: string): { message: string; use: string | null } | null {
  const legacy = LEGACY_ZONES[zone];
  if (legacy !== undefined)
    return {
      message: `"${zone}" is a legacy name the tz database keeps for old systems. Use ${legacy.use}.`,
      use: legacy.same,
    };
  const m = ETC_GMT.exec(zone);
  if (m === null || Number(m[2]) === 0) return null;
  const is = (m[1] === '+' ? -1 : 1) * Number(m[2]);
  const same = FIXED_OFFSET_ZONES[is];
  const inverse = FIXED_OFFSET_ZONES[-is];
  if (same === undefined && inverse === undefined) return null;
  const fixes = [
    ...(same ? [`Use ${same}, which says ${utc(is)} without the trap`] : []),
    ...(inverse ? [`${same ? 'or' : 'Use'} ${inverse} if you meant ${utc(-is)}`] : []),
  ];
  return {
    message:
      `"${zone}" is ${utc(is)}: Etc/GMT names carry the POSIX sign, the inverse of ISO 8601's. ` +
      `${fixes.join(', ')}.`,
    use: same ?? null,
  };
}
