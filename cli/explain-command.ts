// `noderotation explain` and `noderotation validate`: the same checks, for a person and for CI.
import { explain, reportJson } from '../src/explain/explain.js';
import { renderLegend, renderTable } from '../src/explain/table.js';
import { commandInputs, inputProblems, reportInvalid, reportPlanErrors, requirePoolsAndPolicies } from './inputs.js';
import { oneOf, parseNow } from './flags.js';
import { OUTPUT_ALIASES, OUTPUTS } from './formats.js';
import { structured } from './output.js';
import { EXIT_FATAL, EXIT_OK, wantsColour, type Io } from './process.js';
import { objectFindingLine, severityLabel } from '../src/util/severity-label.js';
import type { ClusterOptions, FileOptions } from './program.js';
import { count } from '../src/util/plural.js';

export interface ExplainOptions extends FileOptions, ClusterOptions {
  output: string;
  now?: string;
  legend?: boolean;
}

export async function runExplain(values: ExplainOptions, io: Io, mode: 'explain' | 'validate'): Promise<number> {
  if (values.legend) {
    io.stdout.write(renderLegend());
    return EXIT_OK;
  }
  const output = oneOf('-o', OUTPUT_ALIASES[mode]?.[values.output] ?? values.output, OUTPUTS[mode]);
  const colour = wantsColour(io.stdout, io.env ?? process.env);
  const errColour = wantsColour(io.stderr, io.env ?? process.env);
  const now = parseNow(values.now, io.now);
  const inputs = await commandInputs(values, io);
  const problems = inputProblems(inputs);
  requirePoolsAndPolicies(inputs, problems);
  if (problems.lines.length > 0) return reportInvalid(io, problems);
  const result = explain(inputs, now);
  if (result.planErrors.length > 0) return reportPlanErrors(io, result.planErrors);
  // The text forms give findings about whole input objects on stderr; -o json and -o yaml carry them.
  const machine = output === 'json' || output === 'yaml';
  if (!machine) for (const f of result.inputFindings) io.stderr.write(objectFindingLine(f, errColour));
  const pools = result.report.nodePools;
  const json = (): string => reportJson(result.report, result.inputFindings);
  if (output === 'json') io.stdout.write(json());
  else if (output === 'yaml') io.stdout.write(structured(JSON.parse(json()), 'yaml'));
  else if (mode === 'explain') io.stdout.write(renderTable(result.report, result.excluded, { colour }));
  else {
    for (const p of pools) {
      for (const f of p.findings)
        io.stdout.write(`${severityLabel(f.severity, { colour })} ${p.nodePool} ${f.reason}: ${f.message}\n`);
    }
    const all = [...pools.flatMap((p) => p.findings), ...result.inputFindings];
    const fatal = all.filter((f) => f.severity === 'fatal').length;
    const warnings = all.length - fatal;
    io.stdout.write(`${count(pools.length, 'NodePool')} checked: ${fatal} fatal, ${count(warnings, 'warning')}\n`);
  }
  const anyFatal = [...result.inputFindings, ...pools.flatMap((p) => p.findings)].some((f) => f.severity === 'fatal');
  return anyFatal ? EXIT_FATAL : EXIT_OK;
}
