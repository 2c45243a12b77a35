// Every example as a user's editor and CI see it (issue 11, item 4): each file names its JSON Schema in a
// yaml-language-server modeline, and that schema is the one for the file's kind and version; every file passes
// kubeconform -strict against our published schemas and schemas made from the CRDs the cluster really serves
// (Karpenter's, Crossplane's, Argo CD's, Flux's, in the CRDs-catalog layout the modelines point at); and a broken
// example is rejected, by kubeconform and by the apiserver, with a message that names the field. The Argo CD
// Config Management Plugin's command is run as the repo server would run it. (examples.test.ts dry-runs every
// example against the apiserver.)
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, relative } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse, parseAllDocuments } from 'yaml';
import { cachedTool, readClusterEnv, repoRoot } from './helpers/cluster.js';
import { argocdCrdsDir, fluxCrdsDirs, karpenterCrdsDir } from './helpers/crds.js';
import { crdSchemas } from '../install/kube-schemas.js';
import { kubectlResult as kubectl } from './helpers/kubectl.js';

const env = readClusterEnv();
const EXAMPLES = join(repoRoot, 'examples');
const kubeconform = cachedTool('kubeconform');
const OURS = join(repoRoot, 'deploy/schemas/{{.Group}}/{{.ResourceKind}}_{{.ResourceAPIVersion}}.json');
/** Core kinds: kubeconform has no offline schema for them; the apiserver's dry-run checks them. */
const CORE_KINDS = ['ConfigMap', 'ClusterRole'];
const CATALOG = 'https://raw.githubusercontent.com/datreeio/CRDs-catalog/main/';
const K8S_SCHEMAS = `https://raw.githubusercontent.com/yannh/kubernetes-json-schema/master/${env.versions.k8s}-standalone-strict/`;

const CRD_DIRS = [karpenterCrdsDir(env), env.crossplaneCrds, argocdCrdsDir(), ...Object.values(fluxCrdsDirs())];

function exampleFiles(dir = EXAMPLES): string[] {
  return readdirSync(dir, { withFileTypes: true })
    .sort((a, b) => a.name.localeCompare(b.name))
    .flatMap((e) =>
      e.isDirectory() ? exampleFiles(join(dir, e.name)) : /\.ya?ml$/.test(e.name) ? [join(dir, e.name)] : [],
    );
}
const files = exampleFiles();
const kubeFiles = files.filter((f) => !f.includes('/scenarios/'));

/** The YAML files of the CRD directories the cluster serves; a missing one is named with how to make it. */
function crdFiles(dirs: string[]): string[] {
  return dirs.flatMap((dir) => {
    if (!existsSync(dir)) throw new Error(`${dir} is missing: \`npm run cluster -- build\` makes it`);
    return readdirSync(dir)
      .filter((n) => n.endsWith('.yaml'))
      .map((n) => join(dir, n));
  });
}

let schemas = '';

function check(paths: string[]): { code: number; out: string } {
  const r = spawnSync(
    kubeconform,
    [
      '-strict',
      '-summary',
      '-output',
      'text',
      '-skip',
      CORE_KINDS.join(','),
      '-schema-location',
      OURS,
      '-schema-location',
      join(schemas, '{{.Group}}/{{.ResourceKind}}_{{.ResourceAPIVersion}}.json'),
      ...paths,
    ],
    { encoding: 'utf8' },
  );
  if (r.error) throw new Error(`${kubeconform}: ${r.error.message} (\`npm run cluster -- build\` builds it)`);
  return { code: r.status ?? -1, out: `${r.stdout}${r.stderr}` };
}

const dryRun = (text: string) =>
  kubectl(['apply', '--server-side', '--dry-run=server', '--validate=strict', '-f', '-'], text);

beforeAll(() => {
  schemas = mkdtempSync(join(tmpdir(), 'crd-schemas-'));
  // The same conversion as the installation checks' (closed objects, as the apiserver's strict validation).
  crdSchemas(schemas, crdFiles(CRD_DIRS));
});

afterAll(() => {
  rmSync(schemas, { recursive: true, force: true });
});

