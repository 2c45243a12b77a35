// The installation on a real apiserver: the kustomize base (with its prometheus and crossplane parts) and the
// Helm chart (every option on), their admission policies included (matching the ServiceAccount of the namespace
// they are moved to), pass a server-side dry-run with strict field validation, in a namespace of their own that
// the base's Namespace object made (Pod Security `restricted`); and the surge placeholder the engine builds is
// admitted there, while a Pod that breaks `restricted` is not. Needs the install tools
// (test/install/tools.sh build) besides the cluster.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { readClusterEnv, repoRoot } from './helpers/cluster.js';
import { uniqueName, waitFor } from './helpers/k8s.js';
import { enginePlaceholder } from './helpers/noderotation-api.js';
import { CHART, ALL_ON, docsReplacements, manifests, ok, toolPath, type Manifest } from '../install/tools.js';
import { kubectlResult as kubectl } from './helpers/kubectl.js';

const env = readClusterEnv();
const ns = uniqueName('nr-install');
/** A PriorityClass of this test's own, like the placeholder's (admission checks the name exists). */
const priorityClass = uniqueName('nr-install-placeholder');
const work = mkdtempSync(path.join(tmpdir(), 'nr-install-e2e-'));

/** The CRDs a dry-run of the optional parts needs: prometheus-operator's (from the schemas build) and Crossplane's. */
const EXTRA_CRDS = [
  ...['monitoring.coreos.com_servicemonitors.yaml', 'monitoring.coreos.com_prometheusrules.yaml'].map((f) =>
    path.join(toolPath('schemas'), 'crds', f),
  ),
  ...['pkg.crossplane.io_functions.yaml', 'pkg.crossplane.io_deploymentruntimeconfigs.yaml'].map((f) =>
    path.join(env.crossplaneCrds, f),
  ),
];
const EXTRA_CRD_NAMES = [
  'servicemonitors.monitoring.coreos.com',
  'prometheusrules.monitoring.coreos.com',
  'functions.pkg.crossplane.io',
  'deploymentruntimeconfigs.pkg.crossplane.io',
];

function dryRun(objects: Manifest[]): { code: number; text: string } {
  const file = path.join(work, `${uniqueName('objects')}.yaml`);
  writeFileSync(file, objects.map((o) => `---\n${stringify(o)}`).join(''));
  return kubectl([
    'apply',
    '--server-side',
    '--dry-run=server',
    '--validate=strict',
    '--field-manager=noderotation-install-test',
    // Other e2e files install our CRDs and the placeholder PriorityClass client-side first; the dry-run is
    // about the manifests being accepted, not about who owns a field already set to the same value.
    '--force-conflicts',
    '-f',
    file,
  ]);
}

/** The base and its parts, through an overlay that moves them into this test's namespace (as a user's would). */
function kustomizeRender(): Manifest[] {
  const overlay = path.join(work, 'overlay');
  const k = toolPath('kustomize');
  return ['deploy', 'deploy/prometheus', 'deploy/crossplane'].flatMap((part) => {
    rmSync(overlay, { recursive: true, force: true });
    ok('mkdir', ['-p', overlay]);
    writeFileSync(
      path.join(overlay, 'kustomization.yaml'),
      `namespace: ${ns}\nresources:\n  - ${path.relative(overlay, path.join(repoRoot, part))}\n` +
        // The user name the admission policies match moves with the namespace (docs/operations.md's overlay).
        (part === 'deploy' ? docsReplacements() : ''),
    );
    return manifests(ok(k, ['build', overlay]));
  });
}

const isNamespace = (m: Manifest) => m.kind === 'Namespace';
/** The user name each admission policy matches: the controller's ServiceAccount in this test's namespace. */
const user = `request.userInfo.username == 'system:serviceaccount:${ns}:noderotation-controller'`;
const admissionUsers = (ms: Manifest[]) =>
  ms
    .filter((m) => m.kind === 'ValidatingAdmissionPolicy')
    .map((m) => (m.spec as { matchConditions: { expression: string }[] }).matchConditions[0]!.expression);
const isCrd = (m: Manifest) => m.kind === 'CustomResourceDefinition';

