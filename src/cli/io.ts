// The CLI's file reading: -f takes files, directories (their *.yaml/*.yml/*.json, sorted) or - for stdin.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';

export class UsageError extends Error {}

export function readInputs(paths: readonly string[], stdin: () => string): { name: string; text: string }[] {
  if (paths.length === 0)
    throw new UsageError('no input: pass one or more -f FILE (a file, a directory, or - for standard input)');
  const out: { name: string; text: string }[] = [];
  for (const path of paths) {
    if (path === '-') {
      out.push({ name: '(stdin)', text: stdin() });
      continue;
    }
    let stat;
    try {
      stat = statSync(path);
    } catch {
      throw new UsageError(`-f ${path}: no such file or directory`);
    }
    if (stat.isDirectory()) {
      const files = readdirSync(path)
        .filter((f) => /\.(ya?ml|json)$/.test(f))
        .sort();
      for (const f of files) out.push({ name: join(path, f), text: readFileSync(join(path, f), 'utf8') });
    } else {
      out.push({ name: path, text: readFileSync(path, 'utf8') });
    }
  }
  return out;
}
