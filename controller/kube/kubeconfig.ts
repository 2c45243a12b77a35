// How the controller reaches and authenticates to the apiserver: a kubeconfig file or the in-cluster
// ServiceAccount, read here instead of through @kubernetes/client-node, whose import alone loads its generated
// API models (65 MB of a 134 MB process in the fleet benchmark, docs/benchmarks.md) for the two things the
// controller needs: the server URL and the TLS/auth options of each request.
//
// Supported, as kubectl reads them: clusters (server, certificate-authority[-data], insecure-skip-tls-verify,
// tls-server-name), users (client-certificate[-data] + client-key[-data], token, tokenFile, exec plugins of
// client.authentication.k8s.io v1/v1beta1) and the in-cluster ServiceAccount (token re-read, as it rotates).
// Anything else (auth-provider, username/password) is refused with the field's name.
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import type https from 'node:https';
import path from 'node:path';
import { parse } from 'yaml';

/** What KubeClient needs of a kubeconfig (client-node's KubeConfig has the same two methods). */
export interface KubeAuth {
  getCurrentCluster(): { server: string } | null;
  applyToHTTPSOptions(options: https.RequestOptions): Promise<void>;
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
interface KubeconfigFile {
  'current-context'?: string;
  contexts?: { name: string; context?: { cluster?: string; user?: string } }[];
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
  ) {}

  getCurrentCluster(): { server: string } {
    return { server: this.server };
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

/** The current context's cluster and user of a kubeconfig file. */
export function loadKubeconfigFile(file: string): KubeAuth {
  const doc = (parse(readFileSync(file, 'utf8')) ?? {}) as KubeconfigFile;
  const dir = path.dirname(path.resolve(file));
  const rel = (p: string): string => path.resolve(dir, p);
  const ctxName = doc['current-context'];
  if (!ctxName) throw new Error('current-context is not set');
  const ctx = doc.contexts?.find((c) => c.name === ctxName)?.context;
  if (!ctx) throw new Error(`contexts: no context named "${ctxName}" (current-context)`);
  const cluster = doc.clusters?.find((c) => c.name === ctx.cluster)?.cluster;
  if (!cluster?.server) throw new Error(`clusters: no cluster "${ctx.cluster ?? ''}" with a server`);
  const user = doc.users?.find((u) => u.name === ctx.user)?.user ?? {};
  if (user['auth-provider'] !== undefined) {
    throw new Error(`users[${ctx.user ?? ''}].auth-provider is not supported: use an exec plugin or a token`);
  }
  if (user.username !== undefined) {
    throw new Error(`users[${ctx.user ?? ''}].username (basic auth) is not supported: use a token or a certificate`);
  }
  const ca = cluster['certificate-authority-data']
    ? Buffer.from(cluster['certificate-authority-data'], 'base64')
    : cluster['certificate-authority']
      ? readFileSync(rel(cluster['certificate-authority']))
      : undefined;
  const fixed: Credential = {};
  const cert = user['client-certificate-data'] ?? user['client-certificate'];
  if (cert !== undefined) {
    fixed.cert = user['client-certificate-data']
      ? Buffer.from(cert, 'base64').toString()
      : readFileSync(rel(cert), 'utf8');
    const keyData = user['client-key-data'];
    const keyFile = user['client-key'];
    if (keyData === undefined && keyFile === undefined) {
      throw new Error(`users[${ctx.user ?? ''}]: client-certificate without client-key`);
    }
    fixed.key = keyData ? Buffer.from(keyData, 'base64').toString() : readFileSync(rel(keyFile as string), 'utf8');
  }
  if (user.token !== undefined) fixed.token = user.token;
  const tokenFile = user.tokenFile;
  const exec = user.exec;
  const credential = exec
    ? () => runExec(exec, cluster.server as string)
    : tokenFile
      ? // Re-read every minute: such files are rotated by whoever writes them.
        () =>
          Promise.resolve({ value: { ...fixed, token: readFileSync(rel(tokenFile), 'utf8').trim() }, until: soon() })
      : () => Promise.resolve({ value: fixed, until: FOREVER });
  return new Auth(
    cluster.server,
    {
      ca,
      insecure: cluster['insecure-skip-tls-verify'] === true,
      ...(cluster['tls-server-name'] ? { servername: cluster['tls-server-name'] } : {}),
    },
    credential,
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
