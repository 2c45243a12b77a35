// The seeded bugs of mutants.ts (npm run sim:mutants) still apply: each edit's search string occurs exactly once
// in its file, so a mutant never rots silently into a copy of the unmodified controller when the code changes.
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { applyEdit, interleavedPlan, MUTANTS } from './mutants.js';
import { CI_PARTS, CI_SEEDS, ciPart } from './seeds.js';

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
  it('has a test file running each part of CI’s plan, each part once, and the parts cover the plan', () => {
    const dir = path.join(ROOT, 'test/sim');
    const runs = fs
      .readdirSync(dir)
      .filter((f) => f.endsWith('.test.ts'))
      .flatMap((f) => [...fs.readFileSync(path.join(dir, f), 'utf8').matchAll(/expectRunsHold\(ciPart\((\d+)\)\)/g)])
      .map((m) => Number(m[1]))
      .sort((a, b) => a - b);
    expect(runs).toEqual(Array.from({ length: CI_PARTS }, (_, k) => k));
    const seeds = runs.flatMap((k) => ciPart(k).map((r) => r.seed));
    expect(new Set(seeds).size).toBe(CI_SEEDS);
  });
});
