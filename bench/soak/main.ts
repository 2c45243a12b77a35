// The soak (issue 20): a compressed Scenario P on the e2e harness (real kube-apiserver, Karpenter with its kwok
// provider, KWOK), our controller as deployed — two replicas with --leader-elect, each its own process and
// ServiceAccount, behind a proxy that can slow the apiserver — with seeded chaos throughout, then the ledger and
// the criteria from the cluster's own records. Exits 1 when a criterion fails, 2 on a usage error.
//
//   npm run soak -- [--minutes 60] [--pools 3] [--seed 1] [--chaos on|off] [--out DIR] [--keep]
//
// Brings the cluster up when it is not running (cluster.sh up); leaves it running. Everything listens on
// 127.0.0.1; every process it starts is stopped by the end, and every object it made is deleted unless --keep.
import { existsSync, mkdirSync, openSync, readSync, closeSync, statSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, totalmem } from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { clusterRunning, clusterUp, readClusterEnv } from '../../test/e2e/helpers/cluster.js';
import { leaseHolder } from '../../test/e2e/helpers/controller-observe.js';
import { deployment } from '../../test/e2e/helpers/context.js';
import { ignoreNotFound, Kube, podRunningReady, waitFor } from '../../test/e2e/helpers/k8s.js';
import {
  createRotationPolicy,
  deleteRotationPolicy,
  installNoderotation,
  serviceAccountKubeconfig,
} from '../../test/e2e/helpers/noderotation-api.js';
import { parseAuditLog } from '../../test/support/parity.js';
import { runChaos } from './chaos.js';
import { criteria, rotations, type ChaosRecord, type OperatorMarker, type SoakRecords } from './ledger.js';
import {
  figuresOf,
  nodePoolOf,
  openIntervals,
  policyOf,
  SOAK_LABEL,
  soakPlan,
  type SoakOptions,
  type SoakPlan,
} from './plan.js';
import { DelayingProxy } from './proxy.js';
import { Recorder } from './recorder.js';
import { Replicas } from './replicas.js';
import { renderReport, type RunFacts } from './report.js';
import { renderSummary } from './summary.js';

const NS = 'soak-system';
const APPS = 'soak-apps';
/** The bound within which the controller is back to steady state after a fault. */
const STEADY_BOUND_S = 60;

class UsageError extends Error {}

const USAGE = `npm run soak -- [--minutes 60] [--pools 3] [--seed 1] [--chaos on|off] [--out DIR] [--keep]
  --minutes  length of the run (chaos in its first 85 %); at least 3, the windowed pool from 40 on
  --pools    how many tight pools
  --seed     the chaos schedule's seed (a seed names a run)
  --chaos    on (default) or off
  --out      where run.json, records.json, ledger.json, criteria.json and summary.txt go
  --keep     leave the soak's pools, workloads and policies in the cluster`;

function flags(argv: string[]): SoakOptions & { out: string; keep: boolean } {
  let parsed;
  try {
    parsed = parseArgs({
      args: argv,
      options: {
        help: { type: 'boolean', default: false },
        minutes: { type: 'string', default: '60' },
        pools: { type: 'string', default: '3' },
        seed: { type: 'string', default: '1' },
        chaos: { type: 'string', default: 'on' },
        out: { type: 'string' },
        keep: { type: 'boolean', default: false },
      },
    });
  } catch (e) {
    throw new UsageError(e instanceof Error ? e.message : String(e));
  }
  const { values } = parsed;
  if (values.help) {
    console.log(USAGE);
    process.exit(0);
  }
  const int = (name: string, v: string, min: number): number => {
    const n = Number(v);
    if (!Number.isInteger(n) || n < min) throw new UsageError(`--${name}: "${v}"; expected a whole number ≥ ${min}`);
    return n;
  };
  if (values.chaos !== 'on' && values.chaos !== 'off')
    throw new UsageError(`--chaos: "${values.chaos}"; expected on or off`);
  const o = {
    minutes: int('minutes', values.minutes, 3),
    pools: int('pools', values.pools, 1),
    seed: int('seed', values.seed, 0),
    chaos: values.chaos === 'on',
  };
  const stamp = new Date().toISOString().replace(/[:.]/g, '-');
  return { ...o, out: values.out ?? `/tmp/noderotation-soak/${stamp}-seed${o.seed}`, keep: values.keep };
}

const log = (msg: string): void => console.error(`[soak ${new Date().toISOString().slice(11, 19)}] ${msg}`);
const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

