// Every example says what the tool prints for it (issue 21): a header line "# ✓ COMMAND [FLAGS] [with FILE,
// …][, NODEPOOL]: N label, …" (simulate: a row of its table and the number in it) or "…: COLUMN value, …"
// (explain: a column of the NodePool's row) is run as written, on its own file, and each figure compared with
// what the command prints. A scenario may also say on which days its nodes at start were rotated ("# ✓ simulate,
// rotations of the nodes at start by UTC day: 2027-11-22 6, …", from -o json's timeline), and
// examples/nodepools.yaml's header lists each NodePool's expireAfter and terminationGracePeriod. An example whose
// prose and numbers drift apart fails here.
import { readdirSync, readFileSync } from 'node:fs';
import { parseAllDocuments } from 'yaml';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { cli } from '../support/cli-harness.js';

const ROOT = join(import.meta.dirname, '..', '..');
const EXAMPLES = join(ROOT, 'examples');
const CLAIM = /^# ✓ (\w+)((?: --?[\w-]+)*)(?: with ([^,:]+(?:, [^,:]+\.ya?ml)*))?(?:, ([\w-]+))?: (.+)$/;

interface Claim {
  file: string;
  command: string;
  flags: string[];
  with: string[];
  pool?: string;
  items: string[];
}

function claims(): Claim[] {
  const files = readdirSync(EXAMPLES, { recursive: true, encoding: 'utf8' }).filter((f) => /\.ya?ml$/.test(f));
  return files.flatMap((f) =>
    readFileSync(join(EXAMPLES, f), 'utf8')
      .split('\n')
      .map((line) => CLAIM.exec(line))
      .filter((m): m is RegExpExecArray => m !== null)
      .map((m) => ({
        file: join('examples', f),
        command: m[1] as string,
        flags: (m[2] ?? '').split(' ').filter(Boolean),
        with: m[3] ? m[3].split(', ') : [],
        ...(m[4] ? { pool: m[4] } : {}),
        items: (m[5] as string).split(', '),
      })),
  );
}

/** simulate's table: row label → value. */
function simulateRows(out: string): Map<string, string> {
  return new Map(
    out
      .split('\n')
      .map((l) => /^(.+?)\s{2,}(.+)$/.exec(l))
      .filter((m): m is RegExpExecArray => m !== null)
      .map((m) => [m[1] as string, m[2] as string]),
  );
}

/** explain's table: the NodePool's row, column → value (FINDINGS keeps its words). */
function explainRow(out: string, pool: string): Map<string, string> {
  const [header, ...rows] = out.split('\n');
  const columns = (header as string).split(/\s+/).filter(Boolean);
  const row = rows.find((r) => r.split(/\s+/)[0] === pool);
  if (row === undefined) throw new Error(`no row for ${pool} in:\n${out}`);
  const cells = row.split(/\s+/);
  const findings = cells.slice(columns.length - 1).join(' ');
  return new Map(columns.map((c, i) => [c, i === columns.length - 1 ? findings : (cells[i] as string)]));
}

const all = claims();

describe('example headers', () => {
  it('finds the claims (a header format change would silently check nothing)', () => {
    expect(all.length).toBeGreaterThanOrEqual(6);
    expect(new Set(all.map((c) => c.command))).toEqual(new Set(['simulate', 'explain']));
  });

  it.each(all.map((c) => [`${c.file}: ${c.command} ${c.flags.join(' ')}`.trim(), c] as const))('%s', async (_, c) => {
    const files = [c.file, ...c.with].flatMap((f) => ['-f', join(ROOT, f)]);
    const r = await cli([c.command, ...c.flags, ...files]);
    expect(r.code, r.err).toBeLessThanOrEqual(1);
    const shown = c.command === 'simulate' ? simulateRows(r.out) : explainRow(r.out, c.pool as string);
    for (const item of c.items) {
      const [label, value] =
        c.command === 'simulate'
          ? [item.replace(/^\S+ /, ''), item.split(' ')[0] as string]
          : [item.split(' ')[0] as string, item.replace(/^\S+ /, '')];
      expect(shown.get(label), `${relative(ROOT, join(ROOT, c.file))}: "${item}"`).toBe(value);
    }
  });
});

const DAYS = /^# ✓ simulate, rotations of the nodes at start by UTC day: (.+)$/m;

describe('example headers: the days a scenario rotates its nodes at start', () => {
  const files = readdirSync(join(EXAMPLES, 'scenarios')).filter((f) => /\.ya?ml$/.test(f));
  const withDays = files.filter((f) => DAYS.test(readFileSync(join(EXAMPLES, 'scenarios', f), 'utf8')));

  it('finds them', () => {
    expect(withDays).toContain('black-friday-freeze.yaml');
  });

  it.each(withDays)('examples/scenarios/%s', async (f) => {
    const file = join(EXAMPLES, 'scenarios', f);
    const claimed = (DAYS.exec(readFileSync(file, 'utf8'))?.[1] as string).split(', ').map((d) => d.split(' '));
    const r = await cli(['simulate', '-o', 'json', '-f', file]);
    const { timeline } = JSON.parse(r.out) as {
      timeline: { origin: string; rotationStartedAt?: string }[];
    };
    const days = new Map<string, number>();
    for (const t of timeline)
      if (t.origin === 'initial' && t.rotationStartedAt !== undefined) {
        const day = t.rotationStartedAt.slice(0, 10);
        days.set(day, (days.get(day) ?? 0) + 1);
      }
    expect([...days].map(([d, n]) => [d, String(n)])).toEqual(claimed);
  });
});

describe("examples/nodepools.yaml's header", () => {
  it('lists every NodePool with its expireAfter and terminationGracePeriod, as the file sets them', () => {
    const text = readFileSync(join(EXAMPLES, 'nodepools.yaml'), 'utf8');
    const header = text.slice(0, text.indexOf('\napiVersion:'));
    const listed = [...header.matchAll(/^#\s+([\w-]+)\s+expireAfter (\w+)(?:, terminationGracePeriod (\w+))?/gm)].map(
      (m) => [m[1], m[2], m[3] ?? null],
    );
    const pools = parseAllDocuments(text).map((d) => {
      const p = d.toJS() as {
        metadata: { name: string };
        spec: { template: { spec: { expireAfter: string; terminationGracePeriod?: string } } };
      };
      const spec = p.spec.template.spec;
      return [p.metadata.name, spec.expireAfter, spec.terminationGracePeriod ?? null];
    });
    expect(listed).toEqual(pools);
  });
});
