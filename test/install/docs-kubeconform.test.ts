// The kubeconform commands the docs give, run as written from the clone with the real kubeconform and no network:
// with `-schema-location default` first, kubeconform stops at the failed download and rejects every manifest, so
// our schemas must come first. A command with a placeholder (`<dir>`) is only checked for that order.
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { repoRoot, run, toolPath } from './tools.js';

const DOCS = [
  'README.md',
  ...readdirSync(path.join(repoRoot, 'docs'))
    .filter((f) => f.endsWith('.md'))
    .map((f) => `docs/${f}`),
];

/**
 * Every kubeconform command of a page (shell lines, continuations joined, and inline code) that names its schemas,
 * as words; prose such as "through `kubeconform -strict`" names none.
 */
function commands(file: string): string[][] {
  const text = readFileSync(path.join(repoRoot, file), 'utf8').replace(/\\\n\s*/g, '');
  const found = [
    ...[...text.matchAll(/^(kubeconform -.*)$/gm)].map((m) => m[1] as string),
    ...[...text.matchAll(/`(kubeconform -[^`]*)`/g)].map((m) => m[1] as string),
  ];
  return found
    .map((c) => (c.replace(/\s+#.*$/, '').match(/'[^']*'|\S+/g) ?? []).map((w) => w.replace(/^'|'$/g, '')))
    .filter((words) => words.includes('-schema-location'));
}

const all = DOCS.flatMap((file) => commands(file).map((words) => ({ file, line: words.join(' '), words })));

describe("the docs' kubeconform commands", () => {
  it('are found (README and the quick start give one each)', () => {
    expect(all.filter((c) => c.file === 'README.md')).toHaveLength(1);
    expect(all.filter((c) => c.file === 'docs/quickstart.md')).toHaveLength(1);
  });

  it.each(all)('$file: $line', ({ words }) => {
    const locations = words.filter((_, i) => words[i - 1] === '-schema-location');
    expect(locations[0], 'the first schema location').not.toBe('default');
    if (words.some((w) => w.includes('<'))) return;
    const r = run(toolPath('kubeconform'), words.slice(1));
    expect(`${r.stdout}${r.stderr}`).not.toContain('failed downloading');
    expect(r.code, `${r.stdout}${r.stderr}`).toBe(0);
  });
});
