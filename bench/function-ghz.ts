// RunFunction measured the way Crossplane calls it, with a Go client: ghz (github.com/bojand/ghz, built from
// bench/ghz/go.mod) sends the same request bytes to function-noderotation and to a minimal function on
// Crossplane's Go SDK (bench/go-peer, function-sdk-go), which does the same shape of work: N NodePools in
// as required resources, N desired objects with annotations out. No Node client is in the figures, and the
// Go peer is Crossplane's own floor for this work.
//
//   npm run bench:function -- [--sizes 10,100,500] [--repeats 3] [--calls 2000] [--concurrency 1]
//
// Both Go binaries are built on first use by bench/build-go.sh into ~/.cache/noderotation/bin/. Both servers
// listen on 127.0.0.1 only, are driven one after the other (never at the same time, so they do not compete
// for the two cores), alternately, `repeats` times per size; every ghz run is bounded by its call count and a
// per-call timeout. Prints a Markdown table: the median of the runs and, in brackets, their range.
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { connect, createServer, type AddressInfo } from 'node:net';
import os from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { RunFunctionRequest, RunFunctionResponse, State } from '@crossplane-org/function-sdk-typescript';
import { rawFunctionClient } from '../functions/client.js';
import { scaledPlan } from '../functions/fixtures.js';
import { planRequest } from '../functions/request.js';
import { servingPorts, spawnFunction } from '../test/support/function-process.js';

const ROOT = join(import.meta.dirname, '..');
const METHOD = 'apiextensions.fn.proto.v1.FunctionRunnerService/RunFunction';

interface Options {
  sizes: number[];
  repeats: number;
  calls: number;
  concurrency: number;
}

function options(): Options {
  const { values } = parseArgs({
    options: {
      sizes: { type: 'string', default: '10,100,500' },
      repeats: { type: 'string', default: '3' },
      calls: { type: 'string', default: '2000' },
      concurrency: { type: 'string', default: '1' },
    },
  });
  const positive = (flag: string, text: string): number => {
    const n = Number(text);
    if (!Number.isInteger(n) || n < 1 || n > 100_000)
      throw new Error(`--${flag}: "${text}" is not an integer 1–100000`);
    return n;
  };
  return {
    sizes: values.sizes.split(',').map((s) => positive('sizes', s)),
    repeats: positive('repeats', values.repeats),
    calls: positive('calls', values.calls),
    concurrency: positive('concurrency', values.concurrency),
  };
}

/** bench/build-go.sh prints the two binaries' paths (building them once). */
function goTools(): { ghz: string; peer: string } {
  const out = execFileSync('bash', [join(ROOT, 'bench', 'build-go.sh')], {
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const [ghz, peer] = out.trim().split('\n');
  if (!ghz || !peer) throw new Error(`bench/build-go.sh printed no binaries: ${out}`);
  return { ghz, peer };
}

async function freePort(): Promise<number> {
  const s = createServer();
  await new Promise<void>((resolve) => s.listen(0, '127.0.0.1', resolve));
  const port = (s.address() as AddressInfo).port;
  await new Promise<void>((resolve) => s.close(() => resolve()));
  return port;
}

async function accepting(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}

interface Served {
  name: string;
  port: number;
  child: ChildProcess;
}

/** Starts a server process and waits (bounded) until its port accepts connections. */
async function serve(name: string, command: string, args: string[], port: number): Promise<Served> {
  const child = spawn(command, args, { cwd: ROOT, stdio: ['ignore', 'ignore', 'pipe'] });
  let err = '';
  child.stderr?.on('data', (d: Buffer) => (err = (err + d.toString()).slice(-4000)));
  const deadline = Date.now() + 60_000;
  while (!(await accepting(port))) {
    if (child.exitCode !== null || Date.now() > deadline) {
      child.kill('SIGKILL');
      throw new Error(`${name} did not start: ${err}`);
    }
    await new Promise((r) => setTimeout(r, 50));
  }
  return { name, port, child };
}

async function stop(s: Served): Promise<void> {
  if (s.child.exitCode !== null) return;
  const exited = new Promise<void>((resolve) => s.child.once('exit', () => resolve()));
  s.child.kill('SIGTERM');
  await exited;
}

/** The steady-state request of n NodePools (Crossplane's poll: plan, NodePools, composed policies observed). */
async function steadyRequest(ours: Served, n: number): Promise<Uint8Array> {
  const { xr, pools } = scaledPlan(n);
  const client = rawFunctionClient(`127.0.0.1:${ours.port}`);
  try {
    const first = RunFunctionResponse.decode(
      await client.call(RunFunctionRequest.encode(planRequest({ composite: xr, nodePools: pools })).finish()),
    );
    const req = planRequest({ composite: xr, nodePools: pools });
    req.observed = State.fromPartial({
      composite: { resource: xr },
      resources: Object.fromEntries(
        Object.entries(first.desired?.resources ?? {}).map(([k, r]) => [k, { resource: r.resource }]),
      ),
    });
    return RunFunctionRequest.encode(req).finish();
  } finally {
    client.close();
  }
}

/** Both servers must answer the request with n desired resources before anything is timed. */
async function checkAnswers(s: Served, request: Uint8Array, n: number): Promise<number> {
  const client = rawFunctionClient(`127.0.0.1:${s.port}`);
  try {
    const bytes = await client.call(request);
    const rsp = RunFunctionResponse.decode(bytes);
    const count = Object.keys(rsp.desired?.resources ?? {}).length;
    if (count !== n) throw new Error(`${s.name}: ${count} desired resources for ${n} NodePools`);
    return bytes.length;
  } finally {
    client.close();
  }
}

interface Run {
  p50: number;
  p90: number;
  p99: number;
  rps: number;
}

interface GhzReport {
  rps: number;
  count: number;
  latencyDistribution: { percentage: number; latency: number }[] | null;
  statusCodeDistribution: Record<string, number>;
}

function ghz(tool: string, s: Served, file: string, calls: number, concurrency: number, warmUp: boolean): Run {
  const out = execFileSync(
    tool,
    [
      '--insecure',
      '--proto',
      join(ROOT, 'bench', 'ghz', 'proto', 'fn', 'v1', 'run_function.proto'),
      '--import-paths',
      join(ROOT, 'bench', 'ghz', 'proto'),
      '--call',
      METHOD,
      '--binary-file',
      file,
      '--total',
      String(warmUp ? Math.min(200, calls) : calls),
      '--concurrency',
      String(concurrency),
      '--timeout',
      '20s',
      '--max-recv-message-size',
      '4MiB',
      '--max-send-message-size',
      '4MiB',
      '--format',
      'json',
      `127.0.0.1:${s.port}`,
    ],
    { encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 },
  );
  const report = JSON.parse(out) as GhzReport;
  const ok = report.statusCodeDistribution.OK ?? 0;
  if (ok !== report.count) throw new Error(`${s.name}: ${JSON.stringify(report.statusCodeDistribution)}`);
  const at = (p: number): number =>
    (report.latencyDistribution?.find((d) => d.percentage === p)?.latency ?? Number.NaN) / 1e6;
  return { p50: at(50), p90: at(90), p99: at(99), rps: report.rps };
}

const median = (xs: number[]): number => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor((s.length - 1) / 2)] as number;
};
const cell = (xs: number[], digits: number): string => {
  const lo = Math.min(...xs).toFixed(digits);
  const hi = Math.max(...xs).toFixed(digits);
  return `${median(xs).toFixed(digits)}${xs.length > 1 ? ` (${lo}–${hi})` : ''}`;
};

