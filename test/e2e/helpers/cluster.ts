// Lifecycle of the local e2e cluster (test/e2e/cluster/cluster.sh) and access to its run directory:
// the env file written by `up` (ports, kubeconfig, kubectl), and the tails of every component's log.
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');
export const clusterScript = path.join(repoRoot, 'test/e2e/cluster/cluster.sh');

/** Same default as cluster.sh. */
export function runDir(): string {
  return process.env.NODEROTATION_RUN_DIR ?? '/tmp/noderotation-cluster';
}

export interface ClusterEnv {
  runDir: string;
  kubeconfig: string;
  kubectl: string;
  components: string[];
  apiserverPort: number;
  karpenterMetricsPort: number;
  karpenterHealthPort: number;
  /** The Crossplane CLI built from modules/crossplane, and Crossplane's CRDs from the same module version. */
  crossplane: string;
  crossplaneCrds: string;
  versions: Record<'k8s' | 'etcd' | 'kwok' | 'karpenter' | 'crossplane', string>;
}

/** Parses the KEY=VALUE env file that `cluster.sh up` writes into the run directory. */
export function readClusterEnv(dir = runDir()): ClusterEnv {
  const file = path.join(dir, 'env');
  if (!existsSync(file)) {
    throw new Error(`no cluster: ${file} does not exist (run \`npm run cluster -- up\`)`);
  }
  const vars = new Map<string, string>();
  for (const line of readFileSync(file, 'utf8').split('\n')) {
    const m = /^([A-Z0-9_]+)=(.*)$/.exec(line);
    if (m?.[1] !== undefined && m[2] !== undefined) vars.set(m[1], m[2].replace(/^"(.*)"$/, '$1'));
  }
  const get = (k: string): string => {
    const v = vars.get(k);
    if (v === undefined) {
      throw new Error(
        `${file} has no ${k}: it was written by an older cluster.sh; ` +
          'restart the cluster (`npm run cluster -- down`, then `up`)',
      );
    }
    return v;
  };
  return {
    runDir: dir,
    kubeconfig: get('KUBECONFIG'),
    kubectl: get('KUBECTL'),
    components: get('COMPONENTS').split(' ').filter(Boolean),
    apiserverPort: Number(get('APISERVER_PORT')),
    karpenterMetricsPort: Number(get('KARPENTER_METRICS_PORT')),
    karpenterHealthPort: Number(get('KARPENTER_HEALTH_PORT')),
    crossplane: get('CROSSPLANE'),
    crossplaneCrds: get('CROSSPLANE_CRDS'),
    versions: {
      k8s: get('K8S_VERSION'),
      etcd: get('ETCD_VERSION'),
      kwok: get('KWOK_VERSION'),
      karpenter: get('KARPENTER_VERSION'),
      crossplane: get('CROSSPLANE_VERSION'),
    },
  };
}

/** A KEY=VALUE file a `cluster.sh … up` writes (`crossplane up`, `flux up`): a getter that names a missing key. */
export function readEnvFile(file: string): (key: string) => string {
  const vars = new Map(
    readFileSync(file, 'utf8')
      .split('\n')
      .map((l) => /^([A-Z_]+)=(.*)$/.exec(l))
      .filter((m) => m !== null)
      .map((m) => [m[1], m[2]] as const),
  );
  return (k) => {
    const v = vars.get(k);
    if (v === undefined) throw new Error(`${file} has no ${k}`);
    return v;
  };
}

/** `cluster.sh <args…>`: stderr (progress, build output) goes straight to the terminal; stdout carries the result. */
export function runScript(...args: string[]): { status: number | null; stdout: string } {
  const r = spawnSync('bash', [clusterScript, ...args], {
    cwd: repoRoot,
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'inherit'],
    maxBuffer: 16 * 1024 * 1024,
  });
  if (r.error) throw r.error;
  return { status: r.status, stdout: r.stdout };
}

/** True when every component of the cluster in the run directory is alive. */
export function clusterRunning(): boolean {
  return runScript('status').status === 0;
}

/** `cluster.sh up`: builds what is missing, reuses a running cluster, cleans up a stale one. */
export function clusterUp(): ClusterEnv {
  const r = runScript('up');
  if (r.status !== 0) {
    throw new Error(`cluster.sh up failed (exit ${String(r.status)})\n${logTails()}`);
  }
  return readClusterEnv();
}

export function clusterDown(): void {
  const r = runScript('down');
  if (r.status !== 0) throw new Error(`cluster.sh down failed (exit ${String(r.status)})`);
}

function tail(file: string, lines: number): string {
  const text = readFileSync(file, 'utf8');
  const all = text.split('\n');
  if (all.at(-1) === '') all.pop();
  return all.slice(-lines).join('\n');
}

/** The last `lines` lines of every component's log, for a failing test's output. */
export function logTails(lines = 40, dir = runDir()): string {
  const logs = path.join(dir, 'logs');
  if (!existsSync(logs)) return `(no logs: ${logs} does not exist)`;
  // audit.log is the apiserver's record of the controllers' writes (parity.test.ts reads it), not a component's.
  return readdirSync(logs)
    .filter((f) => f.endsWith('.log') && f !== 'audit.log')
    .sort()
    .map((f) => `===== ${path.join(logs, f)} (last ${lines} lines) =====\n${tail(path.join(logs, f), lines)}`)
    .join('\n');
}

/**
 * A tool binary cluster.sh builds into the cache, `<cache>/bin/<name>-<version>/<name>`, its version read from
 * versions.env (`<NAME>_VERSION`), with cluster.sh's cache root.
 */
export function cachedTool(name: string, env: NodeJS.ProcessEnv = process.env): string {
  const versions = readFileSync(path.join(repoRoot, 'test/e2e/cluster/versions.env'), 'utf8');
  const key = `${name.toUpperCase()}_VERSION=`;
  const version = versions
    .split('\n')
    .find((l) => l.startsWith(key))
    ?.slice(key.length)
    .trim();
  if (!version) throw new Error(`versions.env has no ${key}`);
  const cache =
    env.NODEROTATION_CACHE ?? path.join(env.XDG_CACHE_HOME ?? path.join(os.homedir(), '.cache'), 'noderotation');
  return path.join(cache, 'bin', `${name}-${version}`, name);
}
