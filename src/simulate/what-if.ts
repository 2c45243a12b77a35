// `simulate --from-cluster [-f changed…]`: the live fleet as scenarios — one per NodePool, its NodeClaims with
// their real ages and expireAfter — run twice, under the policies as they are and as they would be with the
// changes, and compared: forceful expirations, rotations per window, nodes at risk, and the first instant at
// which anything would happen differently. Pure: the clock and the duration are inputs.
import type { Inputs } from '../api/documents.js';
import { rfc3339 } from '../engine/annotations.js';
import { effectivePolicies } from '../explain/explain.js';
import type { RotationPolicy, Scenario } from '../generated/api-types.js';
import { DEFAULT_EXPIRE_AFTER, nodePoolOf, type NodeClaim, type NodePool } from '../karpenter/types.js';
import { governingPolicy } from '../policy/resolve.js';
import { formatGoDuration } from '../util/duration.js';
import { simulate, type SimulationResult } from './simulate.js';

export type Side = Pick<Inputs, 'policies' | 'plans' | 'nodePools' | 'nodeClaims'>;

export interface SideSummary {
  /** The governing policy; null: no policy (Karpenter alone), or a conflict. */
  policy: string | null;
  nodes: number;
  graceful: number;
  forcefulFallback: number;
  failedAttempts: number;
  forcefulExpirations: number;
  startsOutsideWindow: number;
  /** Rotations (graceful and fallback) per window occurrence in the run; null without windows. */
  rotationsPerWindow: number | null;
  /** Nodes of today's fleet that Karpenter would force-expire within the run. */
  nodesAtRisk: number;
}

export interface PoolWhatIf {
  nodePool: string;
  before: SideSummary;
  after: SideSummary;
  /** The first instant at which a node of today's fleet would be rotated, drained or end differently. */
  firstChange: string | null;
}

/** A pool's comparison and the two runs behind it (null: no claims, nothing simulated), for the picture. */
export interface PoolRuns extends PoolWhatIf {
  runs: { before: SimulationResult | null; after: SimulationResult | null };
}

/** Every NodePool of `after`, simulated under both sides from `now` for `durationSeconds`, in name order. */
export function whatIf(before: Side, after: Side, now: number, durationSeconds: number): PoolWhatIf[] {
  return whatIfRuns(before, after, now, durationSeconds).map(comparisonOf);
}

/** The comparison alone, without the two runs behind it (the table and the JSON). */
export const comparisonOf = ({ runs: _runs, ...p }: PoolRuns): PoolWhatIf => p;

/** whatIf with each side's simulation kept (the HTML report draws them). */
export function whatIfRuns(before: Side, after: Side, now: number, durationSeconds: number): PoolRuns[] {
  const pools = [...after.nodePools].sort((a, b) => a.metadata.name.localeCompare(b.metadata.name));
  const beforePolicies = effectivePolicies(before);
  const afterPolicies = effectivePolicies(after);
  return pools.map((pool) => {
    const name = pool.metadata.name;
    const oldPool = before.nodePools.find((p) => p.metadata.name === name) ?? pool;
    const claims = after.nodeClaims.filter((c) => nodePoolOf(c) === name && !c.metadata.deletionTimestamp);
    const a = run(oldPool, claims, beforePolicies, now, durationSeconds);
    const b = run(pool, claims, afterPolicies, now, durationSeconds);
    return {
      nodePool: name,
      before: a.summary,
      after: b.summary,
      firstChange: firstChange(a.result, b.result),
      runs: { before: a.result, after: b.result },
    };
  });
}

function run(
  pool: NodePool,
  claims: readonly NodeClaim[],
  policies: RotationPolicy[],
  now: number,
  durationSeconds: number,
): { summary: SideSummary; result: SimulationResult | null } {
  const gov = governingPolicy(pool, policies);
  const policy = gov.kind === 'governed' ? gov.policy : null;
  if (claims.length === 0) return { summary: { ...EMPTY, policy: policy?.metadata.name ?? null }, result: null };
  const result = simulate(scenarioOf(pool, claims, policy, now, durationSeconds));
  const windows = result.windows.length;
  const rotated = result.rotations.graceful + result.rotations.forcefulFallback;
  return {
    result,
    summary: {
      policy: policy?.metadata.name ?? null,
      nodes: result.nodes,
      graceful: result.rotations.graceful,
      forcefulFallback: result.rotations.forcefulFallback,
      failedAttempts: result.rotations.failedAttempts,
      forcefulExpirations: result.forcefulExpirations,
      startsOutsideWindow: result.startsOutsideWindow,
      rotationsPerWindow: policy && windows > 0 ? Math.round((rotated / windows) * 100) / 100 : null,
      nodesAtRisk: result.timeline.filter((l) => l.origin === 'initial' && l.end === 'expired').length,
    },
  };
}

