// The soak's plan, pure: which NodePools, policies and workloads it runs (a compressed Scenario P), and the chaos
// it injects, both drawn from the options and the seed alone, so that a seed names a run.
//
// Scenario P (the reference's published run) held expireAfter 2h12m against a derived lead time of 1h12m for 12
// hours. Here the same race, compressed so that an hour is a long run: windows always open (P is then the 60 s
// reconcile tick, design §3.2), t_rot = readyTimeout 60 s + terminationGracePeriod 60 s + 2 min = 4 min, K = 2, so
// leadTime = 2 · 60 s + 4 min = 6 min against expireAfter 10 min (Scenario P: 1h12m against 2h12m; here 0.6 of
// the node's life is lead, there 0.55). Two nodes a pool, each rotated every ~4–6 min: about 20 rotations an hour
// per pool. Beside them:
//   - a windowed pool: 32 daily windows of 20 min, one every 45 min (P = 45 min, K = 2, leadTime 1h34m,
//     expireAfter 2h5m): its starts show the window rule under chaos (it rotates once its nodes are 31 min old);
//   - a fallback pool (Scenario P's epilogue, made to repeat): its limits leave no room for a surge node, so every
//     claim reaches its last chance and the forceful fallback must fire, in-window, before Karpenter's expiry.
import type { RotationPolicy, RotationPolicySpec } from '../../src/generated/api-types.js';
import type { NodePool } from '../../src/karpenter/types.js';
import { parseDuration } from '../../src/util/duration.js';
import { Rng } from '../../test/sim/scheduler.js';
import { ALWAYS_OPEN } from '../../test/support/fixtures.js';

export interface SoakOptions {
  /** Length of the run in minutes (chaos stops at 85 % of it; the rest lets the controller settle). */
  minutes: number;
  /** How many tight pools. */
  pools: number;
  seed: number;
  chaos: boolean;
}

export type PoolRole = 'tight' | 'windowed' | 'fallback';

export interface PoolPlan {
  /** Stable within a run: `soak-<role><n>`. */
  name: string;
  role: PoolRole;
  instanceType: string;
  expireAfterS: number;
  terminationGracePeriodS: number;
  /** NodePool limits (cpu), when the pool must not grow (the fallback pool). */
  cpuLimit?: string;
  /** The workload: a Deployment with a PDB of maxUnavailable 1. */
  replicas: number;
  podCpu: string;
  policy: RotationPolicySpec;
}

/** What an operator does in an incident (the rest are faults of processes and of the cluster). */
export const OPERATOR_KINDS = [
  'cordon',
  'do-not-disrupt',
  'freeze',
  'freeze-malformed',
  'edit-policy',
  'delete-policy',
] as const;
export const CHAOS_KINDS = [
  'kill-leader',
  'pause-leader',
  'restart-karpenter',
  'restart-apiserver',
  'restart-kwok',
  'slow-apiserver',
  ...OPERATOR_KINDS,
] as const;
export type ChaosKind = (typeof CHAOS_KINDS)[number];

export interface ChaosEvent {
  /** Seconds after T0. */
  at: number;
  kind: ChaosKind;
  /** How long the fault lasts (a pause, a slow period, an operator's marker before it is taken back), seconds. */
  forS: number;
  /** Which tight pool an operator's action is about (index), and a free draw for the executor's choices. */
  pool: number;
  pick: number;
}

export interface SoakPlan {
  options: SoakOptions;
  pools: PoolPlan[];
  chaos: ChaosEvent[];
  /** Chaos ends here (s after T0); the rest of the run is for settling. */
  chaosEndsS: number;
}

type Window = RotationPolicySpec['maintenanceWindows'][number];
const EVERY_DAY: Window['days'] = ['Mon', 'Tue', 'Wed', 'Thu', 'Fri', 'Sat', 'Sun'];

const hhmm = (minute: number): string =>
  `${String(Math.floor(minute / 60) % 24).padStart(2, '0')}:${String(minute % 60).padStart(2, '0')}`;

/** 32 daily windows of 20 min, one every 45 min from 00:00 UTC: P = 45 min. */
export function windowedWindows(): RotationPolicySpec['maintenanceWindows'] {
  return Array.from({ length: 32 }, (_, i): Window => ({
    timezone: 'UTC',
    days: EVERY_DAY,
    start: hhmm(i * 45),
    end: hhmm(i * 45 + 20),
  })) as RotationPolicySpec['maintenanceWindows'];
}

/** The surge settings of the tight and windowed pools: fallback armed, as in Scenario P, and expected quiet. */
const SURGE: RotationPolicySpec['surge'] = {
  readyTimeout: '60s',
  cooldownAfter: '10s',
  forcefulFallback: { enabled: true },
};

