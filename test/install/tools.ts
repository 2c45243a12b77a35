// The cached installation tools (test/install/tools.sh) and the renders every install test starts from.
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseAllDocuments } from 'yaml';

export const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const script = path.join(repoRoot, 'test/install/tools.sh');

/** The cached binary (or, for `schemas`, directory) of a tool; a clear error when it was never built. */
export function toolPath(name: 'helm' | 'kustomize' | 'promtool' | 'actionlint' | 'kubeconform' | 'schemas'): string {
  const r = spawnSync('bash', [script, 'path', name], { encoding: 'utf8' });
  const p = r.stdout.trim();
  if (r.status !== 0 || !existsSync(p)) {
    throw new Error(`${name} is not built (${p || r.stderr.trim()}): run \`bash test/install/tools.sh build\``);
  }
  return p;
}

export interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

export function run(bin: string, args: string[], input?: string): Run {
  const r = spawnSync(bin, args, { cwd: repoRoot, encoding: 'utf8', input, maxBuffer: 64 * 1024 * 1024 });
  if (r.error) throw r.error;
  return { code: r.status ?? -1, stdout: r.stdout, stderr: r.stderr };
}

/** Runs a tool that must succeed; its output otherwise ends up in the failure message. */
export function ok(bin: string, args: string[], input?: string): string {
  const r = run(bin, args, input);
  if (r.code !== 0)
    throw new Error(`${path.basename(bin)} ${args.join(' ')} exited ${r.code}:\n${r.stderr}${r.stdout}`);
  return r.stdout;
}

export type Manifest = {
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace?: string; labels?: Record<string, string>; annotations?: Record<string, string> };
} & Record<string, unknown>;

export function manifests(text: string): Manifest[] {
  return parseAllDocuments(text)
    .map((d) => d.toJS() as Manifest | null)
    .filter((m): m is Manifest => m !== null);
}

export const CHART = path.join(repoRoot, 'charts/noderotation');
export const NAMESPACE = 'node-rotation-system';
/** Every optional part of the chart switched on. */
export const ALL_ON = [
  'serviceMonitor.enabled=true',
  'prometheusRule.enabled=true',
  'grafanaDashboard.enabled=true',
  'function.enabled=true',
  'namespace.create=true',
];

/** The chart as `helm install` would apply it (its `helm test` hook left out: `helm test` creates that). */
export function helmTemplate(set: string[] = [], extra: string[] = []): string {
  const args = ['template', 'noderotation', CHART, '--namespace', NAMESPACE, '--skip-tests', ...extra];
  for (const s of set) args.push('--set', s);
  return ok(toolPath('helm'), args);
}

/** The kustomize base and its two optional parts, as one stream (what `kubectl apply -k` of each sends). */
export function kustomizeAll(): string {
  const k = toolPath('kustomize');
  return ['deploy', 'deploy/prometheus', 'deploy/crossplane']
    .map((d) => ok(k, ['build', path.join(repoRoot, d)]))
    .join('---\n');
}

/** The kustomize overlay docs/operations.md shows (its base a URL to replace, its namespace to change). */
export function docsOverlay(): string {
  const docs = readFileSync(path.join(repoRoot, 'docs/operations.md'), 'utf8');
  const overlay = /```yaml\n(# overlays\/prod\/kustomization\.yaml\n[\s\S]*?)```/.exec(docs)?.[1];
  if (!overlay) throw new Error('docs/operations.md shows no overlays/prod/kustomization.yaml');
  return overlay;
}

/**
 * Its `replacements:` section, which moves the admission policies' user name along with the namespace (every
 * overlay that moves the namespace needs it).
 */
export function docsReplacements(): string {
  const section = /^replacements:\n(?: .*\n)+/m.exec(docsOverlay())?.[0];
  if (!section) throw new Error("docs/operations.md's overlay has no replacements");
  return section;
}
