// Benchmarks of the engine and the simulator (docs/benchmarks.md). Run: node --import tsx bench/engine.ts
// Prints medians over repeated runs; no assertion — performance is measured here, never in tests.
import { decide } from '../src/engine/decide.js';
import type { Snapshot } from '../src/engine/types.js';
import type { RotationPolicy, Scenario } from '../src/generated/api-types.js';
import type { NodeClaim, NodePool } from '../src/karpenter/types.js';
import type { Node } from '../src/kube/types.js';
import { simulate } from '../src/simulate/simulate.js';

const iso = (ms: number): string => new Date(ms).toISOString().replace('.000Z', 'Z');
const NOW = Date.parse('2027-01-05T18:00:00Z'); // inside Wed 02:00–06:00 Tokyo
const DAY = 86_400_000;

/** 200 NodePools × 50 NodeClaims, one policy each by name; ages spread over 14 days. */
function fleet(pools: number, perPool: number): Snapshot {
  const policies: RotationPolicy[] = [];
  const nodePools: NodePool[] = [];
  const nodeClaims: NodeClaim[] = [];
  const nodes: Node[] = [];
  for (let p = 0; p < pools; p++) {
    const pool = `pool-${p}`;
    policies.push({
      apiVersion: 'noderotation.io/v1alpha1',
      kind: 'RotationPolicy',
      metadata: { name: pool },
      spec: {
        nodePools: [pool],
        maintenanceWindows: [
          { timezone: p % 2 ? 'Asia/Tokyo' : 'Europe/Berlin', days: ['Wed', 'Sat'], start: '02:00', end: '06:00' },
        ],
      },
    });
    nodePools.push({
      apiVersion: 'karpenter.sh/v1',
      kind: 'NodePool',
      metadata: { name: pool },
      spec: { template: { spec: { expireAfter: '336h', terminationGracePeriod: '1h' } } },
    });
    for (let i = 0; i < perPool; i++) {
      const name = `${pool}-${i}`;
      nodeClaims.push({
        apiVersion: 'karpenter.sh/v1',
        kind: 'NodeClaim',
        metadata: {
          name,
          creationTimestamp: iso(NOW - ((i * 7 + p) % 14) * DAY),
          labels: { 'karpenter.sh/nodepool': pool },
        },
        spec: { expireAfter: '336h', terminationGracePeriod: '1h' },
        status: { nodeName: `node-${name}`, conditions: [{ type: 'Ready', status: 'True' }] },
      });
      nodes.push({
        metadata: { name: `node-${name}`, labels: { 'karpenter.sh/nodepool': pool } },
        spec: {},
        status: { conditions: [{ type: 'Ready', status: 'True' }] },
      });
    }
  }
  return { policies, nodePools, nodeClaims, nodes, pods: [], namespace: 'noderotation-system' };
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)] as number;
}

const snap = fleet(200, 50);
// Warm-up: window calendars are memoised per day, and the JIT settles after a few passes.
for (let i = 0; i < 5; i++) decide(snap, NOW - (i + 1) * 1000);
const times: number[] = [];
for (let i = 0; i < 25; i++) {
  const t = performance.now();
  const d = decide(snap, NOW + i * 1000);
  times.push(performance.now() - t);
  if (i === 0) console.log(`decision: ${d.pools.length} pools, ${d.actions.length} actions`);
}
console.log(
  `one decision, 10000 NodeClaims / 200 NodePools: median ${median(times).toFixed(1)} ms, ` +
    `min ${Math.min(...times).toFixed(1)} ms (25 runs after 5 warm-up)`,
);

const year: Scenario = {
  apiVersion: 'noderotation.io/v1alpha1',
  kind: 'Scenario',
  metadata: { name: 'year-1000' },
  spec: {
    start: '2027-01-04T00:00:00Z',
    duration: process.argv[2] ?? '8760h',
    nodePool: { name: 'general', expireAfter: '336h', terminationGracePeriod: '1h' },
    policy: {
      maintenanceWindows: [
        { timezone: 'Europe/Berlin', days: ['Mon', 'Tue', 'Wed', 'Thu', 'Fri'], start: '22:00', end: '06:00' },
      ],
    },
    fleet: [
      { count: 250, age: '0h' },
      { count: 250, age: '84h' },
      { count: 250, age: '168h' },
      { count: 250, age: '252h' },
    ],
    behaviour: { seed: 1 },
  },
};
const t = performance.now();
const r = simulate(year);
console.log(
  `simulated ${year.spec.duration} of a 1000-node fleet: ${((performance.now() - t) / 1000).toFixed(1)} s ` +
    `(${r.rotations.graceful} graceful rotations, ${r.forcefulExpirations} forceful expirations)`,
);
