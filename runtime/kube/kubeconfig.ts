// How the controller and the CLI reach and authenticate to the apiserver: kubeconfig files or the in-cluster
// ServiceAccount, read here — the one kubeconfig reader of the program — instead of through
// @kubernetes/client-node, whose import alone loads its generated API models (65 MB of a 134 MB process in the
// fleet benchmark, docs/benchmarks.md) for the two things needed: the server URL and the TLS/auth options of
// each request.
//
// Supported, as kubectl reads them: KUBECONFIG lists merged as kubectl merges them, contexts (the current one
// or one asked for), clusters (server, certificate-authority[-data], insecure-skip-tls-verify,
// tls-server-name), users (client-certificate[-data] + client-key[-data], token, tokenFile, exec plugins of
// client.authentication.k8s.io v1/v1beta1) and the in-cluster ServiceAccount (token re-read, as it rotates).
// Anything else (auth-provider, username/password) is refused with the field's name.
import { execFile } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import type https from 'node:https';
import path from 'node:path';
import { onFirstUse } from '../../src/util/on-first-use.js';

/** What KubeClient needs of a kubeconfig (client-node's KubeConfig has the same methods). */
export interface KubeAuth {
  getCurrentCluster(): { server: string } | null;
  applyToHTTPSOptions(options: https.RequestOptions): Promise<void>;
  /** The context used; '' for the in-cluster ServiceAccount. */
  getCurrentContext(): string;
}

interface NamedCluster {
  name: string;
  cluster?: {
    server?: string;
    'certificate-authority'?: string;
    'certificate-authority-data'?: string;
    'insecure-skip-tls-verify'?: boolean;
    'tls-server-name'?: string;
  };
}
interface ExecConfig {
  command?: string;
  args?: string[];
  env?: { name: string; value: string }[] | null;
  apiVersion?: string;
}
interface NamedUser {
  name: string;
  user?: {
    'client-certificate'?: string;
    'client-certificate-data'?: string;
    'client-key'?: string;
    'client-key-data'?: string;
    token?: string;
    tokenFile?: string;
    exec?: ExecConfig;
    'auth-provider'?: unknown;
    username?: string;
  };
}
interface NamedContext {
  name: string;
  context?: { cluster?: string; user?: string };
}
interface KubeconfigFile {
  'current-context'?: string;
  contexts?: NamedContext[];
  clusters?: NamedCluster[];
  users?: NamedUser[];
}

/** Where a pod finds its ServiceAccount; a parameter for the tests. */
export const SERVICE_ACCOUNT_DIR = '/var/run/secrets/kubernetes.io/serviceaccount';

type Credential = { token?: string; cert?: string; key?: string };

class Auth implements KubeAuth {
  private cached: { value: Credential; until: number } | null = null;

  constructor(
    private readonly server: string,
    private readonly tls: { ca?: Buffer; insecure: boolean; servername?: string },
    private readonly credential: () => Promise<{ value: Credential; until: number }>,
    private readonly context = '',
  ) {}

  getCurrentCluster(): { server: string } {
    return { server: this.server };
  }

  getCurrentContext(): string {
    return this.context;
  }

  async applyToHTTPSOptions(o: https.RequestOptions): Promise<void> {
    if (!this.cached || Date.now() >= this.cached.until) this.cached = await this.credential();
    const c = this.cached.value;
    if (this.tls.ca) o.ca = this.tls.ca;
    if (this.tls.insecure) o.rejectUnauthorized = false;
    if (this.tls.servername) o.servername = this.tls.servername;
    if (c.cert !== undefined) o.cert = c.cert;
    if (c.key !== undefined) o.key = c.key;
    if (c.token !== undefined) o.headers = { ...o.headers, Authorization: `Bearer ${c.token}` };
  }
}

const FOREVER = Number.MAX_SAFE_INTEGER;

/** An entry of a merged kubeconfig, with the directory its relative paths are relative to (its file's). */
type Entry<T> = T & { dir: string };

// The YAML parser is loaded for the first kubeconfig in YAML, through require (its Node entry is CommonJS, so the
// CLI's ES imports of it share this instance). In-cluster there is no file, and a kubeconfig in JSON (YAML of
// which JSON is a part, as programs write them) is read by JSON.parse: the controller then never loads it, 0.9
// MiB of heap (docs/benchmarks.md).
const yamlParse = onFirstUse('yaml', (m: typeof import('yaml')) => m.parse);

/** A kubeconfig file's text: JSON when it parses as JSON, else YAML. */
export function parseKubeconfig(text: string): KubeconfigFile {
  if (text.trimStart().startsWith('{')) {
    try {
      return (JSON.parse(text) ?? {}) as KubeconfigFile;
    } catch {
      // Not JSON after all (YAML's flow mappings look alike): the YAML parser decides, and names the error.
    }
  }
  return (yamlParse()(text) ?? {}) as KubeconfigFile;
}

