// `noderotation simulate -f scenario.yaml [-o table|json|html]`: the engine against a model of Karpenter.
import { truncate } from '../src/util/describe.js';
import type { Scenario } from '../src/generated/api-types.js';
import { formatInputError, parseYamlFile } from '../src/api/documents.js';
import { validateAgainst } from '../src/api/validate.js';
import { rfc3339 } from '../src/engine/annotations.js';
import { DEFAULT_SAMPLE, renderHtml, renderWhatIfHtml } from '../src/simulate/html.js';
import { scenarioSizeErrors, SimulationLimitError } from '../src/simulate/limits.js';
import { configOf } from '../src/simulate/model.js';
import { simulate, type SimulationResult } from '../src/simulate/simulate.js';
import { formatDuration } from '../src/util/duration.js';
import { oneOf, parseNow, parseSpan } from './flags.js';
import { OUTPUTS, type FailOn } from './formats.js';
import { inputProblems, readCommandInputs, reportInvalid } from './inputs.js';
import { structured } from './output.js';
import type { ClusterOptions } from './program.js';
import { clusterConfig, readCluster } from './cluster.js';
import { comparisonOf, whatIfRuns, type PoolRuns, type PoolWhatIf } from '../src/simulate/what-if.js';
import { alignColumns } from '../src/util/columns.js';
import { readInputs, UsageError, type InputFile } from './io.js';
import { EXIT_FATAL, EXIT_OK, type Io } from './process.js';

export interface SimulateOptions extends ClusterOptions {
  filename?: string[];
  output: string;
  baseline?: boolean;
  duration?: string;
  now?: string;
  sample?: string;
  pool?: string;
  failOn?: FailOn[];
}

/** What --fail-on counts in a run: forced expirations, or forceful fallbacks. */
interface Outcomes {
  'forceful-expirations': number;
  'forceful-fallbacks': number;
}

/** Exit 1, with a line per outcome named by --fail-on that the simulation shows; else `code`. */
function failOn(io: Io, values: SimulateOptions, outcomes: Outcomes, code: number): number {
  const hit = (values.failOn ?? []).filter((o, i, all) => outcomes[o] > 0 && all.indexOf(o) === i);
  for (const o of hit) io.stderr.write(`simulate: ${outcomes[o]} ${o.replace('-', ' ')} (--fail-on ${o})\n`);
  return hit.length > 0 ? EXIT_FATAL : code;
}

