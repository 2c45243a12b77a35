// Valid zone names that seldom mean what their writer meant (issue 21: "mistakes caught, never silent"), and
// the names to write instead. Every name suggested here is itself valid and draws no advice, so a fix pasted
// verbatim silences the warning (zone-advice.test.ts checks both over the whole tz list).
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

const LEGACY_ZONES: Readonly<Record<string, string>> = {
  EST: 'America/New_York for US Eastern time, or America/Panama for a fixed UTC-05:00',
  MST: 'America/Denver for US Mountain time, or America/Phoenix for a fixed UTC-07:00',
  HST: 'Pacific/Honolulu',
  EST5EDT: 'America/New_York',
  CST6CDT: 'America/Chicago',
  MST7MDT: 'America/Denver',
  PST8PDT: 'America/Los_Angeles',
  CET: 'the zone of the city the nodes are in, such as Europe/Paris or Europe/Berlin',
  MET: 'the zone of the city the nodes are in, such as Europe/Paris or Europe/Berlin',
  EET: 'the zone of the city the nodes are in, such as Europe/Athens or Europe/Helsinki',
  WET: 'Europe/Lisbon',
};

const ETC_GMT = /^Etc\/GMT([+-])(\d{1,2})$/;

const utc = (hours: number): string => `UTC${hours < 0 ? '-' : '+'}${String(Math.abs(hours)).padStart(2, '0')}:00`;

/** Why a valid zone name likely means something else than its writer meant, and what to write; null if nothing. */
export function misleadingTimezone(zone: string): string | null {
  return zoneAdvice(zone)?.message ?? null;
}

/** The zone to write instead of `zone`: the first the advice names (the likely meaning); null if none is needed. */
export function suggestedZone(zone: string): string | null {
  return zoneAdvice(zone)?.use ?? null;
}

const ZONE_NAME = /\b[A-Z][A-Za-z_]+\/[A-Za-z_]+(?:\/[A-Za-z_]+)?/;

function zoneAdvice(zone: string): { message: string; use: string } | null {
  const legacy = LEGACY_ZONES[zone];
  if (legacy !== undefined)
    return {
      message: `"${zone}" is a legacy name the tz database keeps for old systems. Use ${legacy}.`,
      use: (ZONE_NAME.exec(legacy) as RegExpExecArray)[0],
    };
  const m = ETC_GMT.exec(zone);
  if (m === null || Number(m[2]) === 0) return null;
  const is = (m[1] === '+' ? -1 : 1) * Number(m[2]);
  const same = FIXED_OFFSET_ZONES[is];
  const inverse = FIXED_OFFSET_ZONES[-is];
  const fixes = [
    ...(inverse ? [`Use ${inverse} if you meant ${utc(-is)}`] : []),
    ...(same ? [`${inverse ? 'or' : 'Use'} ${same}, which says ${utc(is)} without the trap`] : []),
  ];
  const use = inverse ?? same;
  if (use === undefined) return null;
  return {
    message:
      `"${zone}" is ${utc(is)}: Etc/GMT names carry the POSIX sign, the inverse of ISO 8601's. ` +
      `${fixes.join(', ')}.`,
    use,
  };
}
