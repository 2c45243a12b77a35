// `noderotation status`: per NodePool, what is happening now and what comes next (src/status/). Reads -f files
// and/or the cluster (--from-cluster); -w refreshes until interrupted or until its reader closes the pipe.
import { isValidTimezone } from '../src/schedule/zone.js';
import { effectivePolicies, type ExplainResult } from '../src/explain/explain.js';
import { fleetStatus } from '../src/status/fleet-status.js';
import { renderStatus } from '../src/status/status-table.js';
import { oneOf, parseNow } from './flags.js';
import { OUTPUTS } from './formats.js';
import { commandInputs, inputProblems, madeFromPlans, reportInvalid, reportPlanErrors } from './inputs.js';
import { UsageError } from './io.js';
import { structured } from './output.js';
import { objectFindingLine } from '../src/util/severity-label.js';
import { EXIT_OK, readerGone, wantsColour, type Io } from './process.js';
import type { ClusterOptions, FileOptions } from './program.js';

export interface StatusOptions extends FileOptions, ClusterOptions {
  output: string;
  now?: string;
  watch?: boolean;
  timezone?: string;
}

export interface StatusRuntime {
  /** Resolves when -w should stop (SIGINT/SIGTERM). */
  stopSignal: Promise<unknown>;
  /** Waits between refreshes, or until `signal` is aborted (then at once, its timer cleared). */
  sleep: (ms: number, signal?: AbortSignal) => Promise<void>;
}

const REFRESH_MS = 5000;

export async function runStatus(values: StatusOptions, io: Io, runtime: StatusRuntime): Promise<number> {
  const output = oneOf('-o', values.output, OUTPUTS.status);
  const userZone = values.timezone ?? io.env?.TZ ?? Intl.DateTimeFormat().resolvedOptions().timeZone;
  if (!isValidTimezone(userZone))
    throw new UsageError(`--timezone ${userZone}: not an IANA time zone such as Europe/Berlin or UTC`);
  if (values.watch && values.now !== undefined) throw new UsageError('-w refreshes with the clock: drop --now');
  let noted = false;
  // Interrupted (Ctrl-C, SIGTERM): the wait ends at once and leaves no timer behind.
  const stop = new AbortController();
  void runtime.stopSignal.then(() => stop.abort());
  for (;;) {
    const code = await once();
    if (code !== EXIT_OK || !values.watch) return code;
    await runtime.sleep(REFRESH_MS, stop.signal);
    // Interrupted, or nobody reads any more (`status -w | head`: a write met a closed pipe).
    if (stop.signal.aborted || readerGone(io.stdout)) return EXIT_OK;
  }

  async function once(): Promise<number> {
    const now = parseNow(values.now, io.now);
    const inputs = await commandInputs(values, io, { keepComposedPolicies: true });
    const problems = inputProblems(inputs);
    if (problems.lines.length === 0 && inputs.nodePools.length === 0)
      problems.lines.push('no NodePools (karpenter.sh/v1) in the input: pass them with -f, or use --from-cluster');
    if (problems.lines.length > 0) return reportInvalid(io, problems);
    // A plan whose RotationPolicies are not among the inputs (the cluster's, composed by Crossplane, keep their
    // status) is expanded here as the function expands it: `status -f plan.yaml -f nodepools.yaml` previews it.
    const plans = inputs.plans.filter((plan) => !inputs.policies.some(madeFromPlans([plan.metadata.name])));
    const result: Pick<ExplainResult, 'excluded' | 'planErrors' | 'inputFindings'> = {
      excluded: [],
      planErrors: [],
      inputFindings: [],
    };
    const policies = effectivePolicies({ ...inputs, plans }, result);
    if (result.planErrors.length > 0) return reportPlanErrors(io, result.planErrors);
    if (!noted) {
      noted = true;
      // A plan that governs nothing, or one that cannot work, as explain words it (its table says why).
      const colour = wantsColour(io.stderr, io.env ?? process.env);
      for (const f of result.inputFindings.filter((x) => x.severity === 'fatal'))
        io.stderr.write(objectFindingLine(f, colour));
    }
    const pools = fleetStatus({ ...inputs, policies }, now);
    if (values.watch) io.stdout.write(`\n${new Date(now).toISOString()}\n`);
    io.stdout.write(
      output === 'json' || output === 'yaml'
        ? structured({ now: new Date(now).toISOString(), nodePools: pools }, output)
        : renderStatus(pools, { now, userZone, wide: output === 'wide' }),
    );
    return EXIT_OK;
  }
}
