import { describe, expect, it } from 'vitest';
import {
  claim,
  DAY,
  events,
  HOUR,
  IN_WINDOW,
  iso,
  nodePool,
  NS,
  OLD,
  OUT_OF_WINDOW,
  policy,
  snapshot,
  workload,
} from '../../test/support/fixtures.js';
import { A } from './annotations.js';
import { apply } from './apply.js';
import { decide } from './decide.js';
import { isPlaceholder } from './identity.js';
import { sweep } from './sweep.js';
import type { Action, Snapshot } from './types.js';

const kinds = (actions: Action[]): string[] =>
  actions
    .filter((a) => a.type !== 'event' && a.type !== 'observe')
    .map((a) =>
      a.type === 'annotate'
        ? `annotate:${a.target.kind}/${a.target.name}`
        : a.type === 'deleteNodeClaim'
          ? `deleteNodeClaim:${a.name}`
          : a.type === 'deletePod'
            ? `deletePod:${a.name}`
            : a.type === 'createPod'
              ? `createPod:${a.pod.metadata.name}`
              : `${a.type}:${'node' in a ? a.node : ''}`,
    );
const ann = (s: Snapshot, kind: 'nodePools' | 'nodeClaims' | 'nodes', name: string): Record<string, string> =>
  (s[kind] as { metadata: { name: string; annotations?: Record<string, string> } }[]).find(
    (o) => o.metadata.name === name,
  )?.metadata.annotations ?? {};

/** Decide, apply, and check that deciding again at the same instant yields nothing new. */
function run(s: Snapshot, now: number): { s: Snapshot; actions: Action[] } {
  const d = decide(s, now);
  const next = apply(s, d.actions, now);
  expect(decide(next, now).actions, 'deciding again after applying must yield nothing').toEqual([]);
  return { s: next, actions: d.actions };
}

/** Karpenter and the scheduler: bind the placeholder to a fresh Ready surge node of the pool. */
function provisionSurge(s: Snapshot, at: number, opts: { ready?: boolean; createdAt?: number } = {}): Snapshot {
  const ph = s.pods.find(isPlaceholder);
  if (!ph) throw new Error('no placeholder');
  const surge = claim('surge-1', { createdAt: opts.createdAt ?? at, ready: opts.ready ?? true });
  return {
    ...s,
    nodeClaims: [...s.nodeClaims, surge.claim],
    nodes: [...s.nodes, surge.node!],
    pods: s.pods.map((p) =>
      p === ph ? { ...p, spec: { ...p.spec, nodeName: 'node-surge-1' }, status: { phase: 'Running' } } : p,
    ),
  };
}

const gone = (s: Snapshot, name: string): Snapshot => ({
  ...s,
  nodeClaims: s.nodeClaims.filter((c) => c.metadata.name !== name),
  nodes: s.nodes.filter((n) => n.metadata.name !== `node-${name}`),
});

