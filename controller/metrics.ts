// The controller's /metrics: the engine's figures as docs/observability.md defines them (the reference's names
// where it has them), plus the controller's own health (passes, queue, API requests, watches, leadership).
// Labels are always passed with their names in sorted order: prom-client writes them in the order given, and
// tools that match the text expect Prometheus' Go client's order (sorted, `le` last).
import { Counter, Gauge, Histogram, Registry } from 'prom-client';
import type { PoolReport } from '../src/engine/types.js';

const sorted = (labels: Record<string, string>): Record<string, string> =>
  Object.fromEntries(Object.entries(labels).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));

/**
 * The exposition text with each histogram bucket's `le` moved after the other labels: prom-client writes it
 * first, Prometheus' Go client last (`{nodepool="a",phase="drain",le="60"}`).
 */
export function inGoLabelOrder(text: string): string {
  return text.replace(/^(\w+_bucket)\{le="([^"]*)",(.*)\} /gm, '$1{$3,le="$2"} ');
}

export class ControllerMetrics {
  readonly registry = new Registry();
  /** Every per-NodePool gauge, so that a NodePool that is gone is removed from all of them. */
  private readonly poolGauges: Gauge<'nodepool'>[] = [];
  private readonly pool = (name: string, help: string): Gauge<'nodepool'> => {
    const g = new Gauge({ name, help, labelNames: ['nodepool'], registers: [this.registry] });
    this.poolGauges.push(g);
    return g;
  };

  readonly candidates = this.pool('noderotation_candidates', 'Eligible NodeClaims per NodePool.');
  readonly inProgress = this.pool('noderotation_in_progress', '1 while a rotation is anchored in the NodePool.');
  readonly draining = this.pool(
    'noderotation_draining',
    '1 while the rotation in flight drains (its old NodeClaim deleted); 0 while it waits for its surge node.',
  );
  readonly windowActive = this.pool('noderotation_window_active', '1 inside the maintenance window.');
  readonly policyConflict = this.pool(
    'noderotation_policy_conflict',
    '1 when an equal-specificity tie or an invalid policy blocks the NodePool.',
  );
  readonly freezeUntil = this.pool(
    'noderotation_freeze_until_timestamp',
    'Unix time at which an active freeze ends, 0 when none.',
  );
  readonly ageThreshold = this.pool('noderotation_age_threshold_seconds', 'The age threshold A.');
  readonly chances = this.pool('noderotation_rotation_chances', 'G, the windows the schedule guarantees a node.');
  readonly capacity = this.pool('noderotation_throughput_capacity', 'C, rotations per window occurrence.');
  readonly tRotEstimate = this.pool('noderotation_t_rot_estimate_seconds', 't_rot_est, the expected rotation time.');
  readonly tRotBound = this.pool('noderotation_t_rot_bound_seconds', 't_rot, the bound on one rotation.');
  readonly period = this.pool('noderotation_window_period_seconds', 'P, the worst gap between window starts.');
  readonly shortLead = this.pool(
    'noderotation_short_lead_nodes',
    'NodeClaims whose own expireAfter cannot guarantee minRotationChances windows.',
  );
  readonly drainStuck = this.pool('noderotation_drain_stuck', '1 when a drain exceeds terminationGracePeriod + 2m.');
  readonly retryCount = this.pool('noderotation_retry_count', 'Highest retry-count of a NodeClaim in the NodePool.');

  readonly completed = new Counter({
    name: 'noderotation_completed_total',
    help: 'Finished rotations by outcome: success, failure, expired (Karpenter removed the claim first).',
    labelNames: ['nodepool', 'outcome'],
    registers: [this.registry],
  });
  readonly forcefulFallback = new Counter({
    name: 'noderotation_forceful_fallback_total',
    help: 'Surge-less fallback rotations started (ADR-0001).',
    labelNames: ['nodepool'],
    registers: [this.registry],
  });
  readonly duration = new Histogram({
    name: 'noderotation_duration_seconds',
    help: 'Rotation phases: surge_wait (started-at to surge ready), drain (draining-at to claim gone).',
    labelNames: ['nodepool', 'phase'],
    buckets: [30, 60, 120, 300, 600, 900, 1800, 3600, 7200],
    registers: [this.registry],
  });

