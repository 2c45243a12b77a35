import { describe, expect, it } from 'vitest';
import type { RotationPolicySpec } from '../generated/api-types.js';
import type { NodeClaim, NodePool } from '../karpenter/types.js';
import { windowFigures } from '../schedule/windows.js';
import { derive } from './derive.js';
import { policyParams } from './params.js';
import { shortLeadFindings } from './short-lead.js';
import { pool as bare, iso } from '../../test/support/fixtures.js';

const NOW = Date.parse('2027-01-04T00:00:00Z');
const H = 3600;
const D = 86400;
const WED_SAT = [{ timezone: 'Asia/Tokyo', days: ['Wed', 'Sat'], start: '02:00', end: '06:00' }];

const pool = (spec: Partial<NodePool['spec']['template']['spec']> = {}, extra: Partial<NodePool> = {}): NodePool =>
  bare('general', {
    template: { expireAfter: '336h', terminationGracePeriod: '1h', ...spec },
    spec: extra.spec,
    status: extra.status,
  });

function run(
  spec: Partial<RotationPolicySpec> = {},
  np: NodePool = pool(),
  nodeCount: number | null = null,
  claims: NodeClaim[] = [],
) {
  const full = { nodePools: ['general'], maintenanceWindows: WED_SAT, ...spec } as RotationPolicySpec;
  const params = policyParams(full);
  let windows;
  try {
    windows = windowFigures(params.windows, NOW);
  } catch {
    windows = windowFigures([], NOW); // an unknown zone: derive() must report it without the figures
  }
  return derive({ params, pool: np, windows, nodeCount, nodeClaims: claims, now: NOW });
}

/** A scheduled freeze from `start`, `days` long. */
const freeze = (start: string, days: number): { start: string; end: string } => ({
  start,
  end: iso(Date.parse(start) + days * D * 1000),
});

const reasons = (d: ReturnType<typeof run>): string[] => d.findings.map((f) => `${f.severity}:${f.reason}`);

describe('the §3.2 worked example', () => {
  it('gives P = 4d, t_rot = 1h17m, A = 513780 s, G = 2, t_rot_est = 15m, C = 10 and no finding', () => {
    const d = run();
    expect(d.figures).toEqual({
      windowPeriodSeconds: 4 * D,
      rotationBoundSeconds: H + 17 * 60,
      leadTimeSeconds: 8 * D + H + 17 * 60,
      ageThresholdSeconds: 513780,
      guaranteedChances: 2,
      expectedRotationSeconds: 15 * 60,
      capacityPerOccurrence: 10,
    });
    expect(d.findings).toEqual([]);
  });

  it('keeps C = 10 with the stock 24h terminationGracePeriod while t_rot grows to 24h17m (calibration note)', () => {
    const d = run({}, pool({ terminationGracePeriod: '24h' }));
    expect(d.figures.rotationBoundSeconds).toBe(24 * H + 17 * 60);
    expect(d.figures.capacityPerOccurrence).toBe(10);
  });

  it('is fatal for a weekly-only window: P = 7d, A = −1h17m', () => {
    const d = run({ maintenanceWindows: [{ timezone: 'Asia/Tokyo', days: ['Sat'], start: '02:00', end: '06:00' }] });
    expect(d.figures.windowPeriodSeconds).toBe(7 * D);
    expect(d.figures.ageThresholdSeconds).toBe(-(H + 17 * 60));
    expect(d.figures.guaranteedChances).toBeNull();
    expect(reasons(d)).toEqual(['fatal:NonPositiveAgeThreshold']);
  });
});