describe('the surge sequence, end to end in the engine', () => {
  const base = snapshot({
    claims: [claim('old', { createdAt: OLD }), claim('young', { createdAt: IN_WINDOW - DAY })],
    pods: [workload('app-1', 'node-old', { cpu: '1', memory: '2Gi' })],
  });

  it('starts in the window: anchor first, then pending, markers, cordon and the placeholder', () => {
    const { s, actions } = run(base, IN_WINDOW);
    expect(kinds(actions)).toEqual([
      'annotate:NodePool/general',
      'annotate:NodeClaim/old',
      'annotate:Node/node-old',
      'cordon:node-old',
      'createPod:noderotation-surge-old',
    ]);
    expect(ann(s, 'nodePools', 'general')[A.activeRotation]).toBe('old');
    expect(ann(s, 'nodeClaims', 'old')).toMatchObject({ [A.state]: 'pending', [A.startedAt]: iso(IN_WINDOW) });
    expect(ann(s, 'nodes', 'node-old')).toMatchObject({
      [A.doNotDisrupt]: 'true',
      [A.doNotDisruptOwned]: 'true',
      [A.surgeFor]: 'old',
    });
    expect(events(actions)).toEqual(['RotationStarted']);
    const ph = s.pods.find((p) => p.metadata.name === 'noderotation-surge-old')!;
    expect(ph.metadata.namespace).toBe(NS);
    expect(ph.spec).toMatchObject({
      priorityClassName: 'noderotation-placeholder',
      preemptionPolicy: 'Never',
      nodeSelector: { 'karpenter.sh/nodepool': 'general' },
    });
    expect(ph.spec.tolerations).toEqual([
      { key: 'dedicated', operator: 'Equal', value: 'general', effect: 'NoSchedule' },
      // Survives the taint-eviction race on a node Karpenter has just registered (kubernetes/kubernetes#139992).
      { key: 'karpenter.sh/unregistered', operator: 'Exists', effect: 'NoExecute' },
    ]);
    expect(ph.spec.containers[0]?.resources?.requests).toEqual({ cpu: '1', memory: String(2 * 2 ** 30) });
    expect(
      ph.spec.affinity?.nodeAffinity?.requiredDuringSchedulingIgnoredDuringExecution?.nodeSelectorTerms[0]
        ?.matchExpressions,
    ).toEqual([
      { key: 'topology.kubernetes.io/zone', operator: 'In', values: ['test-zone-a'] },
      { key: 'kubernetes.io/arch', operator: 'In', values: ['amd64'] },
      { key: 'karpenter.sh/capacity-type', operator: 'In', values: ['on-demand'] },
    ]);
    expect(
      ph.spec.affinity?.nodeAffinity?.preferredDuringSchedulingIgnoredDuringExecution?.[0]?.preference
        .matchExpressions?.[0],
    ).toEqual({ key: 'kubernetes.io/hostname', operator: 'NotIn', values: ['node-old'] });
  });

  it('does nothing outside the window and says why', () => {
    const d = decide(base, OUT_OF_WINDOW);
    expect(d.actions).toEqual([]);
    expect(d.pools[0]?.report.idle).toBe('outside the maintenance window');
    expect(d.pools[0]?.report.candidates).toBe(1);
    expect(d.pools[0]?.requeueAt).toBe(Date.parse('2027-01-08T17:00:00Z')); // next opening: Sat 02:00 Tokyo
    expect(d.pools[0]?.report).toMatchObject({
      windowClosesAt: null,
      windowOpensAt: Date.parse('2027-01-08T17:00:00Z'),
    });
  });

  it('reports the open window’s end, the opening after it, and the phase of the rotation it starts', () => {
    const started = run(base, IN_WINDOW).s;
    const d = decide(started, IN_WINDOW + 60_000);
    expect(d.pools[0]?.report).toMatchObject({
      windowOpen: true,
      windowClosesAt: Date.parse('2027-01-05T21:00:00Z'), // Wed 06:00 Tokyo
      windowOpensAt: Date.parse('2027-01-08T17:00:00Z'), // Sat 02:00 Tokyo
      activeRotation: 'old',
      mode: 'surge',
      phase: 'pending',
      lastRotationAt: null,
    });
  });

  it('persists the surge claim, then drains the old claim once the surge is Ready, then completes', () => {
    let { s } = run(base, IN_WINDOW);
    s = provisionSurge(s, IN_WINDOW + 3 * 60_000);
    const t1 = IN_WINDOW + 4 * 60_000;
    const step = run(s, t1);
    s = step.s;
    expect(kinds(step.actions)).toEqual([
      'annotate:NodeClaim/old',
      'annotate:NodeClaim/surge-1',
      'annotate:Node/node-surge-1',
      'annotate:NodePool/general',
      'annotate:NodeClaim/old',
      'deleteNodeClaim:old',
    ]);
    // The placeholder keeps holding the surge room through the drain (design §3.3, issue 23).
    expect(s.pods.filter(isPlaceholder).map((p) => [p.metadata.name, p.spec.nodeName])).toEqual([
      ['noderotation-surge-old', 'node-surge-1'],
    ]);
    expect(ann(s, 'nodeClaims', 'old')).toMatchObject({ [A.state]: 'draining', [A.surgeClaim]: 'surge-1' });
    expect(ann(s, 'nodeClaims', 'surge-1')).toEqual({ [A.surgeFor]: 'old' }); // linked both ways
    expect(ann(s, 'nodePools', 'general')).toMatchObject({
      [A.activeRotationState]: 'draining',
      [A.drainingAt]: iso(t1),
      [A.surgeWait]: '4m0s',
      [A.surgePath]: 'provisioned', // the host's claim was launched after started-at
    });
    expect(ann(s, 'nodes', 'node-surge-1')).toMatchObject({ [A.doNotDisrupt]: 'true', [A.surgeFor]: 'old' });
    // Karpenter drains and removes the old claim.
    const done = run(gone(s, 'old'), t1 + 10 * 60_000);
    expect(kinds(done.actions)).toContain('deletePod:noderotation-surge-old');
    expect(done.s.pods.filter(isPlaceholder)).toEqual([]);
    expect(ann(done.s, 'nodePools', 'general')).toEqual({ [A.lastRotationAt]: iso(t1 + 10 * 60_000) });
    expect(decide(s, t1 + 60_000).pools[0]?.report.phase).toBe('draining');
    expect(decide(done.s, t1 + 11 * 60_000).pools[0]?.report).toMatchObject({
      phase: null,
      lastRotationAt: t1 + 10 * 60_000,
    });
    expect(ann(done.s, 'nodes', 'node-surge-1')).toEqual({});
    expect(ann(done.s, 'nodeClaims', 'surge-1')).toEqual({}); // no longer marked as ours to delete
    expect(events(done.actions)).toEqual(['RotationCompleted']);
    expect(
      done.actions.filter((a) => a.type === 'observe').map((a) => a.type === 'observe' && `${a.metric}:${a.value}`),
    ).toEqual(['completed:1', 'drainSeconds:600']);
  });

  it('a surge node Karpenter has not registered yet (its unregistered taint) is waited for, then drained on', () => {
    let { s } = run(base, IN_WINDOW);
    const ready = provisionSurge(s, IN_WINDOW + 3 * 60_000);
    const unregistered = {
      ...ready,
      nodes: ready.nodes.map((n) =>
        n.metadata.name === 'node-surge-1'
          ? { ...n, spec: { ...n.spec, taints: [{ key: 'karpenter.sh/unregistered', effect: 'NoExecute' as const }] } }
          : n,
      ),
    };
    const t1 = IN_WINDOW + 4 * 60_000;
    const waiting = decide(unregistered, t1);
    expect(kinds(waiting.actions)).not.toContain('deleteNodeClaim:old');
    expect(waiting.pools[0]?.report.idle).toBe('the surge node is not registered with Karpenter yet');
    s = apply(unregistered, waiting.actions, t1);
    expect(kinds(decide({ ...s, nodes: ready.nodes }, t1 + 60_000).actions)).toContain('deleteNodeClaim:old');
  });

  it('a spare the pool already had absorbs the surge: surge-path absorbed; none when the host has no claim', () => {
    let { s } = run(base, IN_WINDOW);
    const spare = provisionSurge(s, IN_WINDOW + 60_000, { createdAt: IN_WINDOW - DAY });
    s = run(spare, IN_WINDOW + 2 * 60_000).s;
    expect(ann(s, 'nodePools', 'general')).toMatchObject({ [A.surgePath]: 'absorbed' });
    const claimless = { ...spare, nodeClaims: spare.nodeClaims.filter((c) => c.metadata.name !== 'surge-1') };
    const d = decide(claimless, IN_WINDOW + 2 * 60_000);
    const drain = d.actions.find((a) => a.type === 'annotate' && a.target.kind === 'NodePool');
    expect(drain?.type === 'annotate' && drain.set).toMatchObject({ [A.activeRotationState]: 'draining' });
    expect(drain?.type === 'annotate' && drain.set[A.surgePath]).toBeUndefined();
  });

  it('holds the draining gate while the drain runs, and re-issues the delete after a crash', () => {
    let { s } = run(base, IN_WINDOW);
    s = run(provisionSurge(s, IN_WINDOW + 60_000), IN_WINDOW + 2 * 60_000).s;
    // A crash between the state write and the delete: the claim is draining but not deleted.
    const undeleted = {
      ...s,
      nodeClaims: s.nodeClaims.map((c) =>
        c.metadata.name === 'old' ? { ...c, metadata: { ...c.metadata, deletionTimestamp: undefined } } : c,
      ),
    };
    expect(kinds(decide(undeleted, IN_WINDOW + 3 * 60_000).actions)).toEqual(['deleteNodeClaim:old']);
    // The evicted workload preempted the placeholder: while draining it is not recreated (its room is theirs).
    const preempted = { ...s, pods: s.pods.filter((p) => !isPlaceholder(p)) };
    expect(decide(preempted, IN_WINDOW + 3 * 60_000).actions).toEqual([]);
    // Stuck drain past tGP + buffer: reported, gate kept.
    const stuck = decide(s, IN_WINDOW + 2 * 60_000 + 63 * 60_000);
    expect(stuck.actions).toEqual([]);
    expect(stuck.pools[0]?.report).toMatchObject({ drainStuck: true, inProgress: true, activeRotation: 'old' });
  });
});