describe('editor modelines', () => {
  it.each(files.map((f) => ({ file: relative(repoRoot, f), path: f })))(
    '$file names the schema of its kind',
    ({ path }) => {
      const text = readFileSync(path, 'utf8');
      const m = /^# yaml-language-server: \$schema=(\S+)\n/.exec(text);
      expect(m, 'the first line must be a yaml-language-server modeline').not.toBeNull();
      const target = m?.[1] ?? '';
      const kinds = new Set(
        parseAllDocuments(text)
          .map((d) => d.toJS() as { apiVersion?: string; kind?: string } | null)
          .filter((d) => d?.kind)
          .map((d) => `${d?.apiVersion ?? ''} ${d?.kind ?? ''}`),
      );
      if (target.startsWith(CATALOG)) {
        // One kind per file, and the catalog's file for exactly that group, kind and version.
        expect(kinds.size).toBe(1);
        const [apiVersion = '', kind = ''] = [...kinds][0]?.split(' ') ?? [];
        const [group, version] = apiVersion.split('/');
        expect(target.slice(CATALOG.length)).toBe(`${group}/${kind.toLowerCase()}_${version}.json`);
        // ... which is what our copy of the CRD the cluster serves gives (so the catalog path is a real one).
        expect(existsSync(join(schemas, target.slice(CATALOG.length)))).toBe(true);
      } else if (target.startsWith(K8S_SCHEMAS)) {
        expect(kinds.size).toBe(1);
        const [apiVersion = '', kind = ''] = [...kinds][0]?.split(' ') ?? [];
        const [group, version] = apiVersion.includes('/') ? apiVersion.split('/') : ['', apiVersion];
        const groupPart = group ? `-${(group ?? '').split('.')[0] ?? ''}` : '';
        expect(target.slice(K8S_SCHEMAS.length)).toBe(`${kind.toLowerCase()}${groupPart}-${version}.json`);
      } else {
        // A schema in this repository, relative to the file.
        expect(target).not.toMatch(/^[a-z]+:/);
        const local = join(dirname(path), target);
        expect(existsSync(local), `${target} does not exist`).toBe(true);
        const schema = JSON.parse(readFileSync(local, 'utf8')) as { properties?: { kind?: unknown } };
        for (const k of kinds) expect(JSON.stringify(schema.properties?.kind)).toContain(`"${k.split(' ')[1] ?? ''}"`);
      }
    },
  );
});

describe('the .vscode/settings.json sample', () => {
  it('maps globs to schemas that exist (local) or to the catalog (NodePools)', () => {
    const settings = JSON.parse(readFileSync(join(repoRoot, '.vscode/settings.json'), 'utf8')) as {
      'yaml.schemas': Record<string, string[]>;
    };
    const targets = Object.keys(settings['yaml.schemas']);
    expect(targets.length).toBeGreaterThan(0);
    for (const t of targets) {
      if (t.startsWith(CATALOG)) expect(existsSync(join(schemas, t.slice(CATALOG.length))), t).toBe(true);
      else expect(existsSync(join(repoRoot, t)), t).toBe(true);
    }
  });
});

describe('kubeconform -strict on every example', () => {
  it('accepts every Kubernetes example (core kinds left to the dry-run)', () => {
    const r = check(kubeFiles);
    expect(r.out).toMatch(/Invalid: 0, Errors: 0/);
    expect(r.code, r.out).toBe(0);
    // Nothing was silently skipped for want of a schema: only the core kinds named above.
    const total = kubeFiles
      .flatMap((f) => parseAllDocuments(readFileSync(f, 'utf8')).map((d) => d.toJS() as { kind?: string } | null))
      .filter((d) => d?.kind && !CORE_KINDS.includes(d.kind)).length;
    expect(r.out).toContain(`Valid: ${total},`);
  });
});

