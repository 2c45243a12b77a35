// `noderotation render`: the RotationPolicies the Crossplane function would compose, offline, as YAML. It
// calls the function's own pure handler with the request Crossplane would send, so the preview cannot
// differ from what the function applies.
import { Severity } from '@crossplane-org/function-sdk-typescript';
import type { JsonObject } from '../functions/json.js';
import { planRequest } from '../functions/request.js';
import { INPUT_REASONS, run } from '../functions/run.js';
import { startOfUtcDay } from '../functions/server.js';
import { oneOf, parseNow } from './flags.js';
import { isClusterSource } from './cluster.js';
import { OUTPUTS } from './formats.js';
import { commandInputs, inputProblems, reportInvalid } from './inputs.js';
import { MAX_NOTES } from './io.js';
import { objects } from './output.js';
import { EXIT_FATAL, EXIT_INVALID, EXIT_OK, wantsColour, type Io } from './process.js';
import { severityLabel } from '../src/util/severity-label.js';
import type { ClusterOptions, FileOptions } from './program.js';

export interface RenderOptions extends FileOptions, ClusterOptions {
  output: string;
  now?: string;
}

export async function runRender(values: RenderOptions, io: Io): Promise<number> {
  const output = oneOf('-o', values.output, OUTPUTS.render);
  const now = parseNow(values.now, io.now);
  const inputs = await commandInputs(values, io);
  // The cluster's policies are the cluster's business; a policy in a file may be a mistake worth a note.
  const fromFiles = inputs.policies.filter((p) => !isClusterSource(p.source.file));
  for (const p of fromFiles.slice(0, MAX_NOTES))
    io.stderr.write(
      `note: ${p.source.file}, document ${p.source.document}: RotationPolicy ${p.metadata.name} is already a policy; ` +
        'render expands MaintenancePlans only\n',
    );
  const problems = inputProblems(inputs);
  if (problems.lines.length === 0 && inputs.nodePools.length === 0)
    problems.lines.push('no NodePools (karpenter.sh/v1) in the input: pass the NodePools the plan is for with -f');
  if (problems.lines.length === 0 && inputs.plans.length === 0)
    problems.lines.push('no MaintenancePlan (noderotation.io/v1alpha1) in the input: pass one with -f');
  if (problems.lines.length > 0) return reportInvalid(io, problems);
  // The function's calendar: the start of the UTC day (docs/function.md), so a render matches what the
  // function composes the same day.
  const env = { calendarStart: startOfUtcDay(now) };
  const nodePools = inputs.nodePools as unknown as JsonObject[];
  const plans = [...inputs.plans].sort((a, b) => a.metadata.name.localeCompare(b.metadata.name));
  const documents: unknown[] = [];
  let code = EXIT_OK;
  for (const { source: _source, ...plan } of plans) {
    const rsp = run(planRequest({ composite: plan as unknown as JsonObject, nodePools }), env);
    for (const r of rsp.results) {
      const fatal = r.severity === Severity.SEVERITY_FATAL;
      const label = severityLabel(fatal ? 'fatal' : 'warning', {
        colour: wantsColour(io.stderr, io.env ?? process.env),
      });
      io.stderr.write(`${label} ${r.reason ?? ''}: ${r.message}\n`);
      if (fatal)
        code = Math.max(code, r.reason !== undefined && INPUT_REASONS.has(r.reason) ? EXIT_INVALID : EXIT_FATAL);
    }
    const resources = rsp.desired?.resources ?? {};
    for (const key of Object.keys(resources).sort()) documents.push(resources[key]?.resource);
  }
  if (documents.length > 0) io.stdout.write(objects(documents, output));
  return code;
}
