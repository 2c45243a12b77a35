// The simulator's state: the cluster snapshot the engine sees, the event queue, each node's life, and the
// result being counted. The event handlers (events.ts) and the reaction to the engine's actions (react.ts)
// change it only through these fields and methods.
import type { RotationPolicy, RotationPolicySpec, Scenario } from '../generated/api-types.js';
import type { NodeClaim, NodePool } from '../karpenter/types.js';
import type { Node } from '../kube/types.js';
import { A, rfc3339 } from '../engine/annotations.js';
import { apply } from '../engine/apply.js';
import { deadlineOf } from '../engine/candidates.js';
import { scheduledFreezeAt, scheduledFreezesBetween } from '../engine/freezes.js';
import type { Interval } from '../schedule/windows.js';
import { policyParams, type PolicyParams } from '../derivation/params.js';
import { decide } from '../engine/decide.js';
import type { Snapshot } from '../engine/types.js';
import { NULL_FIGURES } from '../derivation/derive.js';
import { parseDuration } from '../util/duration.js';
import { EventQueue, seededRandom } from './heap.js';
import type { NodeLife, SimulationResult } from './simulate.js';

export const SIM_NAMESPACE = 'noderotation-system';

export type SimEvent =
  | { at: number; seq: number; kind: 'decide' }
  | { at: number; seq: number; kind: 'provisioned'; pod: string; generation: number }
  | { at: number; seq: number; kind: 'drained'; claim: string }
  | { at: number; seq: number; kind: 'expire'; claim: string }
  | { at: number; seq: number; kind: 'replace' };

export interface Life {
  origin: NodeLife['origin'];
  createdAt: number;
  deadline: number | null;
  rotationStartedAt: number | null;
  drainStartedAt: number | null;
  attempts: number;
  endedAt: number | null;
  end: NodeLife['end'];
}

/** The scenario's fixed numbers, in milliseconds. */
export interface SimConfig {
  start: number;
  end: number;
  mode: 'controller' | 'baseline';
  provisioning: number;
  drain: number;
  poolName: string;
  expireAfter: string;
  terminationGracePeriod: string | undefined;
  surgeFailureRate: number;
  preemptionRate: number;
}

export function configOf(scenario: Scenario): SimConfig {
  const spec = scenario.spec;
  const start = Date.parse(spec.start);
  const b = spec.behaviour ?? {};
  const tgp = spec.nodePool.terminationGracePeriod ? parseDuration(spec.nodePool.terminationGracePeriod) * 1000 : null;
  return {
    start,
    end: start + parseDuration(spec.duration) * 1000,
    mode: spec.mode ?? 'controller',
    provisioning: parseDuration(b.provisioningTime ?? '5m') * 1000,
    drain: Math.min(parseDuration(b.drainTime ?? '10m') * 1000, tgp ?? Infinity),
    poolName: spec.nodePool.name,
    expireAfter: spec.nodePool.expireAfter,
    terminationGracePeriod: spec.nodePool.terminationGracePeriod,
    surgeFailureRate: b.surgeFailureRate ?? 0,
    preemptionRate: b.preemptionRate ?? 0,
  };
}

/** One NodeClaim to create: its origin, expireAfter and creation time. */
interface NewClaim {
  origin: Life['origin'];
  expireAfter: string;
  createdAt: number;
}

export class SimModel {
  readonly config: SimConfig;
  readonly policy: RotationPolicy;
  s: Snapshot;
  /** The state the last decision was made on (before its actions were applied), for the reactions to read. */
  decidedOn: Snapshot | null = null;
  readonly queue = new EventQueue<SimEvent>();
  readonly lives = new Map<string, Life>();
  /** A generation per placeholder name: a provisioning meant for an earlier, deleted copy is void. */
  readonly podGeneration = new Map<string, number>();
  readonly random: () => number;
  readonly result: SimulationResult;
  /** When the next engine decision is queued for (Infinity: none). */
  nextDecide = Infinity;
  private counter = 0;

