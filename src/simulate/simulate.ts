// The fleet simulator: the real engine (decide + the actions it returns) against a discrete-event model of
// Karpenter — surge provisioning delay, surge failures, preemption, drains bounded by terminationGracePeriod,
// Forceful Expiration at each deadline, and fresh NodeClaims replacing removed ones.
import type { RotationPolicy, RotationPolicySpec, Scenario } from '../generated/api-types.js';
import type { NodeClaim, NodePool } from '../karpenter/types.js';
import type { Node } from '../kube/types.js';
import { A, FORCEFUL_FALLBACK, rfc3339 } from '../engine/annotations.js';
import { apply } from '../engine/apply.js';
import { deadlineOf } from '../engine/candidates.js';
import { decide } from '../engine/decide.js';
import type { Action, Snapshot } from '../engine/types.js';
import { NULL_FIGURES, type Figures } from '../derivation/derive.js';
import { inWindow, occurrences, type Interval } from '../schedule/windows.js';
import { parseDuration } from '../util/duration.js';
import { EventQueue, seededRandom } from './heap.js';

export const SIM_NAMESPACE = 'noderotation-system';

type EndReason = 'rotated' | 'fallback' | 'expired' | 'reaped' | 'running';

export interface NodeLife {
  node: string;
  origin: 'initial' | 'surge' | 'replacement';
  createdAt: string;
  deadline: string | null;
  /** When the engine first started rotating it (pending or fallback), if it did. */
  rotationStartedAt: string | null;
  drainStartedAt: string | null;
  attempts: number;
  endedAt: string | null;
  end: EndReason;
}

export interface SimulationResult {
  scenario: string;
  mode: 'controller' | 'baseline';
  start: string;
  end: string;
  nodes: number;
  rotations: { graceful: number; forcefulFallback: number; failedAttempts: number };
  forcefulExpirations: number;
  startsOutsideWindow: number;
  maxConcurrentRotations: number;
  figures: Figures;
  windows: { start: string; end: string }[];
  timeline: NodeLife[];
}

type SimEvent =
  | { at: number; seq: number; kind: 'decide' }
  | { at: number; seq: number; kind: 'provisioned'; pod: string; generation: number }
  | { at: number; seq: number; kind: 'drained'; claim: string }
  | { at: number; seq: number; kind: 'expire'; claim: string }
  | { at: number; seq: number; kind: 'replace' };

interface Life {
  origin: NodeLife['origin'];
  createdAt: number;
  deadline: number | null;
  rotationStartedAt: number | null;
  drainStartedAt: number | null;
  attempts: number;
  endedAt: number | null;
  end: EndReason;
}

