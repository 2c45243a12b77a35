import { RunFunctionResponse } from '@crossplane-org/function-sdk-typescript';
import { describe, expect, it } from 'vitest';
import { figuresCache } from '../src/schedule/figures-cache.js';
import { nodePool, scaledPlan, TOKYO_WED_SAT } from './fixtures.js';
import type { JsonObject } from './json.js';
import { outcomeMemo } from './memo.js';
import { canonicalJson } from '../src/util/canonical.js';
import { planRequest } from './request.js';
import { run } from './run.js';

const calendarStart = Date.parse('2027-01-04T00:00:00Z');
const bytes = (r: ReturnType<typeof run>): string =>
  Buffer.from(RunFunctionResponse.encode(r).finish()).toString('hex');

/** The same object with every key order reversed, as Go's protobuf encoder may send it. */
function reversedKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(reversedKeys);
  if (typeof value !== 'object' || value === null) return value;
  return Object.fromEntries(
    Object.keys(value)
      .reverse()
      .map((k) => [k, reversedKeys((value as Record<string, unknown>)[k])]),
  );
}

describe('caches shared across calls', () => {
  it('memoised answers are byte-identical to computed ones, and repeat calls only look them up', () => {
    const { xr, pools } = scaledPlan(30);
    const req = planRequest({ composite: xr, nodePools: pools });
    const fresh = bytes(run(req, { calendarStart }));
    const memo = outcomeMemo();
    const figures = figuresCache();
    expect(bytes(run(req, { calendarStart, memo, figures }))).toBe(fresh);
    expect(memo.size).toBe(30);
    // Same content, every key order reversed: same keys, no new entries, same answer.
    const shuffled = planRequest({
      composite: reversedKeys(xr) as JsonObject,
      nodePools: pools.map((p) => reversedKeys(p) as JsonObject),
    });
    expect(bytes(run(shuffled, { calendarStart, memo, figures }))).toBe(fresh);
    expect(memo.size).toBe(30);
    // A changed NodePool is a new entry; another calendar day is another plan key.
    const changed = planRequest({
      composite: xr,
      nodePools: [...pools.slice(1), nodePool('pool-0000', { expireAfter: '500h' })],
    });
    run(changed, { calendarStart, memo, figures });
    expect(memo.size).toBe(31);
    run(req, { calendarStart: calendarStart + 86_400_000, memo, figures });
    expect(memo.size).toBe(61);
  });

  it('bounds: the oldest plan and the oldest NodePool entries are dropped first', () => {
    const memo = outcomeMemo(2, 3);
    const outcome = { kind: 'ungoverned' } as const;
    for (const plan of ['a', 'b', 'c']) memo.get(plan, nodePool('x') as never, () => outcome);
    expect(memo.size).toBe(2);
    for (const name of ['p1', 'p2', 'p3', 'p4']) memo.get('c', nodePool(name) as never, () => outcome);
    expect(memo.size).toBe(1 + 3);
  });

  it("a plan's fixes are decided again only when one of its NodePools' outcomes is another object", () => {
    const memo = outcomeMemo();
    const [a, b] = [{ kind: 'ungoverned' } as const, { kind: 'excluded' } as const];
    let computed = 0;
    const decide = (): number => ++computed;
    expect(memo.fixes('plan', [a, b], decide)).toBe(1);
    expect(memo.fixes('plan', [a, b], decide)).toBe(1); // the same outcomes (another array): looked up
    expect(memo.fixes('plan', [a, { kind: 'excluded' }], decide)).toBe(2); // an outcome computed anew
    expect(memo.fixes('plan', [a], decide)).toBe(3); // a NodePool gone
    expect(memo.fixes('other', [a], decide)).toBe(4); // another plan (or calendar day)
  });

  it('the window-figure cache returns the computed figures and keeps unknown zones out', () => {
    const cache = figuresCache(2);
    const at = cache.at(calendarStart);
    const first = at([TOKYO_WED_SAT] as never);
    expect(at([TOKYO_WED_SAT] as never)).toBe(first);
    expect(first.periodSeconds).toBe(4 * 86400);
    expect(() => at([{ ...TOKYO_WED_SAT, timezone: 'Nowhere/Special' }] as never)).toThrow();
    expect(cache.size).toBe(1);
    cache.at(calendarStart + 1)([TOKYO_WED_SAT] as never);
    cache.at(calendarStart + 2)([TOKYO_WED_SAT] as never);
    expect(cache.size).toBe(2);
  });

  it('canonical JSON ignores key order and undefined fields, keeps list order', () => {
    expect(canonicalJson({ b: 1, a: [2, { d: null, c: undefined }] })).toBe('{"a":[2,{"d":null}],"b":1}');
    expect(canonicalJson({ a: 1, b: 2 })).toBe(canonicalJson({ b: 2, a: 1 }));
    expect(canonicalJson([1, 2])).not.toBe(canonicalJson([2, 1]));
  });
});
