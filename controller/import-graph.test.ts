// The program (cli/, controller/, functions/, src/) does not use @kubernetes/client-node: its generated API models
// cost 65 MB of resident memory the moment they are imported (docs/benchmarks.md), and the one kubeconfig reader
// (runtime/kube/kubeconfig.ts) serves the CLI and the controller alike. The tests and the benchmark may use it
// (a devDependency). This walks the static import graph from the entry point, and reads every program module.
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { probe } from '../test/support/probe.js';

const ROOT = join(import.meta.dirname, '..');
// `import … from '…'` and `export … from '…'`, but not `import type` (erased) nor `import('…')` (lazy).
const STATIC = /^(?:import|export)\s+(?!type\b)[^'";]*?from\s+'([^']+)'/gm;

// `import('./…')` of the program's own modules: a subcommand loaded when it runs (cli/main.ts) is walked too, since
// it is loaded by some run of the program; a lazy import of a package is what the rule allows.
const LAZY_LOCAL = /\bimport\('(\.[^']+)'\)/g;

function staticImports(file: string): string[] {
  const text = readFileSync(file, 'utf8');
  return [...text.matchAll(STATIC), ...text.matchAll(LAZY_LOCAL)].map((m) => m[1] as string);
}

function graph(entry: string): { files: Set<string>; packages: Set<string> } {
  const files = new Set<string>();
  const packages = new Set<string>();
  const visit = (file: string): void => {
    if (files.has(file)) return;
    files.add(file);
    for (const spec of staticImports(file)) {
      if (!spec.startsWith('.')) packages.add(spec);
      else visit(resolve(dirname(file), spec).replace(/\.js$/, '.ts'));
    }
  };
  visit(entry);
  return { files, packages };
}

describe('what the program loads', () => {
  it('no module reachable from the CLI entry point imports @kubernetes/client-node statically', () => {
    const { files, packages } = graph(join(ROOT, 'cli/main.ts'));
    expect(files.has(join(ROOT, 'controller/controller.ts'))).toBe(true); // the walk reaches the controller
    expect(files.has(join(ROOT, 'cli/cluster.ts'))).toBe(true); // and --from-cluster's reader
    expect([...packages].filter((p) => p.startsWith('@kubernetes/'))).toEqual([]);
  });

  it('no program module imports it at all, not even lazily', () => {
    const modules = ['cli', 'controller', 'functions', 'src'].flatMap((d) =>
      readdirSync(join(ROOT, d), { recursive: true, encoding: 'utf8' })
        .filter((f) => f.endsWith('.ts') && !f.endsWith('.test.ts'))
        .map((f) => join(d, f)),
    );
    expect(modules.length).toBeGreaterThan(50);
    const importers = modules.filter((f) =>
      /from '@kubernetes\/|import\('@kubernetes\//.test(readFileSync(join(ROOT, f), 'utf8')),
    );
    expect(importers).toEqual([]);
  });
});

describe("what the controller's modules cost at start", () => {
  it("they and a zone's offsets construct no Intl.DateTimeFormat (ICU's data: 8 MiB resident) nor load rrule", () => {
    // A process of its own, Intl.DateTimeFormat counted before anything is imported.
    const seen = probe<{ before: number; after: number; inside: number; rrule: number }>([
      'let formatters = 0;',
      'const Original = Intl.DateTimeFormat;',
      'Intl.DateTimeFormat = function (...a) { formatters++; return new Original(...a); };',
      "const { createRequire } = await import('node:module');",
      "await import('./controller/main.ts');",
      "const zone = await import('./src/schedule/zone.ts');",
      "zone.prepareZones(['Europe/Berlin', 'Asia/Tokyo'], Date.parse('2027-03-28T01:00:00Z'));",
      "const inside = zone.wallToInstant('Europe/Berlin', 2027, 3, 28, 150);",
      "const loaded = Object.keys(createRequire(import.meta.url).cache).filter((k) => k.includes('/rrule/'));",
      'const before = formatters;',
      "zone.offsetMinutes('Europe/Berlin', Date.parse('2150-07-01T00:00:00Z'));",
      'console.log(JSON.stringify({ before, after: formatters, inside, rrule: loaded.length }));',
    ]);
    expect(seen.inside).toBe(Date.parse('2027-03-28T01:30:00Z')); // 02:30 skipped: forward by the gap
    expect(seen.before).toBe(0);
    expect(seen.rrule).toBe(0);
    expect(seen.after).toBeGreaterThan(0); // an instant after the tables goes through Intl: the probe would see it
  });

  it('a kubeconfig in JSON loads no YAML parser (0.9 MiB of heap); one in YAML does, and both read alike', () => {
    const seen = probe<{ json: number; yaml: number; servers: string[] }>([
      "const { createRequire } = await import('node:module');",
      "const { mkdtempSync, rmSync, writeFileSync } = await import('node:fs');",
      "const { join } = await import('node:path');",
      "const { tmpdir } = await import('node:os');",
      "const { loadKubeConfig } = await import('./controller/main.ts');",
      "const dir = mkdtempSync(join(tmpdir(), 'import-graph-'));",
      "const config = { 'current-context': 'x', contexts: [{ name: 'x', context: { cluster: 'c', user: 'u' } }],",
      "  clusters: [{ name: 'c', cluster: { server: 'https://127.0.0.1:6443' } }],",
      "  users: [{ name: 'u', user: { token: 't' } }] };",
      "writeFileSync(join(dir, 'json'), JSON.stringify(config));",
      "const yamlText = ['current-context: x', 'contexts: [{name: x, context: {cluster: c, user: u}}]',",
      "  'clusters: [{name: c, cluster: {server: https://127.0.0.2:6443}}]', 'users: [{name: u, user: {token: t}}]'];",
      "writeFileSync(join(dir, 'yaml'), yamlText.join(String.fromCharCode(10)));",
      'const yamlModules = () =>',
      "  Object.keys(createRequire(import.meta.url).cache).filter((k) => k.includes('/node_modules/yaml/')).length;",
      "const servers = [loadKubeConfig(join(dir, 'json'), {}).getCurrentCluster().server];",
      'const json = yamlModules();',
      "servers.push(loadKubeConfig(join(dir, 'yaml'), {}).getCurrentCluster().server);",
      'rmSync(dir, { recursive: true });',
      'console.log(JSON.stringify({ json, yaml: yamlModules(), servers }));',
    ]);
    expect(seen.servers).toEqual(['https://127.0.0.1:6443', 'https://127.0.0.2:6443']);
    expect(seen.json).toBe(0);
    expect(seen.yaml).toBeGreaterThan(0); // the probe would see it loaded
  });
});
