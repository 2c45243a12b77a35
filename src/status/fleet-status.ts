// `noderotation status`: per NodePool, what is true now and what comes next — the governing policy, the window
// (open until, or the next opening), candidates now and at the next opening, the rotation in flight (claim,
// phase, since, surge node), the last success and failure, freezes and findings — computed by the engine from
// the objects (read-only: its actions are never carried out) and joined with what the controller last wrote
// in the policy's status. Pure: the clock is an input.
import { A, parseTime, rfc3339 } from '../engine/annotations.js';
import { toEngineSnapshot } from '../engine/boundary.js';
import { decide } from '../engine/decide.js';
import type { PoolReport } from '../engine/types.js';
import type { NodePoolRotationStatus, RotationPolicy } from '../generated/api-types.js';
import type { NodeClaim, NodePool } from '../karpenter/types.js';
import { forecastSummary, type ForecastSummary } from '../forecast/summary.js';

export interface FleetInput {
  policies: readonly RotationPolicy[];
  nodePools: readonly NodePool[];
  nodeClaims: readonly NodeClaim[];
}

export interface RotationInFlight {
  nodeClaim: string;
  mode: 'surge' | 'forceful-fallback';
  phase: 'pending' | 'draining';
  /** When it started (the claim's started-at), or when its drain began. */
  since: string | null;
  surgeNodeClaim: string | null;
  surgeNode: string | null;
}

export interface PoolStatus {
  nodePool: string;
  policy: string | null;
  governance: PoolReport['governance'];
  conflictingPolicies: string[];
  /** The zone of the policy's first window, to show its times as the platform team wrote them. */
  windowZone: string | null;
  windowOpen: boolean;
  windowClosesAt: string | null;
  windowOpensAt: string | null;
  candidates: number;
  /** Candidates at the next opening, if nothing changes before it (ages grow; the fleet is taken as is). */
  candidatesNextWindow: number | null;
  rotation: RotationInFlight | null;
  lastSuccess: string | null;
  lastFailure: string | null;
  frozenUntil: string | null;
  findings: { severity: 'fatal' | 'warning'; reason: string; message: string }[];
  /** The forecast summed up (docs/api.md, Forecast); null when the pool is not governed or has no figures. */
  forecast: ForecastSummary | null;
  /** What the controller wrote: its Ready condition on the policy and its summary of this pool. */
  controller: { ready: { status: string; reason: string; message: string } | null; waiting: string | null } | null;
}

const at = (ms: number | null): string | null => (ms === null ? null : rfc3339(ms));

/** Every NodePool's status at `now`, in name order. */
export function fleetStatus(input: FleetInput, now: number): PoolStatus[] {
  const snapshot = toEngineSnapshot({
    policies: input.policies,
    nodePools: input.nodePools,
    nodeClaims: input.nodeClaims,
    nodes: [],
    pods: [],
    namespace: 'node-rotation-system',
    // No Pods were read: a decision that needs them waits, and only its report is used here.
    podsOfNodes: [],
  });
  // One decision of the fleet per distinct instant: pools under the same windows open together, so the
  // look-ahead costs one decision per opening, not one per pool.
  const decisions = new Map<number, Map<string, PoolReport>>();
  const reportAt = (t: number, pool: string): PoolReport | undefined => {
    let at = decisions.get(t);
    if (!at) decisions.set(t, (at = new Map(decide(snapshot, t).pools.map((p) => [p.nodePool, p.report]))));
    return at.get(pool);
  };
  const reports = decide(snapshot, now).pools.map((p) => p.report);
  return reports
    .map((r) => ({
      ...poolStatus(r, snapshot.nodeClaims, input.policies, reportAt),
      forecast: forecastSummary(r, snapshot, now),
    }))
    .sort((a, b) => a.nodePool.localeCompare(b.nodePool));
}

function poolStatus(
  r: PoolReport,
  claims: readonly NodeClaim[],
  policies: readonly RotationPolicy[],
  reportAt: (t: number, pool: string) => PoolReport | undefined,
): Omit<PoolStatus, 'forecast'> {
  const policy = policies.find((p) => p.metadata.name === r.policy);
  // At the opening the engine starts the first candidate; it counts the rest, so that one is added back.
  const then = r.windowOpensAt === null ? undefined : reportAt(r.windowOpensAt + 1000, r.nodePool);
  const next = then ? then.candidates + (!r.inProgress && then.inProgress ? 1 : 0) : null;
  return {
    nodePool: r.nodePool,
    policy: r.policy,
    governance: r.governance,
    conflictingPolicies: r.conflictingPolicies,
    windowZone: policy?.spec.maintenanceWindows[0]?.timezone ?? null,
    windowOpen: r.windowOpen,
    windowClosesAt: at(r.windowClosesAt),
    windowOpensAt: at(r.windowOpensAt),
    candidates: r.candidates,
    candidatesNextWindow: next,
    rotation: inFlight(r, claims),
    lastSuccess: at(r.lastRotationAt),
    lastFailure: at(r.lastFailureAt),
    frozenUntil: at(r.frozenUntil),
    findings: r.findings.map((f) => ({ severity: f.severity, reason: f.reason, message: f.message })),
    controller: policy ? controllerView(policy, r.nodePool) : null,
  };
}

function inFlight(r: PoolReport, claims: readonly NodeClaim[]): RotationInFlight | null {
  if (r.activeRotation === null || r.mode === null || r.phase === null) return null;
  const claim = claims.find((c) => c.metadata.name === r.activeRotation);
  const ann = claim?.metadata.annotations ?? {};
  const surgeNodeClaim = ann[A.surgeClaim] ?? null;
  const surge = surgeNodeClaim ? claims.find((c) => c.metadata.name === surgeNodeClaim) : undefined;
  return {
    nodeClaim: r.activeRotation,
    mode: r.mode,
    phase: r.phase,
    since: at(parseTime(ann[A.startedAt])),
    surgeNodeClaim,
    surgeNode: surge?.status?.nodeName ?? null,
  };
}

function controllerView(policy: RotationPolicy, pool: string): PoolStatus['controller'] {
  const status = policy.status;
  if (!status) return null;
  const ready = status.conditions?.find((c) => c.type === 'Ready');
  const summary: NodePoolRotationStatus | undefined = status.nodePools?.find((p) => p.name === pool);
  return {
    ready: ready ? { status: ready.status, reason: ready.reason, message: ready.message } : null,
    waiting: summary?.waiting ?? null,
  };
}
