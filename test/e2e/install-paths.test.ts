// The installation as README.md and docs/operations.md write it, run on the real apiserver: the README's Helm
// commands as written, the kustomize overlay docs/operations.md shows, and the documented upgrade from chart
// 0.1.0 (test/e2e/fixtures/, the chart as that version packaged it) to this one, pulled from an OCI registry
// (`cluster.sh registry up`) as a released chart is; `helm test`; uninstall, which keeps the CRDs and every
// RotationPolicy; and a reinstall from `oci://` over the kept CRDs. What is substituted, and only that: the
// README's `<registry>` (KWOK runs no container, so the image is never pulled), the overlay's remote base (no
// network: its documented alternative, a relative path), and the upgrade's chart location (the registry's).
//
// A fresh cluster has none of our objects, and the Helm release must create its CRDs: so this file deletes the
// CRDs and the placeholder PriorityClass the other files install, and installs them again when it ends. It runs
// in the serial phase (test/e2e/run.sh), where no other file needs them meanwhile.
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { docBlocks } from '../support/docs.js';
import { docsOverlay, toolPath } from '../install/tools.js';
import { readClusterEnv, repoRoot, runScript } from './helpers/cluster.js';
import { ON_DEMAND_AMD64 } from './helpers/context.js';
import { Kube, TestResources, waitFor } from './helpers/k8s.js';
import { kubectl, kubectlResult } from './helpers/kubectl.js';
import { installNoderotation } from './helpers/noderotation-api.js';

const env = readClusterEnv();
const kube = new Kube(env);
const res = new TestResources(kube);
const NS = 'node-rotation-system';
const CRDS = ['rotationpolicies.noderotation.io', 'maintenanceplans.noderotation.io'];
const PRIORITY_CLASS = 'noderotation-placeholder';
/** The README's `<registry>`. */
const REGISTRY = '127.0.0.1:5999/e2e';
const IMAGE = `${REGISTRY}/noderotation-controller:0.1.0`;
const work = mkdtempSync(path.join(tmpdir(), 'nr-install-paths-'));
const helm = toolPath('helm');
const chartVersion = /^version: (\S+)$/m.exec(
  readFileSync(path.join(repoRoot, 'charts/noderotation/Chart.yaml'), 'utf8'),
)?.[1] as string;

/** A shell as a user's: helm and kubectl (the cluster's) on PATH, the cluster's kubeconfig, Helm's homes here. */
const shellEnv = {
  ...process.env,
  PATH: `${path.dirname(helm)}:${path.dirname(env.kubectl)}:${process.env.PATH ?? ''}`,
  KUBECONFIG: env.kubeconfig,
  HELM_CACHE_HOME: path.join(work, 'helm', 'cache'),
  HELM_CONFIG_HOME: path.join(work, 'helm', 'config'),
  HELM_DATA_HOME: path.join(work, 'helm', 'data'),
};

function sh(script: string, cwd = repoRoot): { code: number; out: string } {
  const r = spawnSync('bash', ['-euo', 'pipefail', '-c', script], {
    cwd,
    env: shellEnv,
    encoding: 'utf8',
    timeout: 300_000,
  });
  return { code: r.status ?? -1, out: `${r.stdout}${r.stderr}` };
}

const asWritten = (block: string): string => block.replaceAll('<registry>', REGISTRY);

interface Meta {
  uid: string;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
}
const get = (kind: string, name: string, ns?: string): { metadata: Meta } & Record<string, unknown> =>
  JSON.parse(kubectl(['get', kind, name, ...(ns ? ['-n', ns] : []), '-o', 'json'])) as { metadata: Meta };
const exists = (kind: string, name: string, ns?: string): boolean =>
  kubectlResult(['get', kind, name, ...(ns ? ['-n', ns] : []), '-o', 'name']).code === 0;

async function gone(kind: string, name: string): Promise<void> {
  kubectlResult(['delete', kind, name, '--ignore-not-found', '--wait=false']);
  await waitFor(`${kind} ${name} gone`, () => !exists(kind, name), { timeoutMs: 180_000 });
}

async function established(): Promise<void> {
  for (const crd of CRDS)
    await waitFor(`CRD ${crd} Established`, () => {
      const r = kubectlResult([
        'get',
        'crd',
        crd,
        '-o',
        'jsonpath={.status.conditions[?(@.type=="Established")].status}',
      ]);
      return r.out === 'True';
    });
}

/** A RotationPolicy, as a user's that must outlive upgrades and uninstalls. */
const POLICY = {
  apiVersion: 'noderotation.io/v1alpha1',
  kind: 'RotationPolicy',
  metadata: { name: 'e2e-install-paths' },
  spec: {
    nodePools: ['e2e-install-paths-none'],
    maintenanceWindows: [{ timezone: 'UTC', days: ['Sat'], start: '02:00', end: '06:00' }],
  },
};

let registry = '';
let pool = '';

