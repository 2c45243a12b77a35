// The HTML report's rendering cost and size (docs/benchmarks.md#html-report): the run simulated once (not
// timed), then the page rendered — the per-day aggregation, the sample, the SVG — several times; prints the
// median wall time and the page's bytes per case. Run: node --import tsx bench/report-html.ts [CASE...]
// No assertion: performance is measured here, never in tests (the browser test bounds the 10,000-node page).
import { readFileSync } from 'node:fs';
import { parse } from 'yaml';
import type { Scenario } from '../src/generated/api-types.js';
import { renderHtml, renderWhatIfHtml } from '../src/simulate/html.js';
import { simulate } from '../src/simulate/simulate.js';
import { whatIfRuns } from '../src/simulate/what-if.js';
import { fleetScenario, whatIfFleet } from '../test/browser/fleets.js';

const REPS = 5;

/** simulate --from-cluster -o html on a generated fleet (test/browser/fleets.ts), the first pool chosen. */
function whatIfCase(pools: number, perPool: number, days: number) {
  return {
    what: `simulate --from-cluster -o html: ${pools} pools of ${perPool} nodes, ${days} days, two changed`,
    prepare: () => {
      const f = whatIfFleet(pools, perPool);
      const runs = whatIfRuns(f.before, f.after, f.now, days * 86400);
      const report = {
        now: '2027-01-04T00:00:00Z',
        duration: `${days}d`,
        durationSeconds: days * 86400,
        nodePools: runs,
      };
      return () => renderWhatIfHtml(report, { pool: 'pool-00' });
    },
  };
}

/** Each case: what it is, and a function that simulates (untimed) and returns the page renderer. */
const CASES: Record<string, { what: string; prepare: () => () => string }> = {
  nodes20: {
    what: 'examples/scenarios/worked-example.yaml: 20 nodes, 60 days',
    prepare: () => {
      const r = simulate(parse(readFileSync('examples/scenarios/worked-example.yaml', 'utf8')) as Scenario);
      return () => renderHtml(r);
    },
  },
  nodes10000: {
    what: '10,000 nodes of one pool, 14 days (test/browser/fleets.ts fleetScenario)',
    prepare: () => {
      const r = simulate(fleetScenario(10_000, 14));
      return () => renderHtml(r);
    },
  },
  days730: {
    what: '20 nodes over 730 days (the longest --duration): the size follows the days',
    prepare: () => {
      const s = fleetScenario(20, 730);
      s.spec.nodePool.expireAfter = '336h';
      const r = simulate(s);
      return () => renderHtml(r);
    },
  },
  whatIf1000: whatIfCase(10, 100, 60),
  whatIf10000: whatIfCase(100, 100, 30),
};

for (const name of process.argv.length > 2 ? process.argv.slice(2) : Object.keys(CASES)) {
  const c = CASES[name];
  if (!c) throw new Error(`no case ${name}; cases: ${Object.keys(CASES).join(', ')}`);
  const started = performance.now();
  const render = c.prepare();
  const simulated = (performance.now() - started) / 1000;
  const times: number[] = [];
  let bytes = 0;
  for (let i = 0; i < REPS; i++) {
    const t = performance.now();
    bytes = Buffer.byteLength(render());
    times.push(performance.now() - t);
  }
  times.sort((a, b) => a - b);
  console.log(
    `${name}: ${c.what}: render median ${(times[Math.floor(REPS / 2)] as number).toFixed(1)} ms ` +
      `(min ${(times[0] as number).toFixed(1)}), ${bytes.toLocaleString('en-US')} bytes; ` +
      `simulated in ${simulated.toFixed(1)} s`,
  );
}
