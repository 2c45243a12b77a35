// Every published soak run (docs/validation/<run>/) is what its own records say: its report, ledger and criteria
// are generated again here from the committed records.json.gz alone and must be byte-identical to the committed
// files, and a published run passes every criterion.
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import type { Criterion } from '../../bench/soak/ledger.js';
import { factsOf, outputsOf, readRecords } from '../../bench/soak/report-cli.js';

const ROOT = path.join(import.meta.dirname, '../../docs/validation');
const runs = readdirSync(ROOT, { withFileTypes: true })
  .filter((d) => d.isDirectory())
  .map((d) => d.name)
  .sort();

describe('published soak runs (docs/validation)', () => {
  it('there is at least one, of an hour or more with chaos', () => {
    expect(runs.length).toBeGreaterThan(0);
    const long = runs.filter((r) => {
      const facts = factsOf(path.join(ROOT, r));
      return facts.minutes >= 60 && facts.chaos;
    });
    expect(long.length).toBeGreaterThan(0);
  });

  it.each(runs)(
    '%s: ledger, criteria, summary and report regenerated from its records are the committed ones',
    (run) => {
      const dir = path.join(ROOT, run);
      const outputs = outputsOf(readRecords(dir), factsOf(dir));
      for (const [name, content] of Object.entries(outputs))
        expect(content, name).toBe(readFileSync(path.join(dir, name), 'utf8'));
      const verdicts = JSON.parse(outputs['criteria.json'] as string) as Criterion[];
      expect(verdicts.filter((v) => !v.pass)).toEqual([]);
    },
  );
});
