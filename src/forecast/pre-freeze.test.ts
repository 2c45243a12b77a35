// PreFreezeOverflow through explain: the claims due by a freeze's start that the windows before it cannot hold
// are named, with the windows they need, and the earlier candidacy the message suggests clears it.
import { describe, expect, it } from 'vitest';
import { claim, DAY, HOUR, iso, nodePool, policy } from '../../test/support/fixtures.js';
import type { RotationPolicySpec } from '../generated/api-types.js';
import { explain } from '../explain/explain.js';

const NOW = Date.parse('2027-11-20T00:00:00Z'); // a Saturday
const FREEZE = { start: NOW + 5 * DAY, end: NOW + 9 * DAY }; // Thursday to Monday
const E = 336 * HOUR;

/** Four claims whose deadlines fall inside the freeze, a day apart at most. */
const claims = [0, 6, 12, 18].map((h) => claim(`c${h}`, { createdAt: FREEZE.start + 12 * HOUR + h * HOUR - E }).claim);

function findings(over: Partial<RotationPolicySpec>) {
  const spec: Partial<RotationPolicySpec> = {
    // One start per daily window: a 1h window, a rotation (30m expected) plus a 60m cooldown per start.
    maintenanceWindows: [
      { timezone: 'UTC', days: ['Mon', 'Tue', 'Wed', 'Thu', 'Fri', 'Sat', 'Sun'], start: '10:00', end: '11:00' },
    ],
    minRotationChances: 2,
    freezes: [{ start: iso(FREEZE.start), end: iso(FREEZE.end), reason: 'black friday' }],
    surge: { readyTimeout: '20m', cooldownAfter: '60m', drainEstimate: '20m', provisioningEstimate: '10m' },
    preFreezeRotation: { enabled: true },
    ...over,
  };
  const p = { ...policy(spec), source: { file: 'policy.yaml', document: 1 } };
  const r = explain({ policies: [p], plans: [], nodePools: [nodePool()], nodeClaims: claims }, NOW);
  const pool = r.report.nodePools[0];
  return {
    overflow: pool?.findings.filter((f) => f.reason === 'PreFreezeOverflow') ?? [],
    atRisk: (pool?.forecast ?? []).filter((f) => f.atRisk).map((f) => f.nodeClaim),
    capacity: pool?.capacityPerOccurrence,
    fatal: pool?.findings.filter((f) => f.severity === 'fatal').map((f) => f.reason) ?? [],
  };
}

describe('PreFreezeOverflow', () => {
  it('names the claims that cannot be rotated before the freeze and the windows they need', () => {
    const r = findings({});
    expect(r.capacity).toBe(1);
    // Two windows before the freeze (K = 2 under auto) hold two of the four: the latest two are left.
    expect(r.atRisk).toEqual(['c12', 'c18']);
    expect(r.overflow.map((f) => f.message)).toEqual([
      '2 of the 4 NodeClaims whose deadlines fall inside the freeze from 2027-11-25T00:00:00Z to ' +
        '2027-11-29T00:00:00Z cannot be rotated before it begins, so Karpenter will force them during it: ' +
        'c12, c18. They need 2 more maintenance windows before 2027-11-25T00:00:00Z: raise minRotationChances ' +
        'to 4, lengthen the windows, or shorten spec.surge.cooldownAfter.',
    ]);
  });

  it.each([
    { reason: 'the earlier candidacy it suggests', over: { minRotationChances: 4 } },
    {
      reason: 'windows long enough for two starts each',
      over: {
        maintenanceWindows: [
          { timezone: 'UTC', days: ['Mon', 'Tue', 'Wed', 'Thu', 'Fri', 'Sat', 'Sun'], start: '10:00', end: '12:30' },
        ] as RotationPolicySpec['maintenanceWindows'],
      },
    },
    { reason: 'with an explicit ageThreshold, the lower one it suggests', over: { ageThreshold: '240h' } },
  ])('$reason clears it: every claim rotated before the freeze', ({ over }) => {
    const r = findings(over);
    expect(r.overflow).toEqual([]);
    expect(r.atRisk).toEqual([]);
  });

  it('with an explicit ageThreshold: a lower one, or windows added before the freeze', () => {
    // Candidates 48h before the freeze (A = 288h of 336h, less the 12–30h their deadlines fall into it): two windows.
    const r = findings({ ageThreshold: '288h', minRotationChances: 1 });
    expect(r.fatal).toEqual([]);
    expect(r.overflow.map((f) => f.message.split(': ').slice(-1)[0])).toEqual([
      'add or lengthen windows before it, lower ageThreshold to 240h, or shorten spec.surge.cooldownAfter.',
    ]);
  });

  it('says nothing without the option: the claims are simply due at their deadlines', () => {
    expect(findings({ preFreezeRotation: { enabled: false } }).overflow).toEqual([]);
  });
});