beforeAll(async () => {
  const r = runScript('registry', 'up');
  expect(r.status, 'cluster.sh registry up').toBe(0);
  registry = r.stdout.trim();
  await gone('namespace', NS);
  for (const crd of CRDS) await gone('crd', crd);
  await gone('priorityclass', PRIORITY_CLASS);
  // Where the controller's Pods land once the upgrade pins them (Karpenter provisions a node for them).
  pool = await res.nodePool('e2e-install', ON_DEMAND_AMD64);
}, 600_000);

afterAll(async () => {
  sh(`helm uninstall noderotation -n ${NS} --ignore-not-found`);
  kubectlResult(['delete', 'rotationpolicy', POLICY.metadata.name, '--ignore-not-found']);
  await gone('namespace', NS);
  await res.cleanup();
  runScript('registry', 'down');
  // As the other files expect the cluster: our CRDs and the placeholder PriorityClass.
  await installNoderotation();
  rmSync(work, { recursive: true, force: true });
}, 600_000);

describe('README: Helm', () => {
  it('installs as written: the release deployed, the CRDs its own and kept, the image the one named', async () => {
    const block = docBlocks('README.md', '## Installation').find((b) => b.includes('helm install'));
    expect(block).toBeDefined();
    const r = sh(asWritten(block as string));
    expect(r.code, r.out).toBe(0);
    const status = JSON.parse(sh(`helm status noderotation -n ${NS} -o json`).out) as {
      info: { status: string };
      chart?: { metadata: { version: string } };
    };
    expect(status.info.status).toBe('deployed');
    await established();
    for (const crd of CRDS) {
      const { metadata } = get('crd', crd);
      expect(metadata.labels?.['app.kubernetes.io/managed-by']).toBe('Helm');
      expect(metadata.annotations?.['helm.sh/resource-policy']).toBe('keep');
    }
    const d = get('deployment', 'noderotation-controller', NS) as unknown as {
      spec: { template: { spec: { serviceAccountName: string; containers: { image: string }[] } } };
    };
    expect(d.spec.template.spec.containers[0]?.image).toBe(IMAGE);
    expect(d.spec.template.spec.serviceAccountName).toBe('noderotation-controller');
    expect(exists('validatingadmissionpolicybinding', 'noderotation-controller-pods')).toBe(true);
    expect(exists('priorityclass', PRIORITY_CLASS)).toBe(true);
  });

  it('uninstalls as docs/operations.md says, keeping the CRDs', async () => {
    const block = docBlocks('docs/operations.md', '## Uninstall')[0] as string;
    const r = sh(block);
    expect(r.code, r.out).toBe(0);
    expect(r.out).toContain('release "noderotation" uninstalled');
    for (const crd of CRDS) expect(exists('crd', crd)).toBe(true);
    expect(exists('deployment', 'noderotation-controller', NS)).toBe(false);
    expect(exists('validatingadmissionpolicy', 'noderotation-controller-pods')).toBe(false);
    await gone('namespace', NS);
  });
});

describe('README and docs/operations.md: kustomize', () => {
  it("applies the docs' overlay as the README says: the image, the namespace and the patch as written", async () => {
    const dir = path.join(work, 'overlays', 'prod');
    mkdirSync(dir, { recursive: true });
    const base = path.relative(dir, path.join(repoRoot, 'deploy'));
    const overlay = asWritten(docsOverlay()).replace(
      /https:\/\/github\.com\/<org>\/noderotation\/\/deploy\?ref=\S+/,
      base,
    );
    writeFileSync(path.join(dir, 'kustomization.yaml'), overlay);
    const line = docBlocks('README.md', '## Installation').find((b) => b.includes(' -k overlays/prod/'));
    expect(line).toBeDefined();
    const r = sh(line as string, work);
    expect(r.code, r.out).toBe(0);
    await established();
    const d = get('deployment', 'noderotation-controller', NS) as unknown as {
      spec: { template: { spec: { containers: { image: string; resources: { limits: { memory: string } } }[] } } };
    };
    expect(d.spec.template.spec.containers[0]?.image).toBe(IMAGE);
    expect(d.spec.template.spec.containers[0]?.resources.limits.memory).toBe('512Mi');
    const vap = get('validatingadmissionpolicy', 'noderotation-controller-pods') as unknown as {
      spec: { matchConditions: { expression: string }[] };
    };
    expect(vap.spec.matchConditions[0]?.expression).toContain(`system:serviceaccount:${NS}:noderotation-controller`);
    expect(get('namespace', NS).metadata.labels?.['pod-security.kubernetes.io/enforce']).toBe('restricted');

    // Its uninstall deletes the CRDs with everything else (docs/operations.md says so).
    const del = sh('kubectl delete -k overlays/prod/ --wait=false', work);
    expect(del.code, del.out).toBe(0);
    for (const crd of CRDS) await waitFor(`CRD ${crd} deleted`, () => !exists('crd', crd));
    await gone('namespace', NS);
    await gone('priorityclass', PRIORITY_CLASS);
  });
});

