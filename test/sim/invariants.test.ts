// Each invariant can fail: a write log that breaks it is reported, one that keeps it is not.
import { describe, expect, it } from 'vitest';
import type { Obj, Write } from './apiserver.js';
import { Invariants, K, liveness, type EndState } from './invariants.js';

const CLAIMS = 'karpenter.sh/v1/nodeclaims';
const POOLS = 'karpenter.sh/v1/nodepools';
const NODES = '/v1/nodes';
const PODS = '/v1/pods';
const CTL = 'controller#1';

/** A log built write by write, each write's `before` being the object's previous `after`. */
class Log {
  readonly writes: Write[] = [];
  private readonly objects = new Map<string, Obj>();

  write(
    actor: string,
    resource: string,
    name: string,
    next: Obj | null,
    verb?: Write['verb'],
    namespace?: string,
  ): this {
    const k = `${resource}|${namespace ?? ''}/${name}`;
    const before = this.objects.get(k);
    if (next) this.objects.set(k, next);
    else this.objects.delete(k);
    this.writes.push({
      seq: this.writes.length,
      at: 0,
      actor,
      verb: verb ?? (before ? (next ? 'patch' : 'delete') : 'create'),
      resource,
      name,
      ...(namespace ? { namespace } : {}),
      ...(before ? { before } : {}),
      ...(next ? { after: next } : {}),
    });
    return this;
  }

  /** The object as last written, with annotations merged (null removes) and other fields replaced. */
  patch(actor: string, resource: string, name: string, ann: Record<string, string | null>, extra: Partial<Obj> = {}) {
    const prev = this.objects.get(`${resource}|/${name}`) as Obj;
    const annotations = { ...(prev.metadata.annotations ?? {}) };
    for (const [k, v] of Object.entries(ann)) {
      if (v === null) delete annotations[k];
      else annotations[k] = v;
    }
    return this.write(actor, resource, name, { ...prev, ...extra, metadata: { ...prev.metadata, annotations } });
  }

  /** A controller DELETE of a claim with finalizers (it stays, deleting), preconditioned on its UID and version. */
  deleteClaim(actor: string, name: string, preconditioned = true): this {
    const prev = this.objects.get(`${CLAIMS}|/${name}`) as Obj;
    this.write(actor, CLAIMS, name, { ...prev, metadata: { ...prev.metadata, deletionTimestamp: 'x' } }, 'delete');
    const { uid, resourceVersion } = prev.metadata;
    if (preconditioned) (this.writes.at(-1) as Write).preconditions = { uid, resourceVersion };
    return this;
  }
}

const claim = (name: string, extra: Partial<Obj['metadata']> = {}): Obj => ({
  metadata: {
    name,
    uid: `uid-${name}`,
    resourceVersion: '1',
    labels: { [K.pool]: 'p' },
    creationTimestamp: '2027-01-01T00:00:00Z',
    ...extra,
  },
  status: { nodeName: `node-${name}` },
});
const world = (): Log =>
  new Log()
    .write('setup', POOLS, 'p', { metadata: { name: 'p' } })
    .write('setup', CLAIMS, 'c1', claim('c1'))
    .write('setup', CLAIMS, 'c2', claim('c2'))
    .write('setup', NODES, 'node-c1', { metadata: { name: 'node-c1' }, spec: {} })
    .write('setup', NODES, 'node-c2', { metadata: { name: 'node-c2' }, spec: {} })
    .write('setup', NODES, 'node-s', { metadata: { name: 'node-s' }, spec: {}, status: { conditions: [READY] } });
const READY = { type: 'Ready', status: 'True' };
const check = (log: Log) => new Invariants((a) => a.startsWith('controller#')).check(log.writes);
const which = (log: Log) => check(log).map((v) => v.invariant);

/** c1's placeholder, bound to the surge node node-s, in `phase`. */
const placeholder = (phase: string): Obj => ({
  metadata: { name: 'ph', namespace: 'ns', labels: { [K.surgeFor]: 'c1' } },
  spec: { nodeName: 'node-s' },
  status: { phase },
});