describe('§3.8 rollback', () => {
  const base = snapshot({ claims: [claim('old', { createdAt: OLD })] });
  const started = (): Snapshot => run(base, IN_WINDOW).s;

  it(
    'new node not Ready within readyTimeout: reap the induced claim, remove the placeholder, unfreeze, ' +
      'record failure',
    () => {
      // The pass at the bind persists the link both ways; only a claim linked so is ever reaped.
      const s = run(provisionSurge(started(), IN_WINDOW + 60_000, { ready: false }), IN_WINDOW + 2 * 60_000).s;
      const t = IN_WINDOW + 16 * 60_000;
      const r = run(s, t);
      expect(kinds(r.actions)).toEqual([
        'deleteNodeClaim:surge-1',
        'deletePod:noderotation-surge-old',
        'annotate:Node/node-old',
        'uncordon:node-old',
        'annotate:Node/node-surge-1',
        'annotate:NodeClaim/old',
        'annotate:NodePool/general',
      ]);
      expect(ann(r.s, 'nodeClaims', 'old')).toEqual({ [A.state]: 'failed', [A.failedAt]: iso(t), [A.retryCount]: '1' });
      expect(ann(r.s, 'nodePools', 'general')).toEqual({ [A.lastFailureAt]: iso(t) });
      expect(ann(r.s, 'nodes', 'node-old')).toEqual({});
      expect(r.s.nodes.find((n) => n.metadata.name === 'node-old')?.spec.unschedulable).toBe(false);
      expect(events(r.actions)).toEqual(['RotationFailed']);
    },
  );

  it.each([
    {
      reason: 'a pre-existing host (capacity absorbed) is never surge debris',
      createdAt: IN_WINDOW - HOUR,
      pods: [] as string[],
    },
    { reason: 'a host running real Pods is not reaped', createdAt: IN_WINDOW + 60_000, pods: ['app'] },
  ])('reap guard: $reason', ({ createdAt, pods }) => {
    let s = run(provisionSurge(started(), IN_WINDOW + 60_000, { ready: false, createdAt }), IN_WINDOW + 2 * 60_000).s;
    expect(ann(s, 'nodeClaims', 'surge-1')).toEqual({ [A.surgeFor]: 'old' }); // linked: only the guard can refuse
    s = { ...s, pods: [...s.pods, ...pods.map((n) => workload(n, 'node-surge-1', { cpu: '1' }))] };
    const r = run(s, IN_WINDOW + 16 * 60_000);
    expect(kinds(r.actions)).not.toContain('deleteNodeClaim:surge-1');
    expect(ann(r.s, 'nodeClaims', 'surge-1')).toEqual({}); // kept, and no longer marked as ours to delete
  });

  it('new node NotReady after the old claim was deleted: nothing to undo, the drain continues', () => {
    let s = run(provisionSurge(started(), IN_WINDOW + 60_000), IN_WINDOW + 2 * 60_000).s;
    s = {
      ...s,
      nodes: s.nodes.map((n) =>
        n.metadata.name === 'node-surge-1' ? { ...n, status: { conditions: [{ type: 'Ready', status: 'False' }] } } : n,
      ),
    };
    expect(decide(s, IN_WINDOW + 30 * 60_000).actions).toEqual([]);
  });

  it(
    'controller died mid-surge: deciding on the anchored state resumes it ' +
      '(markers re-asserted, placeholder recreated)',
    () => {
      const s = started();
      const crashed: Snapshot = {
        ...s,
        pods: [],
        nodes: s.nodes.map((n) => ({
          ...n,
          metadata: { ...n.metadata, annotations: {} },
          spec: { ...n.spec, unschedulable: false },
        })),
      };
      expect(kinds(decide(crashed, IN_WINDOW + 5 * 60_000).actions)).toEqual([
        'annotate:Node/node-old',
        'cordon:node-old',
        'createPod:noderotation-surge-old',
      ]);
    },
  );

  it('Karpenter force-expires the claim while pending: expired, released, never re-selected', () => {
    const s = started();
    const expiring = {
      ...s,
      nodeClaims: s.nodeClaims.map((c) => ({
        ...c,
        metadata: { ...c.metadata, deletionTimestamp: iso(IN_WINDOW + 60_000) },
      })),
    };
    const r = run(expiring, IN_WINDOW + 2 * 60_000);
    expect(ann(r.s, 'nodeClaims', 'old')[A.state]).toBe('expired');
    expect(ann(r.s, 'nodePools', 'general')).toEqual({});
    expect(r.s.pods).toEqual([]);
  });

  it('a preempted placeholder (deletionTimestamp) is waited for, and recreated once gone', () => {
    const s = started();
    const preempted = {
      ...s,
      pods: s.pods.map((p) => ({
        ...p,
        metadata: { ...p.metadata, deletionTimestamp: iso(IN_WINDOW + 60_000) },
        spec: { ...p.spec, nodeName: 'node-x' },
        status: { phase: 'Running' as const },
      })),
    };
    expect(decide(preempted, IN_WINDOW + 2 * 60_000).actions).toEqual([]);
    expect(kinds(decide({ ...s, pods: [] }, IN_WINDOW + 3 * 60_000).actions)).toEqual([
      'createPod:noderotation-surge-old',
    ]);
  });
});

