// The RotationPolicy status reconciler: one key per policy, on a work queue of its own. Each NodePool pass hands
// it the pool's report (`report`), and the policies that report concerns (its policy, or those it ties between,
// before and after the pass) are queued; this reconciler turns every report about a policy into its status and
// writes it only when it changed, conditioned on the version it was computed from. A write that loses that race
// (409: often our own previous write, not yet delivered by the watch) is computed again shortly, on this queue: a
// policy's status never holds up a rotation pass, and a rotation pass never waits for a status.
import { policyErrors } from '../../src/policy/validity.js';
import { rfc3339 } from '../../src/engine/annotations.js';
import type { PoolReport } from '../../src/engine/types.js';
import type { RotationPolicy } from '../../src/generated/api-types.js';
import { isConflict, isNotFound, type KubeApi } from '../../runtime/kube/client.js';
import type { Reflector } from '../../runtime/kube/reflector.js';
import type { Logger } from '../log.js';
import type { Clock } from '../../runtime/queue/clock.js';
import { WorkQueue, type PassResult } from '../../runtime/queue/work-queue.js';
import { policyStatus, statusChanged, type Condition } from './policy-status.js';
import type { ForecastStatus } from '../../src/forecast/summary.js';

export const ROTATIONPOLICIES = '/apis/noderotation.io/v1alpha1/rotationpolicies';

/** How soon a status is computed again after its write lost a race (the watch catches up meanwhile). */
export const STATUS_RETRY_MS = 1000;

export interface StatusReconcilerOptions {
  client: KubeApi;
  clock: Clock;
  log: Logger;
  policies: Pick<Reflector<RotationPolicy>, 'get' | 'resourceVersionOf'>;
}

/** The policies a report concerns: the one governing its pool, or those tied for it. */
const policiesOf = (r: PoolReport | undefined): string[] =>
  r ? [...(r.policy ? [r.policy] : []), ...r.conflictingPolicies] : [];

export class PolicyStatusReconciler {
  private queue: WorkQueue | null = null;
  /** The latest report of every NodePool, by name, and its forecast when one was computed. */
  private readonly reports = new Map<string, PoolReport>();
  private readonly forecasts = new Map<string, ForecastStatus>();
  /** Schema errors of a policy, once per object (watched objects are replaced, never changed in place). */

  constructor(private readonly o: StatusReconcilerOptions) {}

  start(): void {
    this.queue = new WorkQueue({
      handler: (name) => this.reconcile(name),
      clock: this.o.clock,
      concurrency: 1,
      baseBackoffMs: 1000,
      maxBackoffMs: 5 * 60_000,
      onFailure: (name, error, retryInMs) =>
        this.o.log.warn('status write failed; retrying', {
          rotationpolicy: name,
          error: error instanceof Error ? error.message : String(error),
          retryInMs,
        }),
    });
  }

  /**
   * A NodePool's latest report (undefined: the pool is gone): the policies it concerned before or concerns now
   * are computed again.
   */
  report(nodePool: string, report: PoolReport | undefined, forecast?: ForecastStatus): void {
    const before = policiesOf(this.reports.get(nodePool));
    if (report) this.reports.set(nodePool, report);
    else this.reports.delete(nodePool);
    if (report && forecast) this.forecasts.set(nodePool, forecast);
    else this.forecasts.delete(nodePool);
    for (const n of new Set([...before, ...policiesOf(report)])) this.queue?.add(n);
  }

  async stop(): Promise<void> {
    await this.queue?.shutdown();
  }

  /** Computes one policy's status from every report that concerns it; writes it when it changed. */
  async reconcile(name: string): Promise<PassResult> {
    const policy = this.o.policies.get(name);
    if (!policy) return {};
    const reports = [...this.reports.values()]
      .filter((r) => policiesOf(r).includes(name))
      .sort((a, b) => a.nodePool.localeCompare(b.nodePool));
    const prev = (policy as RotationPolicy & { status?: { conditions?: Condition[] } }).status;
    const next = policyStatus({
      name,
      generation: (policy.metadata as { generation?: number }).generation ?? 0,
      // The engine's own judgement (src/policy/validity.ts): the status says what the engine acts on.
      invalid: policyErrors(policy),
      reports,
      forecasts: this.forecasts,
      previous: prev?.conditions ?? [],
      now: rfc3339(this.o.clock.now()),
    });
    if (!statusChanged(prev, next)) return {};
    try {
      await this.o.client.request('PATCH', `${ROTATIONPOLICIES}/${name}/status`, {
        contentType: 'application/merge-patch+json',
        body: { metadata: { resourceVersion: this.o.policies.resourceVersionOf(name) }, status: next },
      });
    } catch (e) {
      if (isConflict(e)) {
        this.o.log.info('status write lost a race; computing it again shortly', { rotationpolicy: name });
        return { requeueAt: this.o.clock.now() + STATUS_RETRY_MS };
      }
      if (!isNotFound(e)) throw e;
    }
    return {};
  }
}
