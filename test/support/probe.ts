// A few lines of ES module run in a Node process of their own, at the repository's root (so `./src/…` imports
// resolve; TypeScript through tsx): for what a module loads or builds when imported, which this process's module
// cache, shared with every other test, cannot show. The lines print one JSON value, which is returned.
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';

const ROOT = join(import.meta.dirname, '..', '..');

export function probe<T>(lines: readonly string[]): T {
  const out = execFileSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', lines.join('\n')], {
    cwd: ROOT,
    encoding: 'utf8',
  });
  return JSON.parse(out) as T;
}
