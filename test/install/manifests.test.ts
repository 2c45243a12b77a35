// The kustomize base and the Helm chart against the real tools: helm lint, helm template, kustomize build, both
// renders through kubeconform -strict (our schemas, Kubernetes' own, prometheus-operator's and Crossplane's), the
// controller's RBAC exactly controller/rbac.ts in both, its admission policies exactly controller/admission.ts, the
// Deployment's hardening, and the values schema.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { admissionPolicy, NODE_SPEC_FIELDS } from '../../controller/admission.js';
import { CLUSTER_RULES, NAMESPACE_RULES, type Rule } from '../../controller/rbac.js';
import {
  ALL_ON,
  CHART,
  docsOverlay,
  docsReplacements,
  helmTemplate,
  kustomizeAll,
  manifests,
  NAMESPACE,
  ok,
  repoRoot,
  run,
  toolPath,
  type Manifest,
} from './tools.js';

const helmAll = manifests(helmTemplate(ALL_ON));
const helmDefault = manifests(helmTemplate());
const kustomize = manifests(kustomizeAll());

function kubeconform(text: string): string {
  const location = (dir: string): string => path.join(dir, '{{.Group}}/{{.ResourceKind}}_{{.ResourceAPIVersion}}.json');
  const args = ['-strict', '-summary', '-output', 'text'];
  for (const dir of [toolPath('schemas'), path.join(repoRoot, 'deploy/schemas')]) {
    args.push('-schema-location', location(dir));
  }
  const r = run(toolPath('kubeconform'), [...args, '-'], text);
  return `exit ${r.code}\n${r.stdout}${r.stderr}`;
}

const find = (ms: Manifest[], kind: string, name?: string): Manifest => {
  const m = ms.find((x) => x.kind === kind && (name === undefined || x.metadata.name === name));
  if (!m) throw new Error(`no ${kind}${name ? ` ${name}` : ''} in ${ms.map((x) => x.kind).join(', ')}`);
  return m;
};
const rules = (rs: Rule[]) => rs.map((r) => ({ apiGroups: r.apiGroups, resources: r.resources, verbs: r.verbs }));

type Container = {
  args: string[];
  resources: { requests: Record<string, string>; limits: Record<string, string> };
  securityContext: Record<string, unknown>;
  livenessProbe: { httpGet: { path: string } };
  readinessProbe: { httpGet: { path: string } };
};
type PodSpec = {
  securityContext: Record<string, unknown>;
  containers: Container[];
  topologySpreadConstraints: { topologyKey: string }[];
  serviceAccountName: string;
};
const deployment = (ms: Manifest[]) => {
  const d = find(ms, 'Deployment') as Manifest & { spec: { replicas: number; template: { spec: PodSpec } } };
  return { replicas: d.spec.replicas, pod: d.spec.template.spec, container: d.spec.template.spec.containers[0]! };
};

