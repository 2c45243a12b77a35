// Fixes for NodePools a MaintenancePlan governs (issue 21): where in the plan each goes, and when none is offered.
import { describe, expect, it } from 'vitest';
import { readDocuments } from '../api/documents.js';
import { finding, type Finding } from '../derivation/findings.js';
import type { MaintenancePlan, RotationPolicy } from '../generated/api-types.js';
import type { NodePool } from '../karpenter/types.js';
import { planFixes } from '../plan/plan-fixes.js';
import { explain, type ReportFinding } from './explain.js';

const NOW = Date.parse('2027-01-04T00:00:00Z');
const DAILY = [
  { timezone: 'UTC', days: ['Mon', 'Tue', 'Wed', 'Thu', 'Fri', 'Sat', 'Sun'], start: '02:00', end: '06:00' },
];

const nodePool = (name: string, expireAfter: string, labels: Record<string, string> = {}): object => ({
  apiVersion: 'karpenter.sh/v1',
  kind: 'NodePool',
  metadata: { name, labels },
  spec: {
    template: {
      spec: {
        expireAfter,
        terminationGracePeriod: '1h',
        nodeClassRef: { group: 'karpenter.kwok.sh', kind: 'KWOKNodeClass', name: 'default' },
        requirements: [],
      },
    },
  },
});

/** The findings of `reason` per NodePool for the plan `spec` over NodePools a (336h) and b (`bExpire`). */
function findings(spec: object, reason: string, bExpire = '336h'): Record<string, ReportFinding[]> {
  const plan = { apiVersion: 'noderotation.io/v1alpha1', kind: 'MaintenancePlan', metadata: { name: 'web' }, spec };
  const inputs = readDocuments(
    [],
    [{ name: 'test', values: [plan, nodePool('a', '336h', { tier: 'x' }), nodePool('b', bExpire, { tier: 'x' })] }],
  );
  expect(inputs.errors).toEqual([]);
  const r = explain(inputs, NOW);
  expect(r.planErrors).toEqual([]);
  return Object.fromEntries(r.report.nodePools.map((p) => [p.nodePool, p.findings.filter((f) => f.reason === reason)]));
}

const FREEZE = { start: '2027-01-10T00:00:00Z', end: '2027-01-20T00:00:00Z' };