/** The anchored rotation of c1, up to its delete; its placeholder in `phase` (Running: it holds the room). */
const rotation = (log: Log, phase = 'Running'): Log =>
  log
    .patch(CTL, POOLS, 'p', { [K.active]: 'c1' })
    .patch(CTL, CLAIMS, 'c1', { [K.state]: 'pending', [K.startedAt]: '2027-01-04T00:00:00Z' })
    .write(CTL, PODS, 'ph', placeholder(phase), 'create', 'ns')
    .patch(CTL, POOLS, 'p', { 'noderotation.io/active-rotation-state': 'draining' })
    .patch(CTL, CLAIMS, 'c1', { [K.state]: 'draining' });

describe('S1: one rotation in flight per NodePool', () => {
  it('holds through a whole rotation', () => {
    expect(which(rotation(world()).deleteClaim(CTL, 'c1'))).toEqual([]);
  });
  it('fails when a second claim of the pool becomes pending', () => {
    const log = rotation(world()).patch(CTL, CLAIMS, 'c2', { [K.state]: 'pending' });
    expect(which(log)).toEqual(['S1']);
  });
  it('fails when the controller deletes a claim while one it deleted earlier still drains', () => {
    const log = rotation(world())
      .deleteClaim(CTL, 'c1')
      .patch(CTL, POOLS, 'p', { [K.active]: 'c2' })
      .patch(CTL, CLAIMS, 'c2', { [K.state]: 'draining' });
    const before = check(log).length;
    const after = check(log.deleteClaim(CTL, 'c2'));
    // c2 becoming draining while c1 still is breaks the first form already; the delete breaks the second.
    expect(before).toBe(1);
    expect(after.filter((v) => v.message.includes('deleted earlier, still drains'))).toHaveLength(1);
  });
});

describe('S2: the controller deletes only the draining candidate or its surge', () => {
  it('fails for a claim the pool does not anchor', () => {
    const log = rotation(world()).deleteClaim(CTL, 'c2');
    expect(check(log).map((v) => v.invariant)).toEqual(['S2']);
  });
  it('fails for the anchored claim before it is draining', () => {
    const log = world()
      .patch(CTL, POOLS, 'p', { [K.active]: 'c1' })
      .patch(CTL, CLAIMS, 'c1', { [K.state]: 'pending' })
      .deleteClaim(CTL, 'c1');
    expect(which(log)).toEqual(['S2']);
  });
  it('fails for a claim created before the attempt whose node hosts a workload', () => {
    const log = world()
      .patch(CTL, POOLS, 'p', { [K.active]: 'c1' })
      .patch(CTL, CLAIMS, 'c1', { [K.state]: 'pending', [K.startedAt]: '2027-01-04T00:00:00Z' })
      .write(
        'kubelet',
        PODS,
        'app',
        { metadata: { name: 'app', namespace: 'a' }, spec: { nodeName: 'node-c2' } },
        'create',
        'a',
      )
      .deleteClaim(CTL, 'c2');
    expect(which(log)).toEqual(['S2']);
  });
  it('holds for the surge claim linked both ways; fails for one only named, or only launched after the start', () => {
    const linked = world()
      .patch(CTL, POOLS, 'p', { [K.active]: 'c1' })
      .patch(CTL, CLAIMS, 'c1', { [K.state]: 'pending', [K.surgeClaim]: 'c2' })
      .patch(CTL, CLAIMS, 'c2', { [K.surgeFor]: 'c1' })
      .deleteClaim(CTL, 'c2');
    expect(which(linked)).toEqual([]);
    const onlyNamed = world()
      .patch(CTL, POOLS, 'p', { [K.active]: 'c1' })
      .patch(CTL, CLAIMS, 'c1', { [K.state]: 'pending', [K.surgeClaim]: 'c2' })
      .deleteClaim(CTL, 'c2');
    expect(which(onlyNamed)).toEqual(['S2']);
    const launched = world()
      .write('karpenter', CLAIMS, 'c3', claim('c3', { creationTimestamp: '2027-01-04T00:00:30Z' }))
      .patch(CTL, POOLS, 'p', { [K.active]: 'c1' })
      .patch(CTL, CLAIMS, 'c1', { [K.state]: 'pending', [K.startedAt]: '2027-01-04T00:00:00Z' })
      .deleteClaim(CTL, 'c3');
    expect(which(launched)).toEqual(['S2']);
  });
  it('fails for a delete without its UID and resourceVersion preconditions', () => {
    expect(which(rotation(world()).deleteClaim(CTL, 'c1', false))).toEqual(['S2']);
  });
  it('fails for a surge rotation’s candidate whose placeholder does not hold the room; not for a fallback', () => {
    expect(which(rotation(world(), 'Pending').deleteClaim(CTL, 'c1'))).toEqual(['S2']);
    const fallback = world()
      .patch(CTL, POOLS, 'p', { [K.active]: 'c1', [K.mode]: 'forceful-fallback' })
      .patch(CTL, CLAIMS, 'c1', { [K.state]: 'draining' })
      .deleteClaim(CTL, 'c1');
    expect(which(fallback)).toEqual([]);
  });
  it('does not judge deletes by others (Karpenter’s expiry)', () => {
    expect(which(world().deleteClaim('karpenter', 'c2'))).toEqual([]);
  });
});