const EMPTY: SideSummary = {
  policy: null,
  nodes: 0,
  graceful: 0,
  forcefulFallback: 0,
  failedAttempts: 0,
  forcefulExpirations: 0,
  startsOutsideWindow: 0,
  rotationsPerWindow: null,
  nodesAtRisk: 0,
};

/**
 * The pool as a Scenario: today's claims as fleet groups (claims created at the same second with the same
 * expireAfter share a group), the governing policy's settings, or Karpenter alone (baseline) without one.
 */
export function scenarioOf(
  pool: NodePool,
  claims: readonly NodeClaim[],
  policy: RotationPolicy | null,
  now: number,
  durationSeconds: number,
): Scenario {
  const t = pool.spec.template.spec;
  const groups = new Map<string, { count: number; seconds: number; expireAfter: string }>();
  for (const c of claims) {
    const created = Date.parse(c.metadata.creationTimestamp ?? '');
    const ageSeconds = Number.isNaN(created) ? 0 : Math.max(0, Math.floor((now - created) / 1000));
    const expireAfter = c.spec.expireAfter ?? t.expireAfter ?? DEFAULT_EXPIRE_AFTER;
    const key = `${ageSeconds}|${expireAfter}`;
    const g = groups.get(key);
    if (g) g.count++;
    else groups.set(key, { count: 1, seconds: ageSeconds, expireAfter });
  }
  const {
    nodePools: _names,
    nodePoolSelector: _selector,
    ...settings
  } = policy?.spec ?? {
    maintenanceWindows: [{ timezone: 'UTC', days: ['Mon'], start: '00:00', end: '01:00' }],
  };
  const limits = Object.fromEntries(Object.entries(pool.spec.limits ?? {}).map(([k, v]) => [k, String(v)]));
  return {
    apiVersion: 'noderotation.io/v1alpha1',
    kind: 'Scenario',
    metadata: { name: pool.metadata.name },
    spec: {
      start: rfc3339(now),
      duration: formatGoDuration(durationSeconds),
      // Without a policy, Karpenter alone: the settings above are a placeholder the baseline never reads.
      mode: policy ? 'controller' : 'baseline',
      nodePool: {
        name: pool.metadata.name,
        expireAfter: t.expireAfter ?? DEFAULT_EXPIRE_AFTER,
        ...(t.terminationGracePeriod ? { terminationGracePeriod: t.terminationGracePeriod } : {}),
        ...(Object.keys(limits).length > 0 ? { limits } : {}),
      },
      policy: settings,
      // Never empty: a pool without claims is not simulated.
      fleet: [...groups.values()]
        .sort((a, b) => a.seconds - b.seconds || a.expireAfter.localeCompare(b.expireAfter))
        .map((g) => ({
          count: g.count,
          age: formatGoDuration(g.seconds),
          expireAfter: g.expireAfter,
        })) as Scenario['spec']['fleet'],
    },
  };
}

/** The earliest instant at which a node of today's fleet fares differently between the two runs. */
function firstChange(a: SimulationResult | null, b: SimulationResult | null): string | null {
  if (a === null || b === null) return null;
  const lives = (r: SimulationResult) =>
    new Map(r.timeline.filter((l) => l.origin === 'initial').map((l) => [l.node, l]));
  const la = lives(a);
  const lb = lives(b);
  let first: number | null = null;
  for (const [node, x] of la) {
    const y = lb.get(node);
    if (!y) continue;
    for (const key of ['rotationStartedAt', 'drainStartedAt', 'endedAt'] as const) {
      if (x[key] === y[key]) continue;
      const times = [x[key], y[key]].filter((v): v is string => v !== null).map(Date.parse);
      const t = Math.min(...times);
      if (first === null || t < first) first = t;
    }
    if (x.end !== y.end && x.endedAt === y.endedAt && x.endedAt !== null) {
      const t = Date.parse(x.endedAt);
      if (first === null || t < first) first = t;
    }
  }
  return first === null ? null : rfc3339(first);
}
