// SelectorMatchesNothing: a selector that matches none of the NodePools read names the term none satisfies and
// the label values (or keys) near it; its fix, when it has one, makes the selector match.
import { describe, expect, it } from 'vitest';
import type { LabelSelector } from '../generated/api-types.js';
import { pool } from '../../test/support/fixtures.js';
import { setPath } from '../util/set-path.js';
import { matches } from './selector.js';
import { selectorFindings } from './selector-findings.js';

const POOLS = [
  pool('api', { labels: { team: 'payments', tier: 'latency-sensitive' } }),
  pool('general', { labels: { tier: 'general' } }),
  pool('batch', { labels: { tier: 'batch', 'app.kubernetes.io/part-of': 'jobs' } }),
];

const target = (selector: LabelSelector) => ({
  selector,
  path: 'spec.nodePoolSelector',
  owner: 'the policy',
  kind: 'RotationPolicy' as const,
  effect: 'the policy governs no NodePool',
});

interface Case {
  reason: string;
  selector: LabelSelector;
  field: string;
  says: string;
  fix: string | undefined;
}

describe('SelectorMatchesNothing', () => {
  it.each<Case>([
    {
      reason: 'a misspelt value: the near one, as the fix',
      selector: { matchLabels: { team: 'paymnets' } },
      field: 'spec.nodePoolSelector.matchLabels.team',
      says: 'no NodePool has team=paymnets (did you mean "payments"?)',
      fix: 'payments',
    },
    {
      reason: 'a value two edits off',
      selector: { matchLabels: { tier: 'generl' } },
      field: 'spec.nodePoolSelector.matchLabels.tier',
      says: 'no NodePool has tier=generl (did you mean "general"?)',
      fix: 'general',
    },
    {
      reason: 'a misspelt key: the near key, in words (renaming a key is not one value)',
      selector: { matchLabels: { tem: 'payments' } },
      field: 'spec.nodePoolSelector.matchLabels.tem',
      says: 'no NodePool has the label "tem" (did you mean "team"?)',
      fix: undefined,
    },
    {
      reason: 'nothing near: no guess',
      selector: { matchLabels: { tier: 'gpu' } },
      field: 'spec.nodePoolSelector.matchLabels.tier',
      says: 'no NodePool has tier=gpu, so',
      fix: undefined,
    },
    {
      reason: 'an In expression with a misspelt value',
      selector: { matchExpressions: [{ key: 'tier', operator: 'In', values: ['bacth'] }] },
      field: 'spec.nodePoolSelector.matchExpressions[0].values',
      says: 'no NodePool has tier in ["bacth"] (did you mean "batch"?)',
      fix: 'batch',
    },
    {
      reason: 'a key that is not a path segment: the near value in words, no fix path',
      selector: { matchLabels: { 'app.kubernetes.io/part-of': 'job' } },
      field: 'spec.nodePoolSelector.matchLabels["app.kubernetes.io/part-of"]',
      says: 'no NodePool has app.kubernetes.io/part-of=job (did you mean "jobs"?)',
      fix: undefined,
    },
    {
      reason: 'each term matches some NodePool, none all of them: the selector is named, no term',
      selector: { matchLabels: { team: 'payments', tier: 'batch' } },
      field: 'spec.nodePoolSelector',
      says: 'each term matches some NodePool, but none has them all',
      fix: undefined,
    },
    {
      reason: 'a one-letter value is near nothing (a is not a typo of b)',
      selector: { matchLabels: { tier: 'b' } },
      field: 'spec.nodePoolSelector.matchLabels.tier',
      says: 'no NodePool has tier=b, so',
      fix: undefined,
    },
  ])('$reason', ({ selector, field, says, fix }) => {
    const [f, ...rest] = selectorFindings(target(selector), POOLS);
    expect(rest).toEqual([]);
    expect(f).toMatchObject({ reason: 'SelectorMatchesNothing', severity: 'warning', field });
    expect(f?.message).toContain(says);
    expect(f?.message).toContain('so the policy governs no NodePool');
    expect(f?.fix?.value).toBe(fix);
    if (f?.fix) {
      // Applied verbatim, the fix makes the selector match.
      const cured = setPath({ spec: { nodePoolSelector: selector } }, f.fix.path, f.fix.value).spec.nodePoolSelector;
      expect(POOLS.some((p) => matches(cured, p.metadata.labels))).toBe(true);
      expect(f.message).toContain(`Set ${f.fix.path} to ${String(f.fix.value)}`);
    }
  });

  it.each([
    { reason: 'a selector that matches', selector: { matchLabels: { tier: 'general' } }, pools: POOLS },
    { reason: 'the empty selector matches every NodePool', selector: {}, pools: POOLS },
    { reason: 'no NodePools were read: nothing to compare with', selector: { matchLabels: { tier: 'x' } }, pools: [] },
  ])('nothing to say: $reason', ({ selector, pools }) => {
    expect(selectorFindings(target(selector), pools)).toEqual([]);
  });

  it("a plan rule's selector that matches only NodePools the plan leaves out says so", () => {
    const [inPlan, out] = [POOLS.slice(1), POOLS.slice(0, 1)];
    const f = selectorFindings(target({ matchLabels: { team: 'payments' } }), inPlan, out);
    expect(f.map((x) => x.message)).toEqual([
      "the policy's spec.nodePoolSelector matches none of the 2 NodePools the plan selects, so the policy governs " +
        'no NodePool: it matches only api, which spec.nodePoolSelector leaves out. Widen spec.nodePoolSelector or ' +
        'fix the selector.',
    ]);
  });
});
