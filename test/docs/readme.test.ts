// The README's claims about what `npm ci` installs: every runtime dependency is in its list of dependencies with
// the reason for it, and every package whose `engines` refuse the oldest Node we support (npm's EBADENGINE
// warning) is named in its opening lines, which say the warning is expected.
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

const ROOT = join(import.meta.dirname, '..', '..');
const README = readFileSync(join(ROOT, 'README.md'), 'utf8');
const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as {
  dependencies: Record<string, string>;
  engines: { node: string };
};
const lock = JSON.parse(readFileSync(join(ROOT, 'package-lock.json'), 'utf8')) as {
  packages: Record<string, { engines?: { node?: string } }>;
};

type Version = [number, number, number];
const version = (v: string): Version => {
  const [a = 0, b = 0, c = 0] = v.replace(/^v/, '').split('.').map(Number);
  return [a, b, c];
};
const compare = (x: Version, y: Version): number => x[0] - y[0] || x[1] - y[1] || x[2] - y[2];

/**
 * Whether `v` meets an `engines.node` range of the forms npm packages use: `||` alternatives of space-separated
 * `>=`, `>`, `<`, `<=`, `^` or bare versions. An unknown form counts as met (no claim is made about it).
 */
function satisfies(v: string, range: string): boolean {
  const have = version(v);
  return range.split('||').some((alt) =>
    alt
      .trim()
      .replace(/([<>=^~]+)\s+/g, '$1')
      .split(/\s+/)
      .every((c) => {
        const m = /^(>=|>|<=|<|\^|~|=)?v?(\d+(?:\.\d+){0,2})(?:\.x)?$/.exec(c);
        if (!m) return true;
        const want = version(m[2] as string);
        const d = compare(have, want);
        switch (m[1]) {
          case '>=':
            return d >= 0;
          case '>':
            return d > 0;
          case '<=':
            return d <= 0;
          case '<':
            return d < 0;
          case '^':
            return d >= 0 && have[0] === want[0];
          case '~':
            return d >= 0 && have[0] === want[0] && have[1] === want[1];
          default: {
            // A bare or partial version is an X-range: 20 is any 20.x.y.
            const parts = (m[2] as string).split('.').length;
            return have.slice(0, parts).every((n, i) => n === want[i]);
          }
        }
      }),
  );
}

describe('README.md', () => {
  it('lists every runtime dependency among its design notes, with what it is for', () => {
    const notes = /^- \*\*Dependencies\*\*[\s\S]*?(?=^- \*\*)/m.exec(README)?.[0] ?? '';
    expect(notes).not.toBe('');
    for (const name of Object.keys(pkg.dependencies)) expect(notes, name).toContain(`\`${name}\``);
  });

  it("names, in its opening lines, every package whose engines refuse our oldest Node (npm's EBADENGINE)", () => {
    const oldest = /^>=\s*(\S+)$/.exec(pkg.engines.node)?.[1] as string;
    expect(oldest).toBeDefined();
    const refusing = Object.entries(lock.packages)
      .filter(([where, p]) => where !== '' && existsSync(join(ROOT, where)) && p.engines?.node !== undefined)
      .filter(([, p]) => !satisfies(oldest, p.engines?.node as string))
      .map(([where]) => where.replace(/^.*node_modules\//, ''));
    expect(refusing).toContain('kubernetes-models'); // the check finds what npm warns about
    const opening = README.slice(0, README.indexOf('\n## '));
    expect(opening).toContain('EBADENGINE');
    for (const name of refusing) {
      const scope = name.startsWith('@') ? `\`${name.split('/')[0]}/*\`` : undefined;
      expect(opening.includes(`\`${name}\``) || (scope !== undefined && opening.includes(scope)), name).toBe(true);
    }
  });

  it('reads engines ranges as npm does, for the forms in the lock file', () => {
    expect(satisfies('20.19.0', '>=22')).toBe(false);
    expect(satisfies('20.19.0', '^22.17.0 || >=24.0.0')).toBe(false);
    expect(satisfies('20.19.0', '^18.18.0 || ^20.9.0 || >=21.1.0')).toBe(true);
    expect(satisfies('20.19.0', '>= 18')).toBe(true);
    expect(satisfies('20.19.0', '^20.19.0 || >=22.12.0')).toBe(true);
    expect(satisfies('20.19.0', '>=20.20')).toBe(false);
    expect(satisfies('20.19.0', '18 || 20 || >=22')).toBe(true);
    expect(satisfies('21.1.0', '18 || 20 || >=22')).toBe(false);
  });
});
