// Per-NodePool outcomes memoised across RunFunction calls. Crossplane calls the function for every plan on
// every poll (about once a minute) and on every change of the XR or its composed resources, nearly always
// with the same plan and the same NodePools; the expansion and §3.2 analysis of a NodePool is a pure
// function of (calendar start, plan, NodePool), so a call whose inputs repeat only looks its answers up.
// Keys are canonical JSON (sorted keys): Go's protobuf encoder writes Struct maps in random order, so the
// same object can arrive with its fields in another order.
import type { NodePool } from '../src/karpenter/types.js';
import type { PoolOutcome } from './run.js';
import { canonicalJson } from '../src/util/canonical.js';

export interface OutcomeMemo {
  get(planKey: string, pool: NodePool, compute: () => PoolOutcome): PoolOutcome;
  /**
   * A decision over all of a plan's per-NodePool outcomes (its fixes, plan-fixes.ts): the last one computed for
   * the plan, while the outcomes are the very same (memoised) objects, in the same order.
   */
  fixes<T>(planKey: string, outcomes: readonly PoolOutcome[], compute: () => T): T;
  /** Canonical form of a value for keys. */
  key(value: unknown): string;
  readonly size: number;
}

/**
 * Bounded: at most maxPlans (plan, calendar day) pairs, each with at most maxPools NodePool entries; the
 * oldest is dropped first. Defaults hold a large cluster's plans for a day without growing for ever.
 */
export function outcomeMemo(maxPlans = 16, maxPools = 10_000): OutcomeMemo {
  const plans = new Map<string, Map<string, PoolOutcome>>();
  const decided = new Map<string, { outcomes: readonly PoolOutcome[]; value: unknown }>();
  return {
    key: canonicalJson,
    fixes<T>(planKey: string, outcomes: readonly PoolOutcome[], compute: () => T): T {
      const last = decided.get(planKey);
      if (last && last.outcomes.length === outcomes.length && last.outcomes.every((o, i) => o === outcomes[i]))
        return last.value as T;
      const value = compute();
      decided.delete(planKey);
      if (decided.size >= maxPlans) decided.delete(decided.keys().next().value as string);
      decided.set(planKey, { outcomes: [...outcomes], value });
      return value;
    },
    get(planKey, pool, compute) {
      let entries = plans.get(planKey);
      if (!entries) {
        if (plans.size >= maxPlans) plans.delete(plans.keys().next().value as string);
        entries = new Map();
        plans.set(planKey, entries);
      }
      const poolKey = canonicalJson(pool);
      let hit = entries.get(poolKey);
      if (!hit) {
        hit = compute();
        if (entries.size >= maxPools) entries.delete(entries.keys().next().value as string);
        entries.set(poolKey, hit);
      }
      return hit;
    },
    get size() {
      let n = 0;
      for (const e of plans.values()) n += e.size;
      return n;
    },
  };
}