describe('S3: nothing an operator set is taken away', () => {
  it('fails when the controller removes the operator’s do-not-disrupt', () => {
    const log = world()
      .patch('operator', NODES, 'node-c1', { 'karpenter.sh/do-not-disrupt': 'true' })
      .patch(CTL, NODES, 'node-c1', { 'karpenter.sh/do-not-disrupt': null });
    expect(which(log)).toEqual(['S3']);
  });
  it('fails when the controller uncordons a node the operator cordoned', () => {
    const log = world()
      .patch('operator', NODES, 'node-c1', {}, { spec: { unschedulable: true } })
      .patch(CTL, NODES, 'node-c1', {}, { spec: {} });
    expect(which(log)).toEqual(['S3']);
  });
  it('holds when the controller writes other keys, and when the operator takes its own mark back', () => {
    const log = world()
      .patch('operator', NODES, 'node-c1', { 'karpenter.sh/do-not-disrupt': 'true' }, { spec: { unschedulable: true } })
      .patch(CTL, NODES, 'node-c1', { [K.surgeFor]: 'c1' })
      .patch('operator', NODES, 'node-c1', { 'karpenter.sh/do-not-disrupt': null }, { spec: {} })
      .patch(CTL, NODES, 'node-c1', { [K.surgeFor]: null });
    expect(which(log)).toEqual([]);
  });
  it('holds for what the API cannot tell from ours: set again while our marker stands, then lifted by us', () => {
    const DND = 'karpenter.sh/do-not-disrupt';
    const lifted = world()
      .patch(
        CTL,
        NODES,
        'node-c1',
        { [DND]: 'true', [K.owned]: 'c1', [K.cordoned]: 'c1' },
        { spec: { unschedulable: true } },
      )
      .patch('operator', NODES, 'node-c1', { [DND]: null }, { spec: {} })
      .patch('operator', NODES, 'node-c1', { [DND]: 'true' }, { spec: { unschedulable: true } })
      .patch(CTL, NODES, 'node-c1', { [DND]: null, [K.owned]: null, [K.cordoned]: null }, { spec: {} });
    expect(which(lifted)).toEqual([]);
    // With our markers gone too, the operator's mark is theirs alone: lifting it breaks S3.
    const theirs = world()
      .patch(CTL, NODES, 'node-c1', { [DND]: 'true', [K.owned]: 'c1' })
      .patch('operator', NODES, 'node-c1', { [DND]: null, [K.owned]: null })
      .patch('operator', NODES, 'node-c1', { [DND]: 'true' })
      .patch(CTL, NODES, 'node-c1', { [DND]: null });
    expect(which(theirs)).toEqual(['S3']);
  });
});

