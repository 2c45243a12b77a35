// Random, internally consistent snapshots of one NodePool mid-life (fast-check): the engine's property tests
// (src/engine/properties.test.ts) and the executor's equivalence with apply (test/sim/equivalence.test.ts) draw
// from the same scenarios.
import fc from 'fast-check';
import { A } from '../../src/engine/annotations.js';
import { placeholderName } from '../../src/engine/placeholder.js';
import type { Snapshot } from '../../src/engine/types.js';
import type { MaintenanceWindow } from '../../src/generated/api-types.js';
import type { NodeClaim } from '../../src/karpenter/types.js';
import type { Node, Pod } from '../../src/kube/types.js';
import { claim, HOUR, iso, nodePool, NS, policy, snapshot, workload } from './fixtures.js';

export const BASE = Date.parse('2027-01-04T00:00:00Z');
export const WINDOWS: [MaintenanceWindow] = [
  { timezone: 'Asia/Tokyo', days: ['Wed', 'Sat'], start: '02:00', end: '06:00' },
];

const claimArb = fc.record({
  ageHours: fc.integer({ min: 0, max: 340 }),
  expireAfter: fc.constantFrom('336h', '300h', '250h', 'Never'),
  ready: fc.boolean(),
  operatorDnd: fc.boolean(),
  operatorCordon: fc.boolean(),
  failed: fc.option(
    fc.record({ agoMinutes: fc.integer({ min: 0, max: 600 }), count: fc.integer({ min: 1, max: 5 }) }),
    { nil: undefined },
  ),
  deleting: fc.boolean(),
});

const activeArb = fc.option(
  fc.record({
    phase: fc.constantFrom('pending', 'draining', 'gone'),
    startedMinutesAgo: fc.integer({ min: 0, max: 30 }),
    placeholder: fc.constantFrom('none', 'pending', 'bound-ready', 'bound-notready', 'preempted'),
    fallback: fc.boolean(),
  }),
  { nil: undefined },
);

export const scenarioArb = fc.record({
  claims: fc.array(claimArb, { minLength: 1, maxLength: 5 }),
  active: activeArb,
  nowMinutes: fc.integer({ min: 0, max: 7 * 24 * 60 }),
  fallback: fc.boolean(),
  lastRotationMinutesAgo: fc.option(fc.integer({ min: 0, max: 60 }), { nil: undefined }),
  freezeMinutes: fc.option(fc.integer({ min: -30, max: 120 }), { nil: undefined }),
  /** A scheduled freeze of the policy (minutes from now, hours long), with or without rotation ahead of it. */
  scheduled: fc.option(
    fc.record({
      startMinutes: fc.integer({ min: -120, max: 4 * 24 * 60 }),
      hours: fc.integer({ min: 1, max: 120 }),
      preFreezeRotation: fc.boolean(),
    }),
    { nil: undefined },
  ),
});

export type Scenario = typeof scenarioArb extends fc.Arbitrary<infer T> ? T : never;

