// What the controller's e2e tests read back about a rotation: the writes a controller process logged, the
// events about a NodePool, and a pool's objects sampled throughout a test (a property such as "never two surge
// claims" must hold at every instant, not only at the end).
import { CoordinationV1Api, type V1Pod } from '@kubernetes/client-node';
import { A } from '../../../src/engine/annotations.js';
import type { ControllerProcess, LogLine } from './controller-process.js';
import { metricSum, type Kube } from './k8s.js';
import { eventsV1 } from './noderotation-api.js';

/**
 * The writes a controller logged, in order. The controller logs each write (with `action`) right before it
 * carries it out, so a line is an attempt; events and metric observations are not logged as actions.
 */
export function writes(c: ControllerProcess, nodePool?: string): LogLine[] {
  return c.logs.filter((l) => typeof l.action === 'string' && (nodePool === undefined || l.nodepool === nodePool));
}

/** A logged write's annotations set, as the executor describes an `annotate` action. */
export function setOf(l: LogLine): Record<string, string> {
  return (l.set ?? {}) as Record<string, string>;
}

/** The anchor writes (rotation starts) a controller logged for a pool: `rotation-mode` tells surge from fallback. */
export function anchorWrites(c: ControllerProcess, nodePool: string): LogLine[] {
  return writes(c, nodePool).filter(
    (l) => l.action === 'annotate' && l.kind === 'NodePool' && setOf(l)[A.activeRotation] !== undefined,
  );
}

/** Milliseconds since the epoch of a log line. */
export const logTime = (l: LogLine): number => Date.parse(l.ts as string);

/**
 * Reasons of the events.k8s.io Events about the object named `name` (cluster-scoped objects record in default),
 * one entry per occurrence: a repeat recorded as a series (`series.count` = occurrences) counts each time.
 */
export async function reasonsAbout(kube: Kube, name: string): Promise<string[]> {
  return (await eventsV1(kube, 'default'))
    .filter((e) => e.regarding?.name === name)
    .flatMap((e) => Array<string>(e.series?.count ?? 1).fill(e.reason ?? ''));
}

/** A Pod as a sample saw it: where it is bound, its phase, whether it is going and why. */
export interface PodView {
  name: string;
  uid: string;
  /** spec.nodeName: where the scheduler bound it (undefined while Pending). */
  node: string | undefined;
  phase: string | undefined;
  /** deletionTimestamp set. */
  terminating: boolean;
  /** The scheduler chose it as a preemption victim (DisruptionTarget, PreemptionByScheduler). */
  preempted: boolean;
}

export interface PoolSample {
  /** When the answers were in: what a sample shows was true at some instant before this. */
  at: number;
  /** The pool's `active-rotation` anchor. */
  anchor: string | undefined;
  /** The pool's NodeClaims, by name. */
  claims: string[];
  /** Those of them being deleted (deletionTimestamp set), by name. */
  deleting: string[];
  /**
   * The pool's NodeClaims read again after the Pods: a claim listed in `claims` but not here vanished while the
   * sample was taken, so what the Pods show may already follow its end.
   */
  claimsAfter: string[];
  /** Placeholder Pods (label `surge-for`) in the controller's namespace for this pool, by name. */
  placeholders: string[];
  /**
   * The same placeholders in full. They are read after the claims: a placeholder seen alive here was alive after
   * every claim delete this sample shows had been made.
   */
  placeholderPods: PodView[];
  /** The Pods of the workload the sampler was given (read with the placeholders); empty without one. */
  workload: PodView[];
}

const viewOf = (p: V1Pod): PodView => ({
  name: p.metadata?.name ?? '',
  uid: p.metadata?.uid ?? '',
  node: p.spec?.nodeName,
  phase: p.status?.phase,
  terminating: p.metadata?.deletionTimestamp !== undefined,
  preempted:
    p.status?.conditions?.some(
      (c) => c.type === 'DisruptionTarget' && c.status === 'True' && c.reason === 'PreemptionByScheduler',
    ) ?? false,
});

const byName = <T extends { name: string }>(xs: T[]): T[] => xs.sort((a, b) => a.name.localeCompare(b.name));