describe('S4: only the Lease holder’s writes are applied', () => {
  const LEASES = 'coordination.k8s.io/v1/leases';
  const NS = 'ns';
  const lease = { namespace: NS, name: 'l' };
  const held = (holder: string): Obj => ({ metadata: { name: 'l', namespace: NS }, spec: { holderIdentity: holder } });
  const judge = (log: Log) =>
    new Invariants((a) => a.startsWith('controller#'), undefined, lease).check(log.writes).map((v) => v.invariant);
  const holds = (log: Log, holder: string): Log => log.write(holder, LEASES, 'l', held(holder), undefined, NS);

  it('holds for writes of the holder, and across a takeover', () => {
    const log = holds(world(), CTL).patch(CTL, POOLS, 'p', { [K.active]: 'c1' });
    holds(log, 'controller#2').patch('controller#2', POOLS, 'p', { [K.active]: null });
    expect(judge(log)).toEqual([]);
  });
  it('fails for a write that reaches the apiserver after another replica took the Lease over', () => {
    const log = holds(world(), CTL).patch(CTL, POOLS, 'p', { [K.active]: 'c1' });
    holds(log, 'controller#2').patch(CTL, CLAIMS, 'c1', { [K.state]: 'pending' });
    expect(judge(log)).toEqual(['S4']);
  });
  it('fails for a write before any replica holds the Lease, and after it was released', () => {
    expect(judge(world().patch(CTL, POOLS, 'p', { [K.active]: 'c1' }))).toEqual(['S4']);
    const released = holds(world(), CTL).write(CTL, LEASES, 'l', held(''), undefined, NS);
    expect(judge(released.patch(CTL, POOLS, 'p', { [K.active]: 'c1' }))).toEqual(['S4']);
  });
  it('does not judge the Lease writes themselves, nor others’ writes, nor runs without leader election', () => {
    const log = holds(world(), CTL).write('controller#2', LEASES, 'l', held('controller#2'), undefined, NS);
    log.patch('operator', POOLS, 'p', { freeze: 'x' });
    expect(judge(log)).toEqual([]);
    expect(which(world().patch(CTL, POOLS, 'p', { [K.active]: 'c1' }))).toEqual([]);
  });
});

describe('liveness', () => {
  const clean: EndState = {
    pools: [{ metadata: { name: 'p', annotations: { 'noderotation.io/last-rotation-at': 'x' } } }],
    claims: [{ metadata: { name: 'c9' } }, { metadata: { name: 'c2', annotations: { [K.state]: 'failed' } } }],
    nodes: [{ metadata: { name: 'n' } }],
    pods: [],
    due: ['c1', 'c2'],
  };
  it('holds when every due claim is replaced or rolled back and nothing of ours is left', () => {
    expect(liveness(clean)).toEqual([]);
  });
  it('fails for an anchor, a claim in flight, a placeholder, a node marker, a due claim untouched', () => {
    const v = liveness({
      pools: [{ metadata: { name: 'p', annotations: { [K.active]: 'c1' } } }],
      claims: [{ metadata: { name: 'c1', annotations: { [K.state]: 'pending' } } }],
      nodes: [{ metadata: { name: 'n', annotations: { [K.cordoned]: 'true' } } }],
      pods: [{ metadata: { name: 'ph', labels: { [K.surgeFor]: 'c1' } } }],
      due: ['c1'],
    });
    expect(v.map((x) => x.message)).toEqual([
      'NodePool p still carries noderotation.io/active-rotation=c1',
      'NodeClaim c1 is still pending',
      'placeholder ph is left',
      'Node n still carries noderotation.io/cordoned',
      'NodeClaim c1 was due at the start and is neither replaced nor rolled back',
    ]);
  });
});
