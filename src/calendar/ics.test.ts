// The RFC 5545 text form: TEXT escaping, folding at 75 octets, and the date-time and offset forms.
import ICAL from 'ical.js';
import { describe, expect, it } from 'vitest';
import { escapeText, fold, localTime, serialize, utcOffset, utcTime } from './ics.js';

describe('escapeText (RFC 5545 section 3.3.11)', () => {
  it.each([
    { reason: 'plain text is kept', text: 'Freeze: release', expected: 'Freeze: release', parsed: 'Freeze: release' },
    {
      reason: 'comma and semicolon separate values: escaped',
      text: 'a, b; c',
      expected: 'a\\, b\\; c',
      parsed: 'a, b; c',
    },
    {
      reason: 'a backslash first, so escapes are not doubled',
      text: 'C:\\x;',
      expected: 'C:\\\\x\\;',
      parsed: 'C:\\x;',
    },
    {
      reason: 'line breaks of any kind become \\n',
      text: 'one\r\ntwo\nthree\rfour',
      expected: 'one\\ntwo\\nthree\\nfour',
      parsed: 'one\ntwo\nthree\nfour',
    },
    {
      reason: 'other control characters are dropped; a tab is kept',
      text: 'a\u0000b\u001bc\td',
      expected: 'abc\td',
      parsed: 'abc\td',
    },
    {
      reason: 'a colon needs no escape in a value',
      text: 'NodePool a: x',
      expected: 'NodePool a: x',
      parsed: 'NodePool a: x',
    },
  ])('$reason', ({ text, expected, parsed }) => {
    expect(escapeText(text)).toBe(expected);
    // And the parser reads the text back (line breaks as \n, dropped controls gone).
    const line = `DESCRIPTION:${escapeText(text)}`;
    const prop = ICAL.Property.fromString(line);
    expect(prop.getFirstValue()).toBe(parsed);
  });
});

describe('fold (RFC 5545 section 3.1)', () => {
  it.each([
    { reason: 'a line of 75 octets stays whole', line: 'X'.repeat(75), lines: 1 },
    { reason: 'a line of 76 octets is folded once', line: 'X'.repeat(76), lines: 2 },
    { reason: 'ASCII over three lines: 75 + 74 + rest', line: 'Y'.repeat(75 + 74 + 10), lines: 3 },
    { reason: 'two-octet characters are never split', line: `SUMMARY:${'ü'.repeat(80)}`, lines: 3 },
    { reason: 'four-octet characters (emoji) are never split', line: `SUMMARY:${'🙂'.repeat(40)}`, lines: 3 },
  ])('$reason', ({ line, lines }) => {
    const folded = fold(line).split('\r\n');
    expect(folded.length).toBe(lines);
    for (const l of folded) expect(Buffer.byteLength(l, 'utf8')).toBeLessThanOrEqual(75);
    for (const l of folded.slice(1)) expect(l.startsWith(' ')).toBe(true);
    expect(folded.map((l, i) => (i === 0 ? l : l.slice(1))).join('')).toBe(line);
    expect(folded.join('').includes('\uFFFD')).toBe(false);
  });

  it('serialize ends every line with CRLF', () => {
    expect(serialize(['A:1', 'B:2'])).toBe('A:1\r\nB:2\r\n');
  });
});

describe('date-time and offset forms', () => {
  it.each([
    { reason: 'UTC, whole seconds', value: utcTime(Date.parse('2027-01-04T05:06:07Z')), expected: '20270104T050607Z' },
    {
      reason: 'UTC, a fraction rounds up',
      value: utcTime(Date.parse('2027-01-04T05:06:07.001Z')),
      expected: '20270104T050608Z',
    },
    {
      reason: 'local, minute 1500 is 01:00 the next day',
      value: localTime(2026, 12, 31, 1500),
      expected: '20270101T010000',
    },
    { reason: 'offset east', value: utcOffset(330), expected: '+0530' },
    { reason: 'offset west', value: utcOffset(-210), expected: '-0330' },
    { reason: 'offset zero is +0000 (-0000 is not allowed)', value: utcOffset(0), expected: '+0000' },
  ])('$reason', ({ value, expected }) => {
    expect(value).toBe(expected);
  });
});
