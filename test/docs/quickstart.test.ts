// docs/quickstart.md is what a newcomer runs first: its offline commands must work exactly as written, and the
// broken-plan message it shows must be the one the CLI prints. (The cluster steps are the e2e suite's.)
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { cli } from '../support/cli-harness.js';

const ROOT = join(import.meta.dirname, '..', '..');
const DOC = readFileSync(join(ROOT, 'docs', 'quickstart.md'), 'utf8');

/** Every `npx noderotation …` line in the page's shell blocks, without trailing comments. */
function commands(): string[][] {
  return [...DOC.matchAll(/```sh\n([\s\S]*?)```/g)]
    .flatMap((m) => (m[1] ?? '').split('\n'))
    .map((line) => line.replace(/\s+#.*$/, '').trim())
    .filter((line) => line.startsWith('npx noderotation '))
    .map((line) => line.split(/\s+/).slice(2));
}

/** Offline: reads only bundled examples and writes to stdout (no --from-cluster, no redirection). */
const offline = (args: string[]): boolean =>
  !args.includes('--from-cluster') &&
  !args.includes('>') &&
  args.filter((a, i) => args[i - 1] === '-f').every((f) => f.startsWith('examples/'));

describe('docs/quickstart.md', () => {
  const all = commands();

  it('shows the steps a platform team takes, in order', () => {
    expect([...new Set(all.map((a) => a[0]))]).toEqual(['explain', 'render', 'simulate', 'validate', 'status']);
  });

  it.each(all.filter(offline).map((args) => ({ line: args.join(' '), args })))(
    'runs as written: noderotation $line',
    async ({ args }) => {
      const r = await cli(args.map((a) => (a.startsWith('examples/') ? join(ROOT, a) : a)));
      expect(r.err).not.toMatch(/invalid input|FATAL|ERROR/); // warnings may be printed (render: HardCapExceeded)
      expect(r.code).toBe(0);
      expect(r.out.length).toBeGreaterThan(0);
    },
  );

  it('its explain shows what the text says: gpu excluded, batch warned about the 21-day lifetime', async () => {
    const r = await cli([
      'explain',
      '-f',
      join(ROOT, 'examples/maintenanceplan.yaml'),
      '-f',
      join(ROOT, 'examples/nodepools.yaml'),
    ]);
    expect(r.out).toContain('excluded by platform/no-gpu');
    expect(r.out).toMatch(/batch:\n\s+WARNING HardCapExceeded:/);
  });

  it('its broken plan (a day spelt Thur) is stopped with exactly the message shown, exit 2', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'quickstart-'));
    const plan = join(dir, 'platform.yaml');
    const example = readFileSync(join(ROOT, 'examples/maintenanceplan.yaml'), 'utf8');
    expect(example).toContain('days: [Mon, Tue, Wed, Thu, Fri]');
    writeFileSync(plan, example.replace('days: [Mon, Tue, Wed, Thu, Fri]', 'days: [Mon, Tue, Wed, Thur, Fri]'));
    const r = await cli(['validate', '-f', plan, '-f', join(ROOT, 'examples/nodepools.yaml')]);
    expect(r.code).toBe(2);
    const shown = /```\ninvalid input:\n {2}plans\/platform\.yaml(, document 1 .*)\n```/.exec(DOC)?.[1];
    expect(shown, 'the page shows the message').toBeDefined();
    expect(r.err).toContain(`invalid input:\n  ${plan}${shown}\n`);
  });
});
