// The kustomize base and the Helm chart against the real tools: helm lint, helm template, kustomize build, both
// renders through kubeconform -strict (our schemas, Kubernetes' own, prometheus-operator's and Crossplane's), the
// controller's RBAC exactly controller/rbac.ts in both, its admission policies exactly controller/admission.ts, the
// Deployment's hardening, and the values schema.
import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { admissionPolicy, NODE_SPEC_FIELDS } from '../../controller/admission.js';
import { ControllerMetrics } from '../../controller/metrics.js';
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
  image: string;
  args: string[];
  env: { name: string; value?: string }[];
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
    const script = container.args.indexOf('bin/noderotation.js');
    expect(container.args.slice(script, script + 2)).toEqual(['bin/noderotation.js', 'controller']);
    expect(container.args.slice(0, script)).toEqual(['--single-threaded']); // node's own flags come first
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

  it('run the same images: the controller tagged <appVersion>, the Crossplane package v<appVersion>', () => {
    const chart = parse(readFileSync(path.join(CHART, 'Chart.yaml'), 'utf8')) as { appVersion: string };
    const pkg = (ms: Manifest[]) => (find(ms, 'Function') as unknown as { spec: { package: string } }).spec.package;
    expect(pkg(helmAll)).toBe(pkg(kustomize));
    expect(pkg(helmAll)).toMatch(new RegExp(`/function-noderotation:v${chart.appVersion.replace(/\./g, '\\.')}$`));
    expect(deployment(helmDefault).container.image).toBe(deployment(kustomize).container.image);
    expect(deployment(helmDefault).container.image).toMatch(new RegExp(`:${chart.appVersion.replace(/\./g, '\\.')}$`));
  });

  it("give node the same flags and NODE_OPTIONS (the benchmark runs the kustomize base's); empty: none", () => {
    const node = (ms: Manifest[]) => {
      const { args, env } = deployment(ms).container;
      return {
        flags: args.slice(0, args.indexOf('bin/noderotation.js')),
        env: env.find((e) => e.name === 'NODE_OPTIONS'),
      };
    };
    expect(node(helmDefault)).toEqual(node(kustomize));
    const none = node(manifests(helmTemplate(['controller.nodeFlags=null', 'controller.nodeOptions='])));
    expect(none).toEqual({ flags: [], env: undefined });
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

  it('takes security contexts, extra env, volumes and mounts from values (null drops a whole context)', () => {
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

describe('security contexts on OpenShift (restricted-v2 assigns the user and group)', () => {
  // The controller's Deployment and the `helm test` Job, rendered together.
  const pods = (set: string[], extra: string[] = []) => {
    const args = ['template', 'noderotation', CHART, '--namespace', NAMESPACE, ...extra];
    for (const s of set) args.push('--set', s);
    const ms = manifests(ok(toolPath('helm'), args));
    const job = find(ms, 'Job') as Manifest & { spec: { template: { spec: PodSpec } } };
    return { ms, specs: [deployment(ms).pod, job.spec.template.spec] };
  };
  const ids = ['runAsUser', 'runAsGroup', 'fsGroup'];
  const idsIn = (ctx: Record<string, unknown> | undefined) => ids.filter((k) => ctx !== undefined && k in ctx);

  it('sets the image user and group by default, in the Deployment and the helm test Job', () => {
    for (const pod of pods([]).specs) {
      expect(pod.securityContext).toEqual({
        runAsNonRoot: true,
        runAsUser: 65532,
        runAsGroup: 65532,
        seccompProfile: { type: 'RuntimeDefault' },
      });
    }
  });

  it('keeps them with podSecurityContext={} (Helm merges maps: an empty one removes nothing)', () => {
    for (const pod of pods([], ['--set-json', 'podSecurityContext={}', '--set-json', 'securityContext={}']).specs)
      expect(idsIn(pod.securityContext)).toEqual(ids.slice(0, 2));
  });

  it('drops every user and group ID, and nothing else, with openshift.adaptSecurityContext=true', () => {
    const { ms, specs } = pods([
      'openshift.adaptSecurityContext=true',
      'podSecurityContext.fsGroup=65532',
      'securityContext.runAsUser=65532',
      'securityContext.runAsGroup=65532',
    ]);
    for (const pod of specs) {
      expect(pod.securityContext).toEqual({ runAsNonRoot: true, seccompProfile: { type: 'RuntimeDefault' } });
      expect(pod.containers[0]!.securityContext).toEqual({
        allowPrivilegeEscalation: false,
        readOnlyRootFilesystem: true,
        capabilities: { drop: ['ALL'] },
      });
    }
    expect(kubeconform(ms.map((m) => JSON.stringify(m)).join('\n---\n'))).toMatch(/^exit 0/);
  });

  it('drops one key set to null, as values.yaml says', () => {
    for (const pod of pods(['podSecurityContext.runAsUser=null', 'podSecurityContext.runAsGroup=null']).specs)
      expect(pod.securityContext).toEqual({ runAsNonRoot: true, seccompProfile: { type: 'RuntimeDefault' } });
  });

  it('passes helm lint --strict', () => {
    const args = ['lint', CHART, '--strict', '--namespace', NAMESPACE, '--set', 'openshift.adaptSecurityContext=true'];
    expect(ok(toolPath('helm'), args)).toContain('1 chart(s) linted, 0 chart(s) failed');
  });
});

describe("the chart's ServiceAccount, names and CRDs", () => {
  const users = (ms: Manifest[]) =>
    ms
      .filter((m) => m.kind === 'ValidatingAdmissionPolicy')
      .map((m) => (m.spec as { matchConditions: { expression: string }[] }).matchConditions[0]!.expression);
  const subjects = (ms: Manifest[]) =>
    ms
      .filter((m) => m.kind === 'ClusterRoleBinding' || m.kind === 'RoleBinding')
      .flatMap((m) => (m as unknown as { subjects: { name: string }[] }).subjects.map((s) => s.name));

  it('creates its ServiceAccount with annotations, or runs as an existing one: bindings and admission follow', () => {
    const made = manifests(
      helmTemplate(['serviceAccount.name=rotator', 'serviceAccount.annotations.example\\.com/role=nr']),
    );
    expect(find(made, 'ServiceAccount').metadata).toMatchObject({
      name: 'rotator',
      annotations: { 'example.com/role': 'nr' },
    });
    const existing = manifests(helmTemplate(['serviceAccount.create=false', 'serviceAccount.name=platform-sa']));
    expect(existing.filter((m) => m.kind === 'ServiceAccount')).toEqual([]);
    for (const [ms, sa] of [
      [made, 'rotator'],
      [existing, 'platform-sa'],
      [helmDefault, 'noderotation-controller'],
    ] as const) {
      expect((deployment(ms).pod as { serviceAccountName?: string }).serviceAccountName).toBe(sa);
      expect(new Set(subjects(ms))).toEqual(new Set([sa]));
      expect(new Set(users(ms))).toEqual(
        new Set([`request.userInfo.username == 'system:serviceaccount:${NAMESPACE}:${sa}'`]),
      );
      // The objects keep the chart's name whatever the ServiceAccount is called.
      expect(find(ms, 'ClusterRole').metadata.name).toBe('noderotation-controller');
    }
    const r = run(toolPath('helm'), ['template', 'noderotation', CHART, '--set', 'serviceAccount.create=false']);
    expect(r.code).not.toBe(0);
    expect(r.stderr).toContain('serviceAccount.name: name the ServiceAccount to run as');
  });

  it('names objects <release>-<name> with fullnameOverride "", and nameOverride moves the name label', () => {
    const ms = manifests(helmTemplate(['fullnameOverride=', 'nameOverride=rotator']));
    expect(find(ms, 'Deployment').metadata.name).toBe('noderotation-rotator');
    expect(find(ms, 'Service').metadata.name).toBe('noderotation-rotator-metrics');
    const d = find(ms, 'Deployment') as unknown as {
      spec: { selector: { matchLabels: Record<string, string> }; template: { metadata: { labels: object } } };
    };
    expect(d.spec.selector.matchLabels['app.kubernetes.io/name']).toBe('rotator');
    expect(d.spec.template.metadata.labels).toMatchObject(d.spec.selector.matchLabels);
    // A release whose name already holds the chart's is not repeated.
    const own = manifests(
      ok(toolPath('helm'), ['template', 'noderotation-prod', CHART, '--skip-tests', '--set', 'fullnameOverride=']),
    );
    expect(find(own, 'Deployment').metadata.name).toBe('noderotation-prod');
  });

  it('installs the CRDs as templates, kept on uninstall by default; crds.install=false leaves them out', () => {
    const crds = (ms: Manifest[]) => ms.filter((m) => m.kind === 'CustomResourceDefinition');
    expect(crds(helmDefault).map((m) => m.metadata.name)).toEqual([
      'maintenanceplans.noderotation.io',
      'rotationpolicies.noderotation.io',
    ]);
    for (const c of crds(helmDefault)) {
      expect(c.metadata.annotations).toEqual({ 'helm.sh/resource-policy': 'keep' });
      expect(c.metadata.labels).toMatchObject({ 'app.kubernetes.io/managed-by': 'Helm' });
      // Exactly the kustomize base's CRD, but for Helm's metadata.
      const base = find(kustomize, 'CustomResourceDefinition', c.metadata.name);
      expect(c.spec).toEqual(base.spec);
    }
    expect(crds(manifests(helmTemplate(['crds.install=false'])))).toEqual([]);
    // No crds/ directory (Helm installs that once, never upgrades it): nothing for Flux's install.crds/upgrade.crds
    // to act on, and docs/operations.md does not send Flux users to them.
    expect(existsSync(path.join(CHART, 'crds'))).toBe(false);
    expect(readFileSync(path.join(repoRoot, 'docs/operations.md'), 'utf8')).not.toMatch(/crds: Create/);
    for (const c of crds(manifests(helmTemplate(['crds.keep=false'])))) expect(c.metadata.annotations).toBeUndefined();
  });
});

describe('helm test', () => {
  const job = () =>
    manifests(
      ok(toolPath('helm'), [
        'template',
        'noderotation',
        CHART,
        '-n',
        NAMESPACE,
        '--show-only',
        'templates/tests/metrics.yaml',
      ]),
    )[0] as unknown as {
      metadata: { annotations: Record<string, string> };
      spec: { template: { spec: { containers: { image: string; args: string[] }[] } } };
    };

  it('is a Job hook in the controller image that asks the metrics Service', () => {
    const j = job();
    expect(j.metadata.annotations['helm.sh/hook']).toBe('test');
    const c = j.spec.template.spec.containers[0]!;
    expect(c.image).toBe(deployment(helmDefault).container.image);
    expect(c.args[0]).toBe('-e');
    expect(c.args[2]).toBe(`http://noderotation-controller-metrics.${NAMESPACE}.svc:8080/metrics`);
  });

  // The script as rendered, run by node as the image runs it, against the controller's own metrics.
  async function check(body: (m: ControllerMetrics) => Promise<string> | string, status = 200) {
    const metrics = new ControllerMetrics();
    const server = createServer((_req, res) => {
      void Promise.resolve(body(metrics)).then((text) => {
        res.writeHead(status, { 'content-type': 'text/plain' });
        res.end(text);
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    const script = job().spec.template.spec.containers[0]!.args[1]!;
    try {
      return await new Promise<{ code: number | null; out: string }>((resolve) => {
        execFile(process.execPath, ['-e', script, `http://127.0.0.1:${port}/metrics`], (err, stdout, stderr) =>
          resolve({ code: err ? ((err as { code?: number }).code ?? 1) : 0, out: stdout + stderr }),
        );
      });
    } finally {
      server.close();
    }
  }

  it('passes when the controller answers with every watch synced, and says why it fails otherwise', async () => {
    const synced = await check((m) => {
      m.leader.set(1);
      m.watchHealthy.set({ resource: 'nodes' }, 1);
      m.watchHealthy.set({ resource: 'nodeclaims' }, 1);
      return m.text();
    });
    expect(synced).toEqual({ code: 0, out: 'ok: 2 watches synced, leader=1\n' });
    const behind = await check((m) => {
      m.watchHealthy.set({ resource: 'nodes' }, 1);
      m.watchHealthy.set({ resource: 'pods' }, 0);
      return m.text();
    });
    expect(behind.code).toBe(1);
    expect(behind.out).toContain('watches not synced: {resource="pods"}');
    const other = await check(() => 'up 1\n');
    expect(other.code).toBe(1);
    expect(other.out).toContain('no noderotation_controller_leader series');
    const down = await check(() => 'unavailable', 503);
    expect(down.out).toContain('HTTP 503');
  });
});
