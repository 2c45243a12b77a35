// RunFunction latency and throughput over loopback gRPC, as Crossplane calls it: the function runs in its own
// process (`noderotation function --insecure`), this process is the client. Plans of 10, 100 and 1000
// NodePools (functions/fixtures.ts scaledPlan: two window sets, a rule for every tenth pool). Two regimes:
// steady state (Crossplane's poll: the same plan and NodePools again, answered from the server's memo) and
// a plan edit on every call (every NodePool expanded and analysed anew).
//
// The client sends requests encoded beforehand and keeps the response bytes undecoded: what is timed is the
// function (transport, decoding, handling, encoding), not this client's own protobuf work, which in
// production is Crossplane's. Every response is checked once, decoded, before the timing.
//
//   node --import tsx bench/function.ts            # prints a Markdown table (docs/function.md)
//
// Every loop is bounded by a call count and a time budget, and only 127.0.0.1 is contacted.
import os from 'node:os';
import { RunFunctionRequest, RunFunctionResponse, State } from '@crossplane-org/function-sdk-typescript';
import { scaledPlan } from '../functions/fixtures.js';
import { planRequest } from '../functions/request.js';
import { rawFunctionClient } from '../functions/client.js';
import { servingPorts, spawnFunction, stopFunction } from '../test/support/function-process.js';

const SIZES = [10, 100, 1000];
const LATENCY_CALLS: Record<number, number> = { 10: 2000, 100: 1000, 1000: 200 };
const THROUGHPUT_CALLS: Record<number, number> = { 10: 4000, 100: 2000, 1000: 200 };
const CONCURRENCY = 8;
const BUDGET_MS = 60_000; // per measurement

const bytes = (r: RunFunctionRequest): Buffer => Buffer.from(RunFunctionRequest.encode(r).finish());

function check(rsp: Buffer, n: number): RunFunctionResponse {
  const decoded = RunFunctionResponse.decode(rsp);
  const policies = Object.keys(decoded.desired?.resources ?? {}).length;
  if (policies !== n)
    throw new Error(`expected ${n} policies, got ${policies}: ${decoded.results.map((r) => r.message).join('; ')}`);
  return decoded;
}

const quantile = (sorted: number[], q: number): number =>
  sorted[Math.min(sorted.length - 1, Math.ceil(q * sorted.length) - 1)] as number;
const ms = (x: number): string => x.toFixed(2);

/** The server's own handler-time histogram (all outcomes), cumulative counts by bucket bound in seconds. */
async function handlerHistogram(metricsPort: number): Promise<Map<number, number>> {
  const text = await (await fetch(`http://127.0.0.1:${metricsPort}/metrics`)).text();
  const out = new Map<number, number>();
  for (const m of text.matchAll(
    /^function_noderotation_run_duration_seconds_bucket\{le="([^"]+)",result="[a-z]+"\} (\d+)$/gm,
  )) {
    const le = m[1] === '+Inf' ? Infinity : Number(m[1]);
    out.set(le, (out.get(le) ?? 0) + Number(m[2]));
  }
  return out;
}

/** The bucket bound (ms) under which a fraction q of the calls between two snapshots fell. */
function bucketQuantile(before: Map<number, number>, after: Map<number, number>, q: number): string {
  const bounds = [...after.keys()].sort((a, b) => a - b);
  const total = (after.get(Infinity) ?? 0) - (before.get(Infinity) ?? 0);
  for (const le of bounds) {
    if ((after.get(le) ?? 0) - (before.get(le) ?? 0) >= q * total) return le === Infinity ? '> 2500' : `≤ ${le * 1000}`;
  }
  return '?';
}

/** Sequential calls: sorted latencies in ms, bounded by count and time. */
async function latencies(call: (i: number) => Promise<unknown>, count: number): Promise<number[]> {
  const samples: number[] = [];
  const started = performance.now();
  for (let i = 0; i < count && performance.now() - started < BUDGET_MS; i++) {
    const t = performance.now();
    await call(i);
    samples.push(performance.now() - t);
  }
  return samples.sort((a, b) => a - b);
}

