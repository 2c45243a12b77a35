// `noderotation simulate -f scenario.yaml [-o table|json|html]`: the engine against a model of Karpenter.
import { truncate } from '../util/describe.js';
import type { Scenario } from '../generated/api-types.js';
import { formatInputError, parseYamlFile } from '../api/documents.js';
import { validateAgainst } from '../api/validate.js';
import { rfc3339 } from '../engine/annotations.js';
import { renderHtml } from '../simulate/html.js';
import { scenarioSizeErrors, SimulationLimitError } from '../simulate/limits.js';
import { configOf } from '../simulate/model.js';
import { simulate, type SimulationResult } from '../simulate/simulate.js';
import { formatHuman } from '../util/duration.js';
import { EXIT_OK } from './explain-command.js';
import { oneOf, parseFlags } from './flags.js';
import { reportInvalid } from './inputs.js';
import { readInputs, UsageError, type InputFile } from './io.js';
import type { Io } from './main.js';

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

/** The one Scenario of the file, or the problems: a broken document, another kind, a second document. */
function readScenario(name: string, text: string): { scenario?: Scenario; problems: string[] } {
  const { documents, errors } = parseYamlFile(name, text);
  const problems = errors.map(formatInputError);
  const [first, ...rest] = documents;
  for (const d of rest)
    problems.push(
      `${name}, document ${d.document}: found a second document; allowed: one Scenario per file (docs/simulate.md)`,
    );
  if (first === undefined) {
    if (problems.length === 0) problems.push(`${name}: found no document; allowed: one Scenario (docs/simulate.md)`);
    return { problems };
  }
  const doc = first.value as Record<string, unknown>;
  const apiVersion = typeof doc === 'object' && doc !== null && !Array.isArray(doc) ? doc.apiVersion : undefined;
  const kind = typeof doc === 'object' && doc !== null && !Array.isArray(doc) ? doc.kind : undefined;
  if (apiVersion !== 'noderotation.io/v1alpha1' || kind !== 'Scenario') {
    const found =
      typeof apiVersion === 'string' && typeof kind === 'string'
        ? `${truncate(apiVersion, 60)} ${truncate(kind, 60)}`
        : 'an object without apiVersion and kind';
    problems.push(
      `${name}, document ${first.document}: apiVersion/kind: found ${found}; ` +
        'allowed: noderotation.io/v1alpha1 Scenario (policies and NodePools are read by explain, validate, render)',
    );
    return { problems };
  }
  for (const e of validateAgainst('scenario', doc))
    problems.push(`${name}, document ${first.document}: ${e.path}: found ${e.found}; allowed: ${e.allowed}`);
  if (problems.length > 0) return { problems };
  const scenario = doc as unknown as Scenario;
  for (const e of scenarioSizeErrors(scenario))
    problems.push(`${name}, document ${first.document}: ${e.path}: found ${e.found}; allowed: ${e.allowed}`);
  return problems.length > 0 ? { problems } : { scenario, problems };
}

/** Progress on stderr once a run has taken PROGRESS_AFTER_MS, then every PROGRESS_EVERY_MS: runs of a few
 * seconds stay quiet; long ones show they move (a CI log gets the same lines as a terminal). */
const PROGRESS_AFTER_MS = 3000;
const PROGRESS_EVERY_MS = 5000;

function progressReporter(io: Io, end: number): (p: { at: number; events: number }) => void {
  const clock = io.monotonic ?? (() => performance.now());
  const started = clock();
  let next = started + PROGRESS_AFTER_MS;
  return ({ at, events }) => {
    const t = clock();
    if (t < next) return;
    next = t + PROGRESS_EVERY_MS;
    io.stderr.write(
      `simulate: ${rfc3339(at)} of ${rfc3339(end)} reached, ${events.toLocaleString('en-US')} events, ` +
        `${Math.round((t - started) / 1000)}s\n`,
    );
  };
}

export function runSimulate(args: string[], io: Io): number {
  const values = parseFlags(args, {
    filename: { type: 'string', short: 'f' },
    output: { type: 'string', short: 'o', default: 'table' },
    baseline: { type: 'boolean', default: false },
  });
  if (values.filename === undefined)
    throw new UsageError('simulate needs -f SCENARIO.yaml (or -f - for standard input)');
  const output = oneOf('-o', values.output, ['table', 'json', 'html']);
  const [file] = readInputs([values.filename], {
    stdin: io.readStdin,
    note: (line) => io.stderr.write(`${line}\n`),
    single: true,
  });
  const { scenario, problems } = readScenario((file as InputFile).name, (file as InputFile).text);
  if (scenario === undefined) return reportInvalid(io, { lines: problems, omitted: 0 });
  if (values.baseline) scenario.spec.mode = 'baseline';
  let result: SimulationResult;
  try {
    result = simulate(scenario, { progress: progressReporter(io, configOf(scenario).end) });
  } catch (err) {
    if (!(err instanceof SimulationLimitError)) throw err;
    return reportInvalid(io, { lines: [`${(file as InputFile).name}: ${err.message}`], omitted: 0 });
  }
  if (output === 'json') io.stdout.write(`${JSON.stringify(result, null, 2)}\n`);
  else if (output === 'html') io.stdout.write(renderHtml(result));
  else io.stdout.write(table(result));
  return EXIT_OK;
}