  constructor(scenario: Scenario) {
    const spec = scenario.spec;
    const config = configOf(scenario);
    this.config = config;
    this.random = seededRandom(spec.behaviour?.seed ?? 1);
    this.policy = {
      apiVersion: 'noderotation.io/v1alpha1',
      kind: 'RotationPolicy',
      metadata: { name: scenario.metadata.name },
      spec: { ...(spec.policy as RotationPolicySpec), nodePools: [config.poolName] },
    };
    const pool: NodePool = {
      apiVersion: 'karpenter.sh/v1',
      kind: 'NodePool',
      metadata: { name: config.poolName, labels: {} },
      spec: {
        template: {
          spec: {
            expireAfter: config.expireAfter,
            ...(config.terminationGracePeriod ? { terminationGracePeriod: config.terminationGracePeriod } : {}),
          },
        },
        ...(spec.nodePool.limits ? { limits: spec.nodePool.limits } : {}),
      },
    };
    this.s = {
      policies: [this.policy],
      nodePools: [pool],
      nodeClaims: [],
      nodes: [],
      pods: [],
      namespace: SIM_NAMESPACE,
    };
    this.result = {
      scenario: scenario.metadata.name,
      mode: config.mode,
      start: rfc3339(config.start),
      end: rfc3339(config.end),
      nodes: 0,
      rotations: { graceful: 0, forcefulFallback: 0, failedAttempts: 0 },
      forcefulExpirations: 0,
      forcefulExpirationsInFreeze: 0,
      startsOutsideWindow: 0,
      maxConcurrentRotations: 0,
      figures: NULL_FIGURES,
      windows: [],
      freezes: [],
      timezones: [],
      timeline: [],
    };
  }

  /** The fleet present at start, created in one change of the snapshot (one list copy, not one per node). */
  addFleet(groups: Scenario['spec']['fleet']): void {
    const claims: NewClaim[] = [];
    for (const group of groups) {
      const age = parseDuration(group.age ?? '0h') * 1000;
      for (let i = 0; i < group.count; i++)
        claims.push({
          origin: 'initial',
          expireAfter: group.expireAfter ?? this.config.expireAfter,
          createdAt: this.config.start - age,
        });
    }
    this.addClaims(this.config.start, claims);
    this.result.nodes = this.s.nodeClaims.length;
    this.syncPoolStatus();
  }

  /** A new NodeClaim and its Node, Ready; Karpenter's expiry of it queued. Returns its name. */
  addClaim(at: number, origin: Life['origin']): string {
    return this.addClaims(at, [{ origin, expireAfter: this.config.expireAfter, createdAt: at }])[0] as string;
  }

  private addClaims(at: number, created: readonly NewClaim[]): string[] {
    const claims: NodeClaim[] = [];
    const nodes: Node[] = [];
    const names: string[] = [];
    for (const c of created) {
      const name = `${this.config.poolName}-${String(++this.counter).padStart(5, '0')}`;
      const claim = this.claimObject(name, c);
      claims.push(claim);
      nodes.push(this.nodeObject(name));
      names.push(name);
      const deadline = deadlineOf(claim);
      this.lives.set(name, {
        origin: c.origin,
        createdAt: c.createdAt,
        deadline,
        rotationStartedAt: null,
        drainStartedAt: null,
        attempts: 0,
        endedAt: null,
        end: 'running',
      });
      if (deadline !== null) this.queue.push({ at: Math.max(deadline, at), kind: 'expire', claim: name });
    }
    this.s = { ...this.s, nodeClaims: [...this.s.nodeClaims, ...claims], nodes: [...this.s.nodes, ...nodes] };
    return names;
  }

  private claimObject(name: string, c: NewClaim): NodeClaim {
    const { poolName, terminationGracePeriod } = this.config;
    return {
      apiVersion: 'karpenter.sh/v1',
      kind: 'NodeClaim',
      metadata: {
        name,
        uid: name,
        creationTimestamp: rfc3339(c.createdAt),
        labels: { 'karpenter.sh/nodepool': poolName },
      },
      spec: {
        expireAfter: c.expireAfter,
        ...(terminationGracePeriod ? { terminationGracePeriod } : {}),
      },
      status: {
        nodeName: `node-${name}`,
        providerID: `sim://${name}`,
        conditions: [{ type: 'Ready', status: 'True' }],
      },
    };
  }