async function main(): Promise<void> {
  const server = spawnFunction(['--address', '127.0.0.1:0', '--metrics-address', '127.0.0.1:0']);
  const { port, metricsPort } = await servingPorts(server);
  const client = rawFunctionClient(`127.0.0.1:${port}`);
  const rows: string[] = [];
  try {
    for (const n of SIZES) {
      const { xr, pools } = scaledPlan(n);
      const firstRsp = await client.call(bytes(planRequest({ composite: xr, nodePools: pools })));
      const first = check(firstRsp, n);
      // Steady state, as Crossplane polls: same plan and NodePools, the composed RotationPolicies observed.
      const steadyRequest = planRequest({ composite: xr, nodePools: pools });
      steadyRequest.observed = State.fromPartial({
        composite: { resource: xr },
        resources: Object.fromEntries(
          Object.entries(first.desired?.resources ?? {}).map(([k, r]) => [k, { resource: r.resource }]),
        ),
      });
      const steady = bytes(steadyRequest);
      if (!(await client.call(steady)).equals(firstRsp))
        throw new Error('the steady-state answer differs from the first');
      // A plan edit on every call (retryBackoff changes): nothing memoised applies, every NodePool is
      // expanded and analysed again (the window figures stay cached: the windows did not change).
      const editCalls = Math.ceil((LATENCY_CALLS[n] as number) / 4);
      const edits = Array.from({ length: editCalls }, (_, i) => {
        const spec = structuredClone(xr.spec) as { defaults: { surge?: Record<string, string> } };
        spec.defaults.surge = { retryBackoff: `${31 + i}m` };
        return bytes(planRequest({ composite: { ...xr, spec }, nodePools: pools }));
      });
      check(await client.call(edits[0] as Buffer), n);

      for (let i = 0; i < 20; i++) await client.call(steady); // JIT warm-up
      const before = await handlerHistogram(metricsPort);
      const warm = await latencies(() => client.call(steady), LATENCY_CALLS[n] as number);
      const after = await handlerHistogram(metricsPort);
      const cold = await latencies((i) => client.call(edits[i] as Buffer), editCalls);

      const total = THROUGHPUT_CALLS[n] as number;
      let issued = 0;
      const t0 = performance.now();
      const worker = async (): Promise<void> => {
        while (issued < total && performance.now() - t0 < BUDGET_MS) {
          issued++;
          await client.call(steady);
        }
      };
      await Promise.all(Array.from({ length: CONCURRENCY }, worker));
      const throughput = issued / ((performance.now() - t0) / 1000);

      const kib = (b: number): string => (b / 1024).toFixed(0);
      rows.push(
        [
          '',
          n,
          kib(steady.length),
          kib(firstRsp.length),
          ms(quantile(warm, 0.5)),
          ms(quantile(warm, 0.99)),
          bucketQuantile(before, after, 0.5),
          bucketQuantile(before, after, 0.99),
          throughput.toFixed(0),
          ms(quantile(cold, 0.5)),
          ms(quantile(cold, 0.99)),
          '',
        ]
          .join(' | ')
          .trim(),
      );
    }
  } finally {
    client.close();
    await stopFunction(server);
  }
  console.log(
    `Node ${process.version}, ${os.cpus().length} CPUs, load average ${os.loadavg()[0]?.toFixed(1)} at the end; ` +
      `steady: same request repeated (p50/p99 sequential, throughput with ${CONCURRENCY} calls in flight); ` +
      "handler: the server's own time per call from its histogram (bucket bounds); " +
      'plan edit: a different plan every call\n',
  );
  console.log(
    '| NodePools | request KiB | response KiB | steady p50 ms | steady p99 ms | handler p50 ms | handler p99 ms | ' +
      'steady calls/s | plan edit p50 ms | plan edit p99 ms |',
  );
  console.log('|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|');
  for (const row of rows) console.log(row);
}

await main();
