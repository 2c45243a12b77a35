// The finding reasons are public API (docs/api.md, Findings): every reason is documented with its severity.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { REASONS } from './findings.js';

const doc = readFileSync(new URL('../../docs/api.md', import.meta.url), 'utf8');
/** The rows of the Findings table: reason → severity. */
const documented = new Map(
  [...doc.matchAll(/^\| `([A-Za-z]+)` \| (fatal|warning) \|/gm)].map((m) => [m[1] as string, m[2] as string]),
);

describe('finding reasons', () => {
  it.each(Object.entries(REASONS))('%s is documented in docs/api.md with its severity', (reason, severity) => {
    expect(documented.get(reason)).toBe(severity);
  });
});
