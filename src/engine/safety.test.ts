// Issue 17's findings, each reproduced against the engine: the states an operator (or an unlucky crash) can
// leave, and the destructive write that must not follow. Each case failed on the engine before the fix.
import { describe, expect, it } from 'vitest';
import {
  claim,
  HOUR,
  IN_WINDOW,
  iso,
  markedDraining,
  nodePool,
  OLD,
  policy,
  snapshot,
  withPool,
  workload,
} from '../../test/support/fixtures.js';
import type { NodeClaim } from '../karpenter/types.js';
import { A } from './annotations.js';
import { apply } from './apply.js';
import { decide, poolContext } from './decide.js';
import { isPlaceholder } from './identity.js';
import { deleteJustification } from './justify.js';
import type { Action, Snapshot } from './types.js';

const deletes = (actions: Action[]): string[] => actions.flatMap((a) => (a.type === 'deleteNodeClaim' ? [a.name] : []));
const starts = (actions: Action[]): boolean =>
  actions.some((a) => a.type === 'annotate' && a.target.kind === 'NodePool' && a.set[A.activeRotation] !== undefined);

const editClaim = (s: Snapshot, name: string, f: (c: NodeClaim) => NodeClaim): Snapshot => ({
  ...s,
  nodeClaims: s.nodeClaims.map((c) => (c.metadata.name === name ? f(c) : c)),
});

describe('finding 3: a claim marked draining is deleted only if the delete is justified now', () => {
  const T = IN_WINDOW + 3 * 60_000;
  it('the baseline: a crash between the state write and the delete resumes the delete', () => {
    expect(deletes(decide(markedDraining(), T).actions)).toEqual(['old']);
  });

  it.each([
    {
      reason: 'no policy governs the pool any more',
      edit: (s: Snapshot): Snapshot => ({ ...s, policies: [] }),
    },
    {
      reason: 'the operator set do-not-disrupt on its Node',
      edit: (s: Snapshot): Snapshot => ({
        ...s,
        nodes: s.nodes.map((n) =>
          n.metadata.name === 'node-old'
            ? { ...n, metadata: { ...n.metadata, annotations: { [A.doNotDisrupt]: 'true' } } }
            : n,
        ),
      }),
    },
    {
      reason: 'the operator set do-not-disrupt on the NodeClaim',
      edit: (s: Snapshot): Snapshot =>
        editClaim(s, 'old', (c) => ({
          ...c,
          metadata: { ...c.metadata, annotations: { ...c.metadata.annotations, [A.doNotDisrupt]: 'true' } },
        })),
    },
    {
      reason: 'a Pod on it carries do-not-disrupt',
      edit: (s: Snapshot): Snapshot => ({
        ...s,
        pods: [
          ...s.pods,
          workload(
            'db',
            'node-old',
            { cpu: '1' },
            { metadata: { name: 'db', annotations: { [A.doNotDisrupt]: 'true' } } },
          ),
        ],
      }),
    },
    {
      reason: 'the pool is frozen',
      edit: (s: Snapshot): Snapshot => withPool(s, { [A.freeze]: iso(T + HOUR) }),
    },
    {
      reason: 'the pool’s freeze cannot be read',
      edit: (s: Snapshot): Snapshot => withPool(s, { [A.freeze]: 'next tuesday' }),
    },
    {
      reason: 'the policy is suspended',
      edit: (s: Snapshot): Snapshot => ({ ...s, policies: [policy({ suspend: true })] }),
    },
    {
      reason: 'the surge no longer holds the room (its placeholder is gone)',
      edit: (s: Snapshot): Snapshot => ({ ...s, pods: s.pods.filter((p) => !isPlaceholder(p)) }),
    },
    {
      // Sim seed 421759: an earlier attempt's rollback reaped the surge claim but could not delete the
      // placeholder; a new leader took the still-bound placeholder for a Ready surge and drained beside the reap.
      reason: 'its surge claim is being removed (reaped by a rollback), its placeholder still bound there',
      edit: (s: Snapshot): Snapshot => {
        const reaped = editClaim(s, 'surge-1', (c) => ({
          ...c,
          metadata: { ...c.metadata, deletionTimestamp: iso(T - 60_000) },
        }));
        // Budgets that allow a second disruption, as the seed's larger pool did: only the surge check stands.
        return {
          ...reaped,
          nodePools: reaped.nodePools.map((p) => ({
            ...p,
            spec: { ...p.spec, disruption: { ...(p.spec.disruption as object), budgets: [{ nodes: '2' }] } },
          })),
        };
      },
    },
  ])('$reason: no delete, the attempt is abandoned and the gate released', ({ edit }) => {
    const d = decide(edit(markedDraining()), T);
    expect(deletes(d.actions)).toEqual([]);
    const after = apply(edit(markedDraining()), d.actions, T);
    expect(after.nodePools[0]?.metadata.annotations?.[A.activeRotation]).toBeUndefined();
    expect(after.nodeClaims.find((c) => c.metadata.name === 'old')?.metadata.annotations?.[A.state]).toBe('failed');
  });

  it('a restart hours later does not delete: the drain was to begin long ago', () => {
    expect(deletes(decide(markedDraining(), IN_WINDOW + 3 * HOUR).actions)).toEqual([]);
  });

  it('a rotation marked as started outside any window is not drained', () => {
    const outside = Date.parse('2027-01-05T12:00:00Z'); // Tuesday 21:00 Tokyo
    const s = markedDraining({ startedAt: outside, drainingAt: IN_WINDOW });
    expect(deletes(decide(s, IN_WINDOW + 60_000).actions)).toEqual([]);
  });
});

