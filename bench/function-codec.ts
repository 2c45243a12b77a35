// The function's protobuf work alone, in one process: functions/codec.ts against protobuf-es's generated
// descriptors with its reflective toBinary/fromBinary, on the steady-state request and the response for N
// NodePools (the benchmark's plan, functions/fixtures.ts). The figures behind keeping codec.ts
// (docs/function.md, "Why a codec of our own").
//
//   node --import tsx bench/function-codec.ts [N ...]      # default: 10 100 500
//
// Every loop is bounded (200 timed iterations after 30 warm-up ones).
import os from 'node:os';
import { create, fromBinary, toBinary, type JsonObject } from '@bufbuild/protobuf';
import { decode, encode } from '../functions/codec.js';
import { scaledPlan } from '../functions/fixtures.js';
import {
  RunFunctionRequestSchema,
  RunFunctionResponseSchema,
  StateSchema,
  type RunFunctionRequest,
} from '../functions/generated/fn/v1/run_function_pb.js';
import { planRequest } from '../functions/request.js';
import { run } from '../functions/run.js';

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

/** Reads what run() reads of a decoded request: the composite and every NodePool. */
function touch(req: RunFunctionRequest): void {
  void req.observed?.composite?.resource;
  for (const item of req.requiredResources.nodepools?.items ?? []) void item.resource;
}

function measure(n: number): string[] {
  const { xr, pools } = scaledPlan(n);
  const env = { calendarStart: Date.parse('2027-01-04T00:00:00Z') };
  const computed = run(planRequest({ composite: xr, nodePools: pools }), env);
  const req = planRequest({ composite: xr, nodePools: pools });
  req.observed = create(StateSchema, {
    composite: { resource: xr },
    resources: Object.fromEntries(
      Object.entries(computed.desired?.resources ?? {}).map(([k, r]) => [k, { resource: r.resource as JsonObject }]),
    ),
  });
  const reqBytes = toBinary(RunFunctionRequestSchema, req);
  // An unfrozen copy: the response as computed afresh (after a plan edit), no memoised bytes to reuse.
  const fresh = fromBinary(RunFunctionResponseSchema, toBinary(RunFunctionResponseSchema, computed));
  const rows: [string, { p50: number; cpu: number }][] = [
    ['decode request, protobuf-es fromBinary', time(() => fromBinary(RunFunctionRequestSchema, reqBytes))],
    ['decode request, codec.ts, the parts run() reads', time(() => touch(decode(RunFunctionRequestSchema, reqBytes)))],
    ['encode response, protobuf-es toBinary', time(() => toBinary(RunFunctionResponseSchema, fresh))],
    ['encode response, codec.ts (after a plan edit)', time(() => encode(RunFunctionResponseSchema, fresh))],
    ['encode response, codec.ts (steady state, memoised)', time(() => encode(RunFunctionResponseSchema, computed))],
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