describe('gates, freezes and backoff', () => {
  const claims = [claim('old', { createdAt: OLD })];
  it.each([
    {
      reason: 'gate A: cooldownAfter since the last success',
      pool: nodePool({ [A.lastRotationAt]: iso(IN_WINDOW - 5 * 60_000) }),
      idle: /cooling down/,
    },
    {
      reason: 'gate B: failurePause since the last failure',
      pool: nodePool({ [A.lastFailureAt]: iso(IN_WINDOW - 5 * 60_000) }),
      idle: /pausing after a failed attempt/,
    },
    { reason: 'the freeze annotation', pool: nodePool({ [A.freeze]: iso(IN_WINDOW + HOUR) }), idle: /frozen until/ },
  ])('$reason blocks a start', ({ pool, idle }) => {
    const d = decide(snapshot({ pool, claims }), IN_WINDOW);
    expect(d.actions).toEqual([]);
    expect(d.pools[0]?.report.idle).toMatch(idle);
  });

  it('a scheduled freeze of the policy blocks a start, and lets it happen once over', () => {
    const p = policy({ freezes: [{ start: iso(IN_WINDOW - HOUR), end: iso(IN_WINDOW + HOUR), reason: 'release' }] });
    expect(decide(snapshot({ policies: [p], claims }), IN_WINDOW).actions).toEqual([]);
    expect(decide(snapshot({ policies: [p], claims }), IN_WINDOW + HOUR + 60_000).actions.length).toBeGreaterThan(0);
  });

  it('a recurring freeze of the policy blocks a start in its occurrence, says until when, and not outside it', () => {
    const day = new Date(IN_WINDOW).toISOString().slice(5, 10); // the window's day, every year
    const p = policy({ recurringFreezes: [{ name: 'peak', timezone: 'UTC', yearly: { from: day, to: day } }] });
    const held = decide(snapshot({ policies: [p], claims }), IN_WINDOW);
    expect(held.actions).toEqual([]);
    expect(held.pools[0]?.report.idle).toMatch(/frozen until/);
    const other = policy({ recurringFreezes: [{ name: 'peak', timezone: 'UTC', monthly: { from: 31, to: 31 } }] });
    const inMonth = new Date(IN_WINDOW).getUTCDate();
    const lastDay = new Date(Date.UTC(new Date(IN_WINDOW).getUTCFullYear(), new Date(IN_WINDOW).getUTCMonth() + 1, 0));
    expect(inMonth).not.toBe(lastDay.getUTCDate());
    expect(decide(snapshot({ policies: [other], claims }), IN_WINDOW).actions.length).toBeGreaterThan(0);
  });

  it(
    'a freeze holds escalation of a pending rotation but keeps bookkeeping, ' +
      'and a freeze past readyTimeout rolls back',
    () => {
      let s = run(snapshot({ claims }), IN_WINDOW).s;
      s = {
        ...s,
        pods: [],
        nodePools: s.nodePools.map((p) => ({
          ...p,
          metadata: {
            ...p.metadata,
            annotations: { ...p.metadata.annotations, [A.freeze]: iso(IN_WINDOW + 2 * HOUR) },
          },
        })),
      };
      s = { ...s, nodes: s.nodes.map((n) => ({ ...n, metadata: { ...n.metadata, annotations: {} } })) };
      const held = decide(s, IN_WINDOW + 5 * 60_000);
      expect(kinds(held.actions)).toEqual(['annotate:Node/node-old']); // markers yes, placeholder no
      expect(held.pools[0]?.report.idle).toBe('frozen until 2027-01-05T20:00:00Z: escalation is suspended');
      expect(events(decide(s, IN_WINDOW + 16 * 60_000).actions)).toEqual(['RotationFailed']);
    },
  );

  it('a draining rotation continues through a freeze', () => {
    let s = run(provisionSurge(run(snapshot({ claims }), IN_WINDOW).s, IN_WINDOW + 60_000), IN_WINDOW + 2 * 60_000).s;
    s = {
      ...gone(s, 'old'),
      nodePools: s.nodePools.map((p) => ({
        ...p,
        metadata: { ...p.metadata, annotations: { ...p.metadata.annotations, [A.freeze]: iso(IN_WINDOW + 5 * HOUR) } },
      })),
    };
    expect(events(decide(s, IN_WINDOW + 20 * 60_000).actions)).toEqual(['RotationCompleted']);
  });

  it('a failed claim waits out retryBackoff · 2^(n−1), capped at 8×', () => {
    const failed = (n: number, ago: number) =>
      snapshot({
        claims: [
          claim('old', {
            createdAt: OLD,
            annotations: { [A.state]: 'failed', [A.failedAt]: iso(IN_WINDOW - ago), [A.retryCount]: String(n) },
          }),
        ],
      });
    const retried = (n: number, ago: number) => decide(failed(n, ago), IN_WINDOW).pools[0]?.report.activeRotation;
    expect(retried(1, 29 * 60_000)).toBeNull();
    expect(retried(1, 31 * 60_000)).toBe('old');
    expect(retried(3, 119 * 60_000)).toBeNull();
    expect(retried(9, 239 * 60_000)).toBeNull();
    expect(retried(9, 241 * 60_000)).toBe('old');
  });
});