async function main(): Promise<number> {
  const f = flags(process.argv.slice(2));
  const loadAtStart = loadavg()[0] ?? 0;
  const plan = soakPlan(f);
  mkdirSync(f.out, { recursive: true });
  log(`plan: ${plan.pools.length} pools, ${plan.chaos.length} chaos events over ${plan.chaosEndsS} s; out ${f.out}`);
  const env = clusterRunning() ? readClusterEnv() : clusterUp();
  const kube = new Kube(env);
  await installNoderotation();
  await removeLeftovers(kube, plan);
  await setUp(kube, plan);

  const proxy = new DelayingProxy(env.apiserverPort);
  const proxyPort = await proxy.start();
  const ids = await Promise.all(
    ['a', 'b'].map(async (name) => {
      const sa = `nr-soak-${name}`;
      const { kubeconfig, cleanup } = await serviceAccountKubeconfig(NS, {
        name: sa,
        server: `https://127.0.0.1:${proxyPort}`,
        tokenDuration: `${Math.ceil(f.minutes / 60) + 2}h`,
      });
      return { name, user: `system:serviceaccount:${NS}:${sa}`, kubeconfig, cleanup };
    }),
  );
  const auditLog = path.join(env.runDir, 'logs', 'audit.log');
  const karpenterLog = path.join(env.runDir, 'logs', 'karpenter-kwok.log');
  const auditFrom = sizeOf(auditLog);
  const karpenterFrom = sizeOf(karpenterLog);
  const recorder = new Recorder(
    kube,
    plan.pools,
    NS,
    APPS,
    `http://127.0.0.1:${env.karpenterMetricsPort}/metrics`,
    log,
  );
  await recorder.baseline();
  const replicas = new Replicas(NS, ids, log);
  const markers: OperatorMarker[] = [];
  const chaos: ChaosRecord[] = [];
  let t0 = 0;
  let tEnd = 0;
  try {
    await replicas.start();
    await waitFor('a leader', async () => replicas.slotOf(await leaseHolder(kube, NS).catch(() => undefined)), {
      timeoutMs: 60_000,
    });
    t0 = Date.now();
    log(
      `T0 ${new Date(t0).toISOString()}: both replicas up, ${replicas.slotOf(await leaseHolder(kube, NS))?.name} leads`,
    );
    recorder.start();
    const ctx = { kube, plan, replicas, proxy, namespace: NS, apps: APPS, markers, log };
    const steady = async (): Promise<boolean> =>
      replicas.slotOf(await leaseHolder(kube, NS).catch(() => undefined)) !== undefined &&
      (await replicas.allReady()) &&
      recorder.unexplained.length === 0;
    for (const ev of plan.chaos) {
      await sleep(Math.max(0, t0 + ev.at * 1000 - Date.now()));
      const rec = await runChaos(ev, ctx);
      const bound = rec.end + (STEADY_BOUND_S + 30) * 1000;
      while (Date.now() < bound) {
        if (await steady().catch(() => false)) {
          rec.steadyAt = Date.now();
          break;
        }
        await sleep(1000);
      }
      chaos.push(rec);
    }
    await sleep(Math.max(0, t0 + f.minutes * 60_000 - Date.now()));
    await recorder.stop();
    tEnd = Date.now();
    await recorder.census();
  } finally {
    await recorder.stop();
    await replicas.stop();
    await proxy.stop();
    for (const id of ids) id.cleanup();
  }

  const users = new Set(ids.map((i) => i.user));
  const records: SoakRecords = {
    t0,
    tEnd,
    pools: plan.pools.map((p) => ({ name: p.name, role: p.role, ...figuresOf(p) })),
    windows: Object.fromEntries(plan.pools.map((p) => [p.name, openIntervals(p, t0 - 3_600_000, tEnd)])),
    claims: [...recorder.claims.values()],
    audit: parseAuditLog(readFrom(auditLog, auditFrom)).filter((e) => users.has(e.user.username)),
    replicas: [...users],
    expiredByLog: expiredInLog(readFrom(karpenterLog, karpenterFrom)),
    disrupted: [...recorder.disrupted].map(([k, count]) => {
      const [pool = '', reason = ''] = k.split(' ');
      return { pool, reason, count };
    }),
    chaos,
    markers,
    leaks: recorder.leaks,
    load: recorder.load,
    steadyBoundS: STEADY_BOUND_S,
  };
  const rots = rotations(records);
  const verdicts = criteria(records, rots);
  const facts: RunFacts = { seed: f.seed, minutes: f.minutes, chaos: f.chaos, machine: machine(loadAtStart) };
  const run = { options: plan.options, facts, plan: plan.pools, chaosPlanned: plan.chaos };
  writeFileSync(path.join(f.out, 'run.json'), `${JSON.stringify(run, null, 2)}\n`);
  writeFileSync(path.join(f.out, 'records.json'), `${JSON.stringify(records)}\n`);
  writeFileSync(path.join(f.out, 'ledger.json'), `${JSON.stringify(rots, null, 2)}\n`);
  writeFileSync(path.join(f.out, 'criteria.json'), `${JSON.stringify(verdicts, null, 2)}\n`);
  writeFileSync(path.join(f.out, 'report.html'), renderReport(records, rots, verdicts, facts));
  const summary = renderSummary(records, rots, verdicts);
  writeFileSync(path.join(f.out, 'summary.txt'), summary);
  console.log(summary);
  if (!f.keep) await tearDown(kube, plan);
  const failed = verdicts.filter((v) => !v.pass);
  log(failed.length ? `FAILED: ${failed.map((v) => v.id).join(', ')}` : 'every criterion passed');
  return failed.length ? 1 : 0;
}

