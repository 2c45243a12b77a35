// Code and docs cite the design by section ("design §3.2", "ADR-0001"). This test keeps every such citation
// pointing at a heading of docs/design.md, and every link docs/design.md makes to another doc (where §4 and
// §5 keep their details) pointing at a file and heading that exist, so a newcomer can always open what is cited.
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const DESIGN = join(ROOT, 'docs', 'design.md');

// Everything a person edits; generated trees only repeat the schemas' descriptions, which are scanned at source.
const SCAN = [
  'README.md',
  'src',
  'functions',
  'controller',
  'runtime',
  'test',
  'bench',
  'scripts',
  'examples',
  'schemas',
  'docs',
];
const SKIP_DIRS = new Set(['node_modules', 'dist', 'generated', 'modules']);
const TEXT_FILE = /\.(ts|js|mjs|md|ya?ml|json|sh|txt)$/;

// The section sign, written as an escape so that the made-up citations of the cases below are not scanned.
const S = '\u00a7';
/** Likewise for a made-up decision record number. */
const ADR = 'ADR-';
const CITATION = new RegExp(`${S}\\s?(\\d+(?:\\.\\d+)*)|\\bADR-(\\d{4})\\b`, 'g');
const SECTION_HEADING = new RegExp(`^#{1,6}\\s+((?:(?:${S}\\d+(?:\\.\\d+)*|ADR-\\d{4})(?:,\\s*|\\s+and\\s+)?)+)`);

/** The sections a text cites, as `§3.2` / `ADR-0001`, in order of appearance. */
function citationsIn(text: string): string[] {
  return [...text.matchAll(CITATION)].map((m) => (m[1] !== undefined ? `${S}${m[1]}` : `ADR-${m[2]}`));
}

