// What the cluster says, polled through the run as admin (never the controllers' own account): the NodeClaims'
// lives (creation, Ready, deletion, disappearance), the workload's readiness, anything of ours that no rotation
// in flight explains (a leak, once it outlasts its bound), and Karpenter's disruption counters (summed across
// its restarts).
import type { V1NodeList, V1PodList } from '@kubernetes/client-node';
import { podRunningReady, type Kube } from '../../test/e2e/helpers/k8s.js';
import { A, parseTime } from '../../src/engine/annotations.js';
import { NODEPOOL_LABEL, type NodeClaim, type NodePool } from '../../src/karpenter/types.js';
import type { ClaimRecord, LeakSample, LoadSample } from './ledger.js';
import type { PoolPlan } from './plan.js';

const OURS = 'noderotation.io/';
const PLACEHOLDER_LABEL = A.surgeFor;
/** Something of ours with no rotation in flight to explain it counts as a leak once it has lasted this long. */
export const LEAK_BOUND_MS = 90_000;

export class Recorder {
  readonly claims = new Map<string, ClaimRecord>();
  readonly load: LoadSample[] = [];
  readonly leaks: LeakSample[] = [];
  /** Leak candidates now, by description, with when each was first seen. */
  private readonly suspects = new Map<string, number>();
  /** karpenter_nodeclaims_disrupted_total by "pool reason": the last value scraped and the run's sum. */
  private readonly lastCounter = new Map<string, number>();
  readonly disrupted = new Map<string, number>();
  private timer: NodeJS.Timeout | null = null;
  private polls = 0;
  private polling: Promise<void> | null = null;

  constructor(
    private readonly kube: Kube,
    private readonly pools: readonly PoolPlan[],
    /** The controllers' namespace (placeholders) and the workload's. */
    private readonly namespace: string,
    private readonly apps: string,
    private readonly karpenterMetrics: string,
    private readonly log: (msg: string) => void,
  ) {}

  /** Polls every `everyMs` until stop(). */
  start(everyMs = 2_000): void {
    const tick = (): void => {
      this.polling = this.poll()
        .catch((e: unknown) => this.log(`poll failed: ${String(e).split('\n')[0]}`))
        .finally(() => {
          if (this.timer !== null) this.timer = setTimeout(tick, everyMs);
        });
    };
    this.timer = setTimeout(tick, 0);
  }

  async stop(): Promise<void> {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    await this.polling;
  }

  /**
   * The census at the end: polls until nothing of ours is unexplained, for at most LEAK_BOUND_MS; whatever is
   * still unexplained then is a leak.
   */
  async census(): Promise<void> {
    const until = Date.now() + LEAK_BOUND_MS;
    await this.poll();
    while (this.unexplained.length > 0 && Date.now() < until) {
      await new Promise((r) => setTimeout(r, 2_000));
      await this.poll();
    }
    for (const what of this.unexplained)
      if (!this.leaks.some((l) => l.what === what)) this.leaks.push({ at: Date.now(), what: `${what} (at the end)` });
  }

  /** Leak candidates right now (empty: nothing of ours unexplained). */
  get unexplained(): string[] {
    return [...this.suspects.keys()];
  }