// One case per row of the layer-1 and layer-2 tables; each says why it is expected.
const cases: {
  reason: string;
  spec?: Partial<RotationPolicySpec>;
  pool?: NodePool;
  n?: number | null;
  expect: string[];
}[] = [
  { reason: 'no occurrences: P = 0 is fatal', spec: { maintenanceWindows: [] as never }, expect: ['fatal:NoWindows'] },
  {
    reason: 'K < 1 is invalid configuration',
    spec: { minRotationChances: 0 },
    expect: ['fatal:InvalidMinRotationChances'],
  },
  { reason: 'K = 1 leaves no retry', spec: { minRotationChances: 1 }, expect: ['warning:SingleRotationChance'] },
  {
    reason: 'E ≤ K·P + t_rot makes A ≤ 0',
    pool: pool({ expireAfter: '192h' }),
    expect: ['fatal:NonPositiveAgeThreshold'],
  },
  {
    reason: '0 < A < P is extremely aggressive (E = 8d + 1h17m + 1d → A = 1d < P = 4d)',
    pool: pool({ expireAfter: `${8 * 24 + 24 + 1}h17m` }),
    expect: ['warning:AggressiveAgeThreshold'],
  },
  {
    reason: 'an explicit ageThreshold leaving G < 1 is rejected',
    spec: { ageThreshold: '300h' },
    expect: ['fatal:OverrideRejected'],
  },
  {
    reason: 'an explicit ageThreshold leaving 1 ≤ G < K is weakened',
    spec: { ageThreshold: '200h' },
    expect: ['warning:WeakenedChances'],
  },
  {
    reason: 'E + tGP > 21d breaks the Auto Mode cap',
    pool: pool({ expireAfter: '504h' }),
    expect: ['warning:HardCapExceeded'],
  },
  {
    reason: 'unset tGP leaves the drain unbounded',
    pool: pool({ terminationGracePeriod: undefined }),
    expect: ['warning:UnboundedDrain'],
  },
  {
    reason: 'retryBackoff < readyTimeout retries faster than an attempt',
    spec: { surge: { retryBackoff: '10m' } },
    expect: ['warning:RetryFasterThanAttempt'],
  },
  {
    reason: 'spec.limits with no room for one more node',
    pool: { ...pool(), spec: { ...pool().spec, limits: { nodes: 3 } }, status: { nodes: 3 } },
    expect: ['warning:NoSurgeHeadroom'],
  },
  {
    reason: 'removing the zone from the required keys may strand zonal volumes',
    spec: { surge: { matchNodeRequirements: { required: ['kubernetes.io/arch'] } } },
    expect: ['warning:ZoneRequirementRemoved'],
  },
  {
    reason: 'drainEstimate above tGP is clamped',
    spec: { surge: { drainEstimate: '2h' } },
    expect: ['warning:DrainEstimateAboveTGP'],
  },
  {
    reason: 'provisioningEstimate above readyTimeout is clamped',
    spec: { surge: { provisioningEstimate: '20m' } },
    expect: ['warning:ProvisioningEstimateAboveReadyTimeout'],
  },
  {
    reason: 'an unknown zone is fatal',
    spec: { maintenanceWindows: [{ ...WED_SAT[0], timezone: 'Mars/Olympus' }] as never },
    expect: ['fatal:InvalidTimezone'],
  },
  {
    reason: 'Etc/GMT+9 is UTC-09:00 (POSIX sign), seldom what its writer meant',
    spec: { maintenanceWindows: [{ ...WED_SAT[0], timezone: 'Etc/GMT+9' }] as never },
    expect: ['warning:MisleadingTimezone'],
  },
  {
    reason: 'EST is a legacy fixed -05:00, not New York',
    spec: { maintenanceWindows: [WED_SAT[0], { ...WED_SAT[0], timezone: 'EST' }] as never },
    expect: ['warning:MisleadingTimezone'],
  },
  {
    reason: 'Etc/GMT-0 is UTC whichever the sign: nothing to say',
    spec: { maintenanceWindows: [{ ...WED_SAT[0], timezone: 'Etc/GMT-0' }] as never },
    expect: [],
  },
  {
    reason: 'arrival above capacity: C·A/P = 10 × 5.9d / 4d ≈ 14 < 15 nodes, while a batch of 15 still fits K·C = 20',
    n: 15,
    expect: ['warning:ThroughputShortfall'],
  },
  {
    reason: 'a synchronized batch larger than K·C = 20',
    n: 21,
    expect: ['warning:ThroughputShortfall', 'warning:ThroughputBurstShortfall'],
  },
  {
    reason: 'rotation + cooldown (25m) longer than the shortest gap (10m between daily windows)',
    spec: {
      maintenanceWindows: [
        { timezone: 'UTC', days: ['Mon', 'Tue', 'Wed', 'Thu', 'Fri', 'Sat', 'Sun'], start: '00:00', end: '23:50' },
      ] as never,
    },
    expect: ['warning:RotationSpansNextWindow'],
  },
  // Scheduled freezes against D = E − A − t_rot (NOW is 2027-01-04; auto: D = K·P = 2 × 4d = 8d).
  {
    reason: 'a freeze of 9d is longer than D = K·P = 8d: nodes becoming candidates as it begins get no window',
    spec: { freezes: [freeze('2027-01-10T00:00:00Z', 9)] },
    expect: ['warning:FreezeOutlastsNodes'],
  },
  {
    reason: 'a freeze of exactly D = 8d leaves the node its last start as the freeze ends: nothing to say',
    spec: { freezes: [freeze('2027-01-10T00:00:00Z', 8)] },
    expect: [],
  },
  {
    reason: 'a freeze of 9d already over at now harms no node',
    spec: { freezes: [freeze('2026-12-20T00:00:00Z', 9)] },
    expect: [],
  },
  {
    reason: 'a freeze of 9d under way at now counts in full (nodes became candidates at its start)',
    spec: { freezes: [freeze('2027-01-01T00:00:00Z', 9)] },
    expect: ['warning:FreezeOutlastsNodes'],
  },
  {
    reason: 'one finding per freeze that is too long: the second (9d), not the first (2d)',
    spec: { freezes: [freeze('2027-01-10T00:00:00Z', 2), freeze('2027-02-10T00:00:00Z', 9)] },
    expect: ['warning:FreezeOutlastsNodes'],
  },
  {
    reason: 'K = 3 gives D = 12d, longer than the 9d freeze (and A = 46h43m < P)',
    spec: { minRotationChances: 3, freezes: [freeze('2027-01-10T00:00:00Z', 9)] },
    expect: ['warning:AggressiveAgeThreshold'],
  },
  {
    reason: 'an explicit ageThreshold 200h leaves D = 336h − 200h − 1h17m = 134h43m, shorter than a 6d freeze',
    spec: { ageThreshold: '200h', freezes: [freeze('2027-01-10T00:00:00Z', 6)] },
    expect: ['warning:WeakenedChances', 'warning:FreezeOutlastsNodes'],
  },
  {
    reason: 'expireAfter: Never has no deadline for a freeze to outlast',
    spec: { freezes: [freeze('2027-01-10T00:00:00Z', 90)] },
    pool: pool({ expireAfter: 'Never' }),
    expect: [],
  },
  {
    reason: 'a fatal A (weekly window: A < 0) is reported alone; there is no D to compare a freeze with',
    spec: {
      maintenanceWindows: [{ timezone: 'Asia/Tokyo', days: ['Sat'], start: '02:00', end: '06:00' }] as never,
      freezes: [freeze('2027-01-10T00:00:00Z', 30)],
    },
    expect: ['fatal:NonPositiveAgeThreshold'],
  },
];

