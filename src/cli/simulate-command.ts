// `noderotation simulate -f scenario.yaml [-o table|json|html]`: the engine against a model of Karpenter.
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { parseAllDocuments } from 'yaml';
import type { Scenario } from '../generated/api-types.js';
import { validateAgainst } from '../api/validate.js';
import { renderHtml } from '../simulate/html.js';
import { simulate, type SimulationResult } from '../simulate/simulate.js';
import { formatHuman } from '../util/duration.js';
import { UsageError } from './io.js';
import type { Io } from './main.js';
import { EXIT_INVALID, EXIT_OK } from './explain-command.js';

function table(r: SimulationResult): string {
  const rows: [string, string][] = [
    ['scenario', `${r.scenario} (${r.mode}), ${r.start} → ${r.end}`],
    ['nodes at start', String(r.nodes)],
    ['graceful rotations', String(r.rotations.graceful)],
    ['forceful fallbacks', String(r.rotations.forcefulFallback)],
    ['failed surge attempts', String(r.rotations.failedAttempts)],
    ['forceful expirations', String(r.forcefulExpirations)],
    ['starts outside a window', String(r.startsOutsideWindow)],
    ['max concurrent rotations', String(r.maxConcurrentRotations)],
    ['window period P', r.figures.windowPeriodSeconds === null ? '-' : formatHuman(r.figures.windowPeriodSeconds)],
    ['age threshold A', r.figures.ageThresholdSeconds === null ? '-' : formatHuman(r.figures.ageThresholdSeconds)],
    ['chances G × capacity C', `${r.figures.guaranteedChances ?? '-'} × ${r.figures.capacityPerOccurrence ?? '-'}`],
  ];
  const w = Math.max(...rows.map(([k]) => k.length));
  return `${rows.map(([k, v]) => `${k.padEnd(w)}  ${v}`).join('\n')}\n`;
}

export function runSimulate(args: string[], io: Io): number {
  const { values } = parseArgs({
    args,
    options: {
      filename: { type: 'string', short: 'f' },
      output: { type: 'string', short: 'o', default: 'table' },
      baseline: { type: 'boolean', default: false },
    },
    strict: true,
    allowPositionals: false,
  });
  if (!values.filename) throw new UsageError('simulate needs -f SCENARIO.yaml');
  if (!['table', 'json', 'html'].includes(values.output as string))
    throw new UsageError(`-o ${values.output}: expected table, json or html`);
  const text = values.filename === '-' ? io.readStdin() : readFileSync(values.filename, 'utf8');
  const docs = parseAllDocuments(text);
  const list = Array.isArray(docs) ? docs : [docs];
  const doc = list.find((d) => d.contents !== null);
  if (!doc || doc.errors.length > 0) {
    io.stderr.write(`invalid input: ${values.filename}: ${doc?.errors[0]?.message ?? 'no document'}\n`);
    return EXIT_INVALID;
  }
  const scenario = doc.toJS() as Scenario;
  const errors = validateAgainst('scenario', scenario);
  if (errors.length > 0) {
    io.stderr.write(
      `invalid input:\n${errors.map((e) => `  ${values.filename}: ${e.path}: found ${e.found}; allowed: ${e.allowed}`).join('\n')}\n`,
    );
    return EXIT_INVALID;
  }
  if (values.baseline) scenario.spec.mode = 'baseline';
  const result = simulate(scenario);
  if (values.output === 'json') io.stdout.write(`${JSON.stringify(result, null, 2)}\n`);
  else if (values.output === 'html') io.stdout.write(renderHtml(result));
  else io.stdout.write(table(result));
  return EXIT_OK;
}