describe('finding 4: only a surge claim linked both ways is reaped', () => {
  it('an unrelated claim Karpenter launched after the start, unregistered, is never taken for the surge', () => {
    const started = decide(snapshot({ claims: [claim('old', { createdAt: OLD })] }), IN_WINDOW);
    let s = apply(snapshot({ claims: [claim('old', { createdAt: OLD })] }), started.actions, IN_WINDOW);
    s = apply(s, decide(s, IN_WINDOW).actions, IN_WINDOW);
    const other = claim('other-workload', { createdAt: IN_WINDOW + 60_000, noNode: true });
    s = { ...s, nodeClaims: [...s.nodeClaims, other.claim] };
    const rollback = decide(s, IN_WINDOW + 16 * 60_000);
    expect(rollback.actions.some((a) => a.type === 'event' && a.eventReason === 'RotationFailed')).toBe(true);
    expect(deletes(rollback.actions)).toEqual([]);
  });

  it('a claim whose surge-for names the rotation but which the old claim does not name is not reaped', () => {
    const s = editClaim(markedDraining(), 'old', (c) => ({
      ...c,
      metadata: {
        ...c.metadata,
        annotations: { ...c.metadata.annotations, [A.state]: 'pending', [A.surgeClaim]: 'x' },
      },
    }));
    const c = poolContext(s, 'general', IN_WINDOW + 16 * 60_000);
    expect(deleteJustification(c!, { role: 'surge', claim: 'surge-1', of: 'old' })).toMatch(/not linked both ways/);
  });
});

describe('finding 5: do-not-disrupt on NodeClaims and Pods, and NodePool budgets, hold a start', () => {
  const claims = [claim('old', { createdAt: OLD })];
  it.each([
    {
      reason: 'do-not-disrupt on the NodeClaim',
      s: snapshot({ claims: [claim('old', { createdAt: OLD, annotations: { [A.doNotDisrupt]: 'true' } })] }),
    },
    {
      reason: 'do-not-disrupt "true" on a Pod of its node',
      s: snapshot({
        claims,
        pods: [
          workload(
            'db',
            'node-old',
            { cpu: '1' },
            { metadata: { name: 'db', annotations: { [A.doNotDisrupt]: 'true' } } },
          ),
        ],
      }),
    },
    {
      reason: 'a do-not-disrupt duration not yet elapsed since the Pod started',
      s: snapshot({
        claims,
        pods: [
          workload(
            'job',
            'node-old',
            { cpu: '1' },
            {
              metadata: { name: 'job', annotations: { [A.doNotDisrupt]: '2h' } },
              status: { phase: 'Running', startTime: iso(IN_WINDOW - HOUR) },
            },
          ),
        ],
      }),
    },
    {
      reason: 'a budget of 0 nodes',
      s: withPool(snapshot({ claims }), {}, { disruption: { budgets: [{ nodes: '0' }] } }),
    },
    {
      reason: 'a scheduled budget of 0 active now',
      s: withPool(
        snapshot({ claims }),
        {},
        {
          disruption: { budgets: [{ nodes: '0', schedule: '0 17 * * *', duration: '2h' }] },
        },
      ),
    },
    {
      reason: 'a budget whose schedule cannot be read (fail closed)',
      s: withPool(
        snapshot({ claims }),
        {},
        {
          disruption: { budgets: [{ nodes: '0', schedule: 'every tuesday', duration: '2h' }] },
        },
      ),
    },
    {
      reason: 'the budget is used up by a claim Karpenter is deleting',
      s: withPool(
        snapshot({ claims: [...claims, claim('going', { createdAt: OLD, deleting: IN_WINDOW - 60_000 })] }),
        {},
        { disruption: { budgets: [{ nodes: '1' }] } },
      ),
    },
  ])('$reason', ({ s }) => {
    const d = decide(s, IN_WINDOW);
    expect(starts(d.actions)).toBe(false);
  });

  it.each([
    {
      reason: 'a do-not-disrupt duration that has elapsed',
      pods: [
        workload(
          'job',
          'node-old',
          { cpu: '1' },
          {
            metadata: { name: 'job', annotations: { [A.doNotDisrupt]: '30m' } },
            status: { phase: 'Running', startTime: iso(IN_WINDOW - HOUR) },
          },
        ),
      ],
      budgets: undefined,
    },
    {
      reason: 'a budget that names only Underutilized',
      pods: [],
      budgets: [{ nodes: '0', reasons: ['Underutilized'] }],
    },
    {
      reason: 'a scheduled budget not active now',
      pods: [],
      budgets: [{ nodes: '0', schedule: '0 9 * * *', duration: '1h' }],
    },
  ])('starts despite $reason', ({ pods, budgets }) => {
    const s = withPool(snapshot({ claims, pods }), {}, budgets ? { disruption: { budgets } } : {});
    expect(starts(decide(s, IN_WINDOW).actions)).toBe(true);
  });

  it('a protected first candidate is passed over for the next one', () => {
    const s = snapshot({
      claims: [claim('older', { createdAt: OLD - HOUR }), claim('old', { createdAt: OLD })],
      pods: [
        workload(
          'db',
          'node-older',
          { cpu: '1' },
          { metadata: { name: 'db', annotations: { [A.doNotDisrupt]: 'true' } } },
        ),
      ],
    });
    const d = decide(s, IN_WINDOW);
    expect(d.pools[0]?.report.activeRotation).toBe('old');
  });
});

