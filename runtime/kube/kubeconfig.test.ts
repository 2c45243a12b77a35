import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import type https from 'node:https';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import {
  loadInCluster,
  loadKubeconfig,
  loadKubeconfigFile,
  parseKubeconfig,
  resolveKubeconfig,
  type KubeAuth,
} from './kubeconfig.js';

const dirs: string[] = [];
const lasting: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});
afterAll(() => {
  for (const d of lasting.splice(0)) rmSync(d, { recursive: true, force: true });
});
/** A directory with `files`, removed after the test (or, made outside any test, after the file). */
function dir(files: Record<string, string>): string {
  const d = mkdtempSync(path.join(tmpdir(), 'kubeconfig-test-'));
  (expect.getState().currentTestName === undefined ? lasting : dirs).push(d);
  for (const [name, text] of Object.entries(files)) writeFileSync(path.join(d, name), text);
  return d;
}
const b64 = (s: string): string => Buffer.from(s).toString('base64');
function kubeconfig(user: Record<string, unknown>, cluster: Record<string, unknown> = {}): Record<string, string> {
  return {
    config: stringify({
      'current-context': 'x',
      contexts: [{ name: 'x', context: { cluster: 'c', user: 'u' } }],
      clusters: [{ name: 'c', cluster: { server: 'https://127.0.0.1:6443', ...cluster } }],
      users: [{ name: 'u', user }],
    }),
  };
}
async function options(kc: KubeAuth): Promise<https.RequestOptions> {
  const o: https.RequestOptions = { headers: { Accept: 'application/json' } };
  await kc.applyToHTTPSOptions(o);
  return o;
}

describe('kubeconfig', () => {
  it('client certificate and CA inline: server, ca, cert and key on every request', async () => {
    const d = dir(
      kubeconfig(
        { 'client-certificate-data': b64('CERT'), 'client-key-data': b64('KEY') },
        { 'certificate-authority-data': b64('CA') },
      ),
    );
    const kc = loadKubeconfigFile(path.join(d, 'config'));
    expect(kc.getCurrentCluster()).toEqual({ server: 'https://127.0.0.1:6443' });
    const o = await options(kc);
    expect(String(o.ca)).toBe('CA');
    expect(o).toMatchObject({ cert: 'CERT', key: 'KEY' });
  });

  it('files are relative to the kubeconfig; a tokenFile is read again (it rotates)', async () => {
    const d = dir({ ...kubeconfig({ tokenFile: 'token' }, { 'certificate-authority': 'ca.crt' }), token: 't1\n' });
    writeFileSync(path.join(d, 'ca.crt'), 'CAFILE');
    const o = await options(loadKubeconfigFile(path.join(d, 'config')));
    expect(String(o.ca)).toBe('CAFILE');
    expect(o.headers).toMatchObject({ Authorization: 'Bearer t1', Accept: 'application/json' });
  });

  it('an exec plugin: run with KUBERNETES_EXEC_INFO, its token used until it expires', async () => {
    const script =
      'const i = JSON.parse(process.env.KUBERNETES_EXEC_INFO);' +
      'console.log(JSON.stringify({ status: { token: i.spec.cluster.server + "|" + process.env.EXTRA,' +
      ' expirationTimestamp: new Date(Date.now() + 3600e3).toISOString() } }))';
    const d = dir(
      kubeconfig({
        exec: {
          apiVersion: 'client.authentication.k8s.io/v1',
          command: process.execPath,
          args: ['-e', script],
          env: [{ name: 'EXTRA', value: 'e' }],
        },
      }),
    );
    const o = await options(loadKubeconfigFile(path.join(d, 'config')));
    expect(o.headers).toMatchObject({ Authorization: 'Bearer https://127.0.0.1:6443|e' });
  });

  it('in a cluster: the service host, its CA and its token', async () => {
    const d = dir({ 'ca.crt': 'SACA', token: 'sa-token' });
    const kc = loadInCluster({ KUBERNETES_SERVICE_HOST: '10.96.0.1', KUBERNETES_SERVICE_PORT: '443' }, d);
    expect(kc.getCurrentCluster()).toEqual({ server: 'https://10.96.0.1:443' });
    const o = await options(kc);
    expect(String(o.ca)).toBe('SACA');
    expect(o.headers).toMatchObject({ Authorization: 'Bearer sa-token' });
  });

  it('what is not supported, or missing, is named', () => {
    const file = (user: Record<string, unknown>): string => path.join(dir(kubeconfig(user)), 'config');
    expect(() => loadKubeconfigFile(file({ 'auth-provider': { name: 'oidc' } }))).toThrow(
      /users\[u\]\.auth-provider is not supported/,
    );
    expect(() => loadKubeconfigFile(file({ 'client-certificate-data': b64('C') }))).toThrow(
      /client-certificate without client-key/,
    );
    const none = dir({ config: stringify({ 'current-context': 'gone', contexts: [] }) });
    expect(() => loadKubeconfigFile(path.join(none, 'config'))).toThrow(/current-context gone: no such context/);
    expect(() => loadInCluster({}, none)).toThrow(/KUBERNETES_SERVICE_HOST and KUBERNETES_SERVICE_PORT/);
  });
});

