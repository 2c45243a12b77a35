// The RFC 5545 RRULE subset a RecurringFreeze accepts, in one place: the rrule field's pattern and its
// parts-once CEL rule (recurring-freeze.schema.json) repeat these expressions verbatim, the offline checks
// (api/checks.ts) run them, and rruleProblem names the part a person must fix. A test asserts they agree.

const DAY = '(MO|TU|WE|TH|FR|SA|SU)';
const list = (item: string): string => `${item}(,${item})*`;

/** Each part the subset accepts, with the values it takes (RFC 5545, section 3.3.10, bounded). */
export const RRULE_PARTS: Readonly<Record<string, { value: string; allowed: string }>> = {
  FREQ: { value: '(DAILY|WEEKLY|MONTHLY|YEARLY)', allowed: 'DAILY, WEEKLY, MONTHLY or YEARLY' },
  INTERVAL: { value: '[1-9][0-9]{0,3}', allowed: 'a whole number from 1 to 9999' },
  COUNT: { value: '[1-9][0-9]{0,3}', allowed: 'a whole number from 1 to 9999' },
  UNTIL: {
    value: '[0-9]{4}(0[1-9]|1[0-2])(0[1-9]|[12][0-9]|3[01])(T([01][0-9]|2[0-3])[0-5][0-9][0-5][0-9]Z?)?',
    allowed: 'a date YYYYMMDD or a date and time YYYYMMDDTHHMMSS, in timezone (a trailing Z is read as local too)',
  },
  BYMONTH: { value: list('([1-9]|1[0-2])'), allowed: 'months 1 to 12, separated by commas' },
  BYMONTHDAY: { value: list('-?([1-9]|[12][0-9]|3[01])'), allowed: 'days 1 to 31 or -1 to -31, separated by commas' },
  BYDAY: {
    value: list(`([+-]?([1-9]|[1-4][0-9]|5[0-3]))?${DAY}`),
    allowed: 'weekdays MO, TU, WE, TH, FR, SA or SU, each with an optional ordinal such as 4FR or -1MO',
  },
  BYSETPOS: {
    value: list('[+-]?([1-9]|[1-9][0-9]|[12][0-9][0-9]|3[0-5][0-9]|36[0-6])'),
    allowed: 'positions 1 to 366 or -1 to -366, separated by commas',
  },
  WKST: { value: DAY, allowed: 'MO, TU, WE, TH, FR, SA or SU' },
};

/** The whole rule: parts of the subset separated by ';' (the schema's CEL rule uses this expression). */
export const RRULE_SUBSET_PATTERN = `^(${Object.entries(RRULE_PARTS)
  .map(([name, { value }]) => `${name}=${value}`)
  .join('|')})(;(${Object.entries(RRULE_PARTS)
  .map(([name, { value }]) => `${name}=${value}`)
  .join('|')}))*$`;

/** Each part of the subset at most once, and not both COUNT and UNTIL (RFC 5545); the schema's second rule. */
export function rrulePartsWellFormed(text: string): boolean {
  const names = text.split(';').map((p) => p.split('=')[0] ?? '');
  const once = Object.keys(RRULE_PARTS).every((k) => names.filter((n) => n === k).length <= 1);
  return once && !(names.includes('COUNT') && names.includes('UNTIL'));
}

/** What is wrong with a rule outside the subset, naming the part; undefined when the rule is in it. */
export function rruleProblem(text: string): string | undefined {
  const seen = new Set<string>();
  for (const part of text.split(';')) {
    const eq = part.indexOf('=');
    const name = eq < 0 ? part : part.slice(0, eq);
    const spec = RRULE_PARTS[name];
    if (spec === undefined)
      return `${JSON.stringify(name)} is not a part of the subset (${Object.keys(RRULE_PARTS).join(', ')})`;
    if (seen.has(name)) return `${name} appears twice`;
    seen.add(name);
    if (!new RegExp(`^${spec.value}$`).test(part.slice(eq + 1)))
      return `${name}=${part.slice(eq + 1)}: ${name} takes ${spec.allowed}`;
  }
  if (!seen.has('FREQ')) return 'FREQ is missing';
  if (seen.has('COUNT') && seen.has('UNTIL')) return 'COUNT and UNTIL cannot be used together; keep one';
  return undefined;
}