describe.each([
  ['helm template (every option on)', helmAll],
  ['helm template (defaults)', helmDefault],
  ['kustomize build (base, prometheus, crossplane)', kustomize],
])('%s', (_name, ms) => {
  it('passes kubeconform -strict', () => {
    const text = ms.map((m) => JSON.stringify(m)).join('\n---\n');
    const out = kubeconform(text);
    expect(out).toContain(`Valid: ${ms.length}, Invalid: 0, Errors: 0, Skipped: 0`);
    expect(out).toMatch(/^exit 0/);
  });

  it('grants the controller exactly the rules of controller/rbac.ts', () => {
    const cr = find(ms, 'ClusterRole', 'noderotation-controller') as Manifest & { rules: unknown };
    const role = find(ms, 'Role', 'noderotation-controller') as Manifest & { rules: unknown };
    expect(cr.rules).toEqual(rules(CLUSTER_RULES));
    expect(role.rules).toEqual(rules(NAMESPACE_RULES));
    expect(role.metadata.namespace).toBe(NAMESPACE);
    const binding = find(ms, 'ClusterRoleBinding') as Manifest & { subjects: { namespace: string; name: string }[] };
    expect(binding.subjects).toEqual([
      { kind: 'ServiceAccount', name: 'noderotation-controller', namespace: NAMESPACE },
    ]);
  });

  it('holds the controller to exactly the admission policies of controller/admission.ts', () => {
    const isAdmission = (m: Manifest) => m.kind.startsWith('ValidatingAdmissionPolicy');
    // Kind, name and spec (the labels differ), in one order (kustomize and Helm sort by kind).
    const strip = (docs: (Manifest | Record<string, unknown>)[]) =>
      docs
        .map((m) => ({ kind: m.kind as string, name: (m.metadata as { name: string }).name, spec: m.spec }))
        .sort((a, b) => `${a.kind}/${a.name}`.localeCompare(`${b.kind}/${b.name}`));
    const expected = admissionPolicy({ namespace: NAMESPACE, serviceAccount: 'noderotation-controller' });
    expect(strip(ms.filter(isAdmission))).toEqual(strip(expected));
  });

  it('runs two leader-elected, locked-down replicas with probes, resources and a PDB', () => {
    const { replicas, pod, container } = deployment(ms);
    expect(replicas).toBe(2);
    expect(container.args.slice(0, 2)).toEqual(['bin/noderotation.js', 'controller']);
    expect(container.args).toContain('--leader-elect');
    expect(pod.serviceAccountName).toBe('noderotation-controller');
    expect(pod.securityContext).toMatchObject({ runAsNonRoot: true, seccompProfile: { type: 'RuntimeDefault' } });
    expect(container.securityContext).toEqual({
      allowPrivilegeEscalation: false,
      readOnlyRootFilesystem: true,
      capabilities: { drop: ['ALL'] },
    });
    expect(container.livenessProbe.httpGet.path).toBe('/healthz');
    expect(container.readinessProbe.httpGet.path).toBe('/readyz');
    expect(container.resources.requests.memory).toMatch(/Mi$/);
    expect(container.resources.limits.memory).toMatch(/Mi$/);
    expect(pod.topologySpreadConstraints.map((t) => t.topologyKey)).toEqual([
      'kubernetes.io/hostname',
      'topology.kubernetes.io/zone',
    ]);
    expect(find(ms, 'PodDisruptionBudget').spec).toMatchObject({ minAvailable: 1 });
  });

  it('installs the placeholder PriorityClass as deploy/placeholder-priorityclass.yaml defines it', () => {
    const pc = find(ms, 'PriorityClass');
    const source = manifests(readFileSync(path.join(repoRoot, 'deploy/placeholder-priorityclass.yaml'), 'utf8'))[0]!;
    for (const key of ['value', 'preemptionPolicy', 'globalDefault', 'description'])
      expect(pc[key]).toEqual(source[key]);
    expect(pc.metadata.name).toBe(source.metadata.name);
  });
});

