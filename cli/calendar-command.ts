// `noderotation calendar`: the iCalendar (RFC 5545) of the maintenance windows, the freezes and the forecast's
// rotations (src/calendar/), from -f files and/or the cluster, on standard output. MaintenancePlans are expanded
// into their policies, as explain does.
import { buildCalendar, DEFAULT_HORIZON_DAYS } from '../src/calendar/calendar.js';
import { calendarModel } from '../src/calendar/world.js';
import { effectivePolicies, type ExplainResult } from '../src/explain/explain.js';
import { truncate } from '../src/util/describe.js';
import { parseNow, parseSpan } from './flags.js';
import { commandInputs, inputProblems, reportInvalid, reportPlanErrors, requirePoolsAndPolicies } from './inputs.js';
import { UsageError } from './io.js';
import { EXIT_OK, type Io } from './process.js';
import type { ClusterOptions, FileOptions } from './program.js';

export interface CalendarOptions extends FileOptions, ClusterOptions {
  now?: string;
  /** --nodepool, repeatable: only these NodePools. */
  nodepool?: string[];
  horizon?: string;
}

/** The longest --horizon: the forecast looks no further than the claims' deadlines anyway. */
const MAX_HORIZON_DAYS = 366;

export async function runCalendar(values: CalendarOptions, io: Io): Promise<number> {
  const now = parseNow(values.now, io.now);
  const horizonSeconds = parseSpan(
    '--horizon',
    values.horizon ?? `${DEFAULT_HORIZON_DAYS}d`,
    MAX_HORIZON_DAYS,
    '35d, 720h',
  );
  const inputs = await commandInputs(values, io);
  const problems = inputProblems(inputs);
  requirePoolsAndPolicies(inputs, problems);
  if (problems.lines.length > 0) return reportInvalid(io, problems);
  const names = new Set(inputs.nodePools.map((p) => p.metadata.name));
  const unknown = (values.nodepool ?? []).filter((n) => !names.has(n));
  if (unknown.length > 0)
    throw new UsageError(
      `--nodepool ${truncate(unknown.join(', '), 80)}: no such NodePool in the input; the NodePools: ` +
        truncate([...names].sort().join(', '), 200),
    );
  const result: Pick<ExplainResult, 'excluded' | 'planErrors' | 'inputFindings'> = {
    excluded: [],
    planErrors: [],
    inputFindings: [],
  };
  const policies = effectivePolicies(inputs, result);
  if (result.planErrors.length > 0) return reportPlanErrors(io, result.planErrors);
  const model = calendarModel(
    { policies, nodePools: inputs.nodePools, nodeClaims: inputs.nodeClaims.length > 0 ? inputs.nodeClaims : null },
    now,
    { nodePools: values.nodepool, horizonSeconds },
  );
  if (model.pools.length === 0)
    io.stderr.write('note: no NodePool in the input is governed by a policy: the calendar has no events\n');
  else if (inputs.nodeClaims.length === 0)
    io.stderr.write('note: no NodeClaims in the input: the calendar has no forecast (pass them with -f)\n');
  io.stdout.write(buildCalendar(model));
  return EXIT_OK;
}