/** The pools, workloads and policies; resolves once every pool's app runs in full. */
async function setUp(kube: Kube, plan: SoakPlan): Promise<void> {
  // removeLeftovers has waited for a previous run's namespaces to be gone.
  for (const ns of [NS, APPS])
    await kube.core.createNamespace({ body: { metadata: { name: ns, labels: { [SOAK_LABEL]: 'true' } } } });
  await waitFor(`ServiceAccount ${APPS}/default`, () =>
    ignoreNotFound(kube.core.readNamespacedServiceAccount({ namespace: APPS, name: 'default' })),
  );
  for (const p of plan.pools) {
    await kube.createNodePool(nodePoolOf(p));
    await kube.apps.createNamespacedDeployment({
      namespace: APPS,
      body: deployment({ name: p.name, pool: p.name, replicas: p.replicas, cpu: p.podCpu }),
    });
    await kube.policy.createNamespacedPodDisruptionBudget({
      namespace: APPS,
      body: { metadata: { name: p.name }, spec: { maxUnavailable: 1, selector: { matchLabels: { app: p.name } } } },
    });
  }
  await waitFor(
    'every pool’s app Ready on its nodes',
    async () => {
      const pods = await kube.pods(APPS);
      return plan.pools.every(
        (p) => pods.filter((x) => x.metadata?.labels?.app === p.name && podRunningReady(x)).length === p.replicas,
      );
    },
    { timeoutMs: 300_000, intervalMs: 2000 },
  );
  for (const p of plan.pools) await createRotationPolicy(kube, policyOf(p));
  log('pools, workloads and policies in place');
}

/** Deletes what the soak made (policies first, so that no controller acts on a pool being removed). */
async function tearDown(kube: Kube, plan: SoakPlan): Promise<void> {
  for (const p of plan.pools) await deleteRotationPolicy(kube, policyOf(p).metadata.name);
  for (const ns of [APPS, NS]) await ignoreNotFound(kube.core.deleteNamespace({ name: ns }));
  for (const p of plan.pools) await kube.deleteNodePool(p.name);
  await waitFor(
    'the soak’s NodeClaims and namespaces gone',
    async () => {
      const claims = await Promise.all(plan.pools.map((p) => kube.nodeClaims(p.name)));
      const nss = await Promise.all([APPS, NS].map((n) => ignoreNotFound(kube.core.readNamespace({ name: n }))));
      return claims.every((c) => c.length === 0) && nss.every((n) => n === undefined);
    },
    { timeoutMs: 300_000, intervalMs: 2000 },
  );
  log('the soak’s objects removed');
}

/** A previous run's objects (killed before its tear-down): removed first, so that this run starts clean. */
async function removeLeftovers(kube: Kube, plan: SoakPlan): Promise<void> {
  const pools = await Promise.all(plan.pools.map((p) => kube.getNodePool(p.name)));
  const nss = await Promise.all([APPS, NS].map((n) => ignoreNotFound(kube.core.readNamespace({ name: n }))));
  if (pools.some(Boolean) || nss.some(Boolean)) {
    log('a previous soak’s objects are still there: removing them first');
    await tearDown(kube, plan);
  }
}

function sizeOf(file: string): number {
  return existsSync(file) ? statSync(file).size : 0;
}

/** The text of `file` from byte `from` on. */
function readFrom(file: string, from: number): string {
  if (!existsSync(file)) return '';
  const size = statSync(file).size;
  if (size <= from) return '';
  const fd = openSync(file, 'r');
  try {
    const buf = Buffer.alloc(size - from);
    readSync(fd, buf, 0, buf.length, from);
    return buf.toString('utf8');
  } finally {
    closeSync(fd);
  }
}

/** NodeClaims Karpenter's log says its expiration controller deleted. */
export function expiredInLog(text: string): { claim: string; at: number }[] {
  const out: { claim: string; at: number }[] = [];
  for (const line of text.split('\n')) {
    if (!line.includes('deleting expired nodeclaim')) continue;
    try {
      const o = JSON.parse(line) as { time?: string; NodeClaim?: { name?: string } };
      out.push({ claim: o.NodeClaim?.name ?? '?', at: Date.parse(o.time ?? '') });
    } catch {
      out.push({ claim: '?', at: NaN });
    }
  }
  return out;
}

/** Where the run ran, in a sentence: cores, memory, Node, and the load before and after it. */
function machine(loadAtStart: number): string {
  const gib = Math.round(totalmem() / 2 ** 30);
  return (
    `${cpus().length} cores, ${gib} GiB, Node ${process.version}; load average ${loadAtStart.toFixed(2)} before the ` +
    `run and ${(loadavg()[0] ?? 0).toFixed(2)} at its end (the cluster, the two replicas and the soak itself).`
  );
}

main().then(
  (code) => process.exit(code),
  (e: unknown) => {
    if (e instanceof UsageError) {
      console.error(`soak: ${e.message} (npm run soak -- --help for the flags)`);
      process.exit(2);
    }
    console.error(e);
    process.exit(1);
  },
);