beforeAll(async () => {
  const r = kubectl(['apply', '--server-side', ...EXTRA_CRDS.flatMap((f) => ['-f', f])]);
  expect(r.code, r.text).toBe(0);
  for (const crd of EXTRA_CRD_NAMES) {
    await waitFor(
      `CRD ${crd} Established`,
      () => kubectl(['wait', '--for=condition=Established', '--timeout=5s', `crd/${crd}`]).code === 0,
      { timeoutMs: 60_000 },
    );
  }
  // The base's own Namespace object, for real: the dry-runs need the namespace to exist, and it carries the
  // Pod Security labels the placeholder test relies on.
  const namespace = kustomizeRender().filter(isNamespace);
  expect(namespace.map((m) => m.metadata.name)).toEqual([ns]);
  const created = kubectl(['create', '-f', '-'], JSON.stringify(namespace[0]));
  expect(created.code, created.text).toBe(0);
  const pc = kubectl(
    ['create', '-f', '-'],
    JSON.stringify({
      apiVersion: 'scheduling.k8s.io/v1',
      kind: 'PriorityClass',
      metadata: { name: priorityClass },
      value: -10,
      preemptionPolicy: 'Never',
    }),
  );
  expect(pc.code, pc.text).toBe(0);
});

afterAll(() => {
  kubectl(['delete', 'namespace', ns, '--ignore-not-found', '--wait=false']);
  kubectl(['delete', 'priorityclass', priorityClass, '--ignore-not-found']);
  // Nothing else in the suite uses these CRDs.
  kubectl(['delete', 'crd', '--ignore-not-found', ...EXTRA_CRD_NAMES]);
  rmSync(work, { recursive: true, force: true });
});

describe('the installation on a real apiserver (server-side dry-run, strict field validation)', () => {
  it('accepts the kustomize base with its prometheus and crossplane parts', () => {
    const objects = kustomizeRender().filter((m) => !isNamespace(m));
    expect(objects.filter(isCrd)).toHaveLength(2);
    const r = dryRun(objects);
    expect(r.code, r.text).toBe(0);
    expect(r.text).toContain(`deployment.apps/noderotation-controller serverside-applied (server dry run)`);
    expect(admissionUsers(objects)).toEqual(Array(4).fill(user));
    for (const p of ['nodes', 'nodeclaims', 'nodepools', 'pods'])
      for (const kind of ['validatingadmissionpolicy', 'validatingadmissionpolicybinding'])
        expect(r.text).toContain(
          `${kind}.admissionregistration.k8s.io/noderotation-controller-${p} serverside-applied (server dry run)`,
        );
  });

  it('accepts the Helm chart with every option on', () => {
    const args = ['template', 'noderotation', CHART, '--namespace', ns];
    for (const s of ALL_ON.filter((s) => !s.startsWith('namespace.'))) args.push('--set', s);
    const objects = manifests(ok(toolPath('helm'), args));
    const r = dryRun(objects);
    expect(r.code, r.text).toBe(0);
    expect(r.text).toContain(`prometheusrule.monitoring.coreos.com/noderotation-controller serverside-applied`);
    expect(admissionUsers(objects)).toEqual(Array(4).fill(user));
    expect(r.text).toContain(
      'validatingadmissionpolicybinding.admissionregistration.k8s.io/noderotation-controller-pods serverside-applied',
    );
  });

  it('rejects a misspelt field (the dry-run validates)', () => {
    const [deployment] = kustomizeRender().filter((m) => m.kind === 'Deployment');
    const r = dryRun([{ ...deployment!, spec: { ...(deployment!.spec as object), replica: 2 } }]);
    expect(r.code).not.toBe(0);
    expect(r.text).toContain('.spec.replica: field not declared in schema');
  });
});

describe('Pod Security restricted in the controller namespace', () => {
  const placeholder = () => enginePlaceholder(ns, priorityClass);

  it('admits the surge placeholder the engine builds', () => {
    const r = kubectl(['create', '--dry-run=server', '-f', '-'], JSON.stringify(placeholder()));
    expect(r.code, r.text).toBe(0);
    expect(r.text).not.toContain('violate');
  });

  it('refuses a Pod that may escalate privileges (the namespace enforces restricted)', () => {
    const pod = placeholder();
    const [container] = pod.spec.containers;
    pod.spec.containers = [{ ...container!, securityContext: { allowPrivilegeEscalation: true } }];
    const r = kubectl(['create', '--dry-run=server', '-f', '-'], JSON.stringify(pod));
    expect(r.code).not.toBe(0);
    expect(r.text).toContain('violates PodSecurity "restricted:latest"');
  });
});
