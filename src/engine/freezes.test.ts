import { describe, expect, it } from 'vitest';
import type { RecurringFreeze } from '../generated/api-types.js';
import { freezeOccurrences } from '../schedule/recurring-freezes.js';
import { readFreezes, RECURRING_HORIZON_MS } from './freezes.js';

const NOW = Date.parse('2027-01-04T00:00:00Z');
const FREEZES: RecurringFreeze[] = [
  { name: 'nightly', timezone: 'Europe/Berlin', rrule: 'FREQ=DAILY', start: '2026-01-01T20:00', duration: '4h' },
  { name: 'black-friday', timezone: 'America/New_York', yearly: { from: '11-27', to: '12-01' } },
  { name: 'month-end', timezone: 'Europe/Berlin', monthly: { from: -1, to: 1 } },
];
const policy = { name: 'p', freezes: [{ start: '2027-01-10T00:00:00Z', end: '2027-01-11T00:00:00Z', reason: 'x' }] };

describe('readFreezes: recurring occurrences', () => {
  it('from now to the horizon, labelled with the name, the same at any instant of a day (memo or not)', () => {
    for (const now of [NOW, NOW + 5 * 3_600_000 + 123, NOW + 3 * 86_400_000 + 7, NOW + 86_400_000 - 1]) {
      const got = readFreezes(undefined, { ...policy, recurringFreezes: FREEZES }, now);
      const want = FREEZES.flatMap((f) =>
        freezeOccurrences(f, now, now + RECURRING_HORIZON_MS).map((o) => `${o.start}/${o.end}/${o.name}`),
      );
      const recurring = got.spans.filter((s) => !s.label.startsWith('spec.freezes'));
      expect(recurring.map((s) => `${s.start}/${s.end}/${s.label}`).sort()).toEqual(want.sort());
      expect(recurring.map((s) => s.start)).toEqual([...recurring.map((s) => s.start)].sort((a, b) => a - b));
      expect(got.spans[0]?.label).toBe('spec.freezes[0] (x)');
      expect(got.unreadable).toBeNull();
    }
  });

  it('reads to a later horizon when asked (the forecast)', () => {
    const far = readFreezes(undefined, { ...policy, recurringFreezes: [FREEZES[1]!] }, NOW, NOW + 3 * 366 * 86_400_000);
    expect(far.spans.filter((s) => s.label === 'black-friday')).toHaveLength(3);
  });

  it('fails closed on a freeze it cannot expand, naming it', () => {
    const broken = { name: 'broken', timezone: 'UTC' } as RecurringFreeze;
    const got = readFreezes(undefined, { ...policy, recurringFreezes: [broken] }, NOW);
    expect(got.unreadable).toMatch(/spec\.recurringFreezes\[0\] \("broken"\) of RotationPolicy p cannot be read/);
  });
});