const SAT = [{ timezone: 'Asia/Tokyo', days: ['Sat'], start: '02:00', end: '06:00' }] as never;
const DAILY = [{ ...WED_SAT[0], days: ['Mon', 'Tue', 'Wed', 'Thu', 'Fri', 'Sat', 'Sun'] }] as never;
const LIFETIME = ['NonPositiveAgeThreshold', 'AggressiveAgeThreshold', 'HardCapExceeded'];

// The fixes of the checks on A and on expireAfter lead nowhere worse: raising expireAfter out of a fatal A must
// not land in AggressiveAgeThreshold (A < P), whose own raise must not land beyond EKS Auto Mode's cap
// (HardCapExceeded), whose lowering must not land back in AggressiveAgeThreshold. When no expireAfter within the
// cap (503h here: 21 days less the 1h grace period) does, there is no fix and the message says what does.
// Wed and Sat: P = 96h; Sat: P = 168h; t_rot = 1h17m; K = 2 unless given.
describe('the age checks: a fix that is no dead end, or the way out in words', () => {
  it.each([
    {
      reason: 'A ≤ 0: expireAfter raised to A ≥ P, not just above the lead time (194h: A < P)',
      expireAfter: '192h',
      reason_: 'NonPositiveAgeThreshold',
      fix: '290h',
    },
    {
      reason: 'A ≤ 0, weekly: A ≥ P needs 506h, beyond the cap: no fix; window days to P ≤ (336h − t_rot) / 3',
      spec: { maintenanceWindows: SAT },
      expireAfter: '336h',
      reason_: 'NonPositiveAgeThreshold',
      says: /A ≥ P needs 506h\. Instead, add window days so that no window opens more than 111h34m after/,
    },
    {
      reason: 'A ≤ 0 with K = 5: fewer chances within the cap are named (K = 4 with 482h)',
      spec: { minRotationChances: 5 },
      expireAfter: '336h',
      reason_: 'NonPositiveAgeThreshold',
      says: /\(P ≤ 55h47m with expireAfter 336h\), or lower minRotationChances to 4 with expireAfter 482h or more\.$/,
    },
    {
      reason: '0 < A < P under auto now carries its value: the expireAfter that makes A ≥ P',
      expireAfter: '250h',
      reason_: 'AggressiveAgeThreshold',
      fix: '290h',
    },
    {
      reason: '0 < A < P, weekly, expireAfter 400h: no expireAfter within the cap: window days',
      spec: { maintenanceWindows: SAT },
      expireAfter: '400h',
      reason_: 'AggressiveAgeThreshold',
      says: /no window opens more than 132h54m after the one before/,
    },
    {
      reason: 'an explicit A below P = 24h: ageThreshold P, which still keeps K',
      spec: { maintenanceWindows: DAILY, ageThreshold: '10h' },
      expireAfter: '336h',
      reason_: 'AggressiveAgeThreshold',
      fix: '24h',
    },
    {
      reason: 'an explicit A whose raise to P would cost a chance: no value, window days',
      spec: { ageThreshold: '50h' },
      expireAfter: '280h',
      reason_: 'AggressiveAgeThreshold',
      says: /Add window days so that P shrinks\.$/,
    },
    {
      reason: 'over the cap with room below it: expireAfter lowered to the cap',
      expireAfter: '600h',
      reason_: 'HardCapExceeded',
      fix: '503h',
    },
    {
      reason: 'over the cap, weekly: at the cap A < P, so no fix; window days',
      spec: { maintenanceWindows: SAT },
      expireAfter: '506h',
      reason_: 'HardCapExceeded',
      says: /Lower expireAfter to 503h or less\. No expireAfter within .* add window days/,
    },
    {
      reason: 'an explicit A that keeps K only with an expireAfter beyond the cap: no fix',
      spec: { maintenanceWindows: SAT, ageThreshold: '200h' },
      expireAfter: '336h',
      reason_: 'OverrideRejected',
      says: /needs expireAfter 538h, beyond EKS Auto Mode's 21-day node lifetime \(at most 503h here\)/,
    },
  ])('$reason', ({ spec, expireAfter, reason_, fix, says }) => {
    const d = run(spec, pool({ expireAfter }));
    const f = d.findings.find((x) => x.reason === reason_);
    expect(f, JSON.stringify(d.findings)).toBeDefined();
    if (says) expect(f?.message).toMatch(says);
    expect(f?.fix?.value).toBe(fix);
    if (f?.fix === undefined) return;
    expect(f.message).toContain(String(f.fix.value));
    const fixed =
      f.fix.object === 'NodePool'
        ? run(spec, pool({ expireAfter: String(f.fix.value) }))
        : run({ ...spec, ageThreshold: String(f.fix.value) }, pool({ expireAfter }));
    const had = new Set(d.findings.map((x) => x.reason));
    expect(
      fixed.findings.map((x) => x.reason).filter((r) => LIFETIME.includes(r) && (r === reason_ || !had.has(r))),
    ).toEqual([]);
  });

  it("under auto the age checks name the NodePool's expireAfter, the field their fix sets", () => {
    const d = run({}, pool({ expireAfter: '192h' }));
    expect(d.findings.map((f) => [f.reason, f.field])).toEqual([
      ['NonPositiveAgeThreshold', 'NodePool general spec.template.spec.expireAfter'],
    ]);
    const e = run({ ageThreshold: '50h' }, pool({ expireAfter: '280h' }));
    expect(e.findings.map((f) => [f.reason, f.field])).toEqual([['AggressiveAgeThreshold', 'spec.ageThreshold']]);
  });
});