describe('the kustomize base and the chart', () => {
  it('label the namespace Pod Security restricted (the chart when it creates the namespace)', () => {
    for (const ms of [kustomize, helmAll]) {
      expect(find(ms, 'Namespace').metadata.labels).toMatchObject({
        'pod-security.kubernetes.io/enforce': 'restricted',
      });
    }
    expect(helmDefault.some((m) => m.kind === 'Namespace')).toBe(false);
  });

  it('create the same objects (the chart adds only the dashboard ConfigMap)', () => {
    const ids = (ms: Manifest[]) =>
      ms
        .filter((m) => m.kind !== 'ConfigMap')
        .map((m) => `${m.kind}/${m.metadata.namespace ?? ''}/${m.metadata.name}`)
        .sort();
    // The PrometheusRule and ServiceMonitor names differ by design (the chart names them after the release).
    const normal = (s: string) => s.replace(/^(PrometheusRule|ServiceMonitor)\/.*$/, '$1');
    expect(ids(helmAll).map(normal)).toEqual(ids(kustomize).map(normal));
  });

  it("scrape with the job label every alert and the dashboard select (the ServiceMonitor's relabeling)", () => {
    for (const ms of [kustomize, helmAll]) {
      const sm = find(ms, 'ServiceMonitor') as Manifest & {
        spec: { endpoints: { port: string; relabelings: { targetLabel: string; replacement: string }[] }[] };
      };
      expect(sm.spec.endpoints[0]!.port).toBe('metrics');
      expect(sm.spec.endpoints[0]!.relabelings).toEqual([
        { targetLabel: 'job', replacement: 'noderotation-controller' },
      ]);
      const exprs = JSON.stringify(find(ms, 'PrometheusRule').spec);
      expect(exprs.match(/job=\\"([^"\\]+)\\"/g)?.every((m) => m.includes('noderotation-controller'))).toBe(true);
    }
  });

  it('size the controller the same (CONTROLLER_RESOURCES in both)', () => {
    expect(deployment(helmDefault).container.resources).toEqual(deployment(kustomize).container.resources);
  });

  it('ship the same alerts, with the runbook base the chart is given', () => {
    const spec = (ms: Manifest[]) => find(ms, 'PrometheusRule').spec;
    expect(spec(helmAll)).toEqual(spec(kustomize));
    const moved = manifests(helmTemplate([...ALL_ON, 'prometheusRule.runbookBaseURL=https://wiki.example.com/nr']));
    const urls = JSON.stringify(spec(moved)).match(/"runbook_url":"[^"]*"/g) ?? [];
    expect(urls.length).toBeGreaterThan(5);
    for (const u of urls) expect(u).toMatch(/^"runbook_url":"https:\/\/wiki\.example\.com\/nr#noderotation[a-z]+"$/);
  });
});

