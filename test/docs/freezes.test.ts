// docs/freezes.md, "Planning around a freeze": its offline commands run as written, and its before/after table says
// what simulate prints for the two scenarios it names.
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { cli } from '../support/cli-harness.js';
import { docBlocks } from '../support/docs.js';

const ROOT = join(import.meta.dirname, '..', '..');
const PAGE = 'docs/freezes.md';

/** The `npx noderotation …` lines of a section's shell blocks, as argument lists. */
const commands = (heading: string): string[][] =>
  docBlocks(PAGE, heading)
    .flatMap((b) => b.split('\n'))
    .map((l) => l.replace(/\s+#.*$/, '').trim())
    .filter((l) => l.startsWith('npx noderotation '))
    .map((l) => l.split(/\s+/).slice(2));

const run = (args: string[]) => cli(args.map((a) => (a.startsWith('examples/') ? join(ROOT, a) : a)));

/** simulate's table: row label → value. */
const rows = (out: string): Map<string, string> =>
  new Map(
    out
      .split('\n')
      .map((l) => /^(.+?)\s{2,}(.+)$/.exec(l))
      .filter((m): m is RegExpExecArray => m !== null)
      .map((m) => [m[1] as string, m[2] as string]),
  );

describe(PAGE, () => {
  it.each([
    '## 2. See what they take away',
    '## 4. Before and after, in the simulator',
    "## 5. Put it in everyone's calendar",
  ])('%s: its commands run as written', async (heading) => {
    const all = commands(heading);
    expect(all.length).toBeGreaterThan(0);
    for (const args of all) {
      const r = await run(args);
      expect(r.code, `${args.join(' ')}\n${r.err}`).toBe(0);
      expect(r.out.length).toBeGreaterThan(0);
    }
  });

  it('its plan is valid as written: validate reads it with the example NodePools, no input error', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'freezes-'));
    const plan = join(dir, 'platform.yaml');
    writeFileSync(plan, docBlocks(PAGE, '## 1. Declare them once', 'yaml').join('---\n'));
    const r = await cli(['validate', '-f', plan, '-f', join(ROOT, 'examples/nodepools.yaml')]);
    expect(r.err).not.toMatch(/invalid input/);
    expect(r.code, r.err).toBe(0);
  });

  it('its table is what simulate prints, off then on', async () => {
    const [off, on] = commands('## 4. Before and after, in the simulator');
    const text = readFileSync(join(ROOT, PAGE), 'utf8');
    const want = (label: string): [string, string] => {
      const m = new RegExp(`^\\| ${label}[^|]* \\| (\\d+) \\| (\\d+) \\|$`, 'm').exec(text);
      if (!m) throw new Error(`no row "${label}" in the table`);
      return [m[1] as string, m[2] as string];
    };
    const [a, b] = [rows((await run(off as string[])).out), rows((await run(on as string[])).out)];
    for (const label of ['graceful rotations', 'forceful expirations', 'forceful expirations in a freeze'])
      expect([a.get(label), b.get(label)], label).toEqual(want(label));
  });
});