describe('candidate selection (§3.2)', () => {
  const pick = (claims: ReturnType<typeof claim>[]): string | undefined =>
    decide(snapshot({ claims }), IN_WINDOW).pools[0]?.report.activeRotation ?? undefined;
  it.each([
    {
      reason: 'earliest deadline first: a younger claim with a shorter expireAfter goes first',
      claims: [claim('a-old', { createdAt: OLD }), claim('b-short', { createdAt: OLD + DAY, expireAfter: '250h' })],
      want: 'b-short',
    },
    {
      reason: 'ties by oldest creationTimestamp',
      claims: [claim('b', { createdAt: OLD - HOUR, expireAfter: '337h' }), claim('a', { createdAt: OLD })],
      want: 'b',
    },
    { reason: 'then by name', claims: [claim('b', { createdAt: OLD }), claim('a', { createdAt: OLD })], want: 'a' },
    {
      reason: 'not Ready is left to repair and the backstop',
      claims: [claim('a', { createdAt: OLD, ready: false })],
      want: undefined,
    },
    {
      reason: 'deleting claims are excluded',
      claims: [claim('a', { createdAt: OLD, deleting: IN_WINDOW - 60_000 })],
      want: undefined,
    },
    {
      reason: 'an operator do-not-disrupt (no owned marker) excludes',
      claims: [claim('a', { createdAt: OLD, nodeAnnotations: { [A.doNotDisrupt]: 'true' } })],
      want: undefined,
    },
    {
      reason: 'a non-"true" do-not-disrupt is not protection',
      claims: [claim('a', { createdAt: OLD, nodeAnnotations: { [A.doNotDisrupt]: 'yes' } })],
      want: 'a',
    },
    {
      reason: 'expireAfter Never has no deadline',
      claims: [claim('a', { createdAt: OLD - 100 * DAY, expireAfter: 'Never' })],
      want: undefined,
    },
    { reason: 'too young', claims: [claim('a', { createdAt: IN_WINDOW - 5 * DAY })], want: undefined },
    {
      reason: 'an expired claim is terminal',
      claims: [claim('a', { createdAt: OLD, annotations: { [A.state]: 'expired' } })],
      want: undefined,
    },
  ])('$reason', ({ claims, want }) => {
    expect(pick(claims)).toBe(want);
  });

  it("a cordoned candidate is still selected, and the operator's cordon is not adopted", () => {
    const s = snapshot({ claims: [claim('a', { createdAt: OLD, unschedulable: true })] });
    const r = run(s, IN_WINDOW);
    expect(kinds(r.actions)).not.toContain('cordon:node-a');
    expect(ann(r.s, 'nodes', 'node-a')[A.cordoned]).toBeUndefined();
  });

  it("the operator's do-not-disrupt on the surge host is never removed on completion", () => {
    let s = run(snapshot({ claims: [claim('old', { createdAt: OLD })] }), IN_WINDOW).s;
    s = provisionSurge(s, IN_WINDOW + 60_000);
    s = {
      ...s,
      nodes: s.nodes.map((n) =>
        n.metadata.name === 'node-surge-1'
          ? { ...n, metadata: { ...n.metadata, annotations: { [A.doNotDisrupt]: 'true' } } }
          : n,
      ),
    };
    s = run(s, IN_WINDOW + 2 * 60_000).s;
    const done = run(gone(s, 'old'), IN_WINDOW + 20 * 60_000).s;
    expect(ann(done, 'nodes', 'node-surge-1')).toEqual({ [A.doNotDisrupt]: 'true' });
  });

  it('NoSurgeHeadroom: no start when spec.limits leave no room', () => {
    const pool = nodePool({}, { limits: { cpu: '4' } });
    const s = snapshot({
      pool: { ...pool, status: { resources: { cpu: '4' } } },
      claims: [claim('old', { createdAt: OLD })],
      pods: [workload('w', 'node-old', { cpu: '1' })],
    });
    const d = decide(s, IN_WINDOW);
    expect(d.actions).toEqual([]);
    expect(d.pools[0]?.report.idle).toMatch(/^NoSurgeHeadroom/);
  });

  it('a missing placeholder PriorityClass blocks starts (fatal finding naming the field), none when it exists', () => {
    const s = snapshot({ claims: [claim('old', { createdAt: OLD })] });
    const missing = decide({ ...s, priorityClasses: ['system-node-critical'] }, IN_WINDOW);
    expect(missing.actions).toEqual([]);
    expect(missing.pools[0]?.report.idle).toBe('the policy cannot work here: PlaceholderPriorityClassNotFound');
    expect(missing.pools[0]?.report.findings).toContainEqual(
      expect.objectContaining({
        severity: 'fatal',
        reason: 'PlaceholderPriorityClassNotFound',
        field: 'spec.surge.placeholder.priorityClassName',
        message: expect.stringContaining('PriorityClass "noderotation-placeholder" does not exist') as unknown,
      }),
    );
    const present = decide({ ...s, priorityClasses: ['noderotation-placeholder'] }, IN_WINDOW);
    expect(kinds(present.actions)).toContain('createPod:noderotation-surge-old');
    expect(decide(s, IN_WINDOW).pools[0]?.report.findings.map((f) => f.reason)).not.toContain(
      'PlaceholderPriorityClassNotFound',
    ); // unknown (no list): assumed present, as the simulator needs
  });

  it('a rotation in flight whose placeholder the API refuses (PriorityClass gone) rolls back at once', () => {
    let s = run(snapshot({ claims: [claim('old', { createdAt: OLD })] }), IN_WINDOW).s;
    // The placeholder never got created: the class was deleted between the start and its creation.
    s = { ...s, pods: s.pods.filter((p) => !isPlaceholder(p)), priorityClasses: [] };
    const r = run(s, IN_WINDOW + 60_000);
    expect(kinds(r.actions)).not.toContain('createPod:noderotation-surge-old');
    expect(kinds(r.actions)).toContain('uncordon:node-old');
    expect(ann(r.s, 'nodeClaims', 'old')).toMatchObject({ [A.state]: 'failed', [A.retryCount]: '1' });
    expect(ann(r.s, 'nodePools', 'general')[A.activeRotation]).toBeUndefined();
    expect(ann(r.s, 'nodes', 'node-old')).toEqual({});
  });

  it('fatal findings block starts (a weekly window that cannot work)', () => {
    const p = policy({ maintenanceWindows: [{ timezone: 'Asia/Tokyo', days: ['Wed'], start: '02:00', end: '06:00' }] });
    const d = decide(snapshot({ policies: [p], claims: [claim('old', { createdAt: OLD })] }), IN_WINDOW);
    expect(d.actions).toEqual([]);
    expect(d.pools[0]?.report.idle).toMatch(/NonPositiveAgeThreshold/);
  });

  it('a policy conflict rotates nothing and reports the policies', () => {
    const d = decide(
      snapshot({ policies: [policy({}, 'a'), policy({}, 'b')], claims: [claim('old', { createdAt: OLD })] }),
      IN_WINDOW,
    );
    expect(d.actions).toEqual([]);
    expect(d.pools[0]?.report).toMatchObject({ governance: 'conflict', conflictingPolicies: ['a', 'b'] });
  });

  it('losing governance mid-rotation rolls the pending rotation back (GovernanceLost)', () => {
    const s = run(snapshot({ claims: [claim('old', { createdAt: OLD })] }), IN_WINDOW).s;
    const r = run({ ...s, policies: [] }, IN_WINDOW + 60_000);
    expect(events(r.actions)).toEqual(['GovernanceLost']);
    expect(ann(r.s, 'nodeClaims', 'old')).toEqual({});
    expect(r.s.pods).toEqual([]);
  });

  it('losing governance while draining releases the surge and the anchor; the issued delete is not undone', () => {
    const base = snapshot({ claims: [claim('old', { createdAt: OLD })] });
    let { s } = run(base, IN_WINDOW);
    s = run(provisionSurge(s, IN_WINDOW + 60_000), IN_WINDOW + 2 * 60_000).s;
    expect(ann(s, 'nodePools', 'general')).toMatchObject({ [A.activeRotationState]: 'draining' });
    const r = run({ ...s, policies: [] }, IN_WINDOW + 3 * 60_000);
    expect(events(r.actions)).toEqual(['GovernanceLost']);
    expect(kinds(r.actions)).not.toContain('deleteNodeClaim:surge-1');
    expect(r.s.pods.filter(isPlaceholder)).toEqual([]);
    expect(ann(r.s, 'nodePools', 'general')).toEqual({});
    expect(ann(r.s, 'nodes', 'node-surge-1')).toEqual({});
    expect(ann(r.s, 'nodeClaims', 'surge-1')).toEqual({});
    expect(ann(r.s, 'nodeClaims', 'old')).toEqual({});
    // The old claim is still being deleted by Karpenter; once gone, nothing of ours is left to do.
    expect(r.s.nodeClaims.find((c) => c.metadata.name === 'old')?.metadata.deletionTimestamp).toBeDefined();
    expect(decide(gone(r.s, 'old'), IN_WINDOW + 20 * 60_000).actions).toEqual([]);
  });

  it('reports ShortLead claims', () => {
    const d = decide(
      snapshot({
        claims: [
          claim('short', { createdAt: IN_WINDOW - HOUR, expireAfter: '100h' }),
          claim('ok', { createdAt: IN_WINDOW - HOUR }),
        ],
      }),
      OUT_OF_WINDOW,
    );
    expect(d.pools[0]?.report.shortLead).toEqual(['short']);
  });
});

