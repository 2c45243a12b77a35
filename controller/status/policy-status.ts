// A RotationPolicy's status, computed (purely) from its validation and the latest report of each NodePool it
// matches. Conditions:
//  - Ready, with the reference's reasons: Accepted (it governs its NodePools), Invalid (the spec fails
//    validation or a governed NodePool's schedule cannot work: message names the field and the fix),
//    Conflict (an equal-specificity tie: message names the policies and the NodePool);
//  - Stalled (kstatus): True exactly when Ready is False — nothing will happen until a person acts;
//  - Reconciling (kstatus): True while a rotation is in flight in a NodePool it governs.
// and one summary per governed NodePool (window, freeze, candidates, the rotation in flight, last results,
// figures), for `kubectl get -o yaml` and the status command: what the controller saw, never state it reads.
// lastTransitionTime changes only when a condition's status does, as metav1.Condition requires.
import type { FieldError } from '../../src/api/validate.js';
import { figureValues } from '../../src/derivation/figure-text.js';
import { fieldLabel } from '../../src/derivation/findings.js';
import { rfc3339 } from '../../src/engine/annotations.js';
import type { NodePoolRotationStatus } from '../../src/generated/api-types.js';
import type { ForecastStatus } from '../../src/forecast/summary.js';
import type { PoolReport } from '../../src/engine/types.js';
import { sameJson } from '../../src/util/canonical.js';
import { truncate } from '../../src/util/describe.js';

export interface Condition {
  type: string;
  status: 'True' | 'False' | 'Unknown';
  observedGeneration: number;
  lastTransitionTime: string;
  reason: string;
  message: string;
}

export interface PolicyStatus {
  observedGeneration: number;
  matchedNodePools: number;
  rotatingNodePools: number;
  nodePools: NodePoolRotationStatus[];
  conditions: Condition[];
}

export interface StatusInput {
  name: string;
  generation: number;
  invalid: readonly FieldError[];
  /** Reports of every NodePool this policy governs or ties for, in name order. */
  reports: PoolReport[];
  /** The forecast of each of those NodePools, by name, when one was computed. */
  forecasts?: ReadonlyMap<string, ForecastStatus>;
  previous: Condition[];
  now: string;
}

const MAX_MESSAGE = 4096;
/** The schema's maxItems for status.nodePools: a policy governing more shows the first by name. */
export const MAX_POOL_SUMMARIES = 4096;
const MAX_WAITING = 1024;

const fieldMessage = (e: FieldError): string =>
  `${e.path}: found ${e.found}; allowed: ${e.allowed}${e.reason ? ` (${e.reason})` : ''}`;

export function policyStatus(i: StatusInput): PolicyStatus {
  const governed = i.reports.filter((r) => r.governance === 'governed' && r.policy === i.name);
  const conflicts = i.reports.filter((r) => r.governance === 'conflict');
  const rotating = governed.filter((r) => r.inProgress);
  const fatal = governed.flatMap((r) =>
    r.findings
      .filter((f) => f.severity === 'fatal')
      .map((f) => `NodePool ${r.nodePool}: ${fieldLabel(f.field)}: ${f.message} (${f.reason})`),
  );

  let ready: Pick<Condition, 'status' | 'reason' | 'message'>;
  if (i.invalid.length > 0) {
    ready = {
      status: 'False',
      reason: 'Invalid',
      message:
        'The spec is invalid, so no NodePool is rotated by it. ' +
        `${i.invalid.map(fieldMessage).join('; ')}. Fix these fields.`,
    };
  } else if (conflicts.length > 0) {
    ready = {
      status: 'False',
      reason: 'Conflict',
      message: conflicts
        .map(
          (r) =>
            `RotationPolicies ${r.conflictingPolicies.join(', ')} match NodePool ${r.nodePool} equally specifically, ` +
            'so it is not rotated. Make one selector more specific or name the NodePool in spec.nodePools.',
        )
        .join(' '),
    };
  } else if (fatal.length > 0) {
    ready = { status: 'False', reason: 'Invalid', message: `${fatal.join(' ')}` };
  } else {
    ready = {
      status: 'True',
      reason: 'Accepted',
      message: `Governs ${governed.length} NodePool${governed.length === 1 ? '' : 's'}.`,
    };
  }
  const stalled: Pick<Condition, 'status' | 'reason' | 'message'> =
    ready.status === 'False'
      ? { status: 'True', reason: ready.reason, message: ready.message }
      : { status: 'False', reason: 'Accepted', message: 'Nothing blocks this policy.' };
  const reconciling: Pick<Condition, 'status' | 'reason' | 'message'> =
    rotating.length > 0
      ? {
          status: 'True',
          reason: 'Rotating',
          message:
            `Rotating ${rotating.map((r) => `${r.activeRotation ?? '?'} in NodePool ${r.nodePool}`).join(', ')}` + '.',
        }
      : { status: 'False', reason: 'Idle', message: 'No rotation in flight.' };

  const conditions = (
    [
      ['Ready', ready],
      ['Reconciling', reconciling],
      ['Stalled', stalled],
    ] as const
  ).map(([type, c]) => condition(type, c, i));
  return {
    observedGeneration: i.generation,
    matchedNodePools: governed.length,
    rotatingNodePools: rotating.length,
    nodePools: governed.slice(0, MAX_POOL_SUMMARIES).map((r) => poolSummary(r, i.forecasts?.get(r.nodePool))),
    conditions,
  };
}

/** One governed NodePool's summary; absent values are left out, as Kubernetes' optional fields are. */
export function poolSummary(r: PoolReport, forecast?: ForecastStatus): NodePoolRotationStatus {
  const out: NodePoolRotationStatus = { name: r.nodePool, windowOpen: r.windowOpen, candidates: r.candidates };
  const at = (ms: number | null): string | undefined => (ms === null ? undefined : rfc3339(ms));
  const times = {
    windowClosesAt: at(r.windowClosesAt),
    windowOpensAt: at(r.windowOpensAt),
    frozenUntil: at(r.frozenUntil),
    lastRotationAt: at(r.lastRotationAt),
    lastFailureAt: at(r.lastFailureAt),
  };
  for (const [key, value] of Object.entries(times)) if (value !== undefined) Object.assign(out, { [key]: value });
  if (r.activeRotation !== null && r.mode !== null && r.phase !== null)
    out.activeRotation = { nodeClaim: r.activeRotation, mode: r.mode, phase: r.phase, drainStuck: r.drainStuck };
  if (r.idle !== null) out.waiting = truncate(r.idle, MAX_WAITING);
  if (r.figures !== null) {
    const figures = figureValues(r.figures);
    if (Object.keys(figures).length > 0) out.figures = figures;
  }
  if (forecast) out.forecast = forecast;
  return out;
}

function condition(type: string, c: Pick<Condition, 'status' | 'reason' | 'message'>, i: StatusInput): Condition {
  const prev = i.previous.find((p) => p.type === type);
  return {
    type,
    status: c.status,
    observedGeneration: i.generation,
    lastTransitionTime: prev && prev.status === c.status ? prev.lastTransitionTime : i.now,
    reason: c.reason,
    message: truncate(c.message, MAX_MESSAGE),
  };
}

/** Whether writing `next` would change anything a reader sees (so an unchanged status is never written). */
export function statusChanged(prev: Partial<PolicyStatus> | undefined, next: PolicyStatus): boolean {
  return !sameJson(prev ?? {}, next);
}