/** Builds a consistent snapshot: at most one claim in flight, and it is the anchor; markers only for it. */
export function build(sc: Scenario): { s: Snapshot; now: number } {
  const now = BASE + sc.nowMinutes * 60_000;
  const parts = sc.claims.map((c, i) => {
    const annotations: Record<string, string> = {};
    if (c.failed)
      Object.assign(annotations, {
        [A.state]: 'failed',
        [A.failedAt]: iso(now - c.failed.agoMinutes * 60_000),
        [A.retryCount]: String(c.failed.count),
      });
    const nodeAnnotations: Record<string, string> = c.operatorDnd ? { [A.doNotDisrupt]: 'true' } : {};
    return claim(`c${i}`, {
      createdAt: now - c.ageHours * HOUR,
      expireAfter: c.expireAfter,
      ready: c.ready,
      annotations,
      nodeAnnotations,
      unschedulable: c.operatorCordon,
      ...(c.deleting ? { deleting: now - 60_000 } : {}),
    });
  });
  const poolAnn: Record<string, string> = {};
  if (sc.lastRotationMinutesAgo !== undefined)
    poolAnn[A.lastRotationAt] = iso(now - sc.lastRotationMinutesAgo * 60_000);
  if (sc.freezeMinutes !== undefined) poolAnn[A.freeze] = iso(now + sc.freezeMinutes * 60_000);
  const pods: Pod[] = [];
  const extraNodes: Node[] = [];
  const extraClaims: { claim: NodeClaim; node?: Node }[] = [];
  if (sc.active) {
    const target = parts[0] as { claim: NodeClaim; node?: Node };
    const name = target.claim.metadata.name;
    const startedAt = now - sc.active.startedMinutesAgo * 60_000;
    poolAnn[A.activeRotation] = name;
    // Our own markers on the candidate (only where the operator has none).
    if (target.node)
      target.node.metadata.annotations = sc.claims[0]?.operatorDnd
        ? { [A.doNotDisrupt]: 'true', [A.surgeFor]: name }
        : { [A.doNotDisrupt]: 'true', [A.doNotDisruptOwned]: 'true', [A.surgeFor]: name };
    if (target.node && !sc.claims[0]?.operatorCordon) {
      target.node.spec.unschedulable = true;
      target.node.metadata.annotations = { ...target.node.metadata.annotations, [A.cordoned]: 'true' };
    }
    target.claim.metadata.deletionTimestamp = undefined;
    if (sc.active.phase === 'pending') {
      target.claim.metadata.annotations = { [A.state]: 'pending', [A.startedAt]: iso(startedAt) };
      if (sc.active.placeholder !== 'none') {
        const bound = sc.active.placeholder !== 'pending';
        if (bound) {
          const surge = claim('surge', {
            createdAt: startedAt + 60_000,
            ready: sc.active.placeholder !== 'bound-notready',
          });
          extraClaims.push(surge);
        }
        pods.push({
          metadata: {
            name: placeholderName(name),
            namespace: NS,
            // The reference's form (labels only): ours is adopted from it, so the invariants cover takeover.
            labels: { [A.surgeFor]: name, 'karpenter.sh/nodepool': 'general' },
            annotations: { [A.doNotDisrupt]: 'true' },
            ...(sc.active.placeholder === 'preempted' ? { deletionTimestamp: iso(now) } : {}),
          },
          spec: { containers: [], ...(bound ? { nodeName: 'node-surge' } : {}) },
          status: { phase: bound ? 'Running' : 'Pending' },
        });
      }
    } else {
      target.claim.metadata.annotations = { [A.state]: 'draining' };
      target.claim.metadata.deletionTimestamp = iso(now - 60_000);
      Object.assign(
        poolAnn,
        { [A.activeRotationState]: 'draining', [A.drainingAt]: iso(startedAt) },
        sc.active.fallback ? { [A.rotationMode]: 'forceful-fallback' } : {},
      );
    }
    if (sc.active.phase === 'gone') parts.shift();
  }
  for (const p of parts)
    if (p.node) pods.push(workload(`w-${p.claim.metadata.name}`, p.node.metadata.name, { cpu: '500m' }));
  const s = snapshot({
    policies: [
      policy({
        maintenanceWindows: WINDOWS,
        surge: { forcefulFallback: { enabled: sc.fallback } },
        ...(sc.scheduled
          ? {
              freezes: [
                {
                  start: iso(now + sc.scheduled.startMinutes * 60_000),
                  end: iso(now + sc.scheduled.startMinutes * 60_000 + sc.scheduled.hours * HOUR),
                },
              ],
              preFreezeRotation: { enabled: sc.scheduled.preFreezeRotation },
            }
          : {}),
      }),
    ],
    pool: nodePool(poolAnn),
    claims: [...parts, ...extraClaims],
    pods,
    nodes: extraNodes,
  });
  return { s, now };
}