describe('forceful fallback (ADR-0001)', () => {
  const fb = policy({ surge: { forcefulFallback: { enabled: true } } });
  const always = policy({
    maintenanceWindows: [
      { timezone: 'UTC', days: ['Mon', 'Tue', 'Wed', 'Thu', 'Fri', 'Sat', 'Sun'], start: '00:00', end: '00:00' },
    ],
    ageThreshold: '1h',
    surge: { forcefulFallback: { enabled: true } },
  });
  it.each([
    { reason: 'deadline − now < t_rot (§3.6)', createdAt: IN_WINDOW - 336 * HOUR + HOUR, enabled: true, want: true },
    {
      reason: 'the last window before the deadline (next opening is Sat, deadline Thu)',
      createdAt: IN_WINDOW - 336 * HOUR + 30 * HOUR,
      enabled: true,
      want: true,
    },
    { reason: 'not the last window: a graceful surge', createdAt: OLD, enabled: true, want: false },
    {
      reason: 'disabled by default: graceful even in the last window',
      createdAt: IN_WINDOW - 336 * HOUR + 30 * HOUR,
      enabled: false,
      want: false,
    },
  ])('$reason', ({ createdAt, enabled, want }) => {
    const d = decide(snapshot({ policies: [enabled ? fb : policy()], claims: [claim('c', { createdAt })] }), IN_WINDOW);
    expect(events(d.actions).includes('ForcefulFallback')).toBe(want);
    if (want) {
      expect(kinds(d.actions)).toEqual(['annotate:NodePool/general', 'annotate:NodeClaim/c', 'deleteNodeClaim:c']);
      expect(d.actions.find((a) => a.type === 'annotate' && a.target.kind === 'NodePool')).toMatchObject({
        set: { [A.rotationMode]: 'forceful-fallback', [A.activeRotationState]: 'draining' },
        onlyIfAbsent: A.activeRotation,
      });
    }
  });

  it('a window that never closes offers a chance every tick: only deadline − now < t_rot triggers it', () => {
    const far = decide(
      snapshot({ policies: [always], claims: [claim('c', { createdAt: OUT_OF_WINDOW - 5 * DAY })] }),
      OUT_OF_WINDOW,
    );
    expect(events(far.actions)).toEqual(['RotationStarted']);
    const near = decide(
      snapshot({ policies: [always], claims: [claim('c', { createdAt: OUT_OF_WINDOW - 336 * HOUR + HOUR })] }),
      OUT_OF_WINDOW,
    );
    expect(events(near.actions)).toEqual(['ForcefulFallback']);
  });

  it('a pool held only by its surge headroom wakes up when the fallback begins to hold, and falls back', () => {
    const full = { ...nodePool({}, { limits: { cpu: '4' } }), status: { resources: { cpu: '4' } } };
    const createdAt = OUT_OF_WINDOW - 5 * DAY;
    const s = snapshot({
      policies: [always],
      pool: full,
      claims: [claim('c', { createdAt })],
      pods: [workload('w', 'node-c', { cpu: '1' })],
    });
    const idle = decide(s, OUT_OF_WINDOW).pools[0];
    expect(idle?.report.idle).toMatch(/^NoSurgeHeadroom/);
    // deadline − t_rot − one tick (t_rot = readyTimeout 15m + tGP 1h + 2m), to the millisecond after.
    const from = createdAt + 336 * HOUR - (15 * 60 + 3600 + 120 + 60) * 1000 + 1;
    expect(idle?.requeueAt).toBe(from);
    expect(events(decide(s, from - 1).actions)).toEqual([]);
    expect(events(decide(s, from).actions)).toEqual(['ForcefulFallback']);
  });

  it('expireAfter: Never never qualifies', () => {
    const d = decide(
      snapshot({ policies: [fb], claims: [claim('c', { createdAt: OLD, expireAfter: 'Never' })] }),
      IN_WINDOW,
    );
    expect(d.actions).toEqual([]);
  });
});