describe('a broken example is rejected with a message that names the field', () => {
  let dir = '';
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'broken-examples-'));
    const crds = kubectl(['apply', '--server-side', '-f', join(repoRoot, 'deploy/crds')]);
    expect(crds.code, crds.err).toBe(0);
    for (const crd of ['maintenanceplans.noderotation.io', 'rotationpolicies.noderotation.io']) {
      const r = kubectl(['wait', '--for=condition=Established', '--timeout=60s', `crd/${crd}`]);
      expect(r.code, r.err).toBe(0);
    }
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  const plan = readFileSync(join(EXAMPLES, 'maintenanceplan.yaml'), 'utf8');
  const pools = readFileSync(join(EXAMPLES, 'nodepools.yaml'), 'utf8');
  const firstPool = pools.split(/^---$/m)[0] ?? '';
  it.each([
    {
      what: 'a NodePool without spec.template.spec.requirements (Karpenter requires it)',
      text: firstPool.replace(/ {6}requirements:\n( {8}.*\n)+/, ''),
      kubeconform: "missing property 'requirements'",
      apiserver: 'spec.template.spec.requirements: Required value',
    },
    {
      what: 'a misspelt plan field',
      text: plan.replace('minRotationChances: 2', 'minRotationChance: 2'),
      kubeconform: "additional properties 'minRotationChance' not allowed",
      apiserver: '.spec.defaults.minRotationChance: field not declared in schema',
    },
    {
      what: 'a time that is not HH:MM',
      text: plan.replace('start: "23:00"', 'start: "24:30"'),
      kubeconform: '/spec/defaults/maintenanceWindows/0/start',
      apiserver: 'spec.defaults.maintenanceWindows[0].start',
    },
    {
      what: 'an unknown day',
      text: plan.replace('days: [Sat, Sun]', 'days: [Sat, Sunday]'),
      kubeconform: '/spec/rules/1/overrides/maintenanceWindows/0/days/1',
      apiserver: 'spec.rules[1].overrides.maintenanceWindows[0].days[1]: Unsupported value: "Sunday"',
    },
  ])('$what', ({ text, kubeconform: byKubeconform, apiserver }) => {
    expect(text).not.toBe(plan);
    const file = join(dir, 'broken.yaml');
    writeFileSync(file, text);
    const k = check([file]);
    expect(k.code).not.toBe(0);
    expect(k.out).toContain(byKubeconform);
    const r = dryRun(text);
    expect(r.code).not.toBe(0);
    expect(r.err).toContain(apiserver);
  });
});

describe('the Argo CD Config Management Plugin (examples/argocd/cmp-plugin.yaml)', () => {
  const cm = parse(readFileSync(join(EXAMPLES, 'argocd/cmp-plugin.yaml'), 'utf8')) as { data: Record<string, string> };
  const plugin = parse(cm.data['plugin.yaml'] ?? '') as { spec: { generate: { command: string[] } } };
  const [program, ...args] = plugin.spec.generate.command;

  /** The generate command in a fleet directory, with `noderotation` run from this checkout's sources. */
  function generate(contents: Record<string, string>): { code: number; out: string; err: string } {
    const dir = mkdtempSync(join(tmpdir(), 'cmp-'));
    try {
      for (const [name, text] of Object.entries(contents)) writeFileSync(join(dir, name), text);
      expect(program).toBe('noderotation');
      const tsx = import.meta.resolve('tsx');
      const r = spawnSync(process.execPath, ['--import', tsx, join(repoRoot, 'cli/from-source.ts'), ...args], {
        cwd: dir,
        encoding: 'utf8',
        env: { ...process.env, NODE_OPTIONS: '' },
      });
      return { code: r.status ?? -1, out: r.stdout, err: r.stderr };
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }

  it('renders the plans into RotationPolicies the apiserver accepts', () => {
    const r = generate({
      'plan.yaml': readFileSync(join(EXAMPLES, 'maintenanceplan.yaml'), 'utf8'),
      'nodepools.yaml': readFileSync(join(EXAMPLES, 'nodepools.yaml'), 'utf8'),
    });
    expect(r.code, r.err).toBe(0);
    const kinds = parseAllDocuments(r.out).map((d) => (d.toJS() as { kind: string }).kind);
    expect(kinds).toEqual(['RotationPolicy', 'RotationPolicy', 'RotationPolicy']);
    const applied = dryRun(r.out);
    expect(applied.code, applied.err).toBe(0);
  });

  it('fails manifest generation with the field and the fix when a plan cannot work', () => {
    const r = generate({
      'plan.yaml': readFileSync(join(EXAMPLES, 'maintenanceplan.yaml'), 'utf8').replace(
        'minRotationChances: 2',
        'minRotationChances: 5',
      ),
      'nodepools.yaml': readFileSync(join(EXAMPLES, 'nodepools.yaml'), 'utf8'),
    });
    expect(r.code).toBe(1);
    expect(r.err).toContain(
      'FATAL NonPositiveAgeThreshold: NodePool general (RotationPolicy platform-general): ' +
        'NodePool field spec.template.spec.expireAfter: expireAfter 336h is not longer than the lead time',
    );
  });
});
