import { describe, expect, it } from 'vitest';
import type { MaintenancePlan } from '../generated/api-types.js';
import type { NodePool } from '../karpenter/types.js';
import { expandPlan, planTargetFindings, policyName, shortenName } from './expand.js';
import { nearNames } from '../util/near-names.js';
import { pool as bare } from '../../test/support/fixtures.js';

const pool = (name: string, labels: Record<string, string> = {}): NodePool => bare(name, { labels });

const TOKYO = [{ timezone: 'Asia/Tokyo', days: ['Wed', 'Sat'], start: '02:00', end: '06:00' }];
const BERLIN = [{ timezone: 'Europe/Berlin', days: ['Sun'], start: '01:00', end: '05:00' }];

const plan = (spec: MaintenancePlan['spec']): MaintenancePlan => ({
  apiVersion: 'noderotation.io/v1alpha1',
  kind: 'MaintenancePlan',
  metadata: { name: 'platform' },
  spec,
});

const pools = [
  pool('web', { tier: 'web' }),
  pool('batch', { tier: 'batch' }),
  pool('gpu', { tier: 'gpu' }),
  pool('db', { tier: 'db' }),
];

describe('MaintenancePlan expansion', () => {
  const p = plan({
    nodePoolSelector: { matchExpressions: [{ key: 'tier', operator: 'NotIn', values: ['db'] }] },
    defaults: { maintenanceWindows: TOKYO as never, surge: { readyTimeout: '20m', cooldownAfter: '5m' } },
    rules: [
      { name: 'no-gpu', nodePoolSelector: { matchLabels: { tier: 'gpu' } }, exclude: true },
      {
        name: 'batch',
        nodePools: ['batch'],
        overrides: { maintenanceWindows: BERLIN as never, surge: { cooldownAfter: '0s' } },
      },
      { name: 'never-reached', nodePools: ['batch'], overrides: { minRotationChances: 5 } },
    ],
  });
  const out = expandPlan(p, pools);

  it('governs the selected NodePools in name order, one policy each, and skips excluded ones', () => {
    expect(out.policies.map((e) => [e.nodePool, e.rule, e.policy.metadata.name])).toEqual([
      ['batch', 'batch', 'platform-batch'],
      ['web', null, 'platform-web'],
    ]);
    expect(out.excluded).toEqual([{ nodePool: 'gpu', rule: 'no-gpu' }]);
    expect(out.errors).toEqual([]);
  });

  it('deep-merges overrides: objects field by field, lists replace, first matching rule only', () => {
    const batch = out.policies[0]?.policy.spec;
    expect(batch?.maintenanceWindows).toEqual(BERLIN);
    expect(batch?.surge?.readyTimeout).toBe('20m'); // from defaults
    expect(batch?.surge?.cooldownAfter).toBe('0s'); // from the rule
    expect(batch?.minRotationChances).toBe(2); // the later rule never applies; schema default
  });

  it('emits fully resolved specs targeting exactly one NodePool by name, labelled with the plan', () => {
    const web = out.policies[1]?.policy;
    expect(web?.spec.nodePools).toEqual(['web']);
    expect(web?.spec.nodePoolSelector).toBeUndefined();
    expect(web?.metadata.labels).toEqual({ 'noderotation.io/plan': 'platform' });
    expect(web?.spec.surge).toMatchObject({
      maxUnavailable: 1,
      retryBackoff: '30m',
      forcefulFallback: { enabled: false },
    });
    expect(web?.spec.surge?.matchNodeRequirements?.required).toEqual([
      'topology.kubernetes.io/zone',
      'kubernetes.io/arch',
      'karpenter.sh/capacity-type',
    ]);
    expect(web?.spec.ageThreshold).toBe('auto');
  });

  it('is deterministic: same input, byte-identical output whatever the NodePool order', () => {
    expect(JSON.stringify(expandPlan(p, [...pools].reverse()))).toBe(JSON.stringify(out));
  });

  it('an override of null returns a field to its default', () => {
    const q = plan({
      defaults: { maintenanceWindows: TOKYO as never, minRotationChances: 4 },
      rules: [{ name: 'r', nodePools: ['web'], overrides: { minRotationChances: null as never } }],
    });
    expect(expandPlan(q, [pool('web')]).policies[0]?.policy.spec.minRotationChances).toBe(2);
  });

  it('reports an invalid merge against the plan field that caused it, per NodePool', () => {
    const q = plan({
      defaults: {},
      rules: [{ name: 'r', nodePools: ['web'], overrides: { maintenanceWindows: TOKYO as never } }],
    });
    const e = expandPlan(q, [pool('web'), pool('batch')]);
    expect(e.policies.map((x) => x.nodePool)).toEqual(['web']);
    expect(e.errors).toEqual([
      {
        nodePool: 'batch',
        path: 'spec.defaults.maintenanceWindows',
        found: 'nothing',
        allowed: 'this field is required',
      },
    ]);
    const bad = plan({
      defaults: { maintenanceWindows: TOKYO as never },
      rules: [{ name: 'r', nodePools: ['web'], overrides: { surge: { readyTimeout: '0s' } } }],
    });
    expect(expandPlan(bad, [pool('web')]).errors[0]).toMatchObject({
      nodePool: 'web',
      path: 'spec.rules[0].overrides.surge.readyTimeout',
      found: '"0s"',
    });
  });
});

