// The function's protobuf work alone, in one process: the official SDK's generated messages (ts-proto,
// @crossplane-org/function-sdk-typescript) decoding the steady-state request and encoding the response for N
// NodePools (the benchmark's plan, functions/fixtures.ts). The figures behind docs/function.md's design note
// on the messages.
//
//   node --import tsx bench/function-codec.ts [N ...]      # default: 10 100 500
//
// Every loop is bounded (200 timed iterations after 30 warm-up ones).
import os from 'node:os';
import { RunFunctionRequest, RunFunctionResponse, State } from '@crossplane-org/function-sdk-typescript';
import { planRequest } from '../functions/request.js';
import { run } from '../functions/run.js';
import { scaledPlan } from '../functions/fixtures.js';

const ITERATIONS = 200;
const WARM_UP = 30;

/**
 * Wall-clock p50 and CPU time per call (process.cpuUsage over all iterations). On a shared machine the CPU
 * time is the steadier figure: a longer operation is preempted more often, which inflates its wall time more.
 */
function time(f: () => unknown): { p50: number; cpu: number } {
  for (let i = 0; i < WARM_UP; i++) f();
  const samples: number[] = [];
  const cpuBefore = process.cpuUsage();
  for (let i = 0; i < ITERATIONS; i++) {
    const t = performance.now();
    f();
    samples.push(performance.now() - t);
  }
  const cpu = process.cpuUsage(cpuBefore);
  samples.sort((a, b) => a - b);
  return { p50: samples[ITERATIONS / 2] as number, cpu: (cpu.user + cpu.system) / 1000 / ITERATIONS };
}

function measure(n: number): string[] {
  const { xr, pools } = scaledPlan(n);
  const env = { calendarStart: Date.parse('2027-01-04T00:00:00Z') };
  const computed = run(planRequest({ composite: xr, nodePools: pools }), env);
  const req = planRequest({ composite: xr, nodePools: pools });
  req.observed = State.fromPartial({
    composite: { resource: xr },
    resources: Object.fromEntries(
      Object.entries(computed.desired?.resources ?? {}).map(([k, r]) => [k, { resource: r.resource }]),
    ),
  });
  const reqBytes = RunFunctionRequest.encode(req).finish();
  const rows: [string, { p50: number; cpu: number }][] = [
    ['decode request, RunFunctionRequest.decode', time(() => RunFunctionRequest.decode(reqBytes))],
    ['encode response, RunFunctionResponse.encode', time(() => RunFunctionResponse.encode(computed).finish())],
  ];
  const kib = (b: number): string => (b / 1024).toFixed(0);
  return rows.map(
    ([what, t]) => `| ${n} | ${kib(reqBytes.length)} | ${what} | ${t.cpu.toFixed(2)} | ${t.p50.toFixed(2)} |`,
  );
}

const sizes = process.argv.slice(2).map(Number);
const rows = (sizes.length > 0 ? sizes : [10, 100, 500]).flatMap(measure);
console.log(
  `Node ${process.version}, ${os.cpus().length} CPUs, load average ${os.loadavg()[0]?.toFixed(1)}; ` +
    `${ITERATIONS} iterations after ${WARM_UP} warm-up, ms\n`,
);
console.log('| NodePools | request KiB | what | CPU ms per call | wall p50 ms |\n|---:|---:|---|---:|---:|');
for (const row of rows) console.log(row);
