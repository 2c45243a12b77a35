// Our own API objects and events.k8s.io Events in the e2e cluster, for the controller's tests.
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { stringify } from 'yaml';
import { admissionPolicy, policyNames, serviceAccountUser } from '../../../controller/admission.js';
import { rbacManifests } from '../../../controller/rbac.js';
import { policyParams } from '../../../src/derivation/params.js';
import { placeholderPod, sizePlaceholder } from '../../../src/engine/placeholder.js';
import type { RotationPolicy } from '../../../src/generated/api-types.js';
import type { Pod } from '../../../src/kube/types.js';
import { claim, nodePool, OLD } from '../../support/fixtures.js';
import { readClusterEnv, repoRoot } from './cluster.js';
import { kubectl, kubectlResult } from './kubectl.js';
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
 * controller/rbac.ts (under a name of its own), with a token from the TokenRequest API, and held by the admission
 * policies of controller/admission.ts (which are in force when this returns): the controller then runs with the
 * permissions and under the admission rules a real installation gives it, and a call missing from rbac.ts, or a
 * write the policies refuse, fails.
 */
export async function serviceAccountKubeconfig(
  namespace: string,
  /** The ServiceAccount's name, the apiserver address (a proxy in front of it), the token's lifetime. */
  o: { name?: string; server?: string; tokenDuration?: string } = {},
): Promise<{ kubeconfig: string; cleanup: () => void }> {
  const name = o.name ?? `nr-ctl-${namespace}`.slice(0, 63);
  const manifests = rbacManifests(namespace, name);
  kubectl(['apply', '-f', '-'], manifests.map((m) => `---\n${stringify(m)}`).join(''));
  const removeAdmission = await installAdmissionPolicy(namespace, name);
  const file = tokenKubeconfig(namespace, name, o);
  return {
    kubeconfig: file,
    cleanup: () => {
      removeAdmission();
      kubectl(['delete', 'clusterrolebinding,clusterrole', name, '--ignore-not-found']);
      rmSync(file, { force: true });
    },
  };
}

/**
 * Installs the admission policies for ServiceAccount `namespace/serviceAccount` and waits until the apiserver
 * enforces each of them; returns their removal.
 */
export async function installAdmissionPolicy(namespace: string, serviceAccount: string): Promise<() => void> {
  const target = { namespace, serviceAccount };
  kubectl(
    ['apply', '-f', '-'],
    admissionPolicy(target)
      .map((m) => `---\n${stringify(m)}`)
      .join(''),
  );
  const names = policyNames(target);
  await waitForAdmissionPolicy(namespace, serviceAccount);
  return () => {
    kubectl(['delete', 'validatingadmissionpolicybinding,validatingadmissionpolicy', ...names, '--ignore-not-found']);
  };
}

/**
 * Writes each policy refuses outright (a create of a Node, NodeClaim and NodePool, an unlabelled Pod), made as the
 * ServiceAccount's user name in group system:masters (so RBAC allows them) with a server-side dry-run (so nothing
 * is stored): all four refused by our rules means the apiserver has loaded all four policies.
 */
const PROBES = (namespace: string): Record<string, unknown>[] => {
  const name = 'nr-admission-probe';
  const nodeClassRef = { group: 'karpenter.kwok.sh', kind: 'KWOKNodeClass', name: 'default' };
  const requirements = [{ key: 'kubernetes.io/os', operator: 'In', values: ['linux'] }];
  return [
    { apiVersion: 'v1', kind: 'Node', metadata: { name } },
    { apiVersion: 'karpenter.sh/v1', kind: 'NodeClaim', metadata: { name }, spec: { nodeClassRef, requirements } },
    {
      apiVersion: 'karpenter.sh/v1',
      kind: 'NodePool',
      metadata: { name },
      spec: { template: { spec: { nodeClassRef, requirements } } },
    },
    {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name, namespace },
      // Pod Security `restricted` would refuse it first in a namespace that enforces it.
      spec: {
        securityContext: { runAsNonRoot: true, runAsUser: 65535, seccompProfile: { type: 'RuntimeDefault' } },
        containers: [
          {
            name: 'pause',
            image: 'registry.k8s.io/pause:3.10',
            securityContext: { allowPrivilegeEscalation: false, capabilities: { drop: ['ALL'] } },
          },
        ],
      },
    },
  ];
};

/** One round of the probes: for each policy, whether it refused its probe now (any other failure throws). */
export function admissionProbes(namespace: string, serviceAccount: string): boolean[] {
  const as = [`--as=${serviceAccountUser(namespace, serviceAccount)}`, '--as-group=system:masters'];
  return PROBES(namespace).map((probe) => {
    const r = kubectlResult(['create', '--dry-run=server', ...as, '-f', '-'], JSON.stringify(probe));
    if (r.code === 0) return false;
    if (r.text.includes('noderotation admission rule')) return true;
    throw new Error(`the ${String(probe.kind)} probe failed otherwise: ${r.text}`);
  });
}

export async function waitForAdmissionPolicy(namespace: string, serviceAccount: string): Promise<void> {
  await waitFor(
    `the admission policies for ${namespace}/${serviceAccount} in force`,
    () => admissionProbes(namespace, serviceAccount).every(Boolean),
    { timeoutMs: 60_000, intervalMs: 250 },
  );
}

/**
 * A kubeconfig that authenticates as ServiceAccount `namespace/name` (which must exist) with a 2-hour token,
 * against the e2e apiserver; the file lives in the run directory.
 */
export function tokenKubeconfig(
  namespace: string,
  name: string,
  o: { server?: string; tokenDuration?: string } = {},
): string {
  const env = readClusterEnv();
  const token = kubectl(['create', 'token', name, '-n', namespace, '--duration', o.tokenDuration ?? '2h']).trim();
  const admin = readFileSync(env.kubeconfig, 'utf8');
  const server = o.server ?? /server: (\S+)/.exec(admin)?.[1];
  const ca = /certificate-authority: (\S+)/.exec(admin)?.[1];
  if (!server || !ca) throw new Error(`cannot read server and CA from ${env.kubeconfig}`);
  const file = path.join(env.runDir, `kubeconfig-${namespace}-${name}`);
  // In JSON, as programs write kubeconfigs: the controller reads it without loading a YAML parser, as it runs
  // in a cluster (no file at all), so its memory here is its memory there (runtime/kube/kubeconfig.ts).
  const config = {
    apiVersion: 'v1',
    kind: 'Config',
    clusters: [{ name: 'e2e', cluster: { server, 'certificate-authority': ca } }],
    users: [{ name, user: { token } }],
    contexts: [{ name: 'e2e', context: { cluster: 'e2e', user: name } }],
    'current-context': 'e2e',
  };
  writeFileSync(file, `${JSON.stringify(config, null, 2)}\n`, { mode: 0o600 });
  return file;
}

/**
 * A surge placeholder as the engine builds it (for the unit fixtures' claim `claimName` of NodePool `general`,
 * which no e2e cluster has: it stays Pending), in `namespace` under PriorityClass `priorityClassName`.
 */
export function enginePlaceholder(namespace: string, priorityClassName: string, claimName = 'general-abc12'): Pod {
  const { claim: c, node } = claim(claimName, { createdAt: OLD });
  return placeholderPod({
    pool: nodePool(),
    claim: c,
    node,
    params: policyParams({ nodePools: ['general'], maintenanceWindows: [] } as never),
    sizing: sizePlaceholder(c, [], false),
    avoidNodes: [],
    namespace,
    priorityClassName,
    image: 'registry.k8s.io/pause:3.10',
  });
}
