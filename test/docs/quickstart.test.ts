// docs/quickstart.md is what a newcomer runs first: it says which steps need a cluster, its offline commands must
// work exactly as written from a fresh clone, and the broken-plan message it shows must be the one the CLI prints.
// (The cluster steps are the e2e suite's; kubeconform's line is run by test/install/docs-kubeconform.test.ts.)
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { cli } from '../support/cli-harness.js';

const ROOT = join(import.meta.dirname, '..', '..');
const DOC = readFileSync(join(ROOT, 'docs', 'quickstart.md'), 'utf8');

/** The page's steps: number → its text (the intro before step 1 is step 0). */
const STEPS = new Map(
  DOC.split(/^## (?=\d\. )/m).map((text, i) => [i === 0 ? 0 : Number(/^(\d)\./.exec(text)?.[1]), text] as const),
);

/** The command lines of a text's shell blocks (continuations joined), each with its trailing comment apart. */
function shellLines(text: string): { line: string; comment: string }[] {
  return [...text.matchAll(/```sh\n([\s\S]*?)```/g)]
    .flatMap((m) => (m[1] ?? '').replace(/\\\n\s*/g, '').split('\n'))
    .map((raw) => /^(.*?)(?:\s+#\s*(.*))?$/.exec(raw.trim()) as RegExpExecArray)
    .map((m) => ({ line: m[1] as string, comment: m[2] ?? '' }))
    .filter((l) => l.line !== '');
}

/** Every `npx noderotation …` line's arguments, in the page's order. */
function commands(text = DOC): string[][] {
  return shellLines(text)
    .filter((l) => l.line.startsWith('npx noderotation '))
    .map((l) => l.line.split(/\s+/).slice(2));
}

/** Offline: reads no cluster. Such a command must run as written from a fresh clone. */
const offline = (args: string[]): boolean => !args.includes('--from-cluster');

/** The files and directories a command line names (-f's, or kubeconform's last words). */
const named = (args: string[]): string[] => args.filter((a, i) => args[i - 1] === '-f');

describe('docs/quickstart.md', () => {
  const all = commands();

  it('shows the steps a platform team takes, in order', () => {
    expect([...new Set(all.map((a) => a[0]))]).toEqual(['explain', 'render', 'simulate', 'validate', 'status']);
  });

  it('says up front that steps 1-5 need no cluster and 6-7 do, and marks the cluster lines in 1-5', () => {
    const intro = (STEPS.get(0) ?? '').replace(/\s+/g, ' ');
    expect(intro).toContain('Steps 1 to 5 need no cluster.');
    expect(intro).toContain('Steps 6 and 7 need a cluster');
    expect([...STEPS.keys()]).toEqual([0, 1, 2, 3, 4, 5, 6, 7]);
    for (const step of [1, 2, 3, 4, 5]) {
      for (const l of shellLines(STEPS.get(step) ?? '')) {
        const cluster = l.line.includes('--from-cluster') || l.line.startsWith('kubectl ');
        expect(l.comment.startsWith('needs a cluster'), `step ${step}: ${l.line}`).toBe(cluster);
      }
    }
  });

  it.each(all.filter(offline).map((args) => ({ line: args.join(' '), args })))(
    'runs as written from a fresh clone: noderotation $line',
    async ({ args }) => {
      for (const f of named(args)) expect(existsSync(join(ROOT, f)), `${f} is in the repository`).toBe(true);
      // `> report.html`: the output is what the file would hold.
      const redirect = args.indexOf('>');
      const run = redirect < 0 ? args : args.slice(0, redirect);
      const r = await cli(run.map((a) => (named(args).includes(a) ? join(ROOT, a) : a)));
      expect(r.err).not.toMatch(/invalid input|FATAL|ERROR/); // warnings may be printed (render: HardCapExceeded)
      expect(r.code).toBe(0);
      expect(r.out.length).toBeGreaterThan(0);
    },
  );

  it("its kubeconform puts our schemas first (offline, 'default' first fails) and names files in the clone", () => {
    const lines = shellLines(DOC).filter((l) => l.line.startsWith('kubeconform '));
    expect(lines).toHaveLength(1);
    const words = (lines[0]?.line ?? '').split(/\s+/);
    const locations = words.filter((_, i) => words[i - 1] === '-schema-location');
    expect(locations).toEqual([
      `'deploy/schemas/{{.Group}}/{{.ResourceKind}}_{{.ResourceAPIVersion}}.json'`,
      'default',
    ]);
    expect(existsSync(join(ROOT, words.at(-1) as string))).toBe(true);
  });

  it('glosses LEAD and A as explain --legend does (A is an age, LEAD how long before expiry)', async () => {
    const legend = new Map(
      (await cli(['explain', '--legend'])).out
        .split('\n')
        .map((l) => /^(\S+)\s+([^:]+)/.exec(l))
        .filter((m): m is RegExpExecArray => m !== null)
        .map((m) => [m[1] as string, m[2] as string]),
    );
    const text = DOC.replace(/\s+/g, ' ');
    expect(text).toContain(`LEAD (${legend.get('LEAD')}`);
    expect(text).toContain(`A (${legend.get('AGE-THRESHOLD(A)')}`);
  });

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