/** A Pod view in one word: `name@node Phase`, with what marks it going. */
const podText = (p: PodView): string =>
  [`${p.name}@${p.node ?? '-'}`, p.phase ?? '?', p.terminating ? 'terminating' : '', p.preempted ? 'preempted' : '']
    .filter(Boolean)
    .join(' ');

/**
 * Polls a NodePool's anchor, NodeClaims and placeholders (and optionally a workload's Pods) until stopped. A
 * failed poll (the apiserver busy) is skipped: the samples are what was seen, and the test asserts over all of
 * them.
 */
export class PoolSampler {
  readonly samples: PoolSample[] = [];
  private running = true;
  private readonly loop: Promise<void>;
  private readonly started = Date.now();

  constructor(
    private readonly kube: Kube,
    private readonly pool: string,
    private readonly namespace: string,
    intervalMs = 300,
    /** A workload to watch with the pool: its namespace and a label selector ('' for every Pod there). */
    private readonly workload?: { namespace: string; selector: string },
  ) {
    this.loop = this.run(intervalMs);
  }

  private async run(intervalMs: number): Promise<void> {
    while (this.running) {
      try {
        const [pool, claims] = await Promise.all([this.kube.getNodePool(this.pool), this.kube.nodeClaims(this.pool)]);
        const w = this.workload;
        const [pods, workload] = await Promise.all([
          this.kube.pods(this.namespace, `${A.surgeFor},karpenter.sh/nodepool=${this.pool}`),
          w ? this.kube.pods(w.namespace, w.selector || undefined) : Promise.resolve([]),
        ]);
        const claimsAfter = await this.kube.nodeClaims(this.pool);
        this.samples.push({
          at: Date.now(),
          anchor: pool?.metadata.annotations?.[A.activeRotation],
          claims: claims.map((c) => c.metadata.name).sort(),
          deleting: claims
            .filter((c) => c.metadata.deletionTimestamp)
            .map((c) => c.metadata.name)
            .sort(),
          claimsAfter: claimsAfter.map((c) => c.metadata.name).sort(),
          placeholders: pods.map((p) => p.metadata?.name ?? '').sort(),
          placeholderPods: byName(pods.map(viewOf)),
          workload: byName(workload.map(viewOf)),
        });
      } catch {
        // Skipped sample; the next poll tries again.
      }
      await new Promise((r) => setTimeout(r, intervalMs));
    }
  }

  /** Stops polling and returns every sample taken. */
  async stop(): Promise<PoolSample[]> {
    this.running = false;
    await this.loop;
    return this.samples;
  }

  /**
   * The sequence of what was seen, one line per change, with the time since the sampler started: what a failed
   * assertion prints, so the order of events on the cluster can be read back.
   */
  timeline(): string {
    const lines: string[] = [];
    let last = '';
    for (const s of this.samples) {
      const claims = s.claims.map((c) => (s.deleting.includes(c) ? `${c}(deleting)` : c)).join(', ');
      const text =
        `anchor=${s.anchor ?? '-'} claims=[${claims}] placeholders=[${s.placeholderPods.map(podText).join(', ')}]` +
        (this.workload ? ` workload=[${s.workload.map(podText).join(', ')}]` : '');
      if (text !== last) lines.push(`+${((s.at - this.started) / 1000).toFixed(1)}s ${text}`);
      last = text;
    }
    return lines.join('\n');
  }
}

/** The leader Lease's name (the reference's, so the two controllers never act at once). */
export const LEASE_NAME = 'node-rotation-controller.noderotation.io';

/** Whether a replica says it leads (its leader gauge). */
export async function leads(c: ControllerProcess): Promise<boolean> {
  return metricSum(await c.metrics(), 'noderotation_controller_leader') === 1;
}

/** The identity holding the leader Lease in `namespace`. */
export async function leaseHolder(kube: Kube, namespace: string): Promise<string | undefined> {
  const lease = await kube.kc.makeApiClient(CoordinationV1Api).readNamespacedLease({ namespace, name: LEASE_NAME });
  return lease.spec?.holderIdentity;
}