// The fallback pool's figures (as test/e2e/controller-fallback.test.ts): t_rot = 15 s + 10 s + 120 s.
const FF_EXPIRE_S = 250;
const FF_READY_TIMEOUT_S = 15;
const FF_GRACE_S = 10;
const FF_PAUSE_S = FF_EXPIRE_S - (FF_READY_TIMEOUT_S + FF_GRACE_S + 120) - 60 - FF_READY_TIMEOUT_S + 10;

/** Runs shorter than this leave the windowed pool out. */
export const WINDOWED_MIN_MINUTES = 40;

export function soakPlan(options: SoakOptions): SoakPlan {
  const pools: PoolPlan[] = [];
  for (let i = 1; i <= options.pools; i++) {
    pools.push({
      name: `soak-tight${i}`,
      role: 'tight',
      instanceType: 'c-2x-amd64-linux',
      expireAfterS: 600,
      terminationGracePeriodS: 60,
      replicas: 2,
      // One Pod a node (1900m allocatable): two nodes a pool, and the surge node takes exactly the drained one's.
      podCpu: '1200m',
      policy: { maintenanceWindows: ALWAYS_OPEN, minRotationChances: 2, surge: SURGE },
    });
  }
  // Its nodes are candidates at 31 min: a shorter run would only pay for its six nodes.
  if (options.minutes >= WINDOWED_MIN_MINUTES)
    pools.push({
      name: 'soak-windowed1',
      role: 'windowed',
      instanceType: 'c-2x-amd64-linux',
      expireAfterS: 125 * 60,
      terminationGracePeriodS: 60,
      replicas: 6,
      podCpu: '1200m',
      policy: { maintenanceWindows: windowedWindows(), minRotationChances: 2, surge: SURGE },
    });
  pools.push({
    name: 'soak-fallback1',
    role: 'fallback',
    instanceType: 'c-1x-amd64-linux',
    expireAfterS: FF_EXPIRE_S,
    terminationGracePeriodS: FF_GRACE_S,
    cpuLimit: '1',
    replicas: 1,
    podCpu: '500m',
    policy: {
      maintenanceWindows: ALWAYS_OPEN,
      // One chance, the least a policy may have: the claim's last chance comes at once (see controller-fallback).
      ageThreshold: '1s',
      surge: {
        readyTimeout: `${FF_READY_TIMEOUT_S}s`,
        failurePause: `${FF_PAUSE_S}s`,
        retryBackoff: `${FF_PAUSE_S}s`,
        cooldownAfter: '10s',
        forcefulFallback: { enabled: true },
      },
    },
  });
  const chaosEndsS = Math.floor(options.minutes * 60 * 0.85);
  return { options, pools, chaos: options.chaos ? chaosSchedule(options, chaosEndsS) : [], chaosEndsS };
}

/**
 * The chaos schedule: one fault at a time, from 60 s after T0 until `endS`, a fault every 40–120 s (the gap after
 * the previous one ends), its kind drawn from every kind in turn (a shuffled round, then another), so that a short
 * run meets each kind at least once when it has room for a round.
 */
export function chaosSchedule(options: SoakOptions, endS: number): ChaosEvent[] {
  const rng = Rng.of(options.seed ^ 0x50a4);
  const events: ChaosEvent[] = [];
  let round: ChaosKind[] = [];
  let t = 60;
  while (true) {
    if (round.length === 0) round = shuffle(rng, [...CHAOS_KINDS]);
    const kind = round.shift() as ChaosKind;
    const forS = durationOf(kind, rng);
    if (t + forS > endS) break;
    events.push({ at: t, kind, forS, pool: rng.int(0, options.pools - 1), pick: rng.int(0, 1_000_000) });
    t += forS + rng.int(40, 120);
  }
  return events;
}

/** How long each kind of fault lasts, seconds. */
function durationOf(kind: ChaosKind, rng: Rng): number {
  switch (kind) {
    case 'kill-leader':
      return rng.int(2, 10); // the kubelet restarts the container after a back-off
    case 'pause-leader':
      return 15 + rng.int(5, 20); // past the Lease's 15 s: the other replica takes over
    case 'restart-karpenter':
    case 'restart-apiserver':
    case 'restart-kwok':
      return rng.int(1, 5); // down for this long before it is started again
    case 'slow-apiserver':
      return rng.int(30, 90);
    case 'cordon':
    case 'do-not-disrupt':
      return rng.int(30, 120);
    case 'freeze':
    case 'freeze-malformed':
      return rng.int(20, 45); // short: a freeze over a tight pool's last chance is the operator's own expiry
    case 'edit-policy':
      return rng.int(30, 90);
    case 'delete-policy':
      return rng.int(15, 40);
  }
}

function shuffle<T>(rng: Rng, xs: T[]): T[] {
  for (let i = xs.length - 1; i > 0; i--) {
    const j = rng.int(0, i);
    [xs[i], xs[j]] = [xs[j] as T, xs[i] as T];
  }
  return xs;
}