describe('docs/operations.md: upgrade from chart 0.1.0, from an OCI registry', () => {
  const ref = () => `oci://${registry}/charts/noderotation --version ${chartVersion} --plain-http`;
  let policyUid = '';

  it('installs 0.1.0 as it was, with a RotationPolicy of the user', async () => {
    const readme = docBlocks('README.md', '## Installation').find((b) => b.includes('helm install')) as string;
    const install = asWritten(readme).replace(
      'charts/noderotation',
      `test/e2e/fixtures/noderotation-0.1.0.tgz --set 'nodeSelector.karpenter\\.sh/nodepool=${pool}'`,
    );
    const r = sh(install);
    expect(r.code, r.out).toBe(0);
    await established();
    // 0.1.0 installed its CRDs from crds/: Helm's, but not the release's.
    expect(get('crd', CRDS[0] as string).metadata.annotations?.['meta.helm.sh/release-name']).toBeUndefined();
    kubectl(['apply', '-f', '-'], JSON.stringify(POLICY));
    policyUid = get('rotationpolicy', POLICY.metadata.name).metadata.uid;
  });

  it('pushes this chart to the registry and upgrades to it as documented; the policy survives', () => {
    const pkg = sh(`helm package charts/noderotation -d ${work}`);
    expect(pkg.code, pkg.out).toBe(0);
    const push = sh(`helm push ${work}/noderotation-${chartVersion}.tgz oci://${registry}/charts --plain-http`);
    expect(push.code, push.out).toBe(0);
    expect(push.out).toContain(`Pushed: ${registry}/charts/noderotation:${chartVersion}`);

    // Without the documented step, Helm refuses the CRDs 0.1.0 left unowned (why the docs have it).
    const plain = sh(`helm upgrade noderotation ${ref()} -n ${NS} --reset-then-reuse-values`);
    expect(plain.code).not.toBe(0);
    expect(plain.out).toMatch(/CustomResourceDefinition "\S+" in namespace "" exists and cannot be imported/);

    const blocks = docBlocks('docs/operations.md', '## Upgrade');
    const fromOld = blocks.find((b) => b.includes('kubectl label crd'));
    expect(fromOld).toBeDefined();
    const r = sh((fromOld as string).replace('charts/noderotation', ref()));
    expect(r.code, r.out).toBe(0);
    const history = JSON.parse(sh(`helm history noderotation -n ${NS} -o json`).out) as {
      chart: string;
      status: string;
    }[];
    expect(history.map((h) => [h.chart, h.status])).toEqual([
      ['noderotation-0.1.0', 'superseded'],
      [`noderotation-${chartVersion}`, 'deployed'],
    ]);
    for (const crd of CRDS) {
      const { metadata } = get('crd', crd);
      expect(metadata.annotations?.['meta.helm.sh/release-name']).toBe('noderotation');
      expect(metadata.annotations?.['helm.sh/resource-policy']).toBe('keep');
    }
    expect(get('rotationpolicy', POLICY.metadata.name).metadata.uid).toBe(policyUid);
    // The values given at install are kept (--reset-then-reuse-values), the new chart's defaults added.
    const values = JSON.parse(sh(`helm get values noderotation -n ${NS} --all -o json`).out) as {
      image: { repository: string };
      nodeSelector: Record<string, string>;
      crds: { install: boolean };
      serviceAccount: { create: boolean };
    };
    expect(values.image.repository).toBe(`${REGISTRY}/noderotation-controller`);
    expect(values.nodeSelector).toEqual({ 'karpenter.sh/nodepool': pool });
    expect([values.crds.install, values.serviceAccount.create]).toEqual([true, true]);
  });

  it('passes helm test once the controller Pods are up', async () => {
    await waitFor(
      'the controller Deployment available (2 replicas on a node Karpenter provisioned)',
      () => {
        const d = get('deployment', 'noderotation-controller', NS) as unknown as {
          status?: { availableReplicas?: number };
        };
        return d.status?.availableReplicas === 2;
      },
      { timeoutMs: 240_000 },
    );
    // KWOK runs no container: it completes a Job's Pod (its pod-complete stage), so this proves the hook is
    // created, admitted under Pod Security restricted, scheduled and waited for; what its script checks is
    // tested against the controller's own metrics in test/install/manifests.test.ts.
    const r = sh(`helm test noderotation -n ${NS} --timeout 3m`);
    expect(r.code, r.out).toBe(0);
    expect(r.out).toMatch(/TEST SUITE:\s+noderotation-controller-test[\s\S]*Phase:\s+Succeeded/);
  });

  it('uninstalls keeping the CRDs and the policy, and installs again from oci:// over them', () => {
    const un = sh(`helm uninstall noderotation -n ${NS} --wait`);
    expect(un.code, un.out).toBe(0);
    expect(get('rotationpolicy', POLICY.metadata.name).metadata.uid).toBe(policyUid);
    expect(exists('serviceaccount', 'noderotation-controller', NS)).toBe(false);
    const again = sh(
      `helm install noderotation ${ref()} -n ${NS} --set image.repository=${REGISTRY}/noderotation-controller`,
    );
    expect(again.code, again.out).toBe(0);
    expect(again.out).toContain('STATUS: deployed');
    expect(get('rotationpolicy', POLICY.metadata.name).metadata.uid).toBe(policyUid);
    expect(get('crd', CRDS[0] as string).metadata.labels?.['helm.sh/chart']).toBe(`noderotation-${chartVersion}`);
  });
});