describe('the admission policies', () => {
  it('are left out of the chart with admissionPolicy.enabled=false', () => {
    const kinds = (set: string[]) => manifests(helmTemplate(set)).map((m) => m.kind);
    expect(kinds([])).toContain('ValidatingAdmissionPolicyBinding');
    const off = kinds(['admissionPolicy.enabled=false']);
    expect(off.filter((k) => k.startsWith('ValidatingAdmissionPolicy'))).toEqual([]);
    expect(off).toContain('Deployment');
  });

  it("name every field of the Kubernetes NodeSpec but unschedulable (the Node rule's list is complete)", () => {
    const node = JSON.parse(readFileSync(path.join(toolPath('schemas'), 'v1/node_v1.json'), 'utf8')) as {
      properties: { spec: { properties: Record<string, unknown> } };
    };
    expect(Object.keys(node.properties.spec.properties).sort()).toEqual([...NODE_SPEC_FIELDS, 'unschedulable'].sort());
  });

  it("follow the namespace of an overlay with the replacement docs/operations.md shows (the user name's)", () => {
    const overlay = docsOverlay();
    expect(overlay).toContain(docsReplacements());
    const dir = mkdtempSync(path.join(tmpdir(), 'nr-overlay-'));
    try {
      const text = overlay
        .replace(/^namespace: .*$/m, 'namespace: elsewhere')
        .replace(/^ {2}- https:\/\/github\.com\/.*$/m, `  - ${path.relative(dir, path.join(repoRoot, 'deploy'))}`);
      writeFileSync(path.join(dir, 'kustomization.yaml'), text);
      const built = manifests(ok(toolPath('kustomize'), ['build', dir]));
      const users = built
        .filter((m) => m.kind === 'ValidatingAdmissionPolicy')
        .map((m) => (m.spec as { matchConditions: { expression: string }[] }).matchConditions[0]!.expression);
      expect(users).toHaveLength(4);
      for (const u of users)
        expect(u).toBe("request.userInfo.username == 'system:serviceaccount:elsewhere:noderotation-controller'");
      expect(find(built, 'ServiceAccount').metadata.namespace).toBe('elsewhere');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('helm lint', () => {
  it.each([[[] as string[]], [ALL_ON]])('passes --strict with %j', (set) => {
    const args = ['lint', CHART, '--strict', '--namespace', NAMESPACE];
    for (const s of set) args.push('--set', s);
    expect(ok(toolPath('helm'), args)).toContain('1 chart(s) linted, 0 chart(s) failed');
  });
});

describe('the values schema rejects a bad value with a message naming it', () => {
  it.each([
    ['replicas=two', "at '/replicas': got string, want integer"],
    ['replicas=0', "at '/replicas': minimum: got 0, want 1"],
    ['controller.logLevel=loud', "at '/controller/logLevel'"],
    ['resources.limits.memory=lots', "at '/resources/limits/memory'"],
    ['placeholder.priorityClass.value=10', "at '/placeholder/priorityClass/value'"],
    ['image.digest=latest', "at '/image/digest'"],
    ['controler.logLevel=debug', "additional properties 'controler' not allowed"],
    ['controller.leaderElect=false', 'more than one replica needs controller.leaderElect: true'],
  ])('%s', (set, message) => {
    const r = run(toolPath('helm'), ['template', 'noderotation', CHART, '--set', set]);
    expect(r.code).not.toBe(0);
    expect(r.stderr).toContain(message);
  });

  it('accepts one replica without leader election, and then renders no PodDisruptionBudget', () => {
    const ms = manifests(helmTemplate(['replicas=1', 'controller.leaderElect=false']));
    expect(deployment(ms).container.args).not.toContain('--leader-elect');
    expect(ms.filter((m) => m.kind === 'PodDisruptionBudget')).toEqual([]);
  });
});

describe("the chart's conventions (Karpenter's and cert-manager's charts)", () => {
  it('accepts global values from an umbrella chart', () => {
    expect(deployment(manifests(helmTemplate(['global.imageRegistry=example.com']))).replicas).toBe(2);
  });

  it('runs the controller at system-cluster-critical by default, as the kustomize base does; empty: none', () => {
    for (const ms of [helmDefault, kustomize])
      expect((deployment(ms).pod as { priorityClassName?: string }).priorityClassName).toBe('system-cluster-critical');
    const none = deployment(manifests(helmTemplate(['priorityClassName=']))).pod as { priorityClassName?: string };
    expect(none.priorityClassName).toBeUndefined();
  });

  it('takes security contexts, extra env, volumes and mounts from values (OpenShift: contexts left to the SCC)', () => {
    const ms = manifests(
      helmTemplate([
        'podSecurityContext=null',
        'securityContext.readOnlyRootFilesystem=false',
        'extraEnv[0].name=HTTPS_PROXY',
        'extraEnv[0].value=http://proxy:3128',
        'extraVolumes[0].name=ca',
        'extraVolumes[0].configMap.name=corp-ca',
        'extraVolumeMounts[0].name=ca',
        'extraVolumeMounts[0].mountPath=/etc/ssl/corp',
      ]),
    );
    const { pod, container } = deployment(ms);
    const c = container as Container & { env: { name: string; value?: string }[]; volumeMounts: unknown[] };
    expect(pod.securityContext).toBeUndefined();
    expect(c.securityContext).toMatchObject({ readOnlyRootFilesystem: false, allowPrivilegeEscalation: false });
    expect(c.env.at(-1)).toEqual({ name: 'HTTPS_PROXY', value: 'http://proxy:3128' });
    expect(c.volumeMounts).toEqual([{ name: 'ca', mountPath: '/etc/ssl/corp' }]);
    expect((pod as { volumes?: unknown[] }).volumes).toEqual([{ name: 'ca', configMap: { name: 'corp-ca' } }]);
    expect(kubeconform(ms.map((m) => JSON.stringify(m)).join('\n---\n'))).toMatch(/^exit 0/);
  });
});
