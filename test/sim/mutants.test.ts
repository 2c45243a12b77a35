// The seeded bugs of mutants.ts (npm run sim:mutants) still apply: each edit's search string occurs exactly once
// in its file, so a mutant never rots silently into a copy of the unmodified controller when the code changes.
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { applyEdit, interleavedPlan, MUTANTS } from './mutants.js';
import { CI_SEEDS } from './seeds.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

describe('the seeded bugs of npm run sim:mutants', () => {
  it.each(MUTANTS.map((m) => [m.name, m] as const))('%s applies exactly once to the current tree', (_, m) => {
    for (const e of m.edits) {
      expect(e.file).toMatch(/^(controller|runtime|src)\//);
      const text = fs.readFileSync(path.join(ROOT, e.file), 'utf8');
      expect(applyEdit(m, e, text)).not.toBe(text);
    }
  });
  it('names each mutant once, and fails loudly on an edit that no longer applies', () => {
    expect(new Set(MUTANTS.map((m) => m.name)).size).toBe(MUTANTS.length);
    const m = { name: 'gone', bug: '', edits: [] };
    expect(() => applyEdit(m, { file: 'x.ts', search: 'absent', replace: '' }, 'text')).toThrow(/mutant gone/);
    expect(() => applyEdit(m, { file: 'x.ts', search: 'a', replace: '' }, 'a a')).toThrow(/2 times/);
  });
  it('runs the whole of CI’s plan, its parts interleaved', () => {
    const plan = interleavedPlan();
    expect(plan).toHaveLength(CI_SEEDS);
    expect(plan.slice(0, 2).map((r) => r.seed)).toEqual([1, 200_001]);
  });
});