export function simulate(scenario: Scenario): SimulationResult {
  const spec = scenario.spec;
  const start = Date.parse(spec.start);
  const end = start + parseDuration(spec.duration) * 1000;
  const mode = spec.mode ?? 'controller';
  const b = spec.behaviour ?? {};
  const provisioning = parseDuration(b.provisioningTime ?? '5m') * 1000;
  const poolName = spec.nodePool.name;
  const tgp = spec.nodePool.terminationGracePeriod ? parseDuration(spec.nodePool.terminationGracePeriod) * 1000 : null;
  const drain = Math.min(parseDuration(b.drainTime ?? '10m') * 1000, tgp ?? Infinity);
  const random = seededRandom(b.seed ?? 1);
  const surgeFailureRate = b.surgeFailureRate ?? 0;
  const preemptionRate = b.preemptionRate ?? 0;

  const policy: RotationPolicy = {
    apiVersion: 'noderotation.io/v1alpha1',
    kind: 'RotationPolicy',
    metadata: { name: scenario.metadata.name },
    spec: { ...(spec.policy as RotationPolicySpec), nodePools: [poolName] },
  };
  const pool: NodePool = {
    apiVersion: 'karpenter.sh/v1',
    kind: 'NodePool',
    metadata: { name: poolName, labels: {} },
    spec: {
      template: {
        spec: {
          expireAfter: spec.nodePool.expireAfter,
          ...(spec.nodePool.terminationGracePeriod
            ? { terminationGracePeriod: spec.nodePool.terminationGracePeriod }
            : {}),
        },
      },
      ...(spec.nodePool.limits ? { limits: spec.nodePool.limits } : {}),
    },
  };

  let s: Snapshot = {
    policies: [policy],
    nodePools: [pool],
    nodeClaims: [],
    nodes: [],
    pods: [],
    namespace: SIM_NAMESPACE,
  };
  const queue = new EventQueue<SimEvent>();
  const lives = new Map<string, Life>();
  const podGeneration = new Map<string, number>();
  let counter = 0;
  const result: SimulationResult = {
    scenario: scenario.metadata.name,
    mode,
    start: rfc3339(start),
    end: rfc3339(end),
    nodes: 0,
    rotations: { graceful: 0, forcefulFallback: 0, failedAttempts: 0 },
    forcefulExpirations: 0,
    startsOutsideWindow: 0,
    maxConcurrentRotations: 0,
    figures: NULL_FIGURES,
    windows: [],
    timeline: [],
  };

  const addClaim = (
    at: number,
    origin: Life['origin'],
    expireAfter = spec.nodePool.expireAfter,
    createdAt = at,
  ): string => {
    const name = `${poolName}-${String(++counter).padStart(5, '0')}`;
    const claim: NodeClaim = {
      apiVersion: 'karpenter.sh/v1',
      kind: 'NodeClaim',
      metadata: {
        name,
        uid: name,
        creationTimestamp: rfc3339(createdAt),
        labels: { 'karpenter.sh/nodepool': poolName },
      },
      spec: {
        expireAfter,
        ...(spec.nodePool.terminationGracePeriod
          ? { terminationGracePeriod: spec.nodePool.terminationGracePeriod }
          : {}),
      },
      status: {
        nodeName: `node-${name}`,
        providerID: `sim://${name}`,
        conditions: [{ type: 'Ready', status: 'True' }],
      },
    };
    const node: Node = {
      metadata: {
        name: `node-${name}`,
        labels: { 'karpenter.sh/nodepool': poolName, 'kubernetes.io/hostname': `node-${name}` },
        ownerReferences: [{ apiVersion: 'karpenter.sh/v1', kind: 'NodeClaim', name }],
      },
      spec: { providerID: `sim://${name}` },
      status: { conditions: [{ type: 'Ready', status: 'True' }] },
    };
    s = { ...s, nodeClaims: [...s.nodeClaims, claim], nodes: [...s.nodes, node] };
    const deadline = deadlineOf(claim);
    lives.set(name, {
      origin,
      createdAt,
      deadline,
      rotationStartedAt: null,
      drainStartedAt: null,
      attempts: 0,
      endedAt: null,
      end: 'running',
    });
    if (deadline !== null) queue.push({ at: Math.max(deadline, at), kind: 'expire', claim: name });
    return name;
  };

  const syncPoolStatus = (): void => {
    const p = s.nodePools[0] as NodePool;
    s = { ...s, nodePools: [{ ...p, status: { nodes: s.nodeClaims.length } }] };
  };

  const deleteClaim = (name: string, at: number): void => {
    s = apply(s, [{ type: 'deleteNodeClaim', name, reason: 'model' }], at);
    queue.push({ at: at + drain, kind: 'drained', claim: name });
  };

  for (const group of spec.fleet) {
    const age = parseDuration(group.age ?? '0h') * 1000;
    for (let i = 0; i < group.count; i++)
      addClaim(start, 'initial', group.expireAfter ?? spec.nodePool.expireAfter, start - age);
  }
  result.nodes = s.nodeClaims.length;
  syncPoolStatus();

  /** Karpenter's and the scheduler's reaction to the engine's actions. */
  const react = (actions: readonly Action[], at: number): void => {
    for (const a of actions) {
      if (a.type === 'createPod') {
        // A generation per placeholder name: a provisioning meant for an earlier, deleted copy is void.
        const gen = (podGeneration.get(a.pod.metadata.name) ?? 0) + 1;
        podGeneration.set(a.pod.metadata.name, gen);
        if (random() >= surgeFailureRate)
          queue.push({ at: at + provisioning, kind: 'provisioned', pod: a.pod.metadata.name, generation: gen });
      } else if (a.type === 'deleteNodeClaim') {
        queue.push({ at: at + drain, kind: 'drained', claim: a.name });
        const claim = s.nodeClaims.find((c) => c.metadata.name === a.name);
        const poolAnn = s.nodePools[0]?.metadata.annotations ?? {};
        const life = lives.get(a.name);
        if (life && poolAnn[A.activeRotation] === a.name) {
          life.drainStartedAt = at;
          if (poolAnn[A.rotationMode] === FORCEFUL_FALLBACK) {
            life.end = 'fallback';
            queue.push({ at: at + provisioning, kind: 'replace' }); // no surge: Karpenter provisions after the fact
          } else {
            life.end = 'rotated';
          }
        } else if (life && claim) {
          life.end = 'reaped';
        }
      } else if (a.type === 'observe') {
        if (a.metric === 'forcefulFallback') result.rotations.forcefulFallback++;
        if (a.metric === 'completed' && a.labels?.outcome === 'success' && a.labels.mode !== FORCEFUL_FALLBACK)
          result.rotations.graceful++;
        if (a.metric === 'completed' && a.labels?.outcome === 'failure') result.rotations.failedAttempts++;
      } else if (a.type === 'event' && (a.eventReason === 'RotationStarted' || a.eventReason === 'ForcefulFallback')) {
        if (!inWindow(policy.spec.maintenanceWindows, at)) result.startsOutsideWindow++;
      } else if (a.type === 'annotate' && a.target.kind === 'NodePool' && a.set[A.activeRotation] !== undefined) {
        const life = lives.get(a.set[A.activeRotation] as string);
        if (life) {
          life.rotationStartedAt ??= at;
          life.attempts++;
        }
      } else if (
        a.type === 'annotate' &&
        a.target.kind === 'NodeClaim' &&
        a.set[A.state] === 'pending' &&
        a.remove.includes(A.startedAt)
      ) {
        const life = lives.get(a.target.name);
        if (life) life.attempts++; // a retry of a failed claim
      }
    }
  };

  const runEngine = (at: number): number | null => {
    const d = decide(s, at);
    const next = apply(s, d.actions, at);
    s = next;
    react(d.actions, at);
    syncPoolStatus();
    const inFlight = s.nodeClaims.filter((c) =>
      ['pending', 'draining'].includes(c.metadata.annotations?.[A.state] ?? ''),
    ).length;
    result.maxConcurrentRotations = Math.max(result.maxConcurrentRotations, inFlight);
    if (result.figures === NULL_FIGURES && d.pools[0]?.report.figures) result.figures = d.pools[0].report.figures;
    return d.pools[0]?.requeueAt ?? null;
  };

  let nextDecide = Infinity;
  const scheduleDecide = (at: number): void => {
    if (mode !== 'controller' || at >= nextDecide || at > end) return;
    nextDecide = at;
    queue.push({ at, kind: 'decide' });
  };
  scheduleDecide(start);

  /** Whether an event touches the rotation in flight (the anchored claim, its placeholder or surge). */
  const touchesRotation = (claimOrPod: string): boolean => {
    const anchor = s.nodePools[0]?.metadata.annotations?.[A.activeRotation];
    if (!anchor) return false;
    return (
      claimOrPod === anchor ||
      claimOrPod.endsWith(`-${anchor}`) ||
      s.nodeClaims.find((c) => c.metadata.name === anchor)?.metadata.annotations?.[A.surgeClaim] === claimOrPod
    );
  };

  while (queue.size > 0 && (queue.peek() as SimEvent).at <= end) {
    const ev = queue.pop() as SimEvent;
    const at = ev.at;
    // A real controller reacts to every watch event; deciding on events that cannot change its answer
    // (a young node appearing, an unrelated node going away) only costs time, so the model skips them.
    let relevant = ev.kind === 'decide' || ev.kind === 'provisioned';
    switch (ev.kind) {
      case 'decide':
        if (at !== nextDecide)
          relevant = false; // superseded: an earlier decision already asked for another time
        else nextDecide = Infinity;
        break;
      case 'provisioned': {
        const pod = s.pods.find((p) => p.metadata.name === ev.pod);
        if (!pod || podGeneration.get(ev.pod) !== ev.generation || pod.spec.nodeName) break;
        if (random() < preemptionRate) {
          s = { ...s, pods: s.pods.filter((p) => p !== pod) }; // workload needed the room: the placeholder is gone
          break;
        }
        const surge = addClaim(at, 'surge');
        s = {
          ...s,
          pods: s.pods.map((p) =>
            p === pod ? { ...p, spec: { ...p.spec, nodeName: `node-${surge}` }, status: { phase: 'Running' } } : p,
          ),
        };
        break;
      }
      case 'drained': {
        const claim = s.nodeClaims.find((c) => c.metadata.name === ev.claim);
        if (!claim) break;
        relevant = touchesRotation(ev.claim);
        s = {
          ...s,
          nodeClaims: s.nodeClaims.filter((c) => c !== claim),
          nodes: s.nodes.filter((n) => n.metadata.name !== `node-${ev.claim}`),
          pods: s.pods.filter((p) => p.spec.nodeName !== `node-${ev.claim}`),
        };
        const life = lives.get(ev.claim);
        if (life) life.endedAt = at;
        break;
      }
      case 'expire': {
        const claim = s.nodeClaims.find((c) => c.metadata.name === ev.claim);
        if (!claim || claim.metadata.deletionTimestamp) break;
        relevant = touchesRotation(ev.claim);
        // Forceful Expiration: no budgets, no do-not-disrupt, no replacement ready first.
        result.forcefulExpirations++;
        const life = lives.get(ev.claim);
        if (life) life.end = 'expired';
        deleteClaim(ev.claim, at);
        queue.push({ at: at + provisioning, kind: 'replace' });
        break;
      }
      case 'replace':
        addClaim(at, 'replacement');
        break;
    }
    syncPoolStatus();
    if (mode === 'controller' && relevant) {
      // The controller reacts to every change it watches, and otherwise wakes when the engine asked to.
      const requeue = runEngine(at);
      if (requeue !== null) scheduleDecide(requeue);
    }
  }

  result.windows = occurrences(policy.spec.maintenanceWindows, start, end).map((iv: Interval) => ({
    start: rfc3339(iv.start),
    end: rfc3339(iv.end),
  }));
  result.timeline = [...lives.entries()]
    .sort(([a], [b2]) => a.localeCompare(b2))
    .map(([node, l]) => ({
      node,
      origin: l.origin,
      createdAt: rfc3339(l.createdAt),
      deadline: l.deadline === null ? null : rfc3339(l.deadline),
      rotationStartedAt: l.rotationStartedAt === null ? null : rfc3339(l.rotationStartedAt),
      drainStartedAt: l.drainStartedAt === null ? null : rfc3339(l.drainStartedAt),
      attempts: l.attempts,
      endedAt: l.endedAt === null ? null : rfc3339(l.endedAt),
      end: l.endedAt === null ? 'running' : l.end,
    }));
  return result;
}
