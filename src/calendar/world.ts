// The calendar's model from the objects (calendar.ts writes it): which policy governs each NodePool (the
// resolution the engine uses), its windows, its freezes as the engine reads them, and its forecast, computed as
// explain computes it. `noderotation calendar` and the controller's /calendar.ics both build it here. Pure.
import type { RotationPolicy } from '../generated/api-types.js';
import { nodePoolOf, type NodeClaim, type NodePool } from '../karpenter/types.js';
import { A } from '../engine/annotations.js';
import { readFreezes } from '../engine/freezes.js';
import { analysePool } from '../explain/explain.js';
import { forecastOf } from '../forecast/forecast.js';
import { policyParams } from '../derivation/params.js';
import { governingPolicy } from '../policy/resolve.js';
import { figuresCache } from '../schedule/figures-cache.js';
import { calendarUntil, type CalendarModel, type CalendarPool, type FreezeSource } from './calendar.js';

export interface CalendarWorld {
  /** The RotationPolicies in effect (a MaintenancePlan's expanded into its policies). */
  policies: readonly RotationPolicy[];
  nodePools: readonly NodePool[];
  /** The NodeClaims; null when none were given, so there is no forecast (as explain). */
  nodeClaims: readonly NodeClaim[] | null;
}

export interface CalendarOptions {
  /** Only these NodePools; every governed one when empty or unset. */
  nodePools?: readonly string[];
  horizonSeconds: number;
}

/**
 * A NodePool's freezes as the engine reads them (readFreezes): its freeze annotation, its policy's spec.freezes
 * and the occurrences of its spec.recurringFreezes up to `until`. An unreadable one freezes until fixed (the
 * engine fails closed), so it runs from now to `to`.
 */
export function policyFreezes(pool: NodePool, policy: RotationPolicy, now: number, until: number): FreezeSource {
  const name = pool.metadata.name;
  const { spans, unreadable } = readFreezes(
    pool.metadata.annotations?.[A.freeze],
    {
      name: policy.metadata.name,
      freezes: policy.spec.freezes ?? [],
      recurringFreezes: policy.spec.recurringFreezes ?? [],
    },
    now,
    until,
    name,
  );
  return (from, to) => [
    ...spans.filter((s) => s.end > from && s.start < to),
    ...(unreadable === null
      ? []
      : [{ start: now, end: to, name: `NodePool ${name}: unreadable freeze`, reason: unreadable }]),
  ];
}

/** The model of the governed NodePools (sorted by name), of those named in `options.nodePools` when given. */
export function calendarModel(world: CalendarWorld, now: number, options: CalendarOptions): CalendarModel {
  const wanted = options.nodePools && options.nodePools.length > 0 ? new Set(options.nodePools) : null;
  const figuresFor = figuresCache().at(now);
  const pools: CalendarPool[] = [];
  const sorted = [...world.nodePools].sort((a, b) => (a.metadata.name < b.metadata.name ? -1 : 1));
  for (const pool of sorted) {
    const name = pool.metadata.name;
    if (wanted && !wanted.has(name)) continue;
    const gov = governingPolicy(pool, world.policies);
    if (gov.kind !== 'governed') continue;
    const { policy } = gov;
    const claims = world.nodeClaims && world.nodeClaims.filter((c) => nodePoolOf(c) === name);
    const figures = analysePool(policy, pool, claims, figuresFor, now).figures;
    pools.push({
      nodePool: name,
      policy: policy.metadata.name,
      windows: policyParams(policy.spec).windows,
      freezes: policyFreezes(pool, policy, now, calendarUntil(now, options.horizonSeconds)),
      forecast: claims && forecastOf(policy, pool, claims, figures, now),
    });
  }
  return { pools, now, horizonSeconds: options.horizonSeconds };
}
