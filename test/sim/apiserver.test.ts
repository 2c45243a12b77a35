// The in-memory apiserver's semantics, one case a rule, each with the reason the controller depends on it.
import { describe, expect, it } from 'vitest';
import { ApiServer, type Obj, type Request, type Status } from './apiserver.js';

const T = Date.parse('2027-01-04T00:00:00Z');
const POOLS = '/apis/karpenter.sh/v1/nodepools';
const CLAIMS = '/apis/karpenter.sh/v1/nodeclaims';
const PODS = '/api/v1/namespaces/ns/pods';
const MERGE = 'application/merge-patch+json';
const JSONPATCH = 'application/json-patch+json';

function server(): ApiServer {
  let n = 0;
  return new ApiServer({ now: () => T + 1000 * n++, random: () => 0.5 });
}

type Answer = { code: number; body: unknown };
const call = (s: ApiServer, r: Request): Answer => s.handle('test', r);
const ok = (s: ApiServer, r: Request): Obj => {
  const a = call(s, r);
  if (a.code !== 200) throw new Error(`${r.method} ${r.path}: ${JSON.stringify(a.body)}`);
  return a.body as Obj;
};
const pool = (name: string, extra: Record<string, unknown> = {}) => ({
  metadata: { name, labels: { tier: 'general' } },
  spec: { weight: 1 },
  ...extra,
});
const meta = (o: unknown) => (o as Obj).metadata;
const status = (a: Answer) => ({ code: a.code, reason: (a.body as Status).reason });

interface Case {
  reason: string;
  run: (s: ApiServer) => void;
}

