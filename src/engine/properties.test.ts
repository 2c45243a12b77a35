// Properties over random, internally consistent snapshots of one NodePool mid-life: whatever the state,
// the engine's decision keeps the invariants of design §3–§5 and ADR-0001.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { DAY, NS } from '../../test/support/fixtures.js';
import { build, scenarioArb, WINDOWS } from '../../test/support/scenarios.js';
import type { Node } from '../kube/types.js';
import { inWindow } from '../schedule/windows.js';
import { A, ANCHOR_SET } from './annotations.js';
import { apply } from './apply.js';
import { deepFreeze } from './boundary.js';
import { indexSnapshot } from './cluster-index.js';
import { decide, poolContext } from './decide.js';
import { deleteJustification } from './justify.js';
import { surgeReady } from './placeholder.js';

const ours = (n: Node): boolean => {
  const a = n.metadata.annotations ?? {};
  return a[A.surgeFor] !== undefined || a[A.doNotDisruptOwned] === 'true' || a[A.cordoned] === 'true';
};

describe('engine properties over random snapshots', () => {
  it('keeps every invariant, and deciding again after applying yields nothing', () => {
    fc.assert(
      fc.property(scenarioArb, (sc) => {
        const { s, now } = build(sc);
        const d = decide(s, now);
        const after = apply(s, d.actions, now);
        const pool = after.nodePools[0]!;
        const anchor = pool.metadata.annotations?.[A.activeRotation];
        const before = s.nodePools[0]!.metadata.annotations?.[A.activeRotation];

        // At most one rotation in flight per NodePool, and it is the anchored one.
        const inFlight = after.nodeClaims.filter((c) =>
          ['pending', 'draining'].includes(c.metadata.annotations?.[A.state] ?? ''),
        );
        expect(inFlight.length).toBeLessThanOrEqual(1);
        if (inFlight[0]) expect(inFlight[0].metadata.name).toBe(anchor);

        // No start outside the window, nor inside a freeze (the annotation's, or the policy's scheduled one).
        if (!before && anchor) expect(inWindow(WINDOWS, now)).toBe(true);
        if (!before && anchor && sc.scheduled) {
          const start = now + sc.scheduled.startMinutes * 60_000;
          expect(now >= start && now < start + sc.scheduled.hours * 3_600_000).toBe(false);
        }
        if (!before && anchor && sc.freezeMinutes !== undefined) expect(sc.freezeMinutes <= 0).toBe(true);

        // An operator's do-not-disrupt or cordon is never touched.
        for (const n of s.nodes) {
          const a = n.metadata.annotations ?? {};
          const m = after.nodes.find((x) => x.metadata.name === n.metadata.name)!;
          if (a[A.doNotDisrupt] === 'true' && a[A.doNotDisruptOwned] !== 'true') {
            expect(m.metadata.annotations?.[A.doNotDisrupt]).toBe('true');
            expect(m.metadata.annotations?.[A.doNotDisruptOwned]).toBeUndefined();
          }
          if (n.spec.unschedulable && a[A.cordoned] !== 'true') {
            expect(m.spec.unschedulable).toBe(true);
            expect(m.metadata.annotations?.[A.cordoned]).toBeUndefined();
          }
        }

        // No NodeClaim is deleted before its surge is ready, except by the forceful fallback, a reap of the
        // induced surge claim on rollback, or re-issuing the delete of a claim already draining.
        const idx = indexSnapshot(s);
        const fallbackStarted = d.actions.some((a) => a.type === 'event' && a.eventReason === 'ForcefulFallback');
        for (const a of d.actions) {
          if (a.type !== 'deleteNodeClaim') continue;
          const victim = idx.claim(a.name)!;
          if (victim.metadata.annotations?.[A.state] === 'draining') continue;
          if (a.name === 'surge') {
            expect(d.actions.some((x) => x.type === 'event' && x.eventReason === 'RotationFailed')).toBe(true);
            continue;
          }
          if (fallbackStarted) continue;
          const ready = surgeReady(idx.placeholderFor(a.name), idx.nodeOfClaim(victim)?.metadata.name, 'general', idx);
          expect('host' in ready).toBe(true);
        }

        // Every marker of ours is gone once no rotation is anchored.
        if (!anchor) {
          expect(after.nodes.filter(ours).map((n) => n.metadata.name)).toEqual([]);
          expect(after.pods.filter((p) => p.metadata.namespace === NS)).toEqual([]);
          for (const k of ANCHOR_SET) expect(pool.metadata.annotations?.[k]).toBeUndefined();
        }

        // Idempotence.
        expect(decide(after, now).actions).toEqual([]);
      }),
      { numRuns: 300 },
    );
  });

  it('never emits a NodeClaim delete that its own S2 judgement refuses on the state at that write (issue 17)', () => {
    const twists = fc.record({
      // A crash between the draining write and the delete: the claim is marked draining, not deleted.
      undeleted: fc.boolean(),
      podDnd: fc.option(fc.constantFrom('true', '1h', 'junk', 'false'), { nil: undefined }),
      claimDnd: fc.boolean(),
      freeze: fc.option(fc.constantFrom('next tuesday', '2027-01-32T00:00:00Z'), { nil: undefined }),
      budgetZero: fc.boolean(),
    });
    fc.assert(
      fc.property(scenarioArb, twists, (sc, t) => {
        const built = build(sc);
        const now = built.now;
        let s = built.s;
        const first = s.nodeClaims[0]?.metadata.name;
        s = {
          ...s,
          nodeClaims: s.nodeClaims.map((c) =>
            c.metadata.name !== first
              ? c
              : {
                  ...c,
                  metadata: {
                    ...c.metadata,
                    ...(t.undeleted ? { deletionTimestamp: undefined } : {}),
                    annotations: { ...c.metadata.annotations, ...(t.claimDnd ? { [A.doNotDisrupt]: 'true' } : {}) },
                  },
                },
          ),
          pods: s.pods.map((p) =>
            t.podDnd && p.metadata.namespace !== NS
              ? { ...p, metadata: { ...p.metadata, annotations: { [A.doNotDisrupt]: t.podDnd } } }
              : p,
          ),
          nodePools: s.nodePools.map((p) => ({
            ...p,
            metadata: {
              ...p.metadata,
              annotations: { ...p.metadata.annotations, ...(t.freeze ? { [A.freeze]: t.freeze } : {}) },
            },
            spec: { ...p.spec, ...(t.budgetZero ? { disruption: { budgets: [{ nodes: '0' }] } } : {}) },
          })),
        };
        const d = decide(s, now);
        let state = s;
        for (const a of d.actions) {
          if (a.type === 'deleteNodeClaim') {
            const c = poolContext(state, 'general', now)!;
            expect(deleteJustification(c, a.target), `delete of ${a.name}`).toBeNull();
            expect(a.uid).toBeDefined();
          }
          state = apply(state, [a], now);
        }
      }),
      { numRuns: 400 },
    );
  });

  it('never writes into its input: a deep-frozen snapshot gives the same decision', () => {
    fc.assert(
      fc.property(scenarioArb, (sc) => {
        const { s, now } = build(sc);
        const expected = JSON.stringify(decide(structuredClone(s), now));
        const frozen = deepFreeze(structuredClone(s));
        expect(JSON.stringify(decide(frozen, now))).toBe(expected);
        expect(JSON.stringify(apply(frozen, decide(frozen, now).actions, now))).toBe(
          JSON.stringify(apply(structuredClone(s), decide(structuredClone(s), now).actions, now)),
        );
      }),
      { numRuns: 100 },
    );
  });

  it('needs no cluster-wide pod list: supplying the nodes it asks for gives the same decision', () => {
    fc.assert(
      fc.property(scenarioArb, (sc) => {
        const { s, now } = build(sc);
        const full = decide(s, now);
        expect(full.missingPods).toEqual([]);
        // The controller's loop: start with the placeholders only, add the Pods of each node asked for.
        const supplied = new Set<string>();
        let d = full;
        for (let round = 0; round < 4; round++) {
          const pods = s.pods.filter(
            (p) => p.metadata.namespace === NS || (p.spec.nodeName !== undefined && supplied.has(p.spec.nodeName)),
          );
          d = decide({ ...s, pods, podsOfNodes: [...supplied] }, now);
          if (d.missingPods.length === 0) break;
          for (const n of d.missingPods) {
            expect(supplied.has(n)).toBe(false); // never asks twice for what it has
            supplied.add(n);
          }
        }
        expect(d.missingPods).toEqual([]);
        expect(d.actions).toEqual(full.actions);
        expect(d.pools.map((p) => p.report)).toEqual(full.pools.map((p) => p.report));
      }),
      { numRuns: 200 },
    );
  });

  it('is deterministic: the same snapshot and instant give the same actions', () => {
    fc.assert(
      fc.property(scenarioArb, (sc) => {
        const { s, now } = build(sc);
        expect(JSON.stringify(decide(s, now))).toBe(JSON.stringify(decide(structuredClone(s), now)));
      }),
      { numRuns: 50 },
    );
  });
});

export { DAY };
