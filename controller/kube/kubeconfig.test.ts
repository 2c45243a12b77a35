import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import type https from 'node:https';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { loadInCluster, loadKubeconfigFile, type KubeAuth } from './kubeconfig.js';

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});
function dir(files: Record<string, string>): string {
  const d = mkdtempSync(path.join(tmpdir(), 'kubeconfig-test-'));
  dirs.push(d);
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
    expect(() => loadKubeconfigFile(path.join(none, 'config'))).toThrow(/no context named "gone"/);
    expect(() => loadInCluster({}, none)).toThrow(/KUBERNETES_SERVICE_HOST and KUBERNETES_SERVICE_PORT/);
  });
});
