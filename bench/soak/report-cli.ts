// Writes a run's ledger, criteria, summary and report again from its records alone:
//   npm run soak:report -- DIR
// DIR holds records.json (as a run writes it) or records.json.gz (as docs/validation keeps it) and run.json (the
// seed, length and machine). test/docs/validation.test.ts does the same for every published run and compares.
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { gunzipSync } from 'node:zlib';
import { criteria, rotations, type SoakRecords } from './ledger.js';
import { renderReport, type RunFacts } from './report.js';
import { renderSummary } from './summary.js';

/** A run directory's records, plain or gzipped. */
export function readRecords(dir: string): SoakRecords {
  const plain = path.join(dir, 'records.json');
  const text = existsSync(plain)
    ? readFileSync(plain, 'utf8')
    : gunzipSync(readFileSync(path.join(dir, 'records.json.gz'))).toString('utf8');
  return JSON.parse(text) as SoakRecords;
}

/** Everything a run's directory shows, computed from its records: file name → content. */
export function outputsOf(records: SoakRecords, facts: RunFacts): Record<string, string> {
  const rots = rotations(records);
  const verdicts = criteria(records, rots);
  return {
    'ledger.json': `${JSON.stringify(rots, null, 2)}\n`,
    'criteria.json': `${JSON.stringify(verdicts, null, 2)}\n`,
    'summary.txt': renderSummary(records, rots, verdicts),
    'report.html': renderReport(records, rots, verdicts, facts),
  };
}

export const factsOf = (dir: string): RunFacts =>
  (JSON.parse(readFileSync(path.join(dir, 'run.json'), 'utf8')) as { facts: RunFacts }).facts;

if (process.argv[1] && import.meta.url.endsWith(path.basename(process.argv[1]))) {
  const dir = process.argv[2];
  if (!dir) {
    console.error('usage: npm run soak:report -- DIR   (DIR: a soak run’s --out, or a docs/validation run)');
    process.exit(2);
  }
  for (const [name, content] of Object.entries(outputsOf(readRecords(dir), factsOf(dir)))) {
    writeFileSync(path.join(dir, name), content);
    console.log(path.join(dir, name));
  }
}