async function main(): Promise<void> {
  const opts = options();
  const tools = goTools();
  const dir = mkdtempSync(join(os.tmpdir(), 'noderotation-bench-'));
  const goPort = await freePort();
  const fn = spawnFunction(['--address', '127.0.0.1:0', '--metrics-address', '']);
  const ours: Served = { name: 'function-noderotation', port: (await servingPorts(fn, 60_000)).port, child: fn.child };
  const go = await serve('go-peer', tools.peer, ['--address', `127.0.0.1:${goPort}`], goPort);
  const rows: string[] = [];
  const load: number[] = [];
  try {
    for (const n of opts.sizes) {
      const request = await steadyRequest(ours, n);
      const file = join(dir, `request-${n}.bin`);
      writeFileSync(file, request);
      const oursBytes = await checkAnswers(ours, request, n);
      const goBytes = await checkAnswers(go, request, n);
      const runs: Record<string, Run[]> = { ours: [], go: [] };
      for (const s of [ours, go]) ghz(tools.ghz, s, file, opts.calls, opts.concurrency, true);
      for (let r = 0; r < opts.repeats; r++) {
        // Alternating, so that a burst of load from elsewhere on the machine hits both sides alike.
        runs.ours?.push(ghz(tools.ghz, ours, file, opts.calls, opts.concurrency, false));
        runs.go?.push(ghz(tools.ghz, go, file, opts.calls, opts.concurrency, false));
        load.push(os.loadavg()[0] ?? 0);
      }
      const o = runs.ours as Run[];
      const g = runs.go as Run[];
      const ratios = o.map((x, i) => x.p99 / (g[i] as Run).p99);
      const kib = (b: number): string => (b / 1024).toFixed(0);
      rows.push(
        `| ${n} | ${kib(request.length)} | ${kib(oursBytes)} / ${kib(goBytes)} | ` +
          `${cell(
            o.map((x) => x.p50),
            2,
          )} | ${cell(
            o.map((x) => x.p90),
            2,
          )} | ${cell(
            o.map((x) => x.p99),
            2,
          )} | ` +
          `${cell(
            o.map((x) => x.rps),
            0,
          )} | ${cell(
            g.map((x) => x.p50),
            2,
          )} | ${cell(
            g.map((x) => x.p90),
            2,
          )} | ` +
          `${cell(
            g.map((x) => x.p99),
            2,
          )} | ${cell(
            g.map((x) => x.rps),
            0,
          )} | ${cell(ratios, 2)} |`,
      );
    }
  } finally {
    await stop(ours);
    await stop(go);
    rmSync(dir, { recursive: true, force: true });
  }
  console.log(
    [
      `Node ${process.version}, ${os.cpus().length} CPUs, load average ${Math.min(...load).toFixed(1)}–` +
        `${Math.max(...load).toFixed(1)} during the runs; ghz ${opts.calls} calls per run, concurrency ` +
        `${opts.concurrency}, ${opts.repeats} runs per size (median, range in brackets); latencies in ms.`,
      '',
      '| NodePools | request KiB | response KiB ours / Go | ours p50 | ours p90 | ours p99 | ours rps | ' +
        'Go p50 | Go p90 | Go p99 | Go rps | p99 ours / Go |',
      '|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|',
      ...rows,
    ].join('\n'),
  );
}

await main();
