// Wall-clock scenarios for the controller's e2e tests (windows and freezes): windows and freezes placed relative
// to now, "nothing of ours happened to this pool" checked by polling until a moment passes (never a fixed sleep),
// a NodePool of several nodes, and the end state of one finished rotation.
import { DateTime } from 'luxon';
import { expect } from 'vitest';
import { A } from '../../../src/engine/annotations.js';
import type { MaintenanceWindow } from '../../../src/generated/api-types.js';
import { NODEPOOL_LABEL, type NodeClaim } from '../../../src/karpenter/types.js';
import { deployment, ourMarkers } from './context.js';
import type { ControllerProcess, LogLine } from './controller-process.js';
import {
  conditionTrue,
  metricSum,
  podRunningReady,
  waitFor,
  type Kube,
  type NodePoolTemplateSpec,
  type TestResources,
} from './k8s.js';
import { eventsV1 } from './noderotation-api.js';

const MINUTE = 60_000;

/** The first whole minute at least `leadMs` after `from`: windows are HH:MM, so their edges fall on minutes. */
export function minuteAfter(from: number, leadMs: number): number {
  return Math.ceil((from + leadMs) / MINUTE) * MINUTE;
}

/**
 * A window open from `open` to `close` (epoch ms on whole minutes, less than a day apart) on the wall clock of
 * `timezone`, on one day a week: the local weekday of `open` (the API's `days` are the days of the start). When
 * the span crosses local midnight the entry's end is before its start, which the API reads as spanning midnight.
 */
export function weeklyWindow(open: number, close: number, timezone: string): MaintenanceWindow {
  if (open % MINUTE !== 0 || close % MINUTE !== 0 || close <= open || close - open >= 24 * 60 * MINUTE)
    throw new Error(`weeklyWindow: ${open}..${close} is not a span of whole minutes shorter than a day`);
  const local = (t: number): DateTime => DateTime.fromMillis(t, { zone: timezone });
  const day = local(open).setLocale('en-US').toFormat('ccc') as MaintenanceWindow['days'][number];
  return { timezone, days: [day], start: local(open).toFormat('HH:mm'), end: local(close).toFormat('HH:mm') };
}

/**
 * A whole-hour zone (Etc/GMT±N, whose sign is POSIX's: Etc/GMT-9 is UTC+9) in which `t` falls between 00:00 and
 * 00:59 local time, so that a span ending at `t` and starting an hour or more before it crosses local midnight.
 */
export function zoneJustAfterMidnight(t: number): string {
  const h = new Date(t).getUTCHours();
  const offset = h <= 12 ? -h : 24 - h; // local = UTC + offset, within the tz database's −12…+14
  return offset === 0 ? 'Etc/GMT' : `Etc/GMT${offset > 0 ? '-' : '+'}${Math.abs(offset)}`;
}

const iso = (t: number): string => new Date(t).toISOString();

/**
 * Polls `violation` until the wall clock has passed `until` and fails at the first violation it reports: "nothing
 * happens before T" as a condition checked throughout the span.
 */
export async function holdsUntil(
  what: string,
  until: number,
  violation: () => Promise<string | null>,
  intervalMs = 1000,
): Promise<void> {
  const seen = await waitFor(
    `${what} until ${iso(until)}`,
    async () => {
      const v = await violation();
      // A look that ended after `until` may have seen what legitimately happened right after it: it ends the
      // span instead (whether something happened just before `until` is the caller's to check, by its time).
      if (Date.now() >= until) return { v: null };
      return v !== null ? { v } : undefined;
    },
    { timeoutMs: Math.max(0, until - Date.now()) + 60_000, intervalMs },
  );
  if (seen.v !== null) throw new Error(`${what} (before ${iso(until)}): ${seen.v}`);
}

/** The controller's log lines of actions (writes) on `pool`, in order. */
export function actionsOn(controller: ControllerProcess, pool: string): LogLine[] {
  return controller.logs.filter((l) => l.action !== undefined && l.nodepool === pool);
}

/**
 * Why `pool` is not untouched, or null: nothing of ours on it, on its NodeClaims or Nodes (but `allowed` keys, which
 * the operator set: a freeze, their do-not-disrupt), no cordon, no placeholder for it in `controllerNs`, no write
 * of the controller's about it and exactly `claims` NodeClaims (no surge launched).
 */