/**
 * Kubeconfig files merged as kubectl merges a KUBECONFIG list: the first file to set current-context sets it,
 * and the first file to name a context, cluster or user defines it; then `context` (--context), if given,
 * replaces the current context. Returns the chosen context's cluster and user.
 */
export function loadKubeconfig(files: readonly string[], context?: string): KubeAuth {
  if (files.length === 0) throw new Error('no kubeconfig file');
  let current: string | undefined;
  const contexts = new Map<string, NamedContext['context']>();
  const clusters = new Map<string, Entry<NonNullable<NamedCluster['cluster']>>>();
  const users = new Map<string, Entry<NonNullable<NamedUser['user']>>>();
  for (const file of files) {
    const doc = parseKubeconfig(readFileSync(file, 'utf8'));
    const dir = path.dirname(path.resolve(file));
    current ??= doc['current-context'] || undefined;
    for (const c of doc.contexts ?? []) if (!contexts.has(c.name)) contexts.set(c.name, c.context ?? {});
    for (const c of doc.clusters ?? []) if (!clusters.has(c.name)) clusters.set(c.name, { ...c.cluster, dir });
    for (const u of doc.users ?? []) if (!users.has(u.name)) users.set(u.name, { ...u.user, dir });
  }
  const ctxName = context ?? current;
  if (!ctxName) throw new Error('current-context is not set');
  const ctx = contexts.get(ctxName);
  if (!ctx) {
    const known = [...contexts.keys()];
    const has = `the kubeconfig has ${known.length > 0 ? known.join(', ') : 'none'}`;
    throw new Error(
      context !== undefined
        ? `--context ${ctxName}: no such context; ${has}`
        : `current-context ${ctxName}: no such context; ${has}`,
    );
  }
  const cluster = clusters.get(ctx.cluster ?? '');
  if (!cluster?.server) throw new Error(`clusters: no cluster "${ctx.cluster ?? ''}" with a server`);
  return authOf(ctxName, ctx.user ?? '', cluster, users.get(ctx.user ?? '') ?? { dir: cluster.dir });
}

/** The current context's cluster and user of one kubeconfig file. */
export function loadKubeconfigFile(file: string): KubeAuth {
  return loadKubeconfig([file]);
}

function authOf(
  ctxName: string,
  userName: string,
  cluster: Entry<NonNullable<NamedCluster['cluster']>>,
  user: Entry<NonNullable<NamedUser['user']>>,
): KubeAuth {
  const rel = (p: string, dir: string): string => path.resolve(dir, p);
  if (user['auth-provider'] !== undefined) {
    throw new Error(`users[${userName}].auth-provider is not supported: use an exec plugin or a token`);
  }
  if (user.username !== undefined) {
    throw new Error(`users[${userName}].username (basic auth) is not supported: use a token or a certificate`);
  }
  const ca = cluster['certificate-authority-data']
    ? Buffer.from(cluster['certificate-authority-data'], 'base64')
    : cluster['certificate-authority']
      ? readFileSync(rel(cluster['certificate-authority'], cluster.dir))
      : undefined;
  const fixed: Credential = {};
  const cert = user['client-certificate-data'] ?? user['client-certificate'];
  if (cert !== undefined) {
    fixed.cert = user['client-certificate-data']
      ? Buffer.from(cert, 'base64').toString()
      : readFileSync(rel(cert, user.dir), 'utf8');
    const keyData = user['client-key-data'];
    const keyFile = user['client-key'];
    if (keyData === undefined && keyFile === undefined) {
      throw new Error(`users[${userName}]: client-certificate without client-key`);
    }
    fixed.key = keyData
      ? Buffer.from(keyData, 'base64').toString()
      : readFileSync(rel(keyFile as string, user.dir), 'utf8');
  }
  if (user.token !== undefined) fixed.token = user.token;
  const tokenFile = user.tokenFile;
  const exec = user.exec;
  const credential = exec
    ? () => runExec(exec, cluster.server as string)
    : tokenFile
      ? // Re-read every minute: such files are rotated by whoever writes them.
        () =>
          Promise.resolve({
            value: { ...fixed, token: readFileSync(rel(tokenFile, user.dir), 'utf8').trim() },
            until: soon(),
          })
      : () => Promise.resolve({ value: fixed, until: FOREVER });
  return new Auth(
    cluster.server as string,
    {
      ca,
      insecure: cluster['insecure-skip-tls-verify'] === true,
      ...(cluster['tls-server-name'] ? { servername: cluster['tls-server-name'] } : {}),
    },
    credential,
    ctxName,
  );
}

/** The in-cluster ServiceAccount: KUBERNETES_SERVICE_HOST/PORT, its CA and its (rotating) token. */
export function loadInCluster(env: NodeJS.ProcessEnv, dir = SERVICE_ACCOUNT_DIR): KubeAuth {
  const host = env.KUBERNETES_SERVICE_HOST;
  const port = env.KUBERNETES_SERVICE_PORT;
  if (!host || !port) throw new Error('KUBERNETES_SERVICE_HOST and KUBERNETES_SERVICE_PORT must both be set');
  const ca = readFileSync(path.join(dir, 'ca.crt'));
  const token = (): string => readFileSync(path.join(dir, 'token'), 'utf8').trim();
  token(); // fail now, not on the first request, when there is none
  const server = `https://${host.includes(':') ? `[${host}]` : host}:${port}`;
  return new Auth(server, { ca, insecure: false }, () => Promise.resolve({ value: { token: token() }, until: soon() }));
}