describe('start-up sweep', () => {
  it('removes placeholders, node markers and claim states no anchor refers to, and keeps anchored ones', () => {
    const stale = claim('stale', {
      createdAt: OLD,
      annotations: { [A.state]: 'pending' },
      nodeAnnotations: {
        [A.doNotDisrupt]: 'true',
        [A.doNotDisruptOwned]: 'true',
        [A.surgeFor]: 'stale',
        [A.cordoned]: 'true',
      },
      unschedulable: true,
    });
    const operator = claim('op', {
      createdAt: OLD,
      nodeAnnotations: { [A.doNotDisrupt]: 'true' },
      unschedulable: true,
    });
    const live = claim('live', {
      createdAt: OLD,
      annotations: { [A.state]: 'pending' },
      nodeAnnotations: { [A.surgeFor]: 'live' },
    });
    // The reference implementation's exact form: found by the surge-for label alone.
    const placeholder = (owner: string) => ({
      metadata: {
        name: `noderotation-surge-${owner}`,
        namespace: NS,
        labels: { [A.surgeFor]: owner, 'karpenter.sh/nodepool': 'general' },
        annotations: { [A.doNotDisrupt]: 'true' },
      },
      spec: { containers: [] },
    });
    // Surge claims linked to a rotation: the live one's link stays, the stale one's is removed.
    const staleSurge = claim('stale-surge', { createdAt: OLD, annotations: { [A.surgeFor]: 'stale' } });
    const liveSurge = claim('live-surge', { createdAt: OLD, annotations: { [A.surgeFor]: 'live' } });
    const s = snapshot({
      pool: nodePool({ [A.activeRotation]: 'live' }),
      claims: [stale, operator, live, staleSurge, liveSurge],
      pods: [placeholder('stale'), placeholder('live')],
    });
    const actions = sweep(s);
    expect(kinds(actions)).toEqual([
      'deletePod:noderotation-surge-stale',
      'annotate:Node/node-stale',
      'uncordon:node-stale',
      'annotate:NodeClaim/stale',
      'annotate:NodeClaim/stale-surge',
    ]);
    expect(ann(apply(s, actions, IN_WINDOW), 'nodeClaims', 'live-surge')).toEqual({ [A.surgeFor]: 'live' });
    const after = apply(s, actions, IN_WINDOW);
    expect(ann(after, 'nodes', 'node-op')).toEqual({ [A.doNotDisrupt]: 'true' });
    expect(after.nodes.find((n) => n.metadata.name === 'node-op')?.spec.unschedulable).toBe(true);
    expect(sweep(after)).toEqual([]);
  });
});