describe('layer 1 and layer 2 findings', () => {
  it.each(cases)('$reason', ({ spec, pool: np, n, expect: expected }) => {
    expect(reasons(run(spec, np, n ?? null))).toEqual(expected);
  });

  it('names the field and the fix in every message', () => {
    const d = run(
      { minRotationChances: 1, surge: { retryBackoff: '10m' } },
      pool({ terminationGracePeriod: undefined }),
    );
    for (const f of d.findings) {
      expect(f.field).not.toBe('');
      expect(f.message).toMatch(/\. (Set|Raise|Lower|Add|Use|Widen|Merge|Replace|Make)\b/);
    }
  });

  it.each([
    {
      reason: 'a legacy name: the text names the field, the fix keeps its fixed -05:00',
      zone: 'EST',
      fix: 'America/Panama',
    },
    {
      reason: 'Etc/GMT-9 is UTC+09:00: the fix keeps +09:00, not the sign written',
      zone: 'Etc/GMT-9',
      fix: 'Asia/Tokyo',
    },
    { reason: 'Etc/GMT+12: no zone keeps UTC-12:00 without the trap, so a warning without a fix', zone: 'Etc/GMT+12' },
  ])('MisleadingTimezone: $reason', ({ zone, fix }) => {
    const d = run({ maintenanceWindows: [WED_SAT[0], { ...WED_SAT[0], timezone: zone }] as never });
    const path = 'spec.maintenanceWindows[1].timezone';
    expect(d.findings.map((f) => [f.reason, f.field, f.fix])).toEqual([
      ['MisleadingTimezone', path, fix && { object: 'RotationPolicy', path, value: fix }],
    ]);
    expect(d.findings[0]?.message.startsWith(`${path}: "${zone}" is `)).toBe(true);
  });

  it('names the freeze, its length and D, and ends it D after its start (RFC 3339 UTC) as the fix', () => {
    const d = run({ freezes: [freeze('2027-01-01T00:00:00Z', 2), freeze('2027-01-09T09:00:00+09:00', 9)] });
    expect(d.findings).toEqual([
      {
        severity: 'warning',
        reason: 'FreezeOutlastsNodes',
        field: 'spec.freezes[1]',
        message:
          'spec.freezes[1] (2027-01-09T09:00:00+09:00 to 2027-01-18T00:00:00Z) lasts 216h, longer than the 192h a ' +
          'node of this NodePool has from becoming a candidate to the last rotation start that finishes before ' +
          'expireAfter (E − A − t_rot = 336h − 142h43m − 1h17m), so nodes that become candidates as it begins get ' +
          'no window to be rotated in before Karpenter expires them. Set its end to 2027-01-17T00:00:00Z, or raise ' +
          'minRotationChances to 3 (D = K·P under auto).',
        fix: { object: 'RotationPolicy', path: 'spec.freezes[1].end', value: '2027-01-17T00:00:00Z' },
      },
    ]);
  });

  it('offers a lower ageThreshold beside the shorter freeze when the threshold is explicit', () => {
    const d = run({ ageThreshold: '200h', freezes: [freeze('2027-01-10T00:00:00Z', 6)] });
    expect(d.findings.filter((f) => f.reason === 'FreezeOutlastsNodes').map((f) => f.message)).toEqual([
      expect.stringMatching(
        /lasts 144h, longer than the 134h43m .* end to 2027-01-15T14:43:00Z, or lower ageThreshold to 190h43m\.$/,
      ) as unknown,
    ]);
  });

  it('computes G = floor((E − A − t_rot) / P) for an explicit override', () => {
    const d = run({ ageThreshold: '200h' });
    expect(d.figures.ageThresholdSeconds).toBe(200 * H);
    expect(d.figures.guaranteedChances).toBe(Math.floor((336 * H - 200 * H - 4620) / (4 * D)));
  });

  it('derives nothing that needs a deadline for expireAfter: Never', () => {
    const d = run({}, pool({ expireAfter: 'Never' }));
    expect(d.figures.ageThresholdSeconds).toBeNull();
    expect(d.figures.guaranteedChances).toBeNull();
    expect(d.figures.leadTimeSeconds).toBe(8 * D + 4620);
    expect(d.findings).toEqual([]);
  });

  it('uses the 1h fallback for an unset tGP in t_rot and the 10m cap in drainEstimate', () => {
    const d = run({}, pool({ terminationGracePeriod: undefined }));
    expect(d.figures.rotationBoundSeconds).toBe(15 * 60 + H + 120);
    expect(d.figures.expectedRotationSeconds).toBe(5 * 60 + 10 * 60);
  });

  it('uses the worst real-calendar P in a DST zone, so A is an hour shorter than the wall-clock figure', () => {
    const d = run({
      maintenanceWindows: [
        { timezone: 'America/New_York', days: ['Wed', 'Sat'], start: '02:00', end: '06:00' },
      ] as never,
    });
    expect(d.figures.windowPeriodSeconds).toBe(4 * D + H);
    expect(d.figures.ageThresholdSeconds).toBe(336 * H - (2 * (4 * D + H) + 4620));
  });
});

