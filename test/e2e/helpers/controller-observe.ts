// What the controller's e2e tests read back about a rotation: the writes a controller process logged, the
// events about a NodePool, and a pool's objects sampled throughout a test (a property such as "never two surge
// claims" must hold at every instant, not only at the end).
import { CoordinationV1Api } from '@kubernetes/client-node';
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

export interface PoolSample {
  /** When the answers were in: what a sample shows was true at some instant before this. */
  at: number;
  /** The pool's `active-rotation` anchor. */
  anchor: string | undefined;
  /** The pool's NodeClaims, by name. */
  claims: string[];
  /** Placeholder Pods (label `surge-for`) in the controller's namespace for this pool. */
  placeholders: string[];
}

/**
 * Polls a NodePool's anchor, NodeClaims and placeholders until stopped. A failed poll (the apiserver busy) is
 * skipped: the samples are what was seen, and the test asserts over all of them.
 */
export class PoolSampler {
  readonly samples: PoolSample[] = [];
  private running = true;
  private readonly loop: Promise<void>;

  constructor(
    private readonly kube: Kube,
    private readonly pool: string,
    private readonly namespace: string,
    intervalMs = 300,
  ) {
    this.loop = this.run(intervalMs);
  }

  private async run(intervalMs: number): Promise<void> {
    while (this.running) {
      try {
        const [pool, claims, pods] = await Promise.all([
          this.kube.getNodePool(this.pool),
          this.kube.nodeClaims(this.pool),
          this.kube.pods(this.namespace, `${A.surgeFor},karpenter.sh/nodepool=${this.pool}`),
        ]);
        this.samples.push({
          at: Date.now(),
          anchor: pool?.metadata.annotations?.[A.activeRotation],
          claims: claims.map((c) => c.metadata.name).sort(),
          placeholders: pods.map((p) => p.metadata?.name ?? '').sort(),
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
