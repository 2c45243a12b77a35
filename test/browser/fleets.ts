// Generated fleets for the report's tests and benchmark: a 10,000-node scenario, and a live fleet of several
// NodePools with a change to some of their policies (what-if snapshots, no cluster).
import type { RotationPolicy, Scenario } from '../../src/generated/api-types.js';
import type { Side } from '../../src/simulate/what-if.js';
import { claim, DAY, nodePool, policy } from '../support/fixtures.js';

/**
 * 10,000 nodes of one NodePool, ages spread evenly over their 90-day lifetime, a 4-hour window every night, the
 * forceful fallback on: far more nodes than one pool's rotations can keep up with, so the picture has
 * rotations, fallbacks and expirations. 21 days keeps it within simulate's limits (src/simulate/limits.ts).
 */
export function fleetScenario(nodes: number, days = 21): Scenario {
  const groups = Math.min(nodes, 30);
  return {
    apiVersion: 'noderotation.io/v1alpha1',
    kind: 'Scenario',
    metadata: { name: `fleet-${nodes}` },
    spec: {
      start: '2027-01-04T00:00:00Z',
      duration: `${days * 24}h`,
      nodePool: { name: 'general', expireAfter: '2160h', terminationGracePeriod: '1h' },
      policy: {
        maintenanceWindows: [
          { timezone: 'UTC', days: ['Mon', 'Tue', 'Wed', 'Thu', 'Fri', 'Sat', 'Sun'], start: '01:00', end: '05:00' },
        ],
        surge: { forcefulFallback: { enabled: true } },
      },
      fleet: Array.from({ length: groups }, (_, i) => ({
        count: Math.floor(nodes / groups) + (i < nodes % groups ? 1 : 0),
        age: `${Math.floor((i * 2160) / groups)}h`,
      })) as Scenario['spec']['fleet'],
      behaviour: { provisioningTime: '5m', drainTime: '10m', seed: 1 },
    },
  };
}

/**
 * 12 nodes of a 3-day expireAfter in a pool whose window opens every night at 01:00 in New York, over the 10
 * days around the spring-forward of 2027-03-14 (that night's window, 01:00 EST to 04:00 EDT, lasts two hours).
 * The run starts at midnight UTC, 19:00 the evening before in New York.
 */
export function newYorkScenario(): Scenario {
  const s = fleetScenario(12, 10);
  return {
    ...s,
    metadata: { name: 'new-york' },
    spec: {
      ...s.spec,
      start: '2027-03-10T00:00:00Z',
      nodePool: { name: 'general', expireAfter: '72h', terminationGracePeriod: '1h' },
      // Every night, as fleetScenario's window, but at 01:00 in New York; no fallback.
      policy: {
        maintenanceWindows: (s.spec.policy.maintenanceWindows ?? []).map((w) => ({
          ...w,
          timezone: 'America/New_York',
          end: '04:00',
        })) as Scenario['spec']['policy']['maintenanceWindows'],
      },
      fleet: [
        { count: 6, age: '0h' },
        { count: 6, age: '40h' },
      ] as Scenario['spec']['fleet'],
    },
  };
}

const WINDOWS = [{ timezone: 'UTC', days: ['Tue', 'Thu', 'Sat'], start: '02:00', end: '06:00' }];

/**
 * `pools` NodePools of `perPool` nodes each, created a day apart over the 14-day expireAfter, each governed by
 * its own policy. The change: the first pool's windows narrowed to Saturdays (fewer chances: expirations),
 * the second pool's policy suspended (Karpenter alone); the others unchanged.
 */
export function whatIfFleet(pools: number, perPool: number): { before: Side; after: Side; now: number } {
  const now = Date.parse('2027-01-04T00:00:00Z');
  const names = Array.from({ length: pools }, (_, i) => `pool-${String(i).padStart(2, '0')}`);
  const nodePools = names.map((name) => {
    const p = nodePool();
    return { ...p, metadata: { ...p.metadata, name } };
  });
  const nodeClaims = names.flatMap((pool) =>
    Array.from({ length: perPool }, (_, i) => {
      const c = claim(`${pool}-${i}`, { createdAt: now - ((i * 14) / perPool) * DAY - 3_600_000 }).claim;
      return { ...c, metadata: { ...c.metadata, labels: { 'karpenter.sh/nodepool': pool } } };
    }),
  );
  const source = { file: 'cluster (generated)', document: 1 };
  const policyOf = (pool: string, spec: Partial<RotationPolicy['spec']> = {}) => ({
    ...policy({ nodePools: [pool], maintenanceWindows: WINDOWS as never, ...spec }, pool),
    source,
  });
  const side = (policies: RotationPolicy[]): Side => ({
    policies: policies.map((p) => ({ ...p, source })),
    plans: [],
    nodePools,
    nodeClaims,
  });
  const before = names.map((n) => policyOf(n));
  const after = names.map((n, i) =>
    i === 0
      ? policyOf(n, { maintenanceWindows: [{ ...WINDOWS[0], days: ['Sat'] }] as never })
      : i === 1
        ? policyOf(n, { suspend: true })
        : policyOf(n),
  );
  return { before: side(before), after: side(after), now };
}