describe('fixes for a NodePool a MaintenancePlan governs', () => {
  it("go into the deciding rule's override, even for a field the rule does not set yet", () => {
    const f = findings(
      {
        defaults: { maintenanceWindows: DAILY, surge: { readyTimeout: '20m' } },
        rules: [
          { name: 'fast', nodePools: ['a'], overrides: { minRotationChances: 3, surge: { retryBackoff: '5m' } } },
        ],
      },
      'RetryFasterThanAttempt',
    );
    expect(f.a?.[0]?.fix).toEqual({
      object: 'MaintenancePlan',
      name: 'web',
      path: 'spec.rules[0].overrides.surge.retryBackoff',
      value: '20m',
    });
    expect(f.a?.[0]?.message).toMatch(
      /Set it in MaintenancePlan web at spec\.rules\[0\]\.overrides\.surge\.retryBackoff\.$/,
    );
    expect(f.b).toEqual([]);
  });

  it('go into spec.defaults for a NodePool no rule decides', () => {
    const f = findings(
      { defaults: { maintenanceWindows: DAILY, minRotationChances: 2, freezes: [FREEZE] } },
      'FreezeOutlastsNodes',
    );
    expect(f.a?.[0]?.fix).toEqual({
      object: 'MaintenancePlan',
      name: 'web',
      path: 'spec.defaults.freezes[0].end',
      value: '2027-01-12T00:00:00Z',
    });
  });

  it("put a list item where its list is: the rule's, or the defaults' (an override replaces a whole list)", () => {
    const spec = {
      defaults: { maintenanceWindows: DAILY, freezes: [FREEZE] },
      rules: [
        { name: 'own', nodePools: ['a'], overrides: { freezes: [{ ...FREEZE, reason: 'a' }] } },
        { name: 'inherits', nodePools: ['b'], overrides: { minRotationChances: 2 } },
      ],
    };
    const f = findings(spec, 'FreezeOutlastsNodes');
    expect(f.a?.[0]?.fix?.path).toBe('spec.rules[0].overrides.freezes[0].end');
    expect(f.b?.[0]?.fix?.path).toBe('spec.defaults.freezes[0].end');
  });

  it('offer none that would make another NodePool fatal, and say which and why', () => {
    // K = 2 in the defaults: a (336h) keeps A > 0, b (49h) would have A = 49h − 2×24h − 1h17m < 0.
    const f = findings(
      { defaults: { maintenanceWindows: DAILY, minRotationChances: 1 } },
      'SingleRotationChance',
      '49h',
    );
    expect(f.a?.[0]?.fix).toBeUndefined();
    expect(f.a?.[0]?.message).toContain(
      'Not offered as a fix: spec.defaults.minRotationChances = 2 in MaintenancePlan web would also reach NodePool b ' +
        'and make it fatal there (NonPositiveAgeThreshold); give NodePool a a rule of its own and set it there.',
    );
    // b's own fix only reaches a, which it leaves fine (what it does to b itself is b's own findings' business).
    expect(f.b?.[0]?.fix?.path).toBe('spec.defaults.minRotationChances');
    // A rule of its own: the same fix is local, and offered.
    const g = findings(
      { defaults: { maintenanceWindows: DAILY, minRotationChances: 1 }, rules: [{ name: 'a', nodePools: ['a'] }] },
      'SingleRotationChance',
      '49h',
    );
    expect(g.a?.[0]?.fix?.path).toBe('spec.rules[0].overrides.minRotationChances');
  });

  it('give NodePools whose findings point at one plan field one value: the one that clears them all', () => {
    // One freeze in the defaults; a has D = K·P = 2×24h, b (K = 3 by its rule, the list still the defaults') 72h.
    const f = findings(
      {
        defaults: { maintenanceWindows: DAILY, minRotationChances: 2, freezes: [FREEZE] },
        rules: [{ name: 'b', nodePools: ['b'], overrides: { minRotationChances: 3 } }],
      },
      'FreezeOutlastsNodes',
    );
    const fix = { object: 'MaintenancePlan', name: 'web', path: 'spec.defaults.freezes[0].end' };
    // Each alone would take its own end (a: 01-12, b: 01-13); pasting b's would leave a's warning.
    expect(f.a?.[0]?.fix).toEqual({ ...fix, value: '2027-01-12T00:00:00Z' });
    expect(f.b?.[0]?.fix).toEqual({ ...fix, value: '2027-01-12T00:00:00Z' });
    expect(f.a?.[0]?.message).toMatch(/at spec\.defaults\.freezes\[0\]\.end, which NodePool b shares: this value /);
    expect(f.b?.[0]?.message).toContain(
      'Set it in MaintenancePlan web at spec.defaults.freezes[0].end to 2027-01-12T00:00:00Z: NodePool a shares ' +
        'that field, and 2027-01-12T00:00:00Z clears this finding and theirs (2027-01-13T00:00:00Z is enough for ' +
        'this NodePool alone).',
    );
  });

  it('offer none at a shared plan field when no one value clears every finding there harmlessly, and say why', () => {
    // Synthetic findings: a wants K ≥ 2, b K ≥ 3, and K = 3 is fatal for c. 2 leaves b's; 3 breaks c.
    const plan = {
      apiVersion: 'noderotation.io/v1alpha1',
      kind: 'MaintenancePlan',
      metadata: { name: 'web' },
      spec: { defaults: { maintenanceWindows: DAILY, minRotationChances: 1 } },
    } as unknown as MaintenancePlan;
    const pools = ['a', 'b', 'c'].map((n) => nodePool(n, '336h') as NodePool);
    const wants: Record<string, number> = { a: 2, b: 3 };
    const asks = (pool: string, K: number): Finding[] =>
      K < (wants[pool] ?? 0)
        ? [
            finding('SingleRotationChance', 'spec.minRotationChances', `${pool} wants ${wants[pool]}.`, {
              object: 'RotationPolicy',
              path: 'spec.minRotationChances',
              value: wants[pool] as number,
            }),
          ]
        : pool === 'c' && K === 3
          ? [finding('NoWindows', 'spec.maintenanceWindows', 'c breaks.')]
          : [];
    const analyse = (policy: RotationPolicy, pool: NodePool): Finding[] =>
      asks(pool.metadata.name, policy.spec.minRotationChances ?? 1);
    const governed = ['a', 'b', 'c'].map((n) => ({ nodePool: n, ruleIndex: -1, findings: asks(n, 1) }));
    const out = planFixes(plan, governed, pools, analyse);
    expect(out.get('a')).toEqual([
      {
        severity: 'warning',
        reason: 'SingleRotationChance',
        field: 'spec.minRotationChances',
        message:
          'a wants 2. Not offered as a fix: spec.defaults.minRotationChances in MaintenancePlan web is shared with ' +
          'NodePool b, and no one value clears all their findings there without breaking another NodePool; give ' +
          'NodePool a a rule of its own and set it there.',
      },
    ]);
    expect(out.get('b')?.[0]?.message).toBe(
      'b wants 3. Not offered as a fix: spec.defaults.minRotationChances = 3 in MaintenancePlan web would also ' +
        'reach NodePool c and make it fatal there (NoWindows); give NodePool b a rule of its own and set it there.',
    );
    expect(out.get('c')).toEqual([]);
  });

  it('leave NodePool fixes on the NodePool', () => {
    const f = findings({ defaults: { maintenanceWindows: DAILY } }, 'NonPositiveAgeThreshold', '30h');
    // Lead time 2×24h + 1h17m; the fix leaves A ≥ P = 24h too, so it is no step into AggressiveAgeThreshold.
    expect(f.b?.[0]?.fix).toEqual({ object: 'NodePool', path: 'spec.template.spec.expireAfter', value: '74h' });
  });
});