  async poll(): Promise<void> {
    const now = Date.now();
    const names = new Set(this.pools.map((p) => p.name));
    const [claimList, nodeList, podList, appList, poolList]: [unknown, V1NodeList, V1PodList, V1PodList, unknown] =
      await Promise.all([
        this.kube.custom.listClusterCustomObject({
          group: 'karpenter.sh',
          version: 'v1',
          plural: 'nodeclaims',
        }) as Promise<unknown>,
        this.kube.core.listNode(),
        this.kube.core.listNamespacedPod({ namespace: this.namespace, labelSelector: PLACEHOLDER_LABEL }),
        this.kube.core.listNamespacedPod({ namespace: this.apps }),
        this.kube.custom.listClusterCustomObject({
          group: 'karpenter.sh',
          version: 'v1',
          plural: 'nodepools',
        }) as Promise<unknown>,
      ]);
    const claims = (claimList as { items: NodeClaim[] }).items.filter((c) =>
      names.has(c.metadata.labels?.[NODEPOOL_LABEL] ?? ''),
    );
    const anchors = new Map<string, string>();
    for (const p of (poolList as { items: NodePool[] }).items) {
      const a = p.metadata.annotations?.[A.activeRotation];
      if (names.has(p.metadata.name) && a) anchors.set(p.metadata.name, a);
    }
    this.observeClaims(claims, now);
    // The workload: Ready Pods of each pool's app against its replicas.
    for (const p of this.pools) {
      const ready = appList.items.filter((pod) => pod.metadata?.labels?.app === p.name && podRunningReady(pod)).length;
      this.load.push({ at: now, pool: p.name, ready, desired: p.replicas });
    }
    // Leak candidates: ours, in a pool with no rotation anchored.
    const seen = new Set<string>();
    for (const pod of podList.items) {
      // A placeholder being deleted is on its way out (KWOK removes it); only a standing one is a leak.
      if (pod.metadata?.deletionTimestamp) continue;
      const pool = pod.metadata?.labels?.[NODEPOOL_LABEL] ?? '';
      if (names.has(pool) && !anchors.has(pool)) seen.add(`placeholder ${pod.metadata?.name} of ${pool}`);
    }
    for (const node of nodeList.items) {
      const pool = node.metadata?.labels?.[NODEPOOL_LABEL] ?? '';
      const ours = Object.keys(node.metadata?.annotations ?? {}).filter((k) => k.startsWith(OURS));
      if (names.has(pool) && !anchors.has(pool) && ours.length)
        seen.add(`node ${node.metadata?.name} of ${pool}: ${ours.sort().join(', ')}`);
    }
    for (const c of claims) {
      const pool = c.metadata.labels?.[NODEPOOL_LABEL] ?? '';
      const state = c.metadata.annotations?.[A.state];
      if (!anchors.has(pool) && (state === 'pending' || state === 'draining'))
        seen.add(`claim ${c.metadata.name} of ${pool} in state ${state}`);
    }
    for (const key of [...this.suspects.keys()]) if (!seen.has(key)) this.suspects.delete(key);
    for (const key of seen) {
      const since = this.suspects.get(key) ?? now;
      this.suspects.set(key, since);
      if (now - since >= LEAK_BOUND_MS && !this.leaks.some((l) => l.what === key)) {
        this.leaks.push({ at: since, what: key });
        this.log(`leak: ${key} since ${new Date(since).toISOString()}`);
      }
    }
    if (this.polls++ % 3 === 0) await this.scrapeKarpenter();
  }

  private observeClaims(claims: readonly NodeClaim[], now: number): void {
    const present = new Set<string>();
    for (const c of claims) {
      const name = c.metadata.name;
      present.add(name);
      const pool = c.metadata.labels?.[NODEPOOL_LABEL] ?? '';
      const plan = this.pools.find((p) => p.name === pool);
      const createdAt = parseTime(String(c.metadata.creationTimestamp)) ?? now;
      const rec = this.claims.get(name) ?? {
        name,
        pool,
        createdAt,
        deadline: createdAt + (plan?.expireAfterS ?? 0) * 1000,
      };
      const ready = c.status?.conditions?.find((x) => x.type === 'Ready' && x.status === 'True')?.lastTransitionTime;
      if (ready && rec.readyAt === undefined) rec.readyAt = parseTime(String(ready)) ?? now;
      const deleted = c.metadata.deletionTimestamp;
      if (deleted && rec.deletedAt === undefined) rec.deletedAt = parseTime(String(deleted)) ?? now;
      this.claims.set(name, rec);
    }
    for (const rec of this.claims.values()) if (!present.has(rec.name) && rec.goneAt === undefined) rec.goneAt = now;
  }

  /** Karpenter's counters as they stand before the run: the run counts what they gain from here. */
  async baseline(): Promise<void> {
    await this.scrapeKarpenter();
    this.disrupted.clear();
    this.baselined = true;
  }

  private baselined = false;

  /**
   * Karpenter's disruption counters; a value below the last one is a restarted Karpenter counting from zero, and
   * a series first seen after the baseline counts from zero.
   */
  private async scrapeKarpenter(): Promise<void> {
    let text: string;
    try {
      text = await (await fetch(this.karpenterMetrics)).text();
    } catch {
      return; // Karpenter is down (the chaos restarts it): the next scrape counts what it missed
    }
    for (const line of text.split('\n')) {
      if (!line.startsWith('karpenter_nodeclaims_disrupted_total{')) continue;
      const pool = /nodepool="([^"]*)"/.exec(line)?.[1] ?? '';
      const reason = /reason="([^"]*)"/.exec(line)?.[1] ?? '';
      if (!this.pools.some((p) => p.name === pool)) continue;
      const value = Number(line.slice(line.lastIndexOf(' ') + 1));
      const key = `${pool} ${reason}`;
      const last = this.lastCounter.get(key) ?? (this.baselined ? 0 : undefined);
      const delta = last === undefined ? 0 : value >= last ? value - last : value;
      this.lastCounter.set(key, value);
      this.disrupted.set(key, (this.disrupted.get(key) ?? 0) + delta);
    }
  }
}
