// npm run sim -- --seeds N [--from S] [--faults a,b] [--fault-minutes M] [--swarm] [--trace]: runs seeds
// S … S+N−1 and, for each failing seed, prints its violations, its replay command and (with --trace, or for the
// first failure) a readable trace of its last steps. With --swarm each seed runs under its own subset of the
// faults named (of CI's when none is) for its own time, drawn from the seed as CI draws it (seeds.ts). Exits 1
// when any seed failed.
import { parseArgs } from 'node:util';
import { CI_FAULTS, swarm } from './seeds.js';
import { FAULTS, runSeed, type Fault } from './sim.js';

const { values } = parseArgs({
  options: {
    seeds: { type: 'string', default: '100' },
    from: { type: 'string', default: '1' },
    faults: { type: 'string', default: '' },
    trace: { type: 'boolean', default: false },
    swarm: { type: 'boolean', default: false },
    'horizon-minutes': { type: 'string' },
    'fault-minutes': { type: 'string' },
  },
});
const faults = values.faults.split(',').filter(Boolean) as Fault[];
const unknown = faults.filter((f) => !(FAULTS as readonly string[]).includes(f));
if (unknown.length > 0) {
  console.error(`unknown faults: ${unknown.join(', ')}; known: ${FAULTS.join(', ')}`);
  process.exit(2);
}
const from = Number(values.from);
const n = Number(values.seeds);
const horizonMs = values['horizon-minutes'] ? Number(values['horizon-minutes']) * 60_000 : undefined;
const started = performance.now();
const cpu0 = process.cpuUsage();
const failed: number[] = [];
let steps = 0;
let completed = 0;
const fence = { fenced: 0, takeovers: 0, pauses: 0, restarts: 0 };
const reasons: Record<string, number> = {};
const pool = faults.length > 0 ? faults : CI_FAULTS;
for (let seed = from; seed < from + n; seed++) {
  const run = values.swarm
    ? swarm(seed, pool)
    : { seed, faults, ...(values['fault-minutes'] ? { faultMinutes: Number(values['fault-minutes']) } : {}) };
  const r = await runSeed({ ...run, ...(horizonMs ? { horizonMs } : {}) });
  steps += r.steps;
  completed += r.stats.completed;
  for (const k of ['fenced', 'takeovers', 'pauses', 'restarts'] as const) fence[k] += r.stats[k];
  for (const [k, v] of Object.entries(r.stats.reasons)) reasons[k] = (reasons[k] ?? 0) + v;
  if (r.ok) continue;
  failed.push(seed);
  console.log(`\nseed ${seed} FAILED (${r.steps} steps, ${Math.round(r.virtualMs / 60_000)} virtual min)`);
  for (const v of r.violations) console.log(`  ${v.invariant}: ${v.message}`);
  console.log(`  replay: ${r.replay}`);
  if (values.trace || failed.length === 1) console.log(r.trace.map((l) => `    ${l}`).join('\n'));
}
const s = (performance.now() - started) / 1000;
const under = values.swarm ? ` with swarms of ${pool.join(',')}` : faults.length > 0 ? ` with ${faults.join(',')}` : '';
const used = process.cpuUsage(cpu0);
const cpu = (used.user + used.system) / 1e6;
console.log(
  `\n${n} seeds from ${from}${under}: ${n - failed.length} ok, ` +
    `${failed.length} failed${failed.length > 0 ? ` (${failed.join(', ')})` : ''}; ${steps} steps, ` +
    `${completed} rotations completed; ${s.toFixed(1)} s wall (${(n / s).toFixed(1)} seeds/s), ` +
    `${cpu.toFixed(1)} s CPU (${(n / cpu).toFixed(1)} seeds per CPU-second)`,
);
const paths = Object.entries(reasons).sort(([a], [b]) => a.localeCompare(b));
console.log(`events by reason (the paths taken): ${paths.map(([k, v]) => `${k} ${v}`).join(', ')}`);
console.log(
  `replicas: ${fence.restarts} killed, ${fence.pauses} paused, ${fence.takeovers} Lease takeovers, ` +
    `${fence.fenced} writes refused by the fence`,
);
process.exit(failed.length > 0 ? 1 : 0);