describe('finding 6: a freeze that cannot be read freezes', () => {
  const claims = [claim('old', { createdAt: OLD })];
  it.each([
    { reason: 'words', value: 'next tuesday' },
    { reason: 'a zone abbreviation instead of an offset', value: '2027-01-20T00:00:00 JST' },
    { reason: 'a day that does not exist', value: '2027-01-32T00:00:00Z' },
    { reason: 'a date without a time', value: '2027-01-20' },
  ])('$reason ($value)', ({ value }) => {
    const d = decide(snapshot({ claims, pool: nodePool({ [A.freeze]: value }) }), IN_WINDOW);
    expect(starts(d.actions)).toBe(false);
    expect(d.pools[0]?.report.idle).toMatch(/frozen: .*not an RFC 3339 time/);
    expect(d.pools[0]?.report.freezeUnreadable).toContain(value);
  });

  it('a readable freeze in the past does not freeze', () => {
    const d = decide(snapshot({ claims, pool: nodePool({ [A.freeze]: iso(IN_WINDOW - HOUR) }) }), IN_WINDOW);
    expect(starts(d.actions)).toBe(true);
  });
});

describe('finding 8: a policy the controller finds invalid governs nothing into motion', () => {
  const claims = [claim('old', { createdAt: OLD })];
  it.each([
    { reason: 'an ageThreshold below a second', spec: { ageThreshold: '0.5s' } },
    { reason: 'maxUnavailable above 1 (an older CRD admitted it)', spec: { surge: { maxUnavailable: 3 } } },
  ])('$reason: no start, an InvalidPolicy finding', ({ spec }) => {
    const d = decide(snapshot({ claims, policies: [policy(spec)] }), IN_WINDOW);
    expect(starts(d.actions)).toBe(false);
    expect(d.pools[0]?.report.findings.map((f) => f.reason)).toEqual(['InvalidPolicy']);
    expect(d.pools[0]?.report.idle).toMatch(/invalid/);
  });

  it('what a caller carries beside the policy (a document’s origin, a status) is not the policy’s to fail on', () => {
    const carried = { ...policy(), source: { file: 'a.yaml', document: 1 }, status: { anything: true } };
    const d = decide(snapshot({ claims, policies: [carried as never] }), IN_WINDOW);
    expect(d.pools[0]?.report.findings.map((f) => f.reason)).not.toContain('InvalidPolicy');
    expect(starts(d.actions)).toBe(true);
  });

  it('a pending rotation under a policy that became invalid is rolled back, nothing deleted', () => {
    let s = snapshot({ claims });
    s = apply(s, decide(s, IN_WINDOW).actions, IN_WINDOW);
    s = { ...s, policies: [policy({ ageThreshold: '0.5s' })] };
    const d = decide(s, IN_WINDOW + 60_000);
    expect(deletes(d.actions)).toEqual([]);
    expect(d.actions.some((a) => a.type === 'event' && a.eventReason === 'GovernanceLost')).toBe(true);
  });
});
