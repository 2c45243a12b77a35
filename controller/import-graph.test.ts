// The controller runs from the CLI's entry point, and its resident memory is part of what it promises
// (docs/benchmarks.md): @kubernetes/client-node's generated API models cost 65 MB the moment they are
// imported. So no module the entry point loads statically may import it; the CLI's --from-cluster loads it on
// first use (cli/cluster.ts). This walks the static import graph from the entry point.
import { readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

const ROOT = join(import.meta.dirname, '..');
// `import … from '…'` and `export … from '…'`, but not `import type` (erased) nor `import('…')` (lazy).
const STATIC = /^(?:import|export)\s+(?!type\b)[^'";]*?from\s+'([^']+)'/gm;

function staticImports(file: string): string[] {
  const text = readFileSync(file, 'utf8');
  return [...text.matchAll(STATIC)].map((m) => m[1] as string);
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

describe('what the controller process loads', () => {
  it('no module reachable from the CLI entry point imports @kubernetes/client-node statically', () => {
    const { files, packages } = graph(join(ROOT, 'cli/main.ts'));
    expect(files.has(join(ROOT, 'controller/controller.ts'))).toBe(true); // the walk reaches the controller
    expect(files.has(join(ROOT, 'cli/cluster.ts'))).toBe(true); // and the lazy importer itself
    expect([...packages].filter((p) => p.startsWith('@kubernetes/'))).toEqual([]);
  });
});