const soon = (): number => Date.now() + 60_000;

/** Runs an exec credential plugin and keeps its answer until 10 s before it expires. */
async function runExec(exec: ExecConfig, server: string): Promise<{ value: Credential; until: number }> {
  if (!exec.command) throw new Error('users[].exec.command is not set');
  const apiVersion = exec.apiVersion ?? 'client.authentication.k8s.io/v1';
  const info = { apiVersion, kind: 'ExecCredential', spec: { interactive: false, cluster: { server } } };
  const env: NodeJS.ProcessEnv = { ...process.env, KUBERNETES_EXEC_INFO: JSON.stringify(info) };
  for (const e of exec.env ?? []) env[e.name] = e.value;
  const stdout = await new Promise<string>((resolve, reject) =>
    execFile(exec.command as string, exec.args ?? [], { env, timeout: 60_000 }, (err, out, errOut) =>
      err ? reject(new Error(`exec plugin ${exec.command ?? ''} failed: ${err.message} ${errOut}`)) : resolve(out),
    ),
  );
  const status = (
    JSON.parse(stdout) as {
      status?: {
        token?: string;
        clientCertificateData?: string;
        clientKeyData?: string;
        expirationTimestamp?: string;
      };
    }
  ).status;
  if (!status) throw new Error(`exec plugin ${exec.command}: its ExecCredential has no status`);
  const value: Credential = {};
  if (status.token) value.token = status.token;
  if (status.clientCertificateData) value.cert = status.clientCertificateData;
  if (status.clientKeyData) value.key = status.clientKeyData;
  const expires = status.expirationTimestamp ? Date.parse(status.expirationTimestamp) : NaN;
  return { value, until: Number.isFinite(expires) ? expires - 10_000 : FOREVER };
}

/**
 * Where a kubeconfig is looked for, in order. kubectl (the CLI): --kubeconfig, else KUBECONFIG, else
 * ~/.kube/config, else the in-cluster ServiceAccount. A controller (controller-runtime's GetConfig, which the
 * reference controller and Karpenter use): --kubeconfig, else KUBECONFIG, else in-cluster, else ~/.kube/config —
 * in a Pod the ServiceAccount wins over a stray file.
 */
export type LookupOrder = 'kubectl' | 'controller';

export interface Resolved {
  auth: KubeAuth;
  /** What was read, for messages: `--kubeconfig F`, `KUBECONFIG A:B`, `~/.kube/config` or the ServiceAccount. */
  source: string;
}

/** A kubeconfig could not be found or read: the message names what was tried and what failed. */
export class KubeconfigError extends Error {}

/** Finds and reads the kubeconfig as `order` says, with `context` (--context) applied to files. */
export function resolveKubeconfig(
  flags: { kubeconfig?: string | undefined; context?: string | undefined },
  env: NodeJS.ProcessEnv,
  order: LookupOrder,
  serviceAccountDir = SERVICE_ACCOUNT_DIR,
): Resolved {
  const listed = (env.KUBECONFIG ?? '').split(path.delimiter).filter((f) => f !== '');
  const home = env.HOME ? path.join(env.HOME, '.kube', 'config') : undefined;
  const inCluster = env.KUBERNETES_SERVICE_HOST !== undefined && env.KUBERNETES_SERVICE_HOST !== '';
  type Source = { source: string; load: () => KubeAuth };
  const files = (source: string, list: string[]): Source => ({
    source,
    load: () => loadKubeconfig(list, flags.context),
  });
  const sa: Source = {
    source: 'the in-cluster ServiceAccount',
    load: () => {
      if (flags.context !== undefined) throw new Error(`--context ${flags.context} needs a kubeconfig file`);
      return loadInCluster(env, serviceAccountDir);
    },
  };
  const homeFile = home && existsSync(home) ? files('~/.kube/config', [home]) : null;
  const chosen: Source | null = flags.kubeconfig
    ? files(`--kubeconfig ${flags.kubeconfig}`, [flags.kubeconfig])
    : listed.length > 0
      ? files(`KUBECONFIG ${listed.join(path.delimiter)}`, listed)
      : order === 'kubectl'
        ? (homeFile ?? (inCluster ? sa : null))
        : inCluster
          ? sa
          : homeFile;
  if (!chosen)
    throw new KubeconfigError(
      'no kubeconfig: pass --kubeconfig FILE, set KUBECONFIG, create ~/.kube/config, or run in a cluster',
    );
  try {
    return { auth: chosen.load(), source: chosen.source };
  } catch (e) {
    throw new KubeconfigError(`cannot load ${chosen.source}: ${(e as Error).message}`);
  }
}
