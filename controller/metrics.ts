// The controller's /metrics: the engine's figures as docs/observability.md defines them (the reference's names
// where it has them), plus the controller's own health (passes, queue, API requests, watches, leadership).
// The transition metrics are built from the engine's catalogue (TRANSITION_METRICS, OBSERVATIONS in
// src/engine/actions.ts), so a metric is declared once. The exposition is rendered here from prom-client's
// values, with label pairs in name order and a bucket's `le` last, as Prometheus' Go client writes them (some
// tools match the text).
import { Counter, Gauge, Histogram, Registry, type MetricObjectWithValues, type MetricValue } from 'prom-client';
import {
  OBSERVATIONS,
  TRANSITION_METRICS,
  type Observation,
  type TransitionMetricName,
} from '../src/engine/actions.js';
import type { PoolReport } from '../src/engine/types.js';

/** Prometheus' text format (0.0.4): escape a label value. */
const escapeValue = (v: string): string => v.replace(/\\/g, '\\\\').replace(/\n/g, '\\n').replace(/"/g, '\\"');
const escapeHelp = (v: string): string => v.replace(/\\/g, '\\\\').replace(/\n/g, '\\n');
const formatNumber = (n: number): string =>
  Number.isNaN(n) ? 'NaN' : n === Infinity ? '+Inf' : n === -Infinity ? '-Inf' : String(n);

/** One sample's label pairs: names in order, `le` last. */
function labelText(labels: Record<string, string | number | undefined>): string {
  const pairs = Object.entries(labels)
    .filter((e): e is [string, string | number] => e[1] !== undefined)
    .sort(([a], [b]) => (a === 'le' ? 1 : b === 'le' ? -1 : a < b ? -1 : a > b ? 1 : 0))
    .map(([k, v]) => `${k}="${escapeValue(typeof v === 'number' ? formatNumber(v) : v)}"`);
  return pairs.length > 0 ? `{${pairs.join(',')}}` : '';
}

/** The exposition text of metrics as prom-client holds them, in Prometheus' Go client's form. */
export function exposition(metrics: readonly MetricObjectWithValues<MetricValue<string>>[]): string {
  const out: string[] = [];
  for (const m of metrics) {
    out.push(`# HELP ${m.name} ${escapeHelp(m.help)}`, `# TYPE ${m.name} ${String(m.type)}`);
    for (const v of m.values) {
      const name = (v as { metricName?: string }).metricName ?? m.name;
      out.push(`${name}${labelText(v.labels)} ${formatNumber(v.value)}`);
    }
  }
  return `${out.join('\n')}\n`;
}

type TransitionMetricObject = Counter<string> | Histogram<string>;

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

  /** The metrics transitions feed, one per catalogue entry (a missing entry does not compile). */
  readonly transitions: Record<TransitionMetricName, TransitionMetricObject> = Object.fromEntries(
    (Object.keys(TRANSITION_METRICS) as TransitionMetricName[]).map((name) => {
      const m = TRANSITION_METRICS[name] as (typeof TRANSITION_METRICS)[TransitionMetricName] & {
        buckets?: readonly number[];
      };
      const common = { name, help: m.help, labelNames: ['nodepool', ...m.labels], registers: [this.registry] };
      return [
        name,
        m.type === 'counter' ? new Counter(common) : new Histogram({ ...common, buckets: [...(m.buckets ?? [])] }),
      ];
    }),
  ) as Record<TransitionMetricName, TransitionMetricObject>;

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

  /** One transition sample from an engine `observe` action, with the labels its catalogue entry names. */
  observe(observation: Observation, nodePool: string, value: number, labels: Record<string, string> = {}): void {
    const entry = OBSERVATIONS[observation];
    const supplied = Object.fromEntries(
      entry.supplied.map((k) => {
        const v = labels[k];
        if (v === undefined) throw new Error(`observation ${observation} without its label ${k}`);
        return [k, v];
      }),
    );
    const metric = this.transitions[entry.metric];
    const all = { nodepool: nodePool, ...entry.fixed, ...supplied };
    if (metric instanceof Counter) metric.inc(all, value);
    else metric.observe(all, value);
  }

  /** The exposition text, labels in the Go client's order. */
  async text(): Promise<string> {
    return exposition(await this.registry.getMetricsAsJSON());
  }

  request(verb: string, resource: string, code: number): void {
    this.apiRequests.inc({ code: String(code), resource, verb });
  }
}