describe('KUBECONFIG lists, merged as kubectl merges them', () => {
  const file = (doc: Record<string, unknown>, extra: Record<string, string> = {}): string =>
    path.join(dir({ config: stringify(doc), ...extra }), 'config');
  const cluster = (name: string, server: string, more: Record<string, unknown> = {}) => ({
    name,
    cluster: { server, ...more },
  });

  it('the first file to set current-context or name an entry wins; paths stay relative to their own file', async () => {
    const a = file(
      {
        contexts: [{ name: 'x', context: { cluster: 'c', user: 'u' } }],
        clusters: [cluster('c', 'https://a:1', { 'certificate-authority': 'ca.crt' })],
      },
      { 'ca.crt': 'CA-A' },
    );
    const b = file(
      {
        'current-context': 'x',
        contexts: [{ name: 'x', context: { cluster: 'other', user: 'other' } }],
        clusters: [cluster('c', 'https://b:1')],
        users: [{ name: 'u', user: { tokenFile: 'token' } }],
      },
      { token: 'from-b' },
    );
    const kc = loadKubeconfig([a, b]);
    expect([kc.getCurrentContext(), kc.getCurrentCluster()]).toEqual(['x', { server: 'https://a:1' }]);
    const o = await options(kc);
    expect([String(o.ca), o.headers]).toEqual(['CA-A', { Accept: 'application/json', Authorization: 'Bearer from-b' }]);
    expect(loadKubeconfig([a, b], 'x').getCurrentContext()).toBe('x');
    expect(() => loadKubeconfig([a, b], 'y')).toThrow('--context y: no such context; the kubeconfig has x');
  });
});

describe('where the kubeconfig is looked for', () => {
  const sa = dir({ 'ca.crt': 'SACA', token: 'sa-token' });
  const kubeconfigAt = (server: string): string => path.join(dir(kubeconfig({ token: 't' }, { server })), 'config');
  const homeOf = (file: string): string => {
    const home = dir({});
    mkdirSync(path.join(home, '.kube'));
    writeFileSync(path.join(home, '.kube', 'config'), readFileSync(file));
    return home;
  };
  const flag = kubeconfigAt('https://flag:1');
  const listed = kubeconfigAt('https://listed:1');
  const HOME = homeOf(kubeconfigAt('https://home:1'));
  const inCluster = { KUBERNETES_SERVICE_HOST: 'pod', KUBERNETES_SERVICE_PORT: '443' };

  it.each([
    {
      reason: '--kubeconfig before all',
      flags: { kubeconfig: flag },
      env: { KUBECONFIG: listed, HOME, ...inCluster },
      kubectl: 'flag',
      controller: 'flag',
    },
    {
      reason: 'then KUBECONFIG',
      flags: {},
      env: { KUBECONFIG: listed, HOME, ...inCluster },
      kubectl: 'listed',
      controller: 'listed',
    },
    {
      reason: 'kubectl: ~/.kube/config before the ServiceAccount; a controller: the other way round',
      flags: {},
      env: { HOME, ...inCluster },
      kubectl: 'home',
      controller: 'pod',
    },
    { reason: 'only ~/.kube/config', flags: {}, env: { HOME }, kubectl: 'home', controller: 'home' },
    {
      reason: 'only the ServiceAccount',
      flags: {},
      env: { HOME: dir({}), ...inCluster },
      kubectl: 'pod',
      controller: 'pod',
    },
  ])('$reason', ({ flags, env, kubectl, controller }) => {
    const host = (order: 'kubectl' | 'controller'): string =>
      new URL(resolveKubeconfig(flags, env, order, sa).auth.getCurrentCluster()?.server ?? '').hostname;
    expect({ kubectl: host('kubectl'), controller: host('controller') }).toEqual({ kubectl, controller });
  });

  it('what was tried is named when nothing is found or it cannot be read', () => {
    expect(() => resolveKubeconfig({}, {}, 'controller', sa)).toThrow(
      'no kubeconfig: pass --kubeconfig FILE, set KUBECONFIG, create ~/.kube/config, or run in a cluster',
    );
    expect(() => resolveKubeconfig({ context: 'z' }, inCluster, 'kubectl', sa)).toThrow(
      'cannot load the in-cluster ServiceAccount: --context z needs a kubeconfig file',
    );
    expect(() => resolveKubeconfig({}, { KUBECONFIG: `${listed}${path.delimiter}/nope` }, 'kubectl', sa)).toThrow(
      /cannot load KUBECONFIG .*nope: ENOENT/,
    );
  });
});

describe('parseKubeconfig', () => {
  const config = {
    'current-context': 'x',
    contexts: [{ name: 'x', context: { cluster: 'c', user: 'u' } }],
    clusters: [{ name: 'c', cluster: { server: 'https://127.0.0.1:6443' } }],
    users: [{ name: 'u', user: { token: 't' } }],
  };
  it.each([
    { reason: 'YAML, as kubectl writes it', text: stringify(config) },
    { reason: 'JSON, as programs write it (read without the YAML parser)', text: JSON.stringify(config, null, 2) },
    { reason: 'JSON after blank lines', text: `\n\n${JSON.stringify(config)}` },
    {
      reason: "YAML's flow style, which starts like JSON but is not: the YAML parser reads it",
      text: `{current-context: x, contexts: [{name: x, context: {cluster: c, user: u}}], clusters: [{name: c, cluster: {server: 'https://127.0.0.1:6443'}}], users: [{name: u, user: {token: t}}]}`,
    },
  ])('$reason', ({ text }) => {
    expect(parseKubeconfig(text)).toEqual(config);
  });

  it('an empty file is an empty kubeconfig, in either form', () => {
    expect(parseKubeconfig('')).toEqual({});
    expect(parseKubeconfig('null')).toEqual({});
  });
});