/** Markdown heading lines outside fenced code blocks. */
function headingLines(markdown: string): string[] {
  let fenced = false;
  const out: string[] = [];
  for (const line of markdown.split('\n')) {
    if (/^\s*(```|~~~)/.test(line)) fenced = !fenced;
    else if (!fenced && /^#{1,6}\s/.test(line)) out.push(line);
  }
  return out;
}

/** The sections a design document defines: the § and ADR numbers a heading starts with. */
function sectionsDefined(markdown: string): Set<string> {
  const out = new Set<string>();
  for (const line of headingLines(markdown)) {
    const lead = SECTION_HEADING.exec(line)?.[1];
    if (lead !== undefined) for (const c of citationsIn(lead)) out.add(c);
  }
  return out;
}

/** GitHub's anchor for a heading: lower case, punctuation and symbols dropped, spaces as hyphens. */
function githubSlug(heading: string): string {
  return heading
    .replace(/^#{1,6}\s+/, '')
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\p{M}\s_-]/gu, '')
    .replace(/\s/g, '-');
}

/** Every anchor of a markdown file, with GitHub's -1, -2 … suffixes for repeated headings. */
function anchorsOf(markdown: string): Set<string> {
  const seen = new Map<string, number>();
  const out = new Set<string>();
  for (const line of headingLines(markdown)) {
    const slug = githubSlug(line);
    const n = seen.get(slug) ?? 0;
    seen.set(slug, n + 1);
    out.add(n === 0 ? slug : `${slug}-${n}`);
  }
  return out;
}

/** Citations in `files` with no section in `defined`, as `path:line: §x.y`. */
function missingCitations(files: { path: string; text: string }[], defined: Set<string>): string[] {
  const out: string[] = [];
  for (const { path, text } of files) {
    text.split('\n').forEach((line, i) => {
      for (const c of citationsIn(line)) if (!defined.has(c)) out.push(`${path}:${i + 1}: ${c}`);
    });
  }
  return out;
}

function filesUnder(path: string): string[] {
  const abs = join(ROOT, path);
  if (!existsSync(abs)) return [];
  if (!statSync(abs).isDirectory()) return TEXT_FILE.test(abs) ? [abs] : [];
  return readdirSync(abs, { withFileTypes: true })
    .filter((e) => !(e.isDirectory() && SKIP_DIRS.has(e.name)))
    .flatMap((e) => filesUnder(relative(ROOT, join(abs, e.name))));
}

const repoFiles = (): { path: string; text: string }[] =>
  SCAN.flatMap(filesUnder).map((abs) => ({ path: relative(ROOT, abs), text: readFileSync(abs, 'utf8') }));

/** Relative links of a markdown file (external ones left out), as [target path, anchor or null]. */
function relativeLinks(markdown: string): [string, string | null][] {
  return [...markdown.matchAll(/\]\(([^)\s]+)\)/g)]
    .map((m) => m[1] as string)
    .filter((href) => !/^[a-z]+:/i.test(href))
    .map((href) => {
      const [file, anchor] = href.split('#') as [string, string | undefined];
      return [file, anchor ?? null];
    });
}

describe('design citations', () => {
  const cases: { reason: string; text: string; want: string[] }[] = [
    { reason: 'a sub-section in a comment', text: `// design ${S}3.2: the derivation`, want: [`${S}3.2`] },
    { reason: 'a range names both ends', text: `the invariants of ${S}3–${S}5`, want: [`${S}3`, `${S}5`] },
    { reason: 'a sentence-ending full stop is not a level', text: `see ${S}3.1.`, want: [`${S}3.1`] },
    { reason: 'a space after the sign is allowed', text: `${S} 4.2 metrics`, want: [`${S}4.2`] },
    { reason: 'decision records by number', text: 'ADR-0001 and ADR-0004', want: ['ADR-0001', 'ADR-0004'] },
    { reason: 'a longer identifier is not an ADR', text: 'XADR-00011', want: [] },
  ];
  it.each(cases)('citationsIn: $reason', ({ text, want }) => {
    expect(citationsIn(text)).toEqual(want);
  });

  it('reads section numbers only from the start of headings, never from code blocks', () => {
    const md = [
      `## ${S}3 The design`,
      `### ${S}3.2 Selection (see ${S}9.9)`,
      '### ADR-0002, ADR-0003 Two durations',
      `## Notes on ${ADR}0007`,
      '```',
      `# ${S}8.1 inside a fence`,
      '```',
    ].join('\n');
    expect([...sectionsDefined(md)].sort()).toEqual(['ADR-0002', 'ADR-0003', `${S}3`, `${S}3.2`]);
  });

  it('reports a citation with no heading, with its file and line', () => {
    const files = [{ path: 'src/x.ts', text: `// fine: ${S}3.2\n// missing: ${S}9.9 and ${ADR}0099` }];
    expect(missingCitations(files, new Set([`${S}3.2`]))).toEqual([`src/x.ts:2: ${S}9.9`, `src/x.ts:2: ${ADR}0099`]);
  });

  const slugs: { reason: string; heading: string; want: string }[] = [
    {
      reason: 'the section sign and dots drop',
      heading: `### ${S}3.2 Candidate selection`,
      want: '32-candidate-selection',
    },
    {
      reason: 'code spans and punctuation drop, underscores stay',
      heading: '## Metrics (`/metrics`, prefix `noderotation_`)',
      want: 'metrics-metrics-prefix-noderotation_',
    },
    { reason: 'hyphens stay', heading: '## Start-up sweep', want: 'start-up-sweep' },
  ];
  it.each(slugs)('githubSlug: $reason', ({ heading, want }) => {
    expect(githubSlug(heading)).toBe(want);
  });

  it('numbers repeated headings like GitHub', () => {
    expect([...anchorsOf('## Events\n## Events\n## Events')]).toEqual(['events', 'events-1', 'events-2']);
  });

  it('every section cited in the repository has a heading in docs/design.md', () => {
    const defined = sectionsDefined(readFileSync(DESIGN, 'utf8'));
    const files = repoFiles();
    expect(files.length).toBeGreaterThan(50); // the scan found the sources, not an empty tree
    expect(missingCitations(files, defined)).toEqual([]);
  });

  it('every relative link in docs/design.md opens an existing file and heading', () => {
    const broken: string[] = [];
    for (const [file, anchor] of relativeLinks(readFileSync(DESIGN, 'utf8'))) {
      const target = file === '' ? DESIGN : resolve(dirname(DESIGN), file);
      if (!existsSync(target)) broken.push(`${file}: no such file`);
      else if (anchor !== null && target.endsWith('.md') && !anchorsOf(readFileSync(target, 'utf8')).has(anchor))
        broken.push(`${file}#${anchor}: no such heading`);
    }
    expect(broken).toEqual([]);
  });

  it(`${S}4 and ${S}5 link to the docs that hold their details`, () => {
    const md = readFileSync(DESIGN, 'utf8');
    const section = (n: string): string => {
      const start = md.indexOf(`\n## ${S}${n} `);
      const end = md.indexOf('\n## ', start + 1);
      return start < 0 ? '' : md.slice(start, end < 0 ? undefined : end);
    };
    expect(section('4')).toContain('](observability.md');
    expect(section('5')).toContain('](state.md');
  });
});