function table(r: SimulationResult): string {
  const rows: [string, string][] = [
    ['scenario', `${r.scenario} (${r.mode}), ${r.start} → ${r.end}`],
    ['nodes at start', String(r.nodes)],
    ['graceful rotations', String(r.rotations.graceful)],
    ['forceful fallbacks', String(r.rotations.forcefulFallback)],
    ['failed surge attempts', String(r.rotations.failedAttempts)],
    ['forceful expirations', String(r.forcefulExpirations)],
    ['forceful expirations in a freeze', String(r.forcefulExpirationsInFreeze)],
    ['starts outside a window', String(r.startsOutsideWindow)],
    ['max concurrent rotations', String(r.maxConcurrentRotations)],
    ['window period P', r.figures.windowPeriodSeconds === null ? '-' : formatDuration(r.figures.windowPeriodSeconds)],
    ['age threshold A', r.figures.ageThresholdSeconds === null ? '-' : formatDuration(r.figures.ageThresholdSeconds)],
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

export async function runSimulate(values: SimulateOptions, io: Io): Promise<number> {
  if (values.sample !== undefined && values.output !== 'html') throw new UsageError('--sample is for -o html');
  if (values.fromCluster) return runWhatIf(values, io);
  if (values.pool !== undefined)
    throw new UsageError('--pool is for simulate --from-cluster -o html (a scenario has one NodePool)');
  for (const flag of ['duration', 'now'] as const)
    if (values[flag] !== undefined) throw new UsageError(`--${flag} is for simulate --from-cluster`);
  const files = values.filename ?? [];
  if (files.length !== 1)
    throw new UsageError(
      files.length === 0
        ? 'simulate needs -f SCENARIO.yaml (or -f - for standard input), or --from-cluster'
        : `simulate reads one scenario; -f given ${files.length} times (${files.join(', ')})`,
    );
  const output = oneOf('-o', values.output, OUTPUTS.simulate);
  const [file] = readInputs(files, {
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
  if (output === 'json' || output === 'yaml') io.stdout.write(structured(result, output));
  else if (output === 'html') io.stdout.write(renderHtml(result, { sample: parseSample(values.sample) }));
  else io.stdout.write(table(result));
  return failOn(
    io,
    values,
    { 'forceful-expirations': result.forcefulExpirations, 'forceful-fallbacks': result.rotations.forcefulFallback },
    EXIT_OK,
  );
}

/** The most per-node rows of the HTML report. */
const MAX_SAMPLE = 5000;

/** --sample N: how many node lives the HTML draws row by row (0 to MAX_SAMPLE). */
export function parseSample(text: string | undefined): number {
  if (text === undefined) return DEFAULT_SAMPLE;
  const n = /^\d{1,5}$/.test(text) ? Number(text) : NaN;
  if (!(n <= MAX_SAMPLE))
    throw new UsageError(
      `--sample ${truncate(text, 40)}: expected a whole number of node rows from 0 to ${MAX_SAMPLE} ` +
        `(default ${DEFAULT_SAMPLE})`,
    );
  return n;
}

/** 60d, 1440h, 90m: simulate's --duration (flags.ts: parseSpan). */
export const parseSimDuration = (text: string): number => parseSpan('--duration', text, MAX_WHAT_IF_DAYS, '60d, 1440h');

const MAX_WHAT_IF_DAYS = 730;

/** simulate --from-cluster [-f changed…]: the live fleet before and after the changes, side by side. */
async function runWhatIf(values: SimulateOptions, io: Io): Promise<number> {
  if (values.baseline) throw new UsageError('--baseline is for a scenario file; --from-cluster compares policies');
  const output = oneOf('-o', values.output, OUTPUTS.simulate);
  if (values.pool !== undefined && output !== 'html') throw new UsageError('--pool is for -o html');
  // Only the chosen pool is drawn node by node, so a sample without a pool would be silently ignored.
  if (values.sample !== undefined && values.pool === undefined)
    throw new UsageError('--sample with --from-cluster sets the rows of the --pool NAME pool; give --pool too');
  const sample = parseSample(values.sample);
  const duration = parseSimDuration(values.duration ?? '60d');
  const now = parseNow(values.now, io.now);
  const cluster = await readCluster(clusterConfig(values, io.env ?? process.env));
  const after = readCommandInputs(values.filename ?? [], io, cluster);
  // The same cluster without the files: its notes were just printed for `after`, so not twice.
  const before = readCommandInputs([], { ...io, stderr: { write: () => true } }, cluster);
  const problems = inputProblems(after);
  if (problems.lines.length === 0 && after.nodePools.length === 0)
    problems.lines.push(`no NodePools (karpenter.sh/v1) in ${cluster.source}`);
  if (problems.lines.length > 0) return reportInvalid(io, problems);
  if (values.pool !== undefined && !after.nodePools.some((p) => p.metadata.name === values.pool))
    return reportInvalid(io, {
      lines: [
        `--pool ${truncate(values.pool, 60)}: no such NodePool in ${cluster.source}; the NodePools: ` +
          truncate(
            after.nodePools
              .map((p) => p.metadata.name)
              .sort()
              .join(', '),
            400,
          ),
      ],
      omitted: 0,
    });
  let runs: PoolRuns[];
  try {
    runs = whatIfRuns(before, after, now, duration);
  } catch (err) {
    if (!(err instanceof SimulationLimitError)) throw err;
    return reportInvalid(io, { lines: [`${cluster.source}: ${err.message}`], omitted: 0 });
  }
  const pools: PoolWhatIf[] = runs.map(comparisonOf);
  const report = { now: rfc3339(now), duration: formatDuration(duration), nodePools: pools };
  if (output === 'html')
    io.stdout.write(
      renderWhatIfHtml(
        { ...report, durationSeconds: duration, nodePools: runs },
        { sample, ...(values.pool !== undefined ? { pool: values.pool } : {}) },
      ),
    );
  else if (output === 'json' || output === 'yaml') io.stdout.write(structured(report, output));
  else io.stdout.write(whatIfTable(pools, report));
  const sum = (f: (s: PoolWhatIf['after']) => number): number => pools.reduce((n, p) => n + f(p.after), 0);
  return failOn(
    io,
    values,
    {
      'forceful-expirations': sum((s) => s.forcefulExpirations),
      'forceful-fallbacks': sum((s) => s.forcefulFallback),
    },
    EXIT_OK,
  );
}

function whatIfTable(pools: readonly PoolWhatIf[], r: { now: string; duration: string }): string {
  const side = (s: PoolWhatIf['before']): string =>
    `${s.policy ?? '(none)'}: ${s.graceful} graceful, ${s.forcefulFallback} fallback, ` +
    `${s.forcefulExpirations} expired, ${s.rotationsPerWindow ?? '-'}/window`;
  const header = ['NODEPOOL', 'NODES', 'BEFORE', 'AFTER', 'AT-RISK', 'FIRST-CHANGE'];
  const rows = pools.map((p) => [
    p.nodePool,
    String(p.after.nodes),
    side(p.before),
    side(p.after),
    `${p.before.nodesAtRisk} → ${p.after.nodesAtRisk}`,
    p.firstChange ?? 'none',
  ]);
  return `from ${r.now}, over ${r.duration}:\n${alignColumns(header, rows).join('\n')}\n`;
}
