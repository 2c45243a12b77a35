// The commands a page of the docs shows, for the tests that run them as written.
import { readFileSync } from 'node:fs';
import path from 'node:path';

const ROOT = path.join(import.meta.dirname, '..', '..');

/**
 * The fenced blocks of `lang` in the section of `file` (relative to the repository) that starts at the heading
 * `heading` (its text, e.g. '## Upgrade'), up to the next heading of the same or a higher level, in order.
 */
export function docBlocks(file: string, heading: string, lang = 'sh'): string[] {
  const text = readFileSync(path.join(ROOT, file), 'utf8');
  const level = /^#+/.exec(heading)?.[0].length;
  if (level === undefined) throw new Error(`not a heading: ${heading}`);
  const start = text.split('\n').findIndex((l) => l === heading);
  if (start < 0) throw new Error(`${file} has no heading "${heading}"`);
  const lines = text.split('\n').slice(start + 1);
  let fenced = false; // a shell comment in a block is not a heading
  const end = lines.findIndex((l) => {
    if (l.startsWith('```')) fenced = !fenced;
    const m = fenced ? null : /^(#+) /.exec(l);
    return m !== null && (m[1] as string).length <= level;
  });
  const section = (end < 0 ? lines : lines.slice(0, end)).join('\n');
  const blocks = [...section.matchAll(new RegExp('^```' + lang + '\\n([\\s\\S]*?)^```$', 'gm'))].map(
    (m) => m[1] as string,
  );
  if (blocks.length === 0) throw new Error(`${file} "${heading}" shows no ${lang} block`);
  return blocks;
}