describe('takeover of a rotation left in flight by the reference implementation (issue 13)', () => {
  // The reference's state: anchor on the pool, pending claim, markers on the old node, and its placeholder —
  // labels surge-for and karpenter.sh/nodepool, Pod-level do-not-disrupt, and (past 63) its own, longer name.
  function inFlight(name: string, placeholderPodName: string, startedAt: number): Snapshot {
    const old = claim(name, {
      createdAt: OLD,
      annotations: { [A.state]: 'pending', [A.startedAt]: iso(startedAt) },
      nodeAnnotations: { [A.doNotDisrupt]: 'true', [A.doNotDisruptOwned]: 'true', [A.surgeFor]: name },
      unschedulable: true,
    });
    old.node!.metadata.annotations = { ...old.node!.metadata.annotations, [A.cordoned]: 'true' };
    const surge = claim('surge-1', { createdAt: startedAt + 60_000 });
    return snapshot({
      pool: nodePool({ [A.activeRotation]: name }),
      claims: [old, surge],
      pods: [
        workload('app-1', `node-${name}`, { cpu: '1' }),
        {
          metadata: {
            name: placeholderPodName,
            namespace: NS,
            labels: { [A.surgeFor]: name, 'karpenter.sh/nodepool': 'general' },
            annotations: { [A.doNotDisrupt]: 'true' },
          },
          spec: { nodeName: 'node-surge-1', containers: [{ name: 'pause' }] },
          status: { phase: 'Running' },
        },
      ],
    });
  }

  it.each([
    { reason: 'the usual name', name: 'general-abc12', podName: 'noderotation-surge-general-abc12' },
    {
      reason: 'a 50-character claim, whose reference name is longer than ours',
      name: `general-${'q'.repeat(42)}`,
      podName: `noderotation-surge-general-${'q'.repeat(42)}`,
    },
  ])('adopts its placeholder ($reason) and runs to completion leaving nothing behind', ({ name, podName }) => {
    const t = IN_WINDOW;
    const drained = run(inFlight(name, podName, t - 5 * 60_000), t);
    expect(kinds(drained.actions)).not.toContainEqual(expect.stringMatching(/^createPod/));
    expect(kinds(drained.actions)).toEqual(
      expect.arrayContaining([`deleteNodeClaim:${name}`, 'annotate:Node/node-surge-1']),
    );
    expect(kinds(drained.actions)).not.toContain(`deletePod:${podName}`);
    expect(events(drained.actions)).toEqual(['DrainStarted']);
    const done = run(gone(drained.s, name), t + 60_000);
    expect(kinds(done.actions)).toContain(`deletePod:${podName}`);
    expect(events(done.actions)).toEqual(['RotationCompleted']);
    const s = done.s;
    expect(s.pods.filter(isPlaceholder)).toEqual([]);
    expect(s.nodes.flatMap((n) => Object.keys(n.metadata.annotations ?? {}))).toEqual([]);
    expect(Object.keys(ann(s, 'nodePools', 'general'))).toEqual([A.lastRotationAt]);
    expect(sweep(s)).toEqual([]);
  });

  it('cleans up a reference placeholder no anchor refers to at start-up', () => {
    const s = inFlight('general-abc12', 'noderotation-surge-general-abc12', IN_WINDOW);
    const unanchored = { ...s, nodePools: [nodePool()] };
    expect(kinds(sweep(unanchored))).toContain('deletePod:noderotation-surge-general-abc12');
  });
});
