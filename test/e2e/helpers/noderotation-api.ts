// Our own API objects and events.k8s.io Events in the e2e cluster, for the controller's tests.
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { stringify } from 'yaml';
import { rbacManifests } from '../../../controller/rbac.js';
import type { RotationPolicy } from '../../../src/generated/api-types.js';
import { readClusterEnv, repoRoot } from './cluster.js';
import { kubectl } from './engine-shell.js';
import { ignoreNotFound, waitFor, type Kube } from './k8s.js';

const GROUP = 'noderotation.io';
const VERSION = 'v1alpha1';

/**
 * Installs (server-side apply, idempotent) our CRDs and the placeholder's PriorityClass, as an installation
 * does, and waits until the apiserver serves the CRDs.
 */
export async function installNoderotation(): Promise<void> {
  kubectl(['apply', '--server-side', '--force-conflicts', '-f', path.join(repoRoot, 'deploy/crds')]);
  kubectl([
    'apply',
    '--server-side',
    '--force-conflicts',
    '-f',
    path.join(repoRoot, 'deploy/placeholder-priorityclass.yaml'),
  ]);
  // Polled rather than `kubectl wait`: right after an apply the CRD's status can be momentarily empty, which
  // `kubectl wait` reports as an error instead of waiting.
  await waitFor('the RotationPolicy CRD Established', () => {
    const crd = JSON.parse(kubectl(['get', 'crd', 'rotationpolicies.noderotation.io', '-o', 'json'])) as {
      status?: { conditions?: { type: string; status: string }[] };
    };
    return crd.status?.conditions?.some((c) => c.type === 'Established' && c.status === 'True') ?? false;
  });
}

export async function createRotationPolicy(kube: Kube, policy: RotationPolicy): Promise<void> {
  await kube.custom.createClusterCustomObject({
    group: GROUP,
    version: VERSION,
    plural: 'rotationpolicies',
    body: policy,
  });
}

export async function getRotationPolicy(
  kube: Kube,
  name: string,
): Promise<(RotationPolicy & { status?: Record<string, unknown> }) | undefined> {
  return ignoreNotFound(
    kube.custom.getClusterCustomObject({ group: GROUP, version: VERSION, plural: 'rotationpolicies', name }) as Promise<
      RotationPolicy & { status?: Record<string, unknown> }
    >,
  );
}

export async function deleteRotationPolicy(kube: Kube, name: string): Promise<void> {
  await ignoreNotFound(
    kube.custom.deleteClusterCustomObject({ group: GROUP, version: VERSION, plural: 'rotationpolicies', name }),
  );
}

export interface EventV1 {
  reason?: string;
  type?: string;
  note?: string;
  regarding?: { kind?: string; name?: string };
  reportingController?: string;
  /** The controller replica's identity (its Lease holder identity). */
  reportingInstance?: string;
  eventTime?: string;
  series?: { count: number };
}

/** events.k8s.io/v1 Events in a namespace (the controller records in its own). */
export async function eventsV1(kube: Kube, namespace: string): Promise<EventV1[]> {
  const list = (await kube.custom.listNamespacedCustomObject({
    group: 'events.k8s.io',
    version: 'v1',
    namespace,
    plural: 'events',
  })) as { items: EventV1[] };
  return list.items;
}

/**
 * A kubeconfig for the controller's ServiceAccount in `namespace`, bound to exactly the rules of
 * controller/rbac.ts (under a name of its own), with a token from the TokenRequest API: the controller then
 * runs with the permissions a real installation gives it, and a call missing from rbac.ts fails.
 */
export function serviceAccountKubeconfig(namespace: string): { kubeconfig: string; cleanup: () => void } {
  const name = `nr-ctl-${namespace}`.slice(0, 63);
  const manifests = rbacManifests(namespace, name);
  kubectl(['apply', '-f', '-'], manifests.map((m) => `---\n${stringify(m)}`).join(''));
  const file = tokenKubeconfig(namespace, name);
  return {
    kubeconfig: file,
    cleanup: () => {
      kubectl(['delete', 'clusterrolebinding,clusterrole', name, '--ignore-not-found']);
      rmSync(file, { force: true });
    },
  };
}

/**
 * A kubeconfig that authenticates as ServiceAccount `namespace/name` (which must exist) with a 2-hour token,
 * against the e2e apiserver; the file lives in the run directory.
 */
export function tokenKubeconfig(namespace: string, name: string): string {
  const env = readClusterEnv();
  const token = kubectl(['create', 'token', name, '-n', namespace, '--duration', '2h']).trim();
  const admin = readFileSync(env.kubeconfig, 'utf8');
  const server = /server: (\S+)/.exec(admin)?.[1];
  const ca = /certificate-authority: (\S+)/.exec(admin)?.[1];
  if (!server || !ca) throw new Error(`cannot read server and CA from ${env.kubeconfig}`);
  const file = path.join(env.runDir, `kubeconfig-${namespace}-${name}`);
  writeFileSync(
    file,
    stringify({
      apiVersion: 'v1',
      kind: 'Config',
      clusters: [{ name: 'e2e', cluster: { server, 'certificate-authority': ca } }],
      users: [{ name, user: { token } }],
      contexts: [{ name: 'e2e', context: { cluster: 'e2e', user: name } }],
      'current-context': 'e2e',
    }),
    { mode: 0o600 },
  );
  return file;
}
