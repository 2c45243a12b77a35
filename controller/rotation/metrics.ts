// The rotation reconciler's metrics, as docs/observability.md defines them (the reference's names where it has
// them): the per-NodePool gauges, level-triggered from each pass's report, and the transition metrics, one
// prom-client object per entry of the engine's catalogue (TRANSITION_METRICS, OBSERVATIONS in
// src/engine/actions.ts), so a metric is declared once and a missing entry does not compile. They register on the
// controller's one Registry (../metrics.ts), which serves /metrics.
import { Counter, Gauge, Histogram, type Registry } from '../prom.js';
import {
  OBSERVATIONS,
  TRANSITION_METRICS,
  type Observation,
  type TransitionMetricName,
} from '../../src/engine/actions.js';
import type { PoolReport } from '../../src/engine/types.js';
import { summarise } from '../../src/forecast/summary.js';
import type { ClaimForecast } from '../../src/forecast/forecast.js';

/** Buckets of the time to forced expiry: an hour to a month. */
const EXPIRY_BUCKETS = [3600, 6 * 3600, 12 * 3600, 86400, 2 * 86400, 4 * 86400, 7 * 86400, 14 * 86400, 30 * 86400];

type TransitionMetricObject = Counter<string> | Histogram<string>;

export class RotationMetrics {
  /** Every per-NodePool gauge, so that a NodePool that is gone is removed from all of them. */
  private readonly poolGauges: Gauge<'nodepool'>[] = [];
  private readonly pool = (name: string, help: string): Gauge<'nodepool'> => {
    const g = new Gauge({ name, help, labelNames: ['nodepool'], registers: [] });
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
  readonly minForecastMargin = this.pool(
    'noderotation_nodepool_min_forecast_margin_seconds',
    'The smallest forecast margin (due - planned start - t_rot; due: the deadline, or under preFreezeRotation ' +
      'the start of the freeze it falls inside) among the planned NodeClaims.',
  );
  readonly claimsAtRisk = this.pool(
    'noderotation_nodepool_claims_at_risk',
    'NodeClaims with no start in their turn that leaves t_rot before they are due.',
  );
  /** The pool's claims by time to their forced expiry, as of its latest pass (reset each pass, no claim labels). */
  readonly timeUntilForcedExpiry = new Histogram({
    name: 'noderotation_nodeclaim_time_until_forced_expiry_seconds',
    help: 'Time from now to creation + expireAfter of each NodeClaim of the NodePool, as of its latest pass.',
    labelNames: ['nodepool'],
    buckets: EXPIRY_BUCKETS,
    registers: [],
  });

  /** The metrics transitions feed, one per catalogue entry (a missing entry does not compile). */
  readonly transitions: Record<TransitionMetricName, TransitionMetricObject> = Object.fromEntries(
    (Object.keys(TRANSITION_METRICS) as TransitionMetricName[]).map((name) => {
      const m = TRANSITION_METRICS[name] as (typeof TRANSITION_METRICS)[TransitionMetricName] & {
        buckets?: readonly number[];
      };
      const common = { name, help: m.help, labelNames: ['nodepool', ...m.labels], registers: [] };
      return [
        name,
        m.type === 'counter' ? new Counter(common) : new Histogram({ ...common, buckets: [...(m.buckets ?? [])] }),
      ];
    }),
  ) as Record<TransitionMetricName, TransitionMetricObject>;

  /** Registers every one of them, gauges first, on the controller's registry (the order of the exposition). */
  constructor(registry: Registry) {
    for (const m of [...this.poolGauges, this.timeUntilForcedExpiry, ...Object.values(this.transitions)])
      registry.registerMetric(m);
  }

  /** The level-triggered gauges of one NodePool, from the engine's report of its latest pass. */
  report(r: PoolReport): void {
    const l = { nodepool: r.nodePool };
    const f = r.figures;
    this.candidates.set(l, r.candidates);
    this.inProgress.set(l, r.inProgress ? 1 : 0);
    this.draining.set(l, r.phase === 'draining' ? 1 : 0);
    this.windowActive.set(l, r.windowOpen ? 1 : 0);
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

  /**
   * The forecast of one NodePool (null: not governed, or no figures): the smallest margin (0 when none is
   * planned), the claims at risk, and the distribution of the claims' time to forced expiry, replaced each pass.
   */
  forecast(nodePool: string, list: readonly ClaimForecast[] | null, now: number): void {
    const l = { nodepool: nodePool };
    const s = list && summarise(list);
    this.minForecastMargin.set(l, s?.minMarginSeconds ?? 0);
    this.claimsAtRisk.set(l, s?.atRisk ?? 0);
    this.timeUntilForcedExpiry.remove(l);
    for (const f of list ?? [])
      if (f.deadline !== null) this.timeUntilForcedExpiry.observe(l, (f.deadline - now) / 1000);
  }

  /** A NodePool that no longer exists leaves no series behind. */
  forgetPool(nodePool: string): void {
    for (const g of this.poolGauges) g.remove({ nodepool: nodePool });
    this.timeUntilForcedExpiry.remove({ nodepool: nodePool });
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
}
