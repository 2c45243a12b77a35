// The measurements behind simulate's size limits (src/simulate/limits.ts, docs/benchmarks.md#simulate-limits).
// Run: node --import tsx bench/simulate-limits.ts [CASE...]; prints wall time, events and peak RSS per case.
// No assertion: performance is measured here, never in tests.
import type { Scenario } from '../src/generated/api-types.js';
import { scenarioSizeErrors } from '../src/simulate/limits.js';
import { simulate } from '../src/simulate/simulate.js';

type Fleet = Scenario['spec']['fleet'];

function scenario(name: string, duration: string, fleet: Fleet, extra: Partial<Scenario['spec']> = {}): Scenario {
  return {
    apiVersion: 'noderotation.io/v1alpha1',
    kind: 'Scenario',
    metadata: { name },
    spec: {
      start: '2027-01-04T00:00:00Z',
      duration,
      nodePool: { name: 'general', expireAfter: '336h', terminationGracePeriod: '1h' },
      policy: {
        maintenanceWindows: [
          { timezone: 'Europe/Berlin', days: ['Mon', 'Tue', 'Wed', 'Thu', 'Fri'], start: '22:00', end: '06:00' },
        ],
      },
      fleet,
      behaviour: { seed: 1 },
      ...extra,
    },
  };
}

const cohorts = (n: number): Fleet => [0, 84, 168, 252].map((age) => ({ count: n / 4, age: `${age}h` })) as Fleet;

const CASES: Record<string, Scenario> = {
  // The year of docs/benchmarks.md: 1000 nodes in 4 age cohorts.
  year1000: scenario('year-1000', '8760h', cohorts(1000)),
  // The schema's own maximum group (100,000 nodes), as long as the node-hour cap allows, young (no expiry).
  max100kYoung: scenario('max-100k-young', '100h', [{ count: 100_000, age: '0h' }]),
  // 100,000 nodes old enough to be rotated in the first window, up to the first window's end.
  max100kWindow: scenario('max-100k-window', '32h', [{ count: 100_000, age: '300h' }]),
  // Nodes × lifetimes at its cap: 5000 nodes that all expire once, and some twice.
  expire5000: scenario('expire-5000', '400h', [{ count: 5000, age: '0h' }]),
  // One node whose every surge fails, retried as fast as the policy allows, for a year.
  failingSurge: scenario('failing-surge', '8760h', [{ count: 1, age: '300h' }], {
    policy: {
      maintenanceWindows: [
        { timezone: 'UTC', days: ['Mon', 'Tue', 'Wed', 'Thu', 'Fri', 'Sat', 'Sun'], start: '00:00', end: '23:59' },
      ],
      surge: { readyTimeout: '1m', retryBackoff: '1s', cooldownAfter: '1s' },
    },
    behaviour: { surgeFailureRate: 1, seed: 1 },
  }),
};

for (const name of process.argv.length > 2 ? process.argv.slice(2) : Object.keys(CASES)) {
  const s = CASES[name];
  if (!s) throw new Error(`no case ${name}; cases: ${Object.keys(CASES).join(', ')}`);
  const refused = scenarioSizeErrors(s);
  if (refused.length > 0) {
    console.log(`${name}: refused: ${refused.map((e) => `${e.path}: ${e.found}; ${e.allowed}`).join(' | ')}`);
    continue;
  }
  const stats = { events: 0, decisionWork: 0 };
  const t = performance.now();
  try {
    const r = simulate(s, { stats });
    console.log(
      `${name}: ${((performance.now() - t) / 1000).toFixed(1)} s, ${stats.events} events, ` +
        `${stats.decisionWork} NodeClaims decided on, ` +
        `${r.timeline.length} lives, ${r.rotations.graceful} graceful, ${r.rotations.failedAttempts} failed, ` +
        `${r.forcefulExpirations} expired, peak RSS ${Math.round(process.resourceUsage().maxRSS / 1024)} MB`,
    );
  } catch (err) {
    console.log(`${name}: stopped after ${((performance.now() - t) / 1000).toFixed(1)} s: ${(err as Error).message}`);
  }
}
