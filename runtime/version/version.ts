// The program's version: package.json's, found by walking up from this module, since the same code runs from
// the sources (tsx: runtime/version/) and from dist/ (dist/runtime/version/), one and two levels further down.
// Read once, at the first call; `noderotation version`, every --version and the controller's first log line
// print it.
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const NAME = 'noderotation';
let cached: string | undefined;

/** package.json's version, or "unknown" when this module does not sit inside the noderotation package. */
export function programVersion(): string {
  if (cached !== undefined) return cached;
  let dir = dirname(fileURLToPath(import.meta.url));
  for (let i = 0; i < 6; i++) {
    try {
      const pkg = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as { name?: string; version?: string };
      if (pkg.name === NAME && typeof pkg.version === 'string') return (cached = pkg.version);
    } catch {
      // no package.json here, or not ours: one level up
    }
    dir = dirname(dir);
  }
  return (cached = 'unknown');
}
