import { describe, expect, it } from 'vitest';
import { activeAt, parseCron } from './cron.js';

const at = (iso: string): number => Date.parse(iso);
const H = 3_600_000;

describe('parseCron', () => {
  it.each([
    { reason: 'five plain fields', text: '0 9 * * 1-5', ok: true },
    { reason: 'names and lists', text: '30 2 * jan,jul mon-fri', ok: true },
    { reason: 'steps', text: '*/15 */2 * * *', ok: true },
    { reason: 'a macro', text: '@daily', ok: true },
    { reason: 'Sunday as 7', text: '0 0 * * 7', ok: true },
    { reason: 'six fields (seconds) are not Karpenter’s format', text: '0 0 9 * * 1', ok: false },
    { reason: 'an hour out of range', text: '0 24 * * *', ok: false },
    { reason: 'a reversed range', text: '0 9 * * 5-1', ok: false },
    { reason: 'a zero step', text: '*/0 * * * *', ok: false },
    { reason: 'an unknown name', text: '0 9 * * funday', ok: false },
    { reason: 'empty', text: '', ok: false },
  ])('$reason', ({ text, ok }) => {
    expect(parseCron(text) !== null).toBe(ok);
  });
});

describe('activeAt', () => {
  const weekdays9to17 = parseCron('0 9 * * mon-fri');
  it.each([
    { reason: 'inside the 8 h after a weekday 09:00', now: '2027-01-06T12:00:00Z', active: true },
    { reason: 'at the firing minute itself', now: '2027-01-06T09:00:00Z', active: true },
    { reason: 'the last minute of the duration', now: '2027-01-06T16:59:59Z', active: true },
    { reason: 'the duration is half-open: 17:00 is out', now: '2027-01-06T17:00:00Z', active: false },
    { reason: 'before the firing', now: '2027-01-06T08:59:00Z', active: false },
    { reason: 'Saturday', now: '2027-01-09T12:00:00Z', active: false },
  ])('$reason', ({ now, active }) => {
    expect(activeAt(weekdays9to17!, 8 * H, at(now))).toBe(active);
  });

  it('day-of-month and day-of-week both restricted: either matches (standard cron)', () => {
    const c = parseCron('0 0 1 * mon')!;
    expect(activeAt(c, H, at('2027-01-01T00:30:00Z'))).toBe(true); // the 1st, a Friday
    expect(activeAt(c, H, at('2027-01-04T00:30:00Z'))).toBe(true); // a Monday
    expect(activeAt(c, H, at('2027-01-05T00:30:00Z'))).toBe(false);
  });
});
