// The controller's fleet benchmark (issue 9 item 4): on the e2e cluster (real kube-apiserver, Karpenter-kwok,
// KWOK), a fleet of NodeClaims with Pods over NodePools; each controller (ours, then the reference) runs alone
// as a process against it and is measured from outside:
//   - ready (/readyz answers), caches synced (the line of its own log that says so: SYNCED) and settled;
//   - memory (VmRSS, VmHWM) and CPU (utime + stime) from /proc, over an idle window once synced and settled;
//   - its API requests by verb from the apiserver's audit log (Metadata level, its user only), per idle window;
//   - the time from a maintenance window opening to the anchor write in every pool (polled, and the first
//     NodePool write in the audit log), and its own pass-time histogram over those passes.
// Between the two, the fleet is reset (resetFleet) so both start from the same idle fleet.
//
//   npm run bench:controller -- [--pools 20] [--claims 5000] [--pods 50000] [--idle 60]
//       [--controllers ours,reference] [--reference PATH] [--out FILE] [--delete-fleet] [--direct] [--build-only]
//
// --direct: the fleet's NodeClaims are launched by the benchmark writing what Karpenter's launch writes, with
// Karpenter's process stopped first (stopKarpenter): Karpenter's launches on a starved apiserver ran at ~0.6
// claims a second, too slow for 5,000. --build-only: build (or repair) the fleet and exit, so the build can
// run niced and the controllers un-niced.
//
// The cluster must have been started with the audit log on for both controllers' users (the command is
// printed when it is not). Everything runs on 127.0.0.1; every wait is bounded.
import { spawn, type ChildProcess } from 'node:child_process';
import { createWriteStream, existsSync, readFileSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { parseArgs } from 'node:util';
import { KubeConfig } from '@kubernetes/client-node';
import { parseAllDocuments, stringify } from 'yaml';
import { KubeClient } from '../../runtime/kube/client.js';
import { readClusterEnv, repoRoot } from '../../test/e2e/helpers/cluster.js';
import { kubectl } from '../../test/e2e/helpers/kubectl.js';
import { installNoderotation, serviceAccountKubeconfig } from '../../test/e2e/helpers/noderotation-api.js';
import {
  deleteFleet,
  ensureFleet,
  FLEET,
  listAll,
  parallel,
  poolName,
  POOL_LABEL,
  resetFleet,
  sleep,
} from './fleet.js';
import type { BuildTimes, FleetSize } from './fleet.js';
import {
  auditRequests,
  byVerb,
  histogram,
  medianMax,
  minus,
  quantileBound,
  sampleProc,
  type Histogram,
  type ProcSample,
} from './measure.js';

const NAMESPACE = 'node-rotation-system';
const OURS_SA = `nr-ctl-${NAMESPACE}`;
const REF_SA = 'reference-controller';
const REFERENCE_VERSION = 'v0.6.1';
const AUDIT_USERS = [OURS_SA, REF_SA].map((sa) => `system:serviceaccount:${NAMESPACE}:${sa}`);
const ANCHOR = 'noderotation.io/active-rotation';
const POLICIES = '/apis/noderotation.io/v1alpha1/rotationpolicies';
const DAYS = ['Mon', 'Tue', 'Wed', 'Thu', 'Fri', 'Sat', 'Sun'];

interface Flags {
  size: FleetSize;
  idleS: number;
  controllers: ('ours' | 'reference')[];
  reference: string;
  out: string;
  deleteFleet: boolean;
  direct: boolean;
  buildOnly: boolean;
}

function flags(argv: string[]): Flags {
  const { values } = parseArgs({
    args: argv,
    options: {
      pools: { type: 'string', default: '20' },
      claims: { type: 'string', default: '5000' },
      pods: { type: 'string', default: '50000' },
      idle: { type: 'string', default: '60' },
      controllers: { type: 'string', default: 'ours,reference' },
      reference: {
        type: 'string',
        default: path.join(
          homedir(),
          `.cache/noderotation/bin/reference-${REFERENCE_VERSION}/node-rotation-controller`,
        ),
      },
      out: { type: 'string', default: '' },
      'delete-fleet': { type: 'boolean', default: false },
      direct: { type: 'boolean', default: false },
      'build-only': { type: 'boolean', default: false },
    },
    strict: true,
  });
  const int = (flag: string, v: string, min: number): number => {
    const n = Number(v);
    if (!Number.isInteger(n) || n < min) throw new Error(`--${flag}: expected an integer ≥ ${min}, found "${v}"`);
    return n;
  };
  const controllers = values.controllers.split(',').filter(Boolean);
  for (const c of controllers) {
    if (c !== 'ours' && c !== 'reference') {
      throw new Error(`--controllers: expected a list of ours and reference, found "${c}"`);
    }
  }
  const size = {
    pools: int('pools', values.pools, 1),
    claims: int('claims', values.claims, 1),
    pods: int('pods', values.pods, 0),
  };
  if (size.pools > 100) throw new Error(`--pools: at most 100 (names bench-00..bench-99), found ${size.pools}`);
  if (size.claims < size.pools) throw new Error(`--claims (${size.claims}) must be at least --pools (${size.pools})`);
  return {
    size,
    idleS: int('idle', values.idle, 10),
    controllers: controllers as Flags['controllers'],
    reference: values.reference,
    out: values.out,
    deleteFleet: values['delete-fleet'],
    direct: values.direct,
    buildOnly: values['build-only'],
  };
}

const log = (m: string): void => {
  process.stderr.write(`[bench ${new Date().toISOString().slice(11, 19)}] ${m}\n`);
};

/** One RotationPolicy per fleet pool, by label selector (both controllers' API), with the given windows. */
function policy(pool: string, windows: unknown[]): unknown {
  return {
    apiVersion: 'noderotation.io/v1alpha1',
    kind: 'RotationPolicy',
    metadata: { name: pool, labels: { [FLEET]: 'true' } },
    spec: {
      nodePoolSelector: { matchLabels: { [POOL_LABEL]: pool } },
      maintenanceWindows: windows,
      minRotationChances: 2,
      // The fleet is minutes old: an explicit threshold makes every claim a candidate at the window opening.
      ageThreshold: '2m',
      surge: { readyTimeout: '15m' },
    },
  };
}

const hhmm = (t: Date): string => t.toISOString().slice(11, 16);

/** A window on one day two days ahead (never open now, never across midnight). */
function closedWindows(now: Date): unknown[] {
  const day = DAYS[(new Date(now.getTime() + 2 * 86_400_000).getUTCDay() + 6) % 7];
  return [{ timezone: 'UTC', days: [day], start: '00:00', end: '04:00' }];
}

/** Every day from `open` (a minute boundary) for two hours, cut at 23:59 (the reference rejects midnight crossings). */
function openWindows(open: Date): unknown[] {
  const end = new Date(
    Math.min(
      open.getTime() + 2 * 3_600_000,
      Date.UTC(open.getUTCFullYear(), open.getUTCMonth(), open.getUTCDate(), 23, 59),
    ),
  );
  if (end.getTime() - open.getTime() < 5 * 60_000) {
    throw new Error(
      `the window would open at ${hhmm(open)} UTC, too close to midnight: run the benchmark after 00:05 UTC`,
    );
  }
  return [{ timezone: 'UTC', days: DAYS, start: hhmm(open), end: hhmm(end) }];
}

async function setWindows(client: KubeClient, pools: number, windows: unknown[]): Promise<void> {
  const names = Array.from({ length: pools }, (_, i) => poolName(i));
  await parallel(names, 8, async (name) => {
    try {
      await client.request('PATCH', `${POLICIES}/${name}`, {
        body: { spec: { maintenanceWindows: windows } },
        contentType: 'application/merge-patch+json',
      });
    } catch {
      await client.request('POST', POLICIES, { body: policy(name, windows) });
    }
  });
}

/** A kubeconfig for a ServiceAccount bound to cluster-admin (the reference: "an admin kubeconfig"). */
function adminServiceAccountKubeconfig(runDir: string, admin: string): string {
  kubectl(
    ['apply', '-f', '-'],
    kubectl(['create', 'serviceaccount', REF_SA, '-n', NAMESPACE, '--dry-run=client', '-o', 'yaml']),
  );
  kubectl(
    ['apply', '-f', '-'],
    kubectl([
      'create',
      'clusterrolebinding',
      REF_SA,
      '--clusterrole=cluster-admin',
      `--serviceaccount=${NAMESPACE}:${REF_SA}`,
      '--dry-run=client',
      '-o',
      'yaml',
    ]),
  );
  const token = kubectl(['create', 'token', REF_SA, '-n', NAMESPACE, '--duration', '2h']).trim();
  const kc = new KubeConfig();
  kc.loadFromFile(admin);
  const cluster = kc.getCurrentCluster();
  const file = path.join(runDir, `kubeconfig-${REF_SA}`);
  writeFileSync(
    file,
    stringify({
      apiVersion: 'v1',
      kind: 'Config',
      clusters: [{ name: 'e2e', cluster: { server: cluster?.server, 'certificate-authority': cluster?.caFile } }],
      users: [{ name: REF_SA, user: { token } }],
      contexts: [{ name: 'e2e', context: { cluster: 'e2e', user: REF_SA } }],
      'current-context': 'e2e',
    }),
    { mode: 0o600 },
  );
  return file;
}

interface Running {
  child: ChildProcess;
  pid: number;
  metricsUrl: string;
  readyUrl: string;
  logFile: string;
  user: string;
  /** When its log last said its caches had synced (SYNCED), if it has. */
  syncedAt?: number;
}

/**
 * The log line each writes once its watch caches have synced: ours one line; the reference (controller-runtime)
 * a "Starting workers" per controller, once that controller's caches have synced, so its last one is the moment.
 */
const SYNCED = { ours: /"msg":"caches synced"/, reference: /Starting workers/ } as const;

let nextPort = 0;
function ports(base: number): [number, number] {
  nextPort += 2;
  return [base + 900 + nextPort, base + 901 + nextPort];
}

function start(which: 'ours' | 'reference', kubeconfig: string, f: Flags, runDir: string, base: number): Running {
  const [metrics, health] = ports(base);
  const logFile = path.join(runDir, 'logs', `bench-${which}.log`);
  const common = [
    '--kubeconfig',
    kubeconfig,
    '--leader-elect',
    `--metrics-bind-address=127.0.0.1:${metrics}`,
    `--health-probe-bind-address=127.0.0.1:${health}`,
  ];
  // Ours runs with the environment and the node flags its Deployment gives it (V8's heap and thread settings).
  const ours = which === 'ours' ? deployed() : undefined;
  const [cmd, args] =
    which === 'ours'
      ? [
          process.execPath,
          [
            ...(ours?.nodeFlags ?? []),
            path.join(repoRoot, 'bin/noderotation.js'),
            'controller',
            ...common,
            '--namespace',
            NAMESPACE,
          ],
        ]
      : // Out of a cluster, the reference's leader election finds no namespace ("unable to find leader election
        // namespace: not running in-cluster") and it has no flag for one: it reads the in-cluster namespace
        // file. That file is given to it alone, in a private mount namespace (a tmpfs over /run); the
        // process keeps its PID (unshare and sh exec), and nothing on the machine changes.
        [
          'unshare',
          [
            '--mount',
            '--propagation',
            'private',
            'sh',
            '-c',
            'mount -t tmpfs tmpfs /run && mkdir -p "${1%/*}" && printf %s "$0" >"$1" && shift && exec "$@"',
            NAMESPACE,
            '/run/secrets/kubernetes.io/serviceaccount/namespace',
            f.reference,
            ...common,
            ...referenceFlags(),
          ],
        ];
  const out = createWriteStream(logFile);
  const env = ours ? { ...process.env, ...ours.env } : process.env;
  const child = spawn(cmd, args, { cwd: repoRoot, env, stdio: ['ignore', 'pipe', 'pipe'] });
  child.stdout?.pipe(out);
  child.stderr?.pipe(out);
  if (!child.pid) throw new Error(`${which} did not start (${cmd})`);
  const running: Running = {
    child,
    pid: child.pid,
    metricsUrl: `http://127.0.0.1:${metrics}/metrics`,
    readyUrl: `http://127.0.0.1:${health}/readyz`,
    logFile,
    user: `system:serviceaccount:${NAMESPACE}:${which === 'ours' ? OURS_SA : REF_SA}`,
  };
  for (const stream of [child.stdout, child.stderr])
    if (stream)
      createInterface({ input: stream }).on('line', (line) => {
        if (SYNCED[which].test(line)) running.syncedAt = Date.now();
      });
  return running;
}

/**
 * What deploy/controller/deployment.yaml gives the controller container: its literal environment variables
 * (NODE_OPTIONS) and node's own flags, the arguments before the script (the image's entrypoint is node).
 */
function deployed(): { env: Record<string, string>; nodeFlags: string[] } {
  const docs = parseAllDocuments(readFileSync(path.join(repoRoot, 'deploy/controller/deployment.yaml'), 'utf8'));
  const deployment = docs.map((d) => d.toJS() as { kind?: string }).find((d) => d.kind === 'Deployment') as {
    spec: {
      template: {
        spec: { containers: { name: string; args?: string[]; env?: { name: string; value?: string }[] }[] };
      };
    };
  };
  const container = deployment.spec.template.spec.containers.find((c) => c.name === 'controller');
  const env: Record<string, string> = {};
  for (const e of container?.env ?? []) if (e.value !== undefined) env[e.name] = e.value;
  const args = container?.args ?? [];
  const script = args.indexOf('bin/noderotation.js');
  if (script < 0) throw new Error('deploy/controller/deployment.yaml: the controller does not run bin/noderotation.js');
  return { env, nodeFlags: args.slice(0, script) };
}

/** The reference's flags beyond the shared ones (its --help: the same names as ours, Go's flag syntax). */
function referenceFlags(): string[] {
  return [`--namespace=${NAMESPACE}`];
}

async function get(url: string): Promise<{ status: number; text: string }> {
  try {
    const r = await fetch(url);
    return { status: r.status, text: await r.text() };
  } catch {
    return { status: 0, text: '' };
  }
}

async function until<T>(what: string, timeoutMs: number, probe: () => Promise<T | undefined>): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await probe();
    if (v !== undefined) return v;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs / 1000} s waiting for ${what}`);
    await sleep(100);
  }
}

/**
 * Every Lease of the controllers' namespace deleted, so that each controller starts as the first leader of a fresh
 * install. A Lease left by the previous run (even one released on a clean stop) makes the next leader a taker
 * over, which waits until its caches show the resourceVersion of its Lease write (docs/controller.md): up to a
 * watch bookmark, about a minute, which would be measured as start-up.
 */
async function deleteLeases(client: KubeClient): Promise<void> {
  const leases = `/apis/coordination.k8s.io/v1/namespaces/${NAMESPACE}/leases`;
  for (const l of await listAll(client, leases))
    await client.request('DELETE', `${leases}/${l.metadata.name}`).catch(() => undefined);
}

/** Until a 5 s stretch in which the process used under 2 % of a core. */
async function settle(which: string, pid: number, timeoutMs: number): Promise<void> {
  let prev = sampleProc(pid);
  await until(`${which} to settle`, timeoutMs, async () => {
    await sleep(5000);
    const cur = sampleProc(pid);
    const busy = (cur.cpuS - prev.cpuS) / ((cur.at - prev.at) / 1000);
    prev = cur;
    return busy < 0.02 ? true : undefined;
  });
}

async function stop(r: Running): Promise<void> {
  if (r.child.exitCode !== null || r.child.signalCode !== null) return;
  const exited = new Promise((res) => r.child.once('exit', res));
  r.child.kill('SIGTERM');
  const timer = setTimeout(() => r.child.kill('SIGKILL'), 30_000);
  await exited;
  clearTimeout(timer);
}

export interface ControllerResult {
  controller: string;
  version: string;
  readyS: number;
  /** From the start to its log's SYNCED line (NaN without one). */
  syncedS: number;
  settledS: number;
  startupRequests: Record<string, number>;
  idle: { seconds: number; rssKiB: number; hwmKiB: number; cpuS: number; requests: Record<string, number> };
  window: {
    opensAt: string;
    anchoredPools: number;
    pools: number;
    polledS: { median: number; max: number };
    auditS: { median: number; max: number };
    perPoolS: Record<string, number>;
  };
  passes: { histogram: string; count: number; meanMs: number; p50leMs: number; p99leMs: number };
  idlePasses: { count: number; meanMs: number };
  end: { rssKiB: number; hwmKiB: number };
}

const PASS_METRIC = {
  ours: 'noderotation_controller_pass_seconds',
  reference: 'controller_runtime_reconcile_time_seconds',
};

async function measure(
  which: 'ours' | 'reference',
  client: KubeClient,
  f: Flags,
  env: ReturnType<typeof readClusterEnv>,
  kubeconfig: string,
  base: number,
): Promise<ControllerResult> {
  const auditLog = path.join(env.runDir, 'logs', 'audit.log');
  await setWindows(client, f.size.pools, closedWindows(new Date()));
  await deleteLeases(client);
  const t0 = Date.now();
  const r = start(which, kubeconfig, f, env.runDir, base);
  log(`${which}: pid ${r.pid}, log ${r.logFile}`);
  try {
    await until(`${which} /readyz`, 600_000, async () => {
      if (r.child.exitCode !== null) throw new Error(`${which} exited with ${r.child.exitCode}: see ${r.logFile}`);
      return (await get(r.readyUrl)).status === 200 ? true : undefined;
    });
    const readyS = (Date.now() - t0) / 1000;
    // Settled: a 5 s stretch with under 2 % of a core used, after the initial lists, the start-up sweep and
    // the first pass of every pool (the reference reports ready before its caches sync).
    await settle(which, r.pid, 300_000);
    const settledS = (Date.now() - t0) / 1000;
    const syncedS = r.syncedAt === undefined ? NaN : (r.syncedAt - t0) / 1000;
    log(
      `${which}: ready after ${readyS.toFixed(1)} s, caches synced after ${syncedS.toFixed(1)} s, ` +
        `settled after ${settledS.toFixed(1)} s`,
    );
    const m0 = (await get(r.metricsUrl)).text;
    const a = sampleProc(r.pid);
    const samples: ProcSample[] = [a];
    while (Date.now() - a.at < f.idleS * 1000) {
      await sleep(Math.min(5000, f.idleS * 1000 - (Date.now() - a.at) + 1));
      samples.push(sampleProc(r.pid));
    }
    const b = samples[samples.length - 1] as ProcSample;
    const reqs = auditRequests(auditLog, r.user);
    const idleReqs = reqs.filter((q) => q.at >= a.at && q.at < b.at);
    const startupReqs = reqs.filter((q) => q.at >= t0 && q.at < a.at);
    log(`${which}: idle ${((b.at - a.at) / 1000).toFixed(0)} s: ${JSON.stringify(byVerb(idleReqs))}`);

    // The window opens at the next minute boundary at least 30 s away (the policy edit is long handled by then).
    const opens = new Date(Math.ceil((Date.now() + 30_000) / 60_000) * 60_000);
    await setWindows(client, f.size.pools, openWindows(opens));
    log(`${which}: windows open at ${opens.toISOString()}`);
    const m1 = (await get(r.metricsUrl)).text;
    const seen: Record<string, number> = {};
    const names = Array.from({ length: f.size.pools }, (_, i) => poolName(i));
    await until(
      `an anchor in every pool after ${opens.toISOString()}`,
      Math.max(0, opens.getTime() - Date.now()) + 300_000,
      async () => {
        const pools = await listAll(client, '/apis/karpenter.sh/v1/nodepools', { labelSelector: FLEET });
        const now = Date.now();
        for (const p of pools) {
          if (p.metadata.annotations?.[ANCHOR] && seen[p.metadata.name] === undefined) {
            seen[p.metadata.name] = (now - opens.getTime()) / 1000;
          }
        }
        return names.every((n) => seen[n] !== undefined) ? true : undefined;
      },
    ).catch((e: unknown) => log(`${which}: ${String(e)}`));
    // The passes that wrote the anchors end after the anchors are seen: their histogram is read once the
    // controller has settled again (or after two minutes, busy or not).
    await settle(which, r.pid, 120_000).catch((e: unknown) => log(`${which}: ${String(e)}`));
    const m2 = (await get(r.metricsUrl)).text;
    const end = sampleProc(r.pid);
    await stop(r);
    // Writes a pool's anchor: the first NodePool write by this user after the opening.
    const after = auditRequests(auditLog, r.user).filter(
      (q) => q.at >= opens.getTime() && q.resource === 'nodepools' && (q.verb === 'patch' || q.verb === 'update'),
    );
    const firstWrite: Record<string, number> = {};
    for (const q of after) firstWrite[q.name] ??= (q.at - opens.getTime()) / 1000;
    const metric = PASS_METRIC[which];
    const idleH = histogram(m0, metric);
    const winH: Histogram = minus(histogram(m2, metric), histogram(m1, metric));
    return {
      controller: which,
      version: which === 'ours' ? 'this tree' : REFERENCE_VERSION,
      readyS,
      syncedS,
      settledS,
      startupRequests: byVerb(startupReqs),
      idle: {
        seconds: (b.at - a.at) / 1000,
        rssKiB: b.rssKiB,
        hwmKiB: b.hwmKiB,
        cpuS: b.cpuS - a.cpuS,
        requests: byVerb(idleReqs),
      },
      window: {
        opensAt: opens.toISOString(),
        anchoredPools: Object.keys(seen).length,
        pools: f.size.pools,
        polledS: medianMax(Object.values(seen)),
        auditS: medianMax(names.filter((n) => seen[n] !== undefined).map((n) => firstWrite[n] ?? NaN)),
        perPoolS: seen,
      },
      passes: {
        histogram: metric,
        count: winH.count,
        meanMs: winH.count ? (winH.sum / winH.count) * 1000 : NaN,
        p50leMs: quantileBound(winH, 0.5) * 1000,
        p99leMs: quantileBound(winH, 0.99) * 1000,
      },
      idlePasses: { count: idleH.count, meanMs: idleH.count ? (idleH.sum / idleH.count) * 1000 : NaN },
      end: { rssKiB: end.rssKiB, hwmKiB: end.hwmKiB },
    };
  } finally {
    await stop(r);
  }
}

const mib = (kib: number): string => (kib / 1024).toFixed(0);
const s1 = (x: number): string => (Number.isFinite(x) ? x.toFixed(1) : '—');
const reqText = (r: Record<string, number>): string =>
  Object.entries(r)
    .map(([k, v]) => `${k} ${v}`)
    .join(', ') || 'none';

function table(size: FleetSize, build: BuildTimes, results: ControllerResult[]): string {
  const rows = [
    ['ready (s)', (r: ControllerResult) => s1(r.readyS)],
    ['caches synced, from its log (s)', (r: ControllerResult) => s1(r.syncedS)],
    ['settled (s)', (r: ControllerResult) => s1(r.settledS)],
    ['requests, start to settled', (r: ControllerResult) => reqText(r.startupRequests)],
    ['VmRSS idle (MiB)', (r: ControllerResult) => mib(r.idle.rssKiB)],
    ['VmRSS once settled after the opening (MiB)', (r: ControllerResult) => mib(r.end.rssKiB)],
    ['VmHWM (MiB)', (r: ControllerResult) => mib(r.end.hwmKiB)],
    [
      'CPU over the idle window (s)',
      (r: ControllerResult) => `${r.idle.cpuS.toFixed(2)} in ${r.idle.seconds.toFixed(0)} s`,
    ],
    ['requests in the idle window', (r: ControllerResult) => reqText(r.idle.requests)],
    ['pools anchored', (r: ControllerResult) => `${r.window.anchoredPools}/${r.window.pools}`],
    [
      'opening → anchor seen, median / max (s)',
      (r: ControllerResult) => `${s1(r.window.polledS.median)} / ${s1(r.window.polledS.max)}`,
    ],
    [
      'opening → first NodePool write (audit), median / max (s)',
      (r: ControllerResult) => `${s1(r.window.auditS.median)} / ${s1(r.window.auditS.max)}`,
    ],
    ['passes after the opening (count, mean ms)', (r: ControllerResult) => `${r.passes.count}, ${s1(r.passes.meanMs)}`],
    ['  p50 / p99 bucket bound (ms)', (r: ControllerResult) => `≤ ${r.passes.p50leMs} / ≤ ${r.passes.p99leMs}`],
    [
      'idle passes before (count, mean ms)',
      (r: ControllerResult) => `${r.idlePasses.count}, ${s1(r.idlePasses.meanMs)}`,
    ],
  ] as const;
  const fleet = `${size.claims} NodeClaims, ${size.pods} Pods, ${size.pools} NodePools`;
  const head = `| ${fleet} | ${results.map((r) => `${r.controller} (${r.version})`).join(' | ')} |`;
  const sep = `|---|${results.map(() => '---').join('|')}|`;
  const body = rows.map(([k, f]) => `| ${k} | ${results.map(f).join(' | ')} |`);
  return [head, sep, ...body, '', buildLine(build)].join('\n');
}

function buildLine(b: BuildTimes): string {
  const rate = (n: number, from: number, to: number): string => (n > 0 ? `, ${(n / (to - from)).toFixed(1)}/s` : '');
  return (
    `fleet build (${b.launcher}; cumulative): NodePools ${s1(b.nodePoolsS)} s, ` +
    `${b.claimsLaunched} NodeClaims launched ${s1(b.claimsCreatedS)} s` +
    `${rate(b.claimsLaunched, b.nodePoolsS, b.claimsCreatedS)}, ` +
    `Ready ${s1(b.claimsReadyS)} s${rate(b.claimsLaunched, b.nodePoolsS, b.claimsReadyS)}, ` +
    `${b.podsCreated} Pods created ${s1(b.podsCreatedS)} s${rate(b.podsCreated, b.claimsReadyS, b.podsCreatedS)}, ` +
    `Running ${s1(b.podsRunningS)} s${rate(b.podsCreated, b.claimsReadyS, b.podsRunningS)}`
  );
}

/**
 * Stops the cluster's Karpenter (cluster.sh records "<pid> <argv0>" in pids/karpenter-kwok.pid; the PID is
 * signalled only while its argv0 still matches). Why this changes nothing either controller reads: both
 * read NodePools, NodeClaims, Nodes and Pods from the apiserver and never talk to Karpenter; with --direct
 * the fleet's objects carry what Karpenter would have written, and the fleet's pools forbid Karpenter any
 * disruption anyway. What is missing is Karpenter's own load on the apiserver, and the launch of the surge
 * NodeClaim each rotation creates — after the anchor, where the measurement ends. `cluster.sh status` then
 * reports karpenter-kwok dead; `cluster.sh down` stops the rest as usual.
 */
async function stopKarpenter(runDir: string): Promise<void> {
  const pidFile = path.join(runDir, 'pids', 'karpenter-kwok.pid');
  const [pid, argv0] = existsSync(pidFile) ? readFileSync(pidFile, 'utf8').trim().split(' ') : [];
  const alive = (): boolean => {
    try {
      return readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0')[0] === argv0;
    } catch {
      return false;
    }
  };
  if (!pid || !argv0 || !alive()) {
    log('karpenter-kwok: not running');
    return;
  }
  log(`karpenter-kwok: stopping pid ${pid} (--direct)`);
  process.kill(Number(pid), 'SIGTERM');
  await until('karpenter-kwok to exit', 30_000, () => Promise.resolve(alive() ? undefined : true));
}

async function main(): Promise<void> {
  const f = flags(process.argv.slice(2));
  const env = readClusterEnv();
  const clusterEnv = readClusterEnvRaw(env.runDir);
  const missing = AUDIT_USERS.filter((u) => !(clusterEnv.AUDIT_USERS ?? '').split(',').includes(u));
  if (missing.length > 0) {
    throw new Error(
      `the cluster in ${env.runDir} has no audit log for ${missing.join(', ')}: restart it with\n` +
        `  NODEROTATION_FLEET_SCALE=1 NODEROTATION_AUDIT_USERS=${AUDIT_USERS.join(',')} \\\n` +
        '    bash test/e2e/cluster/cluster.sh up\n' +
        '(with the same NODEROTATION_RUN_DIR and NODEROTATION_PORT_BASE)',
    );
  }
  if (f.controllers.includes('reference') && !existsSync(f.reference)) {
    throw new Error(`--reference: ${f.reference} does not exist (bench/controller/build-reference.sh builds it)`);
  }
  const kc = new KubeConfig();
  kc.loadFromFile(env.kubeconfig);
  const client = new KubeClient(kc);
  const base = Number(clusterEnv.APISERVER_PORT) - 443;
  try {
    await installNoderotation();
    await client
      .request('POST', '/api/v1/namespaces', { body: { metadata: { name: NAMESPACE } } })
      .catch(() => undefined);
    if (f.direct) await stopKarpenter(env.runDir);
    log(`fleet: ${f.size.pools} NodePools, ${f.size.claims} NodeClaims, ${f.size.pods} Pods`);
    const build = await ensureFleet(client, f.size, log, f.direct);
    log(`fleet ready: ${JSON.stringify(build)}`);
    process.stdout.write(`${buildLine(build)}\n`);
    if (f.buildOnly) return;
    const results: ControllerResult[] = [];
    for (const which of f.controllers) {
      if (which === 'reference') {
        kubectl([
          'apply',
          '--server-side',
          '--force-conflicts',
          '-f',
          path.join(path.dirname(f.reference), 'noderotation.io_rotationpolicies.yaml'),
        ]);
      } else {
        await installNoderotation();
      }
      const kubeconfig =
        which === 'ours'
          ? (await serviceAccountKubeconfig(NAMESPACE)).kubeconfig
          : adminServiceAccountKubeconfig(env.runDir, env.kubeconfig);
      results.push(await measure(which, client, f, env, kubeconfig, base));
      log(`${which}: ${JSON.stringify(results[results.length - 1])}`);
      await setWindows(client, f.size.pools, closedWindows(new Date()));
      log('resetting the fleet');
      await resetFleet(client, [NAMESPACE]);
      await ensureFleet(client, f.size, log, f.direct);
    }
    const out = { size: f.size, build, results, at: new Date().toISOString() };
    if (f.out) writeFileSync(f.out, JSON.stringify(out, null, 2));
    process.stdout.write(`${table(f.size, build, results)}\n`);
    if (f.deleteFleet) await deleteFleet(client);
  } finally {
    client.close();
  }
}

function readClusterEnvRaw(runDir: string): Record<string, string> {
  return Object.fromEntries(
    readFileSync(path.join(runDir, 'env'), 'utf8')
      .split('\n')
      .map((l) => /^([A-Z0-9_]+)=(.*)$/.exec(l))
      .filter((m): m is RegExpExecArray => m !== null)
      .map((m) => [m[1] as string, (m[2] as string).replace(/^"(.*)"$/, '$1')]),
  );
}

main().catch((e: unknown) => {
  log(e instanceof Error ? (e.stack ?? e.message) : String(e));
  process.exit(1);
});
