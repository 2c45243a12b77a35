import { describe, expect, it } from 'vitest';
import type { LabelSelector, RotationPolicy, RotationPolicySpec } from '../generated/api-types.js';
import type { NodePool } from '../karpenter/types.js';
import { governingPolicy } from './resolve.js';
import { matches, specificity } from './selector.js';
import { pool as bare, rotationPolicy } from '../../test/support/fixtures.js';

const WINDOWS: RotationPolicySpec['maintenanceWindows'] = [
  { timezone: 'UTC', days: ['Sat'], start: '02:00', end: '06:00' },
];
const policy = (name: string, target: Partial<RotationPolicySpec>): RotationPolicy =>
  rotationPolicy(name, { maintenanceWindows: WINDOWS, ...target });
const pool = (name: string, labels: Record<string, string>): NodePool => bare(name, { labels });

const api = pool('api', { tier: 'web', team: 'payments' });

describe('governing policy (specificity, reference-compatible)', () => {
  const cases: { reason: string; policies: RotationPolicy[]; expect: string }[] = [
    {
      reason: 'no policy matches: not governed (safe no-op)',
      policies: [policy('other', { nodePoolSelector: { matchLabels: { tier: 'batch' } } })],
      expect: 'ungoverned',
    },
    {
      reason: 'an empty selector is a catch-all with specificity 0',
      policies: [policy('all', { nodePoolSelector: {} })],
      expect: 'governed:all',
    },
    {
      reason: 'any keyed selector beats the catch-all',
      policies: [
        policy('all', { nodePoolSelector: {} }),
        policy('web', { nodePoolSelector: { matchLabels: { tier: 'web' } } }),
      ],
      expect: 'governed:web',
    },
    {
      reason: 'more constraints win (matchLabels and matchExpressions both count)',
      policies: [
        policy('web', { nodePoolSelector: { matchLabels: { tier: 'web' } } }),
        policy('web-payments', {
          nodePoolSelector: { matchLabels: { tier: 'web' }, matchExpressions: [{ key: 'team', operator: 'Exists' }] },
        }),
      ],
      expect: 'governed:web-payments',
    },
    {
      reason: 'exact nodePools names beat any selector',
      policies: [
        policy('web-payments', { nodePoolSelector: { matchLabels: { tier: 'web', team: 'payments' } } }),
        policy('by-name', { nodePools: ['api'] }),
      ],
      expect: 'governed:by-name',
    },
    {
      reason: 'an equal-specificity tie is a conflict, names sorted',
      policies: [
        policy('z-team', { nodePoolSelector: { matchLabels: { team: 'payments' } } }),
        policy('a-tier', { nodePoolSelector: { matchLabels: { tier: 'web' } } }),
      ],
      expect: 'conflict:a-tier,z-team',
    },
    {
      reason: 'two policies naming the same NodePool conflict',
      policies: [policy('a', { nodePools: ['api'] }), policy('b', { nodePools: ['api', 'x'] })],
      expect: 'conflict:a,b',
    },
  ];
  it.each(cases)('$reason', ({ policies, expect: expected }) => {
    const g = governingPolicy(api, policies);
    const got =
      g.kind === 'governed'
        ? `governed:${g.policy.metadata.name}`
        : g.kind === 'conflict'
          ? `conflict:${g.policies.join(',')}`
          : 'ungoverned';
    expect(got).toBe(expected);
  });
});

describe('label selectors', () => {
  const labels = { tier: 'web', team: 'payments' };
  it.each([
    { reason: 'matchLabels all equal', sel: { matchLabels: { tier: 'web' } }, want: true },
    { reason: 'matchLabels one differs', sel: { matchLabels: { tier: 'web', team: 'x' } }, want: false },
    {
      reason: 'In with the value',
      sel: { matchExpressions: [{ key: 'tier', operator: 'In' as const, values: ['web', 'api'] }] },
      want: true,
    },
    {
      reason: 'In on a missing key',
      sel: { matchExpressions: [{ key: 'zone', operator: 'In' as const, values: ['a'] }] },
      want: false,
    },
    {
      reason: 'NotIn on a missing key matches',
      sel: { matchExpressions: [{ key: 'zone', operator: 'NotIn' as const, values: ['a'] }] },
      want: true,
    },
    {
      reason: 'NotIn with the value',
      sel: { matchExpressions: [{ key: 'tier', operator: 'NotIn' as const, values: ['web'] }] },
      want: false,
    },
    { reason: 'Exists', sel: { matchExpressions: [{ key: 'team', operator: 'Exists' as const }] }, want: true },
    {
      reason: 'DoesNotExist',
      sel: { matchExpressions: [{ key: 'team', operator: 'DoesNotExist' as const }] },
      want: false,
    },
  ])('$reason', ({ sel, want }) => {
    expect(matches(sel as LabelSelector, labels)).toBe(want);
  });

  it('counts constraints for specificity', () => {
    expect(specificity({})).toBe(0);
    expect(specificity({ matchLabels: { a: '1', b: '2' }, matchExpressions: [{ key: 'c', operator: 'Exists' }] })).toBe(
      3,
    );
  });
});
