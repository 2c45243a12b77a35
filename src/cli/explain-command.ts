// `noderotation explain` and `noderotation validate`: the same checks, for a person and for CI.
import { parseArgs } from 'node:util';
import { formatInputError, readDocuments } from '../api/documents.js';
import { explain, reportJson } from '../explain/explain.js';
import { renderTable } from '../explain/table.js';
import { readInputs, UsageError } from './io.js';
import type { Io } from './main.js';

export const EXIT_OK = 0;
export const EXIT_FATAL = 1;
export const EXIT_INVALID = 2;

function parseNow(value: string | undefined, io: Io): number {
  if (value === undefined) return io.now();
  const t = Date.parse(value);
  if (Number.isNaN(t) || !/^\d{4}-\d{2}-\d{2}T/.test(value))
    throw new UsageError(`--now ${value}: expected an RFC 3339 time such as 2027-01-04T00:00:00Z`);
  return t;
}

export function runExplain(args: string[], io: Io, mode: 'explain' | 'validate'): number {
  const { values } = parseArgs({
    args,
    options: {
      filename: { type: 'string', short: 'f', multiple: true },
      output: { type: 'string', short: 'o', default: mode === 'explain' ? 'table' : 'text' },
      now: { type: 'string' },
    },
    strict: true,
    allowPositionals: false,
  });
  const allowed = mode === 'explain' ? ['table', 'json'] : ['text', 'json'];
  if (!allowed.includes(values.output as string))
    throw new UsageError(`-o ${values.output}: expected ${allowed.join(' or ')}`);
  const now = parseNow(values.now, io);
  const inputs = readDocuments(readInputs(values.filename ?? [], io.readStdin));
  for (const ignored of inputs.ignored)
    io.stderr.write(
      `note: ${ignored.file}, document ${ignored.document}: ${ignored.kind} is not read by noderotation; skipped\n`,
    );
  const problems = inputs.errors.map(formatInputError);
  if (problems.length === 0 && inputs.nodePools.length === 0) {
    problems.push('no NodePools (karpenter.sh/v1) in the input: pass the NodePools the policies are for with -f');
  }
  if (problems.length === 0 && inputs.policies.length === 0 && inputs.plans.length === 0) {
    problems.push(
      'no RotationPolicy or MaintenancePlan (noderotation.io/v1alpha1) in the input: pass at least one with -f',
    );
  }
  if (problems.length > 0) {
    io.stderr.write(`invalid input:\n${problems.map((p) => `  ${p}`).join('\n')}\n`);
    return EXIT_INVALID;
  }
  const result = explain(inputs, now);
  if (result.planErrors.length > 0) {
    const lines = result.planErrors.map(
      (e) => `  MaintenancePlan ${e.plan}, NodePool ${e.nodePool}: ${e.path}: found ${e.found}; allowed: ${e.allowed}`,
    );
    io.stderr.write(`invalid input: the merged settings are not a valid RotationPolicy:\n${lines.join('\n')}\n`);
    return EXIT_INVALID;
  }
  for (const f of result.planFindings) io.stderr.write(`FATAL ${f.reason}: ${f.message}\n`);
  const pools = result.report.nodePools;
  if (values.output === 'json') io.stdout.write(reportJson(result.report));
  else if (mode === 'explain') io.stdout.write(renderTable(result.report, result.excluded));
  else {
    for (const p of pools) {
      for (const f of p.findings)
        io.stdout.write(`${f.severity === 'fatal' ? 'FATAL' : 'WARNING'} ${p.nodePool} ${f.reason}: ${f.message}\n`);
    }
    const fatal =
      pools.reduce((n, p) => n + p.findings.filter((f) => f.severity === 'fatal').length, 0) +
      result.planFindings.length;
    const warnings = pools.reduce((n, p) => n + p.findings.filter((f) => f.severity === 'warning').length, 0);
    io.stdout.write(`${pools.length} NodePools checked: ${fatal} fatal, ${warnings} warnings\n`);
  }
  const anyFatal = result.planFindings.length > 0 || pools.some((p) => p.findings.some((f) => f.severity === 'fatal'));
  return anyFatal ? EXIT_FATAL : EXIT_OK;
}