export async function untouched(
  kube: Kube,
  controller: ControllerProcess,
  controllerNs: string,
  pool: string,
  claims: number,
  allowed: string[] = [],
): Promise<string | null> {
  const poolKeys = ourMarkers((await kube.getNodePool(pool))?.metadata.annotations).filter((k) => !allowed.includes(k));
  if (poolKeys.length > 0) return `NodePool ${pool} has ${poolKeys.join(', ')}`;
  const list = await kube.nodeClaims(pool);
  if (list.length !== claims) return `NodePool ${pool} has ${list.length} NodeClaims, not ${claims}`;
  for (const c of list) {
    const keys = ourMarkers(c.metadata.annotations).filter((k) => !allowed.includes(k));
    if (keys.length > 0) return `NodeClaim ${c.metadata.name} has ${keys.join(', ')}`;
  }
  for (const n of await kube.nodes(pool)) {
    const keys = ourMarkers(n.metadata?.annotations).filter((k) => !allowed.includes(k));
    if (keys.length > 0 || n.spec?.unschedulable) return `Node ${n.metadata?.name} has ${keys.join(', ')} (cordoned?)`;
  }
  const placeholders = await kube.pods(controllerNs, `${A.surgeFor},${NODEPOOL_LABEL}=${pool}`);
  if (placeholders.length > 0) return `placeholder ${placeholders[0]!.metadata?.name} exists`;
  const writes = actionsOn(controller, pool);
  return writes.length > 0 ? `the controller wrote: ${JSON.stringify(writes[0])}` : null;
}

/** A gauge or counter of the controller's for one NodePool. */
export async function poolMetric(controller: ControllerProcess, name: string, pool: string): Promise<number> {
  return metricSum(await controller.metrics(), name, { nodepool: pool });
}

/**
 * A fresh namespace and NodePool with `replicas` app Pods (1 cpu, 512Mi), one per node (required anti-affinity),
 * so the pool has `replicas` nodes; resolves with its Ready NodeClaims, oldest first, once every Pod runs.
 */
export async function poolWithSpreadApp(
  kube: Kube,
  res: TestResources,
  prefix: string,
  template: NodePoolTemplateSpec,
  replicas: number,
): Promise<{ ns: string; pool: string; claims: NodeClaim[] }> {
  const ns = await res.namespace(prefix);
  const pool = await res.nodePool(prefix, template);
  const body = deployment({ name: 'app', pool, replicas, cpu: '1', memory: '512Mi', terminationGracePeriodSeconds: 1 });
  body.spec!.template.spec!.affinity = {
    podAntiAffinity: {
      requiredDuringSchedulingIgnoredDuringExecution: [
        { topologyKey: 'kubernetes.io/hostname', labelSelector: { matchLabels: { app: 'app' } } },
      ],
    },
  };
  await kube.apps.createNamespacedDeployment({ namespace: ns, body });
  const claims = await waitFor(
    `${replicas} Ready NodeClaims, each running an app Pod`,
    async () => {
      const ready = (await kube.nodeClaims(pool)).filter((c) => conditionTrue(c, 'Ready'));
      const running = (await kube.pods(ns, 'app=app')).filter(podRunningReady);
      const hosts = new Set(running.map((p) => p.spec?.nodeName));
      return ready.length === replicas && ready.every((c) => hosts.has(c.status?.nodeName)) ? ready : undefined;
    },
    { timeoutMs: 180_000 },
  );
  const created = (c: NodeClaim): number => Date.parse(String(c.metadata.creationTimestamp));
  return { ns, pool, claims: claims.sort((a, b) => created(a) - created(b)) };
}

/**
 * Waits until the rotation of `oldClaim` in `pool` has ended in success — the claim gone, the anchor released,
 * RotationCompleted recorded and the success counted — and checks that nothing of ours is left: the pool keeps
 * only last-rotation-at (and `keep`), no Node of the pool carries a marker or our cordon, no placeholder is left.
 */
export async function rotatedAndClean(
  kube: Kube,
  controller: ControllerProcess,
  controllerNs: string,
  pool: string,
  oldClaim: string,
  keep: string[] = [],
): Promise<void> {
  await waitFor(
    `the rotation of ${oldClaim} in ${pool} completed and counted`,
    async () => {
      if ((await kube.getNodeClaim(oldClaim)) !== undefined) return false;
      if ((await kube.getNodePool(pool))?.metadata.annotations?.[A.activeRotation] !== undefined) return false;
      const events = (await eventsV1(kube, 'default')).filter((e) => e.regarding?.name === pool);
      const counted = metricSum(await controller.metrics(), 'noderotation_completed_total', {
        nodepool: pool,
        outcome: 'success',
      });
      return events.some((e) => e.reason === 'RotationCompleted') && counted === 1;
    },
    { timeoutMs: 240_000, intervalMs: 1000, describe: () => controller.tail(20) },
  );
  const poolAnn = (await kube.getNodePool(pool))?.metadata.annotations;
  expect(ourMarkers(poolAnn)).toEqual([A.lastRotationAt, ...keep].sort());
  for (const n of await kube.nodes(pool)) {
    expect(ourMarkers(n.metadata?.annotations), n.metadata?.name).toEqual([]);
    expect(n.spec?.unschedulable ?? false, n.metadata?.name).toBe(false);
  }
  await waitFor(
    `no placeholder left for ${pool}`,
    async () => (await kube.pods(controllerNs, `${A.surgeFor},${NODEPOOL_LABEL}=${pool}`)).length === 0,
  );
}