export const SOAK_LABEL = 'noderotation.io/soak';

/** The NodePool of a pool's plan, on the KWOKNodeClass `default` (cluster.sh). */
export function nodePoolOf(p: PoolPlan): NodePool {
  return {
    apiVersion: 'karpenter.sh/v1',
    kind: 'NodePool',
    metadata: { name: p.name, labels: { [SOAK_LABEL]: p.role } },
    spec: {
      // Karpenter may remove an empty node (the old one once drained); it never consolidates a busy one.
      disruption: { consolidationPolicy: 'WhenEmpty', consolidateAfter: '30s' },
      ...(p.cpuLimit ? { limits: { cpu: p.cpuLimit } } : {}),
      template: {
        metadata: { labels: { [SOAK_LABEL]: p.role } },
        spec: {
          nodeClassRef: { group: 'karpenter.kwok.sh', kind: 'KWOKNodeClass', name: 'default' },
          expireAfter: `${p.expireAfterS}s`,
          terminationGracePeriod: `${p.terminationGracePeriodS}s`,
          requirements: [
            { key: 'node.kubernetes.io/instance-type', operator: 'In', values: [p.instanceType] },
            { key: 'karpenter.sh/capacity-type', operator: 'In', values: ['on-demand'] },
          ],
        },
      },
    },
  };
}

/** The RotationPolicy that governs one pool by name. */
export function policyOf(p: PoolPlan): RotationPolicy {
  return {
    apiVersion: 'noderotation.io/v1alpha1',
    kind: 'RotationPolicy',
    metadata: { name: `${p.name}-policy` },
    spec: { nodePools: [p.name], ...p.policy },
  };
}

/**
 * The pool's figures from design §3.2, computed here from the plan alone (not by the engine, whose derivation
 * plan.test.ts checks against these): P the longest gap between window starts (the 60 s tick when always open),
 * t_rot = readyTimeout + tGP + 2 min, leadTime = K · P + t_rot, A = expireAfter − leadTime unless explicit, and G the
 * chances an explicit A leaves, ⌊(expireAfter − A − t_rot) / P⌋ (K with auto).
 */
export function figuresOf(p: PoolPlan): {
  periodS: number;
  rotationBoundS: number;
  leadTimeS: number;
  ageThresholdS: number;
  chances: number;
} {
  const windows = p.policy.maintenanceWindows;
  const alwaysOpen = windows.length === 1 && windows[0]?.start === windows[0]?.end && windows[0]?.days.length === 7;
  const starts = windows.map((w) => minuteOf(w.start)).sort((a, b) => a - b);
  const gaps = starts.map((s, i) => ((starts[(i + 1) % starts.length] as number) - s + 1440) % 1440 || 1440);
  const periodS = alwaysOpen ? 60 : Math.max(...gaps) * 60;
  const rotationBoundS = parseDuration(p.policy.surge?.readyTimeout ?? '') + p.terminationGracePeriodS + 120;
  const k = p.policy.minRotationChances ?? 2;
  const explicit = p.policy.ageThreshold !== undefined && p.policy.ageThreshold !== 'auto';
  const leadTimeS = k * periodS + rotationBoundS;
  const ageThresholdS = explicit ? parseDuration(String(p.policy.ageThreshold)) : p.expireAfterS - leadTimeS;
  // G: the chances an explicit threshold leaves (K with auto).
  const chances = explicit ? Math.floor((p.expireAfterS - ageThresholdS - rotationBoundS) / periodS) : k;
  return { periodS, rotationBoundS, leadTimeS, ageThresholdS, chances };
}

const minuteOf = (hhmm: string): number => Number(hhmm.slice(0, 2)) * 60 + Number(hhmm.slice(3, 5));

/**
 * The pool's open windows over [from, to] (ms), from the plan's UTC daily windows alone: an independent model
 * of the schedule, for judging where rotations started.
 */
export function openIntervals(p: PoolPlan, from: number, to: number): { start: number; end: number }[] {
  const out: { start: number; end: number }[] = [];
  const DAY = 86_400_000;
  for (let day = Math.floor(from / DAY) * DAY - DAY; day <= to; day += DAY) {
    for (const w of p.policy.maintenanceWindows) {
      if (w.timezone !== 'UTC') throw new Error(`soak windows are UTC; ${w.timezone} is not modelled here`);
      const weekday = ['Sun', 'Mon', 'Tue', 'Wed', 'Thu', 'Fri', 'Sat'][new Date(day).getUTCDay()] as string;
      if (!(w.days as readonly string[]).includes(weekday)) continue;
      const s = minuteOf(w.start);
      const len = (minuteOf(w.end) - s + 1440) % 1440 || 1440;
      const start = day + s * 60_000;
      const end = start + len * 60_000;
      if (end >= from && start <= to) out.push({ start, end });
    }
  }
  return out.sort((a, b) => a.start - b.start);
}