const cases: Case[] = [
  {
    reason:
      'a create sets uid, resourceVersion, creationTimestamp and generation 1 (the UID precondition needs the uid)',
    run: (s) => {
      const o = ok(s, { method: 'POST', path: POOLS, body: pool('a') });
      expect(meta(o)).toMatchObject({ name: 'a', uid: 'uid-1', resourceVersion: '1', generation: 1 });
      expect(meta(o).creationTimestamp).toBe('2027-01-04T00:00:00Z');
      expect(o).toMatchObject({ apiVersion: 'karpenter.sh/v1', kind: 'NodePool' });
    },
  },
  {
    reason: 'a second create of a name is 409 AlreadyExists (the executor reads it as "created by an earlier pass")',
    run: (s) => {
      ok(s, { method: 'POST', path: POOLS, body: pool('a') });
      expect(status(call(s, { method: 'POST', path: POOLS, body: pool('a') }))).toEqual({
        code: 409,
        reason: 'AlreadyExists',
      });
    },
  },
  {
    reason: 'a created Pod starts Pending whatever status it was sent with (status is the kubelet’s)',
    run: (s) => {
      const p = ok(s, {
        method: 'POST',
        path: PODS,
        body: { metadata: { name: 'p' }, spec: {}, status: { phase: 'Running' } },
      });
      expect(p.status).toEqual({ phase: 'Pending' });
      expect(meta(p).namespace).toBe('ns');
    },
  },
  {
    reason: 'generateName gets a suffix (Karpenter’s claims are named so)',
    run: (s) => {
      const p = ok(s, { method: 'POST', path: PODS, body: { metadata: { name: '', generateName: 'app-' }, spec: {} } });
      expect(meta(p).name).toMatch(/^app-[a-z0-9]{5}$/);
    },
  },
  {
    reason: 'a GET of a missing object is 404 NotFound with a Status body (the executor ignores it on deletes)',
    run: (s) => {
      const a = call(s, { method: 'GET', path: `${POOLS}/x` });
      expect(a.body).toMatchObject({ kind: 'Status', status: 'Failure', code: 404, reason: 'NotFound' });
    },
  },
  {
    reason: 'a PUT with a stale resourceVersion is 409 Conflict; without one it is unconditional',
    run: (s) => {
      const o = ok(s, { method: 'POST', path: POOLS, body: pool('a') });
      ok(s, { method: 'PUT', path: `${POOLS}/a`, body: { ...o, spec: { weight: 2 } } });
      expect(status(call(s, { method: 'PUT', path: `${POOLS}/a`, body: { ...o, spec: { weight: 3 } } }))).toEqual({
        code: 409,
        reason: 'Conflict',
      });
      const body = { metadata: { name: 'a' }, spec: { weight: 4 } };
      expect((ok(s, { method: 'PUT', path: `${POOLS}/a`, body }).spec as { weight: number }).weight).toBe(4);
    },
  },
  {
    reason: 'a merge patch sets and removes (null) annotation keys and leaves the others',
    run: (s) => {
      ok(s, { method: 'POST', path: POOLS, body: { metadata: { name: 'a', annotations: { x: '1', y: '2' } } } });
      const o = ok(s, {
        method: 'PATCH',
        path: `${POOLS}/a`,
        contentType: MERGE,
        body: { metadata: { annotations: { x: null, z: '3' } } },
      });
      expect(meta(o).annotations).toEqual({ y: '2', z: '3' });
    },
  },
  {
    reason: 'a merge patch carrying metadata.resourceVersion is a precondition: stale → 409 (the anchor write)',
    run: (s) => {
      const o = ok(s, { method: 'POST', path: POOLS, body: pool('a') });
      const rv = meta(o).resourceVersion;
      ok(s, { method: 'PATCH', path: `${POOLS}/a`, contentType: MERGE, body: { metadata: { labels: { b: '1' } } } });
      const stale = { metadata: { resourceVersion: rv, annotations: { 'noderotation.io/active-rotation': 'c' } } };
      expect(status(call(s, { method: 'PATCH', path: `${POOLS}/a`, contentType: MERGE, body: stale }))).toEqual({
        code: 409,
        reason: 'Conflict',
      });
      const fresh = { ...stale, metadata: { ...stale.metadata, resourceVersion: String(s.resourceVersion) } };
      expect(call(s, { method: 'PATCH', path: `${POOLS}/a`, contentType: MERGE, body: fresh }).code).toBe(200);
    },
  },
  {
    reason: 'a write that changes nothing keeps the resourceVersion and logs no write (no watch event)',
    run: (s) => {
      ok(s, { method: 'POST', path: POOLS, body: { metadata: { name: 'a', annotations: { x: '1' } } } });
      const before = s.writes.length;
      const o = ok(s, {
        method: 'PATCH',
        path: `${POOLS}/a`,
        contentType: MERGE,
        body: { metadata: { annotations: { x: '1' } } },
      });
      expect(meta(o).resourceVersion).toBe('1');
      expect(s.writes.length).toBe(before);
    },
  },
  {
    reason: 'generation moves with the spec only (policy status carries observedGeneration)',
    run: (s) => {
      ok(s, { method: 'POST', path: POOLS, body: pool('a') });
      const m = ok(s, {
        method: 'PATCH',
        path: `${POOLS}/a`,
        contentType: MERGE,
        body: { metadata: { labels: { b: '1' } } },
      });
      expect(meta(m).generation).toBe(1);
      const sp = ok(s, { method: 'PATCH', path: `${POOLS}/a`, contentType: MERGE, body: { spec: { weight: 9 } } });
      expect(meta(sp).generation).toBe(2);
    },
  },
  {
    reason: 'the status subresource changes only status; the main resource ignores status',
    run: (s) => {
      ok(s, { method: 'POST', path: CLAIMS, body: { metadata: { name: 'c' }, spec: {} } });
      const viaMain = ok(s, {
        method: 'PATCH',
        path: `${CLAIMS}/c`,
        contentType: MERGE,
        body: { status: { nodeName: 'n' } },
      });
      expect(viaMain.status).toBeUndefined();
      const viaStatus = ok(s, {
        method: 'PATCH',
        path: `${CLAIMS}/c/status`,
        contentType: MERGE,
        body: { status: { nodeName: 'n' }, metadata: { labels: { sneaky: '1' } } },
      });
      expect(viaStatus.status).toEqual({ nodeName: 'n' });
      expect(meta(viaStatus).labels).toBeUndefined();
    },
  },
  {
    reason: 'a JSON patch whose test holds is applied',
    run: (s) => {
      ok(s, { method: 'POST', path: POOLS, body: { metadata: { name: 'a', annotations: { x: '1' } } } });
      const o = ok(s, {
        method: 'PATCH',
        path: `${POOLS}/a`,
        contentType: JSONPATCH,
        body: [
          { op: 'test', path: '/metadata/annotations/x', value: '1' },
          { op: 'add', path: '/metadata/annotations/a~1b', value: '2' },
        ],
      });
      expect(meta(o).annotations).toEqual({ x: '1', 'a/b': '2' });
    },
  },
  {
    reason: 'a JSON patch whose test fails is 422 Invalid and changes nothing (apiserver patch.go: applyJSPatch)',
    run: (s) => {
      ok(s, { method: 'POST', path: POOLS, body: { metadata: { name: 'a', annotations: { x: '1' } } } });
      const a = call(s, {
        method: 'PATCH',
        path: `${POOLS}/a`,
        contentType: JSONPATCH,
        body: [
          { op: 'add', path: '/metadata/annotations/y', value: '2' },
          { op: 'test', path: '/metadata/annotations/x', value: '0' },
        ],
      });
      expect(status(a)).toEqual({ code: 422, reason: 'Invalid' });
      expect(meta(s.get('karpenter.sh/v1/nodepools', 'a')).annotations).toEqual({ x: '1' });
    },
  },
  {
    reason: 'a JSON patch removing a missing path is 422; an undecodable one is 400',
    run: (s) => {
      ok(s, { method: 'POST', path: POOLS, body: pool('a') });
      const rm = [{ op: 'remove', path: '/metadata/annotations/none' }];
      expect(call(s, { method: 'PATCH', path: `${POOLS}/a`, contentType: JSONPATCH, body: rm }).code).toBe(422);
      expect(call(s, { method: 'PATCH', path: `${POOLS}/a`, contentType: JSONPATCH, body: { op: 'x' } }).code).toBe(
        400,
      );
    },
  },
  {
    reason: 'a DELETE whose uid precondition names another object is 409 (a claim re-created under its name)',
    run: (s) => {
      ok(s, { method: 'POST', path: CLAIMS, body: { metadata: { name: 'c' }, spec: {} } });
      const a = call(s, { method: 'DELETE', path: `${CLAIMS}/c`, body: { preconditions: { uid: 'uid-other' } } });
      expect(status(a)).toEqual({ code: 409, reason: 'Conflict' });
      expect(s.get('karpenter.sh/v1/nodeclaims', 'c')).toBeDefined();
      expect(call(s, { method: 'DELETE', path: `${CLAIMS}/c`, body: { preconditions: { uid: 'uid-1' } } }).code).toBe(
        200,
      );
      expect(s.get('karpenter.sh/v1/nodeclaims', 'c')).toBeUndefined();
    },
  },
  {
    reason: 'a DELETE whose resourceVersion precondition is stale is 409',
    run: (s) => {
      ok(s, { method: 'POST', path: POOLS, body: pool('a') });
      ok(s, { method: 'PATCH', path: `${POOLS}/a`, contentType: MERGE, body: { spec: { weight: 5 } } });
      const a = call(s, { method: 'DELETE', path: `${POOLS}/a`, body: { preconditions: { resourceVersion: '1' } } });
      expect(status(a)).toEqual({ code: 409, reason: 'Conflict' });
    },
  },
  {
    reason: 'a DELETE of an object with finalizers only marks it; removing the last finalizer removes it',
    run: (s) => {
      ok(s, { method: 'POST', path: CLAIMS, body: { metadata: { name: 'c', finalizers: ['k/t'] }, spec: {} } });
      const d = ok(s, { method: 'DELETE', path: `${CLAIMS}/c`, body: {} });
      expect(meta(d).deletionTimestamp).toBeDefined();
      expect(s.get('karpenter.sh/v1/nodeclaims', 'c')).toBeDefined();
      // An update neither clears deletionTimestamp nor adds finalizers to a deleting object.
      const add = { metadata: { finalizers: ['k/t', 'k/u'] } };
      expect(call(s, { method: 'PATCH', path: `${CLAIMS}/c`, contentType: MERGE, body: add }).code).toBe(422);
      ok(s, { method: 'PATCH', path: `${CLAIMS}/c`, contentType: MERGE, body: { metadata: { finalizers: null } } });
      expect(s.get('karpenter.sh/v1/nodeclaims', 'c')).toBeUndefined();
    },
  },
  {
    reason: 'a bound Pod is deleted gracefully (terminating, deletionTimestamp in the future); grace 0 removes it',
    run: (s) => {
      ok(s, { method: 'POST', path: PODS, body: { metadata: { name: 'p' }, spec: { nodeName: 'n' } } });
      const d = ok(s, { method: 'DELETE', path: `${PODS}/p`, body: {} });
      expect(meta(d).deletionGracePeriodSeconds).toBe(30);
      expect(s.get('/v1/pods', 'p', 'ns')).toBeDefined();
      ok(s, { method: 'DELETE', path: `${PODS}/p`, body: { gracePeriodSeconds: 0 } });
      expect(s.get('/v1/pods', 'p', 'ns')).toBeUndefined();
    },
  },
  {
    reason: 'label selectors: existence, absence, equality and inequality; field selector spec.nodeName',
    run: (s) => {
      const pod = (name: string, labels: Record<string, string>, nodeName?: string) =>
        ok(s, { method: 'POST', path: PODS, body: { metadata: { name, labels }, spec: nodeName ? { nodeName } : {} } });
      pod('a', { 'noderotation.io/surge-for': 'c1' }, 'n1');
      pod('b', { app: 'x' }, 'n1');
      pod('c', { app: 'y' }, 'n2');
      const names = (query: Request['query'], path = PODS) =>
        (ok(s, { method: 'GET', path, ...(query ? { query } : {}) }) as unknown as { items: Obj[] }).items.map(
          (o) => o.metadata.name,
        );
      expect(names({ labelSelector: 'noderotation.io/surge-for' })).toEqual(['a']);
      expect(names({ labelSelector: '!noderotation.io/surge-for' })).toEqual(['b', 'c']);
      expect(names({ labelSelector: 'app=x' })).toEqual(['b']);
      expect(names({ labelSelector: 'app!=x' })).toEqual(['a', 'c']);
      expect(names({ fieldSelector: 'spec.nodeName=n1' }, '/api/v1/pods')).toEqual(['a', 'b']);
      expect(call(s, { method: 'GET', path: PODS, query: { fieldSelector: 'spec.other=1' } }).code).toBe(400);
    },
  },
  {
    reason: 'a paginated list is one consistent snapshot at the first page’s resourceVersion, writes meanwhile or not',
    run: (s) => {
      for (const n of ['a', 'b', 'c']) ok(s, { method: 'POST', path: POOLS, body: pool(n) });
      type List = { metadata: { continue?: string; resourceVersion: string }; items: Obj[] };
      const p1 = ok(s, { method: 'GET', path: POOLS, query: { limit: 2 } }) as unknown as List;
      expect(p1.items.map((o) => o.metadata.name)).toEqual(['a', 'b']);
      expect(p1.metadata.resourceVersion).toBe('3');
      ok(s, { method: 'POST', path: POOLS, body: pool('d') });
      ok(s, { method: 'DELETE', path: `${POOLS}/c`, body: {} });
      const p2 = ok(s, {
        method: 'GET',
        path: POOLS,
        query: { limit: 2, continue: p1.metadata.continue },
      }) as unknown as List;
      expect(p2.items.map((o) => o.metadata.name)).toEqual(['c']);
      expect(p2.metadata.continue).toBeUndefined();
    },
  },
  {
    reason: 'a continue token older than the compaction is 410 Expired (the reflector relists)',
    run: (s) => {
      for (const n of ['a', 'b']) ok(s, { method: 'POST', path: POOLS, body: pool(n) });
      const p1 = ok(s, { method: 'GET', path: POOLS, query: { limit: 1 } }) as unknown as {
        metadata: { continue: string };
      };
      ok(s, { method: 'POST', path: POOLS, body: pool('c') });
      s.compact();
      expect(status(call(s, { method: 'GET', path: POOLS, query: { continue: p1.metadata.continue } }))).toEqual({
        code: 410,
        reason: 'Expired',
      });
    },
  },
  {
    reason: 'a watch from a resourceVersion sends every later change in order: ADDED, MODIFIED, DELETED',
    run: (s) => {
      ok(s, { method: 'POST', path: POOLS, body: pool('a') });
      const w = s.watch(POOLS, { resourceVersion: '1' });
      ok(s, { method: 'POST', path: POOLS, body: pool('b') });
      ok(s, { method: 'PATCH', path: `${POOLS}/a`, contentType: MERGE, body: { spec: { weight: 2 } } });
      ok(s, { method: 'DELETE', path: `${POOLS}/b`, body: {} });
      expect(w.queue.map((e) => [e.type, meta(e.object).name, meta(e.object).resourceVersion])).toEqual([
        ['ADDED', 'b', '2'],
        ['MODIFIED', 'a', '3'],
        ['DELETED', 'b', '4'],
      ]);
    },
  },
  {
    reason: 'a watch resumed from an old version replays the history after it',
    run: (s) => {
      ok(s, { method: 'POST', path: POOLS, body: pool('a') });
      ok(s, { method: 'POST', path: POOLS, body: pool('b') });
      const w = s.watch(POOLS, { resourceVersion: '1' });
      expect(w.queue.map((e) => meta(e.object).name)).toEqual(['b']);
    },
  },
  {
    reason: 'a watch without a resourceVersion starts with ADDED for what exists',
    run: (s) => {
      ok(s, { method: 'POST', path: POOLS, body: pool('a') });
      expect(s.watch(POOLS, {}).queue.map((e) => e.type)).toEqual(['ADDED']);
    },
  },
  {
    reason: 'a watch from a compacted version gets one ERROR event with a 410 Status (the reflector relists)',
    run: (s) => {
      ok(s, { method: 'POST', path: POOLS, body: pool('a') });
      ok(s, { method: 'POST', path: POOLS, body: pool('b') });
      s.compact();
      const w = s.watch(POOLS, { resourceVersion: '1' });
      expect(w.closed).toBe(true);
      expect(w.queue.map((e) => [e.type, e.object.code, e.object.reason])).toEqual([['ERROR', 410, 'Expired']]);
      expect(s.watch(POOLS, { resourceVersion: '2' }).closed).toBe(false);
    },
  },
  {
    reason: 'a label-selected watch sees an object that stops matching as DELETED and one that starts as ADDED',
    run: (s) => {
      ok(s, { method: 'POST', path: PODS, body: { metadata: { name: 'p', labels: { sel: '1' } }, spec: {} } });
      const w = s.watch(PODS, { resourceVersion: '1', labelSelector: 'sel' });
      ok(s, { method: 'PATCH', path: `${PODS}/p`, contentType: MERGE, body: { metadata: { labels: { sel: null } } } });
      ok(s, { method: 'PATCH', path: `${PODS}/p`, contentType: MERGE, body: { metadata: { labels: { sel: '2' } } } });
      expect(w.queue.map((e) => e.type)).toEqual(['DELETED', 'ADDED']);
    },
  },
  {
    reason: 'a bookmark carries the current resourceVersion, only to watches that asked for bookmarks',
    run: (s) => {
      const w = s.watch(POOLS, { resourceVersion: '0', allowWatchBookmarks: true });
      const quiet = s.watch(POOLS, { resourceVersion: '0' });
      ok(s, { method: 'POST', path: CLAIMS, body: { metadata: { name: 'c' }, spec: {} } });
      s.bookmark(w);
      s.bookmark(quiet);
      expect(w.queue.map((e) => [e.type, e.object.metadata])).toEqual([['BOOKMARK', { resourceVersion: '1' }]]);
      expect(quiet.queue).toEqual([]);
    },
  },
  {
    reason: 'a streaming list: the objects as ADDED, a bookmark ending them at the current version, then changes',
    run: (s) => {
      ok(s, { method: 'POST', path: CLAIMS, body: { metadata: { name: 'b' }, spec: {} } });
      ok(s, { method: 'POST', path: CLAIMS, body: { metadata: { name: 'a' }, spec: {} } });
      const q = { sendInitialEvents: 'true', resourceVersionMatch: 'NotOlderThan', allowWatchBookmarks: 'true' };
      const w = s.watch(CLAIMS, q);
      ok(s, { method: 'POST', path: CLAIMS, body: { metadata: { name: 'c' }, spec: {} } });
      expect(w.queue.map((e) => [e.type, (e.object as Obj).metadata.name ?? e.object.metadata])).toEqual([
        ['ADDED', 'a'],
        ['ADDED', 'b'],
        ['BOOKMARK', { resourceVersion: '2', annotations: { 'k8s.io/initial-events-end': 'true' } }],
        ['ADDED', 'c'],
      ]);
      expect(() => s.watch(CLAIMS, { sendInitialEvents: 'true', allowWatchBookmarks: 'true' })).toThrow(
        /resourceVersionMatch=NotOlderThan/,
      );
    },
  },
  {
    reason: 'the Events the controller writes (events.k8s.io/v1), core Events and Leases are served',
    run: (s) => {
      ok(s, {
        method: 'POST',
        path: '/apis/events.k8s.io/v1/namespaces/default/events',
        body: { metadata: { name: 'e' } },
      });
      ok(s, { method: 'POST', path: '/api/v1/namespaces/default/events', body: { metadata: { name: 'e' } } });
      ok(s, {
        method: 'POST',
        path: '/apis/coordination.k8s.io/v1/namespaces/ns/leases',
        body: { metadata: { name: 'l' } },
      });
      expect(s.list('events.k8s.io/v1/events')).toHaveLength(1);
      expect(s.list('/v1/events')).toHaveLength(1);
    },
  },
  {
    reason: 'an unknown resource is 404; a cluster-scoped resource under a namespace is 404',
    run: (s) => {
      expect(call(s, { method: 'GET', path: '/apis/x.io/v1/things' }).code).toBe(404);
      expect(call(s, { method: 'GET', path: '/api/v1/namespaces/ns/nodes' }).code).toBe(404);
    },
  },
  {
    reason: 'every committed change is in the write log with its actor, before and after',
    run: (s) => {
      ok(s, { method: 'POST', path: POOLS, body: pool('a') });
      ok(s, { method: 'DELETE', path: `${POOLS}/a`, body: { preconditions: { uid: 'uid-1' } } });
      expect(s.writes.map((w) => [w.actor, w.verb, w.name, !!w.before, !!w.after, w.preconditions])).toEqual([
        ['test', 'create', 'a', false, true, undefined],
        ['test', 'delete', 'a', true, false, { uid: 'uid-1' }],
      ]);
    },
  },
  {
    reason:
      'with audit, every write request is logged as kube-apiserver audits it: applied, refused or changing nothing',
    run: () => {
      const s = new ApiServer({ now: () => T, audit: true });
      ok(s, { method: 'POST', path: POOLS, body: pool('a') });
      const patch = { metadata: { annotations: { k: 'v' } } };
      ok(s, { method: 'PATCH', path: `${POOLS}/a`, body: patch, contentType: MERGE });
      ok(s, { method: 'PATCH', path: `${POOLS}/a`, body: patch, contentType: MERGE }); // no change
      call(s, { method: 'DELETE', path: `${POOLS}/a`, body: { preconditions: { uid: 'nope' } } });
      call(s, { method: 'GET', path: `${POOLS}/a` });
      expect(s.writes).toHaveLength(2);
      expect(s.audit.map((e) => [e.verb, e.objectRef?.resource, e.objectRef?.name, e.responseStatus?.code])).toEqual([
        ['create', 'nodepools', 'a', 200],
        ['patch', 'nodepools', 'a', 200],
        ['patch', 'nodepools', 'a', 200],
        ['delete', 'nodepools', 'a', 409],
      ]);
      expect(s.audit[1]?.requestObject).toEqual(patch);
    },
  },
];

describe('the simulation’s apiserver', () => {
  it.each(cases)('$reason', ({ run }) => run(server()));
});