  readonly passSeconds = new Histogram({
    name: 'noderotation_controller_pass_seconds',
    help: "Time of one NodePool's pass: snapshot, decision and the writes it made.",
    labelNames: ['outcome'],
    buckets: [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
    registers: [this.registry],
  });
  readonly queueDepth = new Gauge({
    name: 'noderotation_controller_queue_depth',
    help: 'NodePools waiting for a pass.',
    registers: [this.registry],
  });
  readonly apiRequests = new Counter({
    name: 'noderotation_controller_api_requests_total',
    help: 'Requests to the Kubernetes API by verb and resource (WATCH counts watch streams opened).',
    labelNames: ['code', 'resource', 'verb'],
    registers: [this.registry],
  });
  readonly leader = new Gauge({
    name: 'noderotation_controller_leader',
    help: '1 while this replica holds the leader Lease (or runs without leader election).',
    registers: [this.registry],
  });
  readonly watchHealthy = new Gauge({
    name: 'noderotation_controller_watch_synced',
    help: '1 when the watch of a resource has synced and has no error.',
    labelNames: ['resource'],
    registers: [this.registry],
  });

  /** The level-triggered gauges of one NodePool, from the engine's report of its latest pass. */
  report(r: PoolReport, windowActive: boolean): void {
    const l = { nodepool: r.nodePool };
    const f = r.figures;
    this.candidates.set(l, r.candidates);
    this.inProgress.set(l, r.inProgress ? 1 : 0);
    this.draining.set(l, r.phase === 'draining' ? 1 : 0);
    this.windowActive.set(l, windowActive ? 1 : 0);
    this.policyConflict.set(l, r.governance === 'conflict' ? 1 : 0);
    this.freezeUntil.set(l, r.frozenUntil === null ? 0 : Math.floor(r.frozenUntil / 1000));
    this.ageThreshold.set(l, f?.ageThresholdSeconds ?? 0);
    this.chances.set(l, f?.guaranteedChances ?? 0);
    this.capacity.set(l, f?.capacityPerOccurrence ?? 0);
    this.tRotEstimate.set(l, f?.expectedRotationSeconds ?? 0);
    this.tRotBound.set(l, f?.rotationBoundSeconds ?? 0);
    this.period.set(l, f?.windowPeriodSeconds ?? 0);
    this.shortLead.set(l, r.shortLead.length);
    this.drainStuck.set(l, r.drainStuck ? 1 : 0);
    this.retryCount.set(l, r.retryCountMax);
  }

  /** A NodePool that no longer exists leaves no series behind. */
  forgetPool(nodePool: string): void {
    for (const g of this.poolGauges) g.remove({ nodepool: nodePool });
  }

  /** One transition sample from an engine `observe` action. */
  observe(metric: string, nodePool: string, value: number, labels: Record<string, string> = {}): void {
    switch (metric) {
      case 'completed':
        this.completed.inc(sorted({ nodepool: nodePool, outcome: labels.outcome ?? 'success' }), value);
        break;
      case 'forcefulFallback':
        this.forcefulFallback.inc({ nodepool: nodePool }, value);
        break;
      case 'surgeWaitSeconds':
        this.duration.observe(sorted({ nodepool: nodePool, phase: 'surge_wait' }), value);
        break;
      case 'drainSeconds':
        this.duration.observe(sorted({ nodepool: nodePool, phase: 'drain' }), value);
        break;
      default:
        throw new Error(`unknown observation ${metric}`);
    }
  }

  /** The exposition text, labels in the Go client's order. */
  async text(): Promise<string> {
    return inGoLabelOrder(await this.registry.metrics());
  }

  request(verb: string, resource: string, code: number): void {
    this.apiRequests.inc(sorted({ code: String(code), resource, verb }));
  }
}
