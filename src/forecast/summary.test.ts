// The forecast as a RotationPolicy's status shows it: stable from pass to pass (the planned window's start, never
// the planned instant, which follows the clock inside an open window), at most FORECAST_NEXT rotations and
// AT_RISK_NAMED names.
import { describe, expect, it } from 'vitest';
import type { ClaimForecast } from './forecast.js';
import { AT_RISK_NAMED, FORECAST_NEXT, forecastStatus } from './summary.js';

const T = Date.parse('2027-01-04T00:00:00Z');
const H = 3_600_000;

const f = (name: string, o: Partial<ClaimForecast>): ClaimForecast => ({
  nodeClaim: name,
  deadline: T + 100 * H,
  dueBy: T + 100 * H,
  eligibleAt: T,
  plannedWindow: null,
  plannedStart: null,
  rotationBoundSeconds: 4620,
  marginSeconds: null,
  atRisk: false,
  deadlineInFreeze: null,
  ...o,
});
const planned = (name: string, window: number, start: number): ClaimForecast =>
  f(name, { plannedWindow: { start: T + window * H, end: T + (window + 2) * H }, plannedStart: T + start * H });

describe('forecastStatus', () => {
  it.each([
    {
      reason: 'the next rotations by planned start, then name; their window and due instant',
      list: [planned('c', 5, 5.5), planned('b', 1, 1.5), planned('a', 1, 1.5)],
      want: {
        nextRotations: [
          { nodeClaim: 'a', window: '2027-01-04T01:00:00Z', dueBy: '2027-01-08T04:00:00Z' },
          { nodeClaim: 'b', window: '2027-01-04T01:00:00Z', dueBy: '2027-01-08T04:00:00Z' },
          { nodeClaim: 'c', window: '2027-01-04T05:00:00Z', dueBy: '2027-01-08T04:00:00Z' },
        ],
        claimsAtRisk: 0,
        atRisk: [],
      },
    },
    {
      reason: 'claims at risk counted and named; one without a deadline has no due instant',
      list: [
        f('late', { atRisk: true }),
        planned('never', 2, 2),
        { ...planned('never', 2, 2), nodeClaim: 'forever', deadline: null, dueBy: null },
      ],
      want: {
        nextRotations: [
          { nodeClaim: 'forever', window: '2027-01-04T02:00:00Z' },
          { nodeClaim: 'never', window: '2027-01-04T02:00:00Z', dueBy: '2027-01-08T04:00:00Z' },
        ],
        claimsAtRisk: 1,
        atRisk: ['late'],
      },
    },
  ])('$reason', ({ list, want }) => {
    expect(forecastStatus(list)).toEqual(want);
  });

  it('is bounded by the schema, and the same whenever in its window the pass runs', () => {
    const many = Array.from({ length: 30 }, (_, i) => [planned(`p${i}`, i, i), f(`r${i}`, { atRisk: true })]).flat();
    const s = forecastStatus(many);
    expect(s.nextRotations).toHaveLength(FORECAST_NEXT);
    expect(s.atRisk).toHaveLength(AT_RISK_NAMED);
    expect(s.claimsAtRisk).toBe(30);
    // A later pass inside the open window plans the same claim later in the same window: the status is unchanged.
    const later = many.map((x) => (x.plannedStart === T ? { ...x, plannedStart: T + 0.5 * H } : x));
    expect(forecastStatus(later)).toEqual(s);
  });
});