describe('layer 3: ShortLead per NodeClaim', () => {
  const claim = (name: string, expireAfter: string, deleting = false): NodeClaim => ({
    apiVersion: 'karpenter.sh/v1',
    kind: 'NodeClaim',
    metadata: {
      name,
      labels: { 'karpenter.sh/nodepool': 'general' },
      ...(deleting ? { deletionTimestamp: '2027-01-01T00:00:00Z' } : {}),
    },
    spec: { expireAfter, terminationGracePeriod: '1h' },
  });

  it('flags claims whose own expireAfter is not longer than K·P + t_rot, and skips Never and deleting claims', () => {
    const findings = shortLeadFindings({
      claims: [
        claim('b-short', '192h'),
        claim('a-ok', '336h'),
        claim('c-never', 'Never'),
        claim('d-leaving', '1h', true),
        claim('e-edge', `${8 * 24 + 1}h17m`),
      ],
      minRotationChances: 2,
      periodSeconds: 4 * D,
      readyTimeout: 900,
    });
    expect(findings.map((f) => f.field)).toEqual([
      'NodeClaim b-short spec.expireAfter',
      'NodeClaim e-edge spec.expireAfter',
    ]);
    expect(findings.every((f) => f.reason === 'ShortLead' && f.severity === 'warning')).toBe(true);
  });
});