describe('generated names', () => {
  it('are <plan>-<nodepool> and only hashed when longer than a DNS subdomain allows', () => {
    expect(policyName('platform', 'web')).toBe('platform-web');
    const long = policyName('p'.repeat(200), 'n'.repeat(100));
    expect(long).toHaveLength(253);
    expect(long).toMatch(/^p{200}-n+-[0-9a-f]{10}$/);
    expect(policyName('p'.repeat(200), 'n'.repeat(100))).toBe(long);
    expect(policyName('p'.repeat(200), 'n'.repeat(101))).not.toBe(long);
    expect(shortenName('a'.repeat(70), 63)).toHaveLength(63);
  });
});

describe('names in rules that match no NodePool (UnknownNodePool)', () => {
  const defaults = { maintenanceWindows: TOKYO as never };
  it.each([
    {
      reason: 'a typo: the rule matches nothing and the nearest name is offered',
      spec: { defaults, rules: [{ name: 'batch', nodePools: ['batchh'], overrides: { minRotationChances: 3 } }] },
      want: [
        'spec.rules[0].nodePools[0]: rule batch names NodePool "batchh", which is not among the 4 NodePools ' +
          'given, so it matches nothing. Did you mean "batch"? Fix the name or remove it.',
      ],
    },
    {
      reason: 'no near name: only the fix',
      spec: { defaults, rules: [{ name: 'x', nodePools: ['web', 'analytics'], exclude: true }] },
      want: [
        'spec.rules[0].nodePools[1]: rule x names NodePool "analytics", which is not among the 4 NodePools ' +
          'given, so it matches nothing. Fix the name or remove it.',
      ],
    },
    {
      reason: 'a NodePool that exists but the plan does not select: the rule never applies to it',
      spec: {
        defaults,
        nodePoolSelector: { matchLabels: { tier: 'web' } },
        rules: [{ name: 'db', nodePools: ['db'], overrides: { minRotationChances: 3 } }],
      },
      want: [
        'spec.rules[0].nodePools[0]: rule db names NodePool db, which spec.nodePoolSelector does not select, so ' +
          'it never applies there. Widen spec.nodePoolSelector or remove the name.',
      ],
    },
    {
      reason: 'every name exists and is selected, and the selector matches: nothing to say',
      spec: {
        defaults,
        rules: [
          { name: 'a', nodePools: ['web', 'gpu'], exclude: true },
          { name: 'b', nodePoolSelector: { matchLabels: { tier: 'db' } }, exclude: true },
        ],
      },
      want: [],
    },
    {
      reason:
        'a selector that matches nothing is as silent as a name: SelectorMatchesNothing (selector-findings.test.ts)',
      spec: { defaults, rules: [{ name: 'b', nodePoolSelector: { matchLabels: { tier: 'nowhere' } }, exclude: true }] },
      want: [
        "spec.rules[0].nodePoolSelector.matchLabels.tier: rule b's spec.rules[0].nodePoolSelector matches none of " +
          'the 4 NodePools given: no NodePool has tier=nowhere, so it excludes no NodePool. Fix the selector.',
      ],
    },
  ])('$reason', ({ spec, want }) => {
    const found = planTargetFindings(plan(spec as MaintenancePlan['spec']), pools);
    expect(found.map((f) => `${f.field}: ${f.message}`)).toEqual(want);
    expect(found.every((f) => f.severity === 'warning')).toBe(true);
  });

  it('the names it offers are the existing ones at most two edits away, nearest first', () => {
    expect(nearNames('bach', ['batch', 'bash', 'web', 'beach'])).toEqual(['bash', 'batch', 'beach']);
    expect(nearNames('general', ['gpu', 'web'])).toEqual([]);
  });
});

describe('MaintenancePlan expansion: recurring freezes', () => {
  const BLACK_FRIDAY = { name: 'black-friday', timezone: 'America/New_York', yearly: { from: '11-27', to: '12-01' } };
  const MONTH_END = { name: 'month-end', timezone: 'Europe/Berlin', monthly: { from: -1, to: 1 } };
  const p = plan({
    nodePoolSelector: {},
    defaults: { maintenanceWindows: TOKYO as never, recurringFreezes: [BLACK_FRIDAY, MONTH_END] },
    rules: [
      { name: 'web', nodePools: ['web'], overrides: { minRotationChances: 3 } },
      { name: 'batch', nodePools: ['batch'], overrides: { recurringFreezes: [MONTH_END] } },
      { name: 'gpu', nodePools: ['gpu'], overrides: { recurringFreezes: null as never } },
    ],
  });
  const out = expandPlan(p, pools);
  const of = (name: string) => out.policies.find((e) => e.nodePool === name)?.policy.spec.recurringFreezes;

  it("declared once in the defaults, they reach every rule's RotationPolicy; an override replaces the list", () => {
    expect(out.errors).toEqual([]);
    expect(of('web')).toEqual([BLACK_FRIDAY, MONTH_END]); // a rule that overrides something else inherits them
    expect(of('db')).toEqual([BLACK_FRIDAY, MONTH_END]); // no rule: the defaults
    expect(of('batch')).toEqual([MONTH_END]); // lists replace whole
    expect(of('gpu')).toBeUndefined(); // an explicit null removes them
  });
});