  private nodeObject(name: string): Node {
    const poolName = this.config.poolName;
    return {
      metadata: {
        name: `node-${name}`,
        labels: { 'karpenter.sh/nodepool': poolName, 'kubernetes.io/hostname': `node-${name}` },
        ownerReferences: [{ apiVersion: 'karpenter.sh/v1', kind: 'NodeClaim', name }],
      },
      spec: { providerID: `sim://${name}` },
      status: { conditions: [{ type: 'Ready', status: 'True' }] },
    };
  }

  /** Whether instant t lies inside one of the policy's scheduled freezes (one the engine could not read: no). */
  inFreeze(t: number): boolean {
    const p = this.policyParams();
    return p !== null && scheduledFreezeAt(p, t) !== null;
  }

  /** The policy's scheduled freezes overlapping [from, to), merged. */
  freezesBetween(from: number, to: number): Interval[] {
    const p = this.policyParams();
    return p === null ? [] : scheduledFreezesBetween(p, from, to);
  }

  private policyParams(): PolicyParams | null {
    if (this.params === undefined) {
      try {
        this.params = policyParams(this.policy.spec);
      } catch {
        this.params = null;
      }
    }
    return this.params;
  }

  private params: PolicyParams | null | undefined;

  findClaim(name: string): NodeClaim | undefined {
    return this.s.nodeClaims.find((c) => c.metadata.name === name);
  }

  /** The NodePool's status.nodes, as Karpenter keeps it (the engine reads it against limits). */
  syncPoolStatus(): void {
    const p = this.s.nodePools[0] as NodePool;
    this.s = { ...this.s, nodePools: [{ ...p, status: { nodes: this.s.nodeClaims.length } }] };
  }

  /** Karpenter deletes a NodeClaim itself (expiry): marked for deletion now, gone after the drain. */
  deleteClaim(name: string, at: number): void {
    this.s = {
      ...this.s,
      nodeClaims: this.s.nodeClaims.map((c) =>
        c.metadata.name === name && !c.metadata.deletionTimestamp
          ? { ...c, metadata: { ...c.metadata, deletionTimestamp: rfc3339(at) } }
          : c,
      ),
    };
    this.queue.push({ at: at + this.config.drain, kind: 'drained', claim: name });
  }

  /** Queues an engine decision at `at`, unless an earlier one is queued or the run is over by then. */
  scheduleDecide(at: number): void {
    if (this.config.mode !== 'controller' || at >= this.nextDecide || at > this.config.end) return;
    this.nextDecide = at;
    this.queue.push({ at, kind: 'decide' });
  }

  /** Whether an event touches the rotation in flight (the anchored claim, its placeholder or surge). */
  touchesRotation(claimOrPod: string): boolean {
    const anchor = this.s.nodePools[0]?.metadata.annotations?.[A.activeRotation];
    if (!anchor) return false;
    return (
      claimOrPod === anchor ||
      claimOrPod.endsWith(`-${anchor}`) ||
      this.findClaim(anchor)?.metadata.annotations?.[A.surgeClaim] === claimOrPod
    );
  }

  /** One engine decision: its actions applied, Karpenter's reaction queued; returns the engine's requeueAt. */
  runEngine(at: number, react: (model: SimModel, actions: ReturnType<typeof decide>['actions'], at: number) => void) {
    const d = decide(this.s, at);
    this.decidedOn = this.s;
    this.s = apply(this.s, d.actions, at);
    react(this, d.actions, at);
    this.syncPoolStatus();
    const inFlight = this.s.nodeClaims.filter((c) =>
      ['pending', 'draining'].includes(c.metadata.annotations?.[A.state] ?? ''),
    ).length;
    this.result.maxConcurrentRotations = Math.max(this.result.maxConcurrentRotations, inFlight);
    if (this.result.figures === NULL_FIGURES && d.pools[0]?.report.figures)
      this.result.figures = d.pools[0].report.figures;
    return d.pools[0]?.requeueAt ?? null;
  }
}
