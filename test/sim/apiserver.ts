// An in-memory apiserver with the semantics the controller depends on (issue 18): objects by
// group/version/resource, a global resourceVersion, list with pagination from a consistent snapshot, watch
// from a resourceVersion with bookmarks and 410 Gone past compaction, create/update/patch (merge and JSON
// patch) with resourceVersion preconditions, delete with uid/resourceVersion preconditions, finalizers and
// graceful Pod deletion, the status subresource, and errors as `Status` objects. Everything is synchronous:
// the simulation's transport decides when a request reaches it and when its answer and watch events arrive.
// Every change is appended to a write log (who, what, before, after) that the invariants replay.

import type { AuditEvent } from '../support/parity.js';

export type Obj = Record<string, unknown> & { metadata: Meta };
export interface Meta {
  name: string;
  namespace?: string;
  uid?: string;
  resourceVersion?: string;
  generation?: number;
  creationTimestamp?: string;
  deletionTimestamp?: string;
  deletionGracePeriodSeconds?: number;
  generateName?: string;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
  finalizers?: string[];
  [k: string]: unknown;
}

export interface ResourceDef {
  group: string;
  version: string;
  resource: string;
  kind: string;
  namespaced: boolean;
  /** Has a status subresource: writes to the object ignore status, writes to /status change only status. */
  status: boolean;
}

/** The resources the controller, its leader election and the models use. */
export const RESOURCES: readonly ResourceDef[] = [
  {
    group: 'noderotation.io',
    version: 'v1alpha1',
    resource: 'rotationpolicies',
    kind: 'RotationPolicy',
    namespaced: false,
    status: true,
  },
  { group: 'karpenter.sh', version: 'v1', resource: 'nodepools', kind: 'NodePool', namespaced: false, status: true },
  { group: 'karpenter.sh', version: 'v1', resource: 'nodeclaims', kind: 'NodeClaim', namespaced: false, status: true },
  { group: '', version: 'v1', resource: 'nodes', kind: 'Node', namespaced: false, status: true },
  { group: '', version: 'v1', resource: 'pods', kind: 'Pod', namespaced: true, status: true },
  { group: '', version: 'v1', resource: 'events', kind: 'Event', namespaced: true, status: false },
  { group: 'events.k8s.io', version: 'v1', resource: 'events', kind: 'Event', namespaced: true, status: false },
  {
    group: 'scheduling.k8s.io',
    version: 'v1',
    resource: 'priorityclasses',
    kind: 'PriorityClass',
    namespaced: false,
    status: false,
  },
  { group: 'coordination.k8s.io', version: 'v1', resource: 'leases', kind: 'Lease', namespaced: true, status: false },
  {
    group: 'policy',
    version: 'v1',
    resource: 'poddisruptionbudgets',
    kind: 'PodDisruptionBudget',
    namespaced: true,
    status: true,
  },
];

const gvr = (d: Pick<ResourceDef, 'group' | 'version' | 'resource'>): string => `${d.group}/${d.version}/${d.resource}`;
const BY_GVR = new Map(RESOURCES.map((d) => [gvr(d), d]));
const apiVersionOf = (d: ResourceDef): string => (d.group ? `${d.group}/${d.version}` : d.version);

export type Status = {
  kind: 'Status';
  apiVersion: 'v1';
  status: 'Failure';
  code: number;
  reason: string;
  message: string;
  metadata: Record<string, never>;
};

/** A failed request: the Status object the apiserver answers with. */
export class StatusError extends Error {
  constructor(readonly status: Status) {
    super(status.message);
  }
}

const REASONS: Record<number, string> = {
  400: 'BadRequest',
  404: 'NotFound',
  405: 'MethodNotAllowed',
  409: 'Conflict',
  410: 'Expired',
  415: 'UnsupportedMediaType',
  422: 'Invalid',
  429: 'TooManyRequests',
  500: 'InternalError',
};

export function failure(code: number, message: string, reason = REASONS[code] ?? 'Unknown'): StatusError {
  return new StatusError({ kind: 'Status', apiVersion: 'v1', status: 'Failure', code, reason, message, metadata: {} });
}

export interface Request {
  method: string;
  path: string;
  query?: Record<string, string | number | boolean | undefined>;
  body?: unknown;
  contentType?: string;
}

export interface Response {
  code: number;
  body: unknown;
}

export type WatchEventType = 'ADDED' | 'MODIFIED' | 'DELETED' | 'BOOKMARK' | 'ERROR';
export interface WatchEvent {
  type: WatchEventType;
  object: Record<string, unknown>;
}

/** One change the server committed, as the invariants read it. */
export interface Write {
  seq: number;
  /** Virtual ms. */
  at: number;
  actor: string;
  verb: 'create' | 'update' | 'patch' | 'delete';
  resource: string;
  subresource?: string;
  namespace?: string;
  name: string;
  /** The object before and after (after undefined: removed from storage). */
  before?: Obj;
  after?: Obj;
  /** DELETE only: the request's preconditions. */
  preconditions?: { uid?: string; resourceVersion?: string };
}

/** An open watch: the server appends events; the transport delivers them. */
export interface ServerWatch {
  readonly id: number;
  readonly resource: string;
  readonly bookmarks: boolean;
  readonly queue: WatchEvent[];
  closed: boolean;
  /** Called after events were appended. */
  onEvents: () => void;
}

interface Selector {
  namespace?: string;
  labels: ((l: Record<string, string>) => boolean)[];
  fields: ((o: Obj) => boolean)[];
}

interface Parsed {
  def: ResourceDef;
  namespace?: string;
  name?: string;
  subresource?: string;
}

interface LogEntry {
  rv: number;
  type: 'ADDED' | 'MODIFIED' | 'DELETED';
  before?: Obj;
  object: Obj;
}

export interface ApiServerOptions {
  /** Virtual time, for creationTimestamp and deletionTimestamp. */
  now: () => number;
  /** A source of randomness for generateName suffixes (seeded in the simulation). */
  random?: () => number;
  /** Keep the audit log (`audit`): off unless asked, as it costs a copy of every write request's body. */
  audit?: boolean;
}

const clone = <T>(v: T): T => structuredClone(v);
/** Freezes a stored object and every part of it not frozen yet (parts shared with the version before are). */
function deepFreeze(v: unknown): void {
  if (v === null || typeof v !== 'object' || Object.isFrozen(v)) return;
  Object.freeze(v);
  for (const x of Object.values(v)) deepFreeze(x);
}
/** Per resource, the start of a typed object's JSON text: `{"apiVersion":…,"kind":…`. */
const HEADS = new Map<ResourceDef, string>();
const rfc3339 = (ms: number): string => new Date(Math.floor(ms / 1000) * 1000).toISOString().replace('.000Z', 'Z');
const keyOf = (namespace: string | undefined, name: string): string => (namespace ? `${namespace}/${name}` : name);

export class ApiServer {
  private rv = 0;
  private uids = 0;
  private watchIds = 0;
  private compactedBelow = 0;
  private readonly store = new Map<string, Map<string, Obj>>();
  private readonly order = new Map<string, Obj[]>();
  private readonly history = new Map<string, LogEntry[]>();
  private readonly watches = new Set<ServerWatch & { selector: Selector; from: number }>();
  /** Snapshots behind continue tokens: the items of a paginated list at its resourceVersion. */
  private readonly snapshots = new Map<string, { rv: number; items: Obj[] }>();
  readonly writes: Write[] = [];
  /**
   * With `audit`: every write request (POST, PUT, PATCH, DELETE), applied or refused, changing anything or not, in
   * the shape of kube-apiserver's audit events at Request level: what test/support/parity.ts compares with the
   * real one's.
   */
  readonly audit: AuditEvent[] = [];
  private readonly commitHooks: ((w: Write) => void)[] = [];
  /** Bodies this server made around stored objects (a typed object, a list): their text's head, and what they carry. */
  private readonly framed = new WeakMap<object, { head: string; of: Obj | Obj[] }>();
  /** The JSON text of stored objects (never changed in place), written on first need. */
  private readonly texts = new WeakMap<Obj, string>();
  /** Paths already parsed (a Parsed is never changed); a path that fails to parse throws every time. */
  private readonly paths = new Map<string, Parsed>();

  constructor(private readonly o: ApiServerOptions) {
    for (const d of RESOURCES) {
      this.store.set(gvr(d), new Map());
      this.history.set(gvr(d), []);
    }
  }

  get resourceVersion(): number {
    return this.rv;
  }

  /** Told of every committed write, synchronously (the models use it to schedule their reactions). */
  onCommit(hook: (w: Write) => void): void {
    this.commitHooks.push(hook);
  }

  /** Drops the watch history below the current resourceVersion: watches and continues from older versions get 410. */
  compact(): void {
    this.compactedBelow = this.rv;
    for (const h of this.history.values()) h.length = 0;
    for (const [token, s] of this.snapshots) if (s.rv < this.compactedBelow) this.snapshots.delete(token);
  }

  /** The stored objects of a resource ("group/version/resource"; core: "/v1/pods"), copies, in key order. */
  list(resource: string): Obj[] {
    return this.sorted(resource).map((o) => clone(o));
  }

  /** The stored objects themselves, without copies, for readers that never change them (the models). */
  view(resource: string): readonly Obj[] {
    return this.sorted(resource);
  }

  /** The stored objects themselves, in key order (etcd's), cached until the next create or delete. */
  private sorted(resource: string): Obj[] {
    let s = this.order.get(resource);
    if (s) return s;
    const m = this.store.get(resource);
    if (!m) throw new Error(`unknown resource ${resource}`);
    s = [...m.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([, o]) => o);
    this.order.set(resource, s);
    return s;
  }

  /** The stored object itself, for readers that never change it. */
  peek(resource: string, name: string, namespace?: string): Obj | undefined {
    return this.store.get(resource)?.get(keyOf(namespace, name));
  }

  get(resource: string, name: string, namespace?: string): Obj | undefined {
    const o = this.store.get(resource)?.get(keyOf(namespace, name));
    return o ? clone(o) : undefined;
  }

  /**
   * Serves one request; failures are answered with their Status, never thrown. The answer's objects are the
   * stored ones (never changed in place: every write stores a new object): a caller copies what it keeps, as
   * the transport does by sending it as JSON.
   */
  handle(actor: string, req: Request): Response {
    let res: Response;
    try {
      res = { code: 200, body: this.serve(actor, req) };
    } catch (e) {
      if (!(e instanceof StatusError)) throw e;
      res = { code: e.status.code, body: e.status };
    }
    if (this.o.audit && req.method !== 'GET') this.audited(actor, req, res.code);
    return res;
  }

  /** A write request in the audit log, as kube-apiserver records it at Request level once answered. */
  private audited(actor: string, req: Request, code: number): void {
    let p: Parsed | undefined;
    try {
      p = parsePath(req.path);
    } catch {
      p = undefined;
    }
    const verbs: Record<string, AuditEvent['verb']> = {
      POST: 'create',
      PUT: 'update',
      PATCH: 'patch',
      DELETE: 'delete',
    };
    const named = (req.body as { metadata?: { name?: string } } | undefined)?.metadata?.name;
    const name = p?.name ?? (req.method === 'POST' ? named : undefined);
    this.audit.push({
      stageTimestamp: new Date(this.o.now()).toISOString(),
      user: { username: actor },
      verb: verbs[req.method] ?? req.method.toLowerCase(),
      objectRef: {
        resource: p?.def.resource ?? req.path,
        apiGroup: p?.def.group ?? '',
        ...(p?.namespace !== undefined ? { namespace: p.namespace } : {}),
        ...(name ? { name } : {}),
        ...(p?.subresource !== undefined ? { subresource: p.subresource } : {}),
      },
      responseStatus: { code },
      ...(req.body !== undefined ? { requestObject: clone(req.body) } : {}),
    });
  }

  /** Opens a watch (or answers its failure). Events for a resourceVersion already compacted: one ERROR 410. */
  watch(path: string, query: Request['query'] = {}, onEvents: () => void = () => undefined): ServerWatch {
    const p = parsePath(path);
    if (p.name !== undefined) throw failure(405, 'watch of a single object by path is not supported here');
    const selector = selectorOf(p, query);
    const w = {
      id: ++this.watchIds,
      resource: gvr(p.def),
      bookmarks: query.allowWatchBookmarks === true || query.allowWatchBookmarks === 'true',
      queue: [] as WatchEvent[],
      closed: false,
      onEvents,
      selector,
      from: 0,
    };
    const rvq = query.resourceVersion;
    const from = rvq === undefined || rvq === '' || rvq === '0' ? null : Number(rvq);
    if (from !== null && (!Number.isInteger(from) || from < 0))
      throw failure(400, `invalid resourceVersion ${String(rvq)}`);
    if (query.sendInitialEvents === true || query.sendInitialEvents === 'true') {
      // A streaming list (KEP-3157), as the apiserver validates and serves it: the objects as ADDED events at
      // the current version, then a BOOKMARK annotated as the end of the initial events, then the changes.
      if (query.resourceVersionMatch !== 'NotOlderThan' || !w.bookmarks)
        throw failure(422, 'sendInitialEvents requires resourceVersionMatch=NotOlderThan and allowWatchBookmarks');
      if (from !== null && from < this.compactedBelow) throw failure(410, gone(from, this.compactedBelow).message);
      for (const o of this.sorted(w.resource))
        if (matches(selector, o)) w.queue.push({ type: 'ADDED', object: this.typed(p.def, o) });
      w.queue.push({
        type: 'BOOKMARK',
        object: {
          apiVersion: apiVersionOf(p.def),
          kind: p.def.kind,
          metadata: { resourceVersion: String(this.rv), annotations: { 'k8s.io/initial-events-end': 'true' } },
        },
      });
      w.from = this.rv;
    } else if (from === null) {
      // "Start at the most recent": synthetic ADDED events for what exists, then the changes.
      for (const o of this.sorted(w.resource))
        if (matches(selector, o)) w.queue.push({ type: 'ADDED', object: this.typed(p.def, o) });
      w.from = this.rv;
    } else if (from < this.compactedBelow) {
      w.queue.push({ type: 'ERROR', object: gone(from, this.compactedBelow) });
      w.closed = true;
      return w;
    } else {
      w.from = from;
      for (const e of this.history.get(w.resource) ?? []) if (e.rv > from) this.push(w, e);
    }
    this.watches.add(w);
    return w;
  }

  /** Ends a watch (the client went away or the server timed it out). */
  closeWatch(w: ServerWatch): void {
    w.closed = true;
    for (const x of this.watches) if (x.id === w.id) this.watches.delete(x);
  }

  /** A BOOKMARK on every watch that asked for them: all events up to the current version were sent. */
  bookmark(w: ServerWatch): void {
    if (w.closed || !w.bookmarks) return;
    const d = BY_GVR.get(w.resource) as ResourceDef;
    w.queue.push({
      type: 'BOOKMARK',
      object: { apiVersion: apiVersionOf(d), kind: d.kind, metadata: { resourceVersion: String(this.rv) } },
    });
    w.onEvents();
  }

  private serve(actor: string, req: Request): unknown {
    let p = this.paths.get(req.path);
    if (!p) this.paths.set(req.path, (p = parsePath(req.path)));
    const query = req.query ?? {};
    switch (req.method) {
      case 'GET':
        if (query.watch) throw failure(400, 'watch requests go through watch()');
        return p.name === undefined ? this.serveList(p, query) : this.read(p);
      case 'POST':
        return this.create(actor, p, req.body);
      case 'PUT':
        return this.update(actor, p, req.body);
      case 'PATCH':
        return this.patch(actor, p, req.body, req.contentType);
      case 'DELETE':
        return this.remove(actor, p, req.body);
      default:
        throw failure(405, `method ${req.method} is not allowed`);
    }
  }

  private typed(d: ResourceDef, o: Obj): Obj {
    const t = { apiVersion: apiVersionOf(d), kind: d.kind, ...o };
    let head = HEADS.get(d);
    if (head === undefined)
      HEADS.set(d, (head = JSON.stringify({ apiVersion: t.apiVersion, kind: d.kind }).slice(0, -1)));
    this.framed.set(t, { head, of: o });
    return t;
  }

  /**
   * The JSON text of an answer's body or an event's object, as JSON.stringify writes it, from the text of each
   * stored object it carries, written once: stored objects are never changed in place. (The transport sends
   * every answer and event as JSON; most of what it sends is the same stored objects, again and again.)
   */
  json(body: unknown): string {
    const f = body !== null && typeof body === 'object' ? this.framed.get(body) : undefined;
    if (!f) return JSON.stringify(body) ?? 'null';
    if (Array.isArray(f.of)) return `${f.head},"items":[${f.of.map((o) => this.textOf(o)).join(',')}]}`;
    const t = this.textOf(f.of);
    return t === '{}' ? `${f.head}}` : `${f.head},${t.slice(1)}`;
  }

  /**
   * What `JSON.parse(this.json(body))` gives, without the text: stored objects are frozen when stored (never
   * changed in place), so an answer or event carries them themselves, frozen, inside a wrapper of its own (a
   * typed object, a list) frozen too. A client that changed what it was sent would throw here; on the wire it
   * would change its own copy. Anything else (a Status) is copied through JSON.
   */
  shared(body: unknown): unknown {
    const f = body !== null && typeof body === 'object' ? this.framed.get(body) : undefined;
    if (!f) return body === undefined ? undefined : JSON.parse(JSON.stringify(body));
    const o = body as { items?: unknown[] };
    if (Array.isArray(o.items)) Object.freeze(o.items);
    return Object.freeze(body);
  }

  private textOf(o: Obj): string {
    let t = this.texts.get(o);
    if (t === undefined) this.texts.set(o, (t = JSON.stringify(o)));
    return t;
  }

  private read(p: Parsed): Obj {
    const o = this.current(p);
    return this.typed(p.def, o);
  }

  private current(p: Parsed): Obj {
    const o = this.store.get(gvr(p.def))?.get(keyOf(p.namespace, p.name as string));
    if (!o) throw failure(404, `${p.def.resource} "${p.name}" not found`);
    return o;
  }

  private serveList(p: Parsed, query: Record<string, unknown>): unknown {
    const limit = query.limit === undefined ? 0 : Number(query.limit);
    const token = typeof query.continue === 'string' && query.continue !== '' ? query.continue : undefined;
    let snap: { rv: number; items: Obj[] };
    let offset = 0;
    if (token) {
      const [id, off] = token.split(':');
      const s = this.snapshots.get(id ?? '');
      if (!s) throw failure(410, 'The provided continue parameter is too old to display a consistent list result.');
      snap = s;
      offset = Number(off);
    } else {
      const selector = selectorOf(p, query);
      snap = { rv: this.rv, items: this.sorted(gvr(p.def)).filter((o) => matches(selector, o)) };
    }
    const end = limit > 0 ? Math.min(offset + limit, snap.items.length) : snap.items.length;
    const metadata: Record<string, string> = { resourceVersion: String(snap.rv) };
    if (end < snap.items.length) {
      const id = token ? (token.split(':')[0] as string) : `c${snap.rv}-${this.snapshots.size}`;
      this.snapshots.set(id, snap);
      metadata.continue = `${id}:${end}`;
    }
    const list = { apiVersion: apiVersionOf(p.def), kind: `${p.def.kind}List`, metadata };
    const items = snap.items.slice(offset, end);
    const body = { ...list, items };
    this.framed.set(body, { head: JSON.stringify(list).slice(0, -1), of: items });
    return body;
  }

  /**
   * Loads an object as a restore from a backup would: its creationTimestamp and status kept (the initial
   * cluster, whose NodeClaims are old). Otherwise a create.
   */
  seed(path: string, obj: Obj): Obj {
    return this.create('setup', parsePath(path), obj, true);
  }

  private create(actor: string, p: Parsed, body: unknown, restore = false): Obj {
    if (p.name !== undefined) throw failure(405, 'POST to an object path');
    const o = clone(body) as Obj;
    if (!o || typeof o !== 'object' || !o.metadata) throw failure(400, 'the object has no metadata');
    const m = o.metadata;
    if (!m.name && m.generateName) m.name = `${m.generateName}${this.suffix()}`;
    if (!m.name) throw failure(422, 'metadata.name: Required value', 'Invalid');
    if (p.def.namespaced) {
      if (m.namespace !== undefined && m.namespace !== p.namespace)
        throw failure(400, 'the namespace of the object does not match the namespace on the request');
      m.namespace = p.namespace;
    } else delete m.namespace;
    const key = keyOf(m.namespace, m.name);
    const map = this.store.get(gvr(p.def)) as Map<string, Obj>;
    if (map.has(key)) throw failure(409, `${p.def.resource} "${m.name}" already exists`, 'AlreadyExists');
    delete o.apiVersion;
    delete o.kind;
    const created = restore ? m.creationTimestamp : undefined;
    if (p.def.status && !restore) {
      delete o.status;
      if (p.def.kind === 'Pod') o.status = { phase: 'Pending' };
    }
    m.uid = `uid-${++this.uids}`;
    m.creationTimestamp = created ?? rfc3339(this.o.now());
    m.generation = 1;
    delete m.deletionTimestamp;
    m.resourceVersion = String(++this.rv);
    map.set(key, o);
    this.commit(actor, 'create', p, undefined, o);
    return this.typed(p.def, o);
  }

  private update(actor: string, p: Parsed, body: unknown): Obj {
    const before = this.current(p);
    const next = clone(body) as Obj;
    if (!next?.metadata) throw failure(400, 'the object has no metadata');
    const rv = next.metadata.resourceVersion;
    if (rv !== undefined && rv !== before.metadata.resourceVersion) throw conflict(p);
    return this.write(actor, 'update', p, before, next);
  }

  private patch(actor: string, p: Parsed, body: unknown, contentType = 'application/json'): Obj {
    const before = this.current(p);
    const base = this.typed(p.def, before);
    let next: Obj;
    if (contentType === 'application/merge-patch+json') {
      next = mergePatch(base, body) as Obj;
    } else if (contentType === 'application/json-patch+json') {
      next = jsonPatch(base, body);
    } else throw failure(415, `the body of the request was in an unknown format: ${contentType}`);
    if (!next?.metadata) throw failure(422, 'metadata: Required value');
    // A resourceVersion in the patched object is a precondition, as in an update.
    const rv = next.metadata.resourceVersion;
    if (rv !== undefined && rv !== before.metadata.resourceVersion) throw conflict(p);
    return this.write(actor, 'patch', p, before, next);
  }

  /** Applies an update's result: system fields kept, status or spec as the subresource allows. */
  private write(actor: string, verb: 'update' | 'patch', p: Parsed, before: Obj, proposed: Obj): Obj {
    // `proposed` is the server's own (a copy of the body, or a patch's result, which may share parts with
    // `before`): stored objects are never changed in place, so copying what this changes is enough.
    const next: Obj = { ...proposed };
    delete next.apiVersion;
    delete next.kind;
    const bm = before.metadata;
    if (p.subresource === 'status') {
      // Only the status changes through /status.
      const status = next.status;
      for (const k of Object.keys(next)) delete next[k];
      Object.assign(next, before);
      if (status === undefined) delete next.status;
      else next.status = status;
    } else if (p.subresource !== undefined) {
      throw failure(404, `the server could not find the requested resource (subresource ${p.subresource})`);
    } else if (p.def.status) {
      if (before.status === undefined) delete next.status;
      else next.status = before.status;
    }
    const m = (next.metadata = { ...next.metadata });
    if (m.name !== bm.name) throw failure(400, 'the name of the object does not match the name on the request');
    if (m.uid !== undefined && m.uid !== bm.uid)
      throw failure(409, `Precondition failed: UID in precondition: ${m.uid}, UID in object meta: ${bm.uid}`);
    for (const k of ['uid', 'creationTimestamp', 'namespace', 'deletionGracePeriodSeconds'] as const) {
      if (bm[k] === undefined) delete m[k];
      else (m as Record<string, unknown>)[k] = bm[k];
    }
    // deletionTimestamp is the server's: an update neither sets nor clears it.
    if (bm.deletionTimestamp === undefined) delete m.deletionTimestamp;
    else m.deletionTimestamp = bm.deletionTimestamp;
    if (bm.deletionTimestamp && (m.finalizers ?? []).some((f) => !(bm.finalizers ?? []).includes(f)))
      throw failure(
        422,
        'metadata.finalizers: Forbidden: no new finalizers can be added if the object is being deleted',
      );
    m.generation = bm.generation ?? 1;
    if (!same(next.spec, before.spec)) m.generation += 1;
    m.resourceVersion = bm.resourceVersion;
    for (const k of ['labels', 'annotations', 'finalizers'] as const) {
      const v = m[k];
      if (v !== undefined && (v === null || Object.keys(v).length === 0)) delete m[k];
    }
    // An update that changes nothing writes nothing: no new resourceVersion, no watch event.
    if (same(next, before)) return this.typed(p.def, before);
    const map = this.store.get(gvr(p.def)) as Map<string, Obj>;
    const key = keyOf(p.namespace, bm.name);
    m.resourceVersion = String(++this.rv);
    if (m.deletionTimestamp && (m.finalizers ?? []).length === 0 && !this.gracefulPending(p.def, next)) {
      map.delete(key);
      this.commit(actor, verb, p, before, undefined, undefined, next);
      return this.typed(p.def, next);
    }
    map.set(key, next);
    this.commit(actor, verb, p, before, next);
    return this.typed(p.def, next);
  }

  /** A Pod on a node, deleted with a grace period, stays (terminating) until its kubelet confirms. */
  private gracefulPending(d: ResourceDef, o: Obj): boolean {
    return d.kind === 'Pod' && (o.metadata.deletionGracePeriodSeconds ?? 0) > 0;
  }

  private remove(actor: string, p: Parsed, body: unknown): Obj {
    if (p.subresource !== undefined) throw failure(405, 'DELETE of a subresource');
    const before = this.current(p);
    const opts = (body ?? {}) as {
      preconditions?: { uid?: string; resourceVersion?: string };
      gracePeriodSeconds?: number;
    };
    const pre = opts.preconditions ?? {};
    if (pre.uid !== undefined && pre.uid !== before.metadata.uid)
      throw failure(
        409,
        `Precondition failed: UID in precondition: ${pre.uid}, UID in object meta: ${before.metadata.uid ?? ''}`,
      );
    if (pre.resourceVersion !== undefined && pre.resourceVersion !== before.metadata.resourceVersion)
      throw failure(
        409,
        `Precondition failed: ResourceVersion in precondition: ${pre.resourceVersion}, ` +
          `ResourceVersion in object meta: ${before.metadata.resourceVersion ?? ''}`,
      );
    const map = this.store.get(gvr(p.def)) as Map<string, Obj>;
    const key = keyOf(p.namespace, before.metadata.name);
    const next: Obj = { ...before, metadata: { ...before.metadata } };
    const m = next.metadata;
    // Graceful deletion of a Pod bound to a node: the kubelet ends it; gracePeriodSeconds 0 removes it now.
    const bound = p.def.kind === 'Pod' && typeof (before.spec as { nodeName?: string })?.nodeName === 'string';
    const grace =
      opts.gracePeriodSeconds ??
      (bound ? ((before.spec as { terminationGracePeriodSeconds?: number }).terminationGracePeriodSeconds ?? 30) : 0);
    const graceful = bound && grace > 0;
    const finalizers = (m.finalizers ?? []).length > 0;
    if (graceful || finalizers) {
      if (m.deletionTimestamp && !graceful) return this.typed(p.def, before); // already deleting
      const at = this.o.now() + (graceful ? grace * 1000 : 0);
      if (!m.deletionTimestamp || (graceful && at < Date.parse(m.deletionTimestamp))) {
        m.deletionTimestamp = rfc3339(at);
        m.deletionGracePeriodSeconds = graceful ? grace : 0;
      }
      if (same(next, before)) return this.typed(p.def, before);
      m.resourceVersion = String(++this.rv);
      map.set(key, next);
      this.commit(actor, 'delete', p, before, next, pre);
      return this.typed(p.def, next);
    }
    if (grace === 0 && m.deletionGracePeriodSeconds) m.deletionGracePeriodSeconds = 0;
    if (finalizers) return this.typed(p.def, before);
    m.resourceVersion = String(++this.rv);
    map.delete(key);
    this.commit(actor, 'delete', p, before, undefined, pre, next);
    return this.typed(p.def, next);
  }

  private commit(
    actor: string,
    verb: Write['verb'],
    p: Parsed,
    before: Obj | undefined,
    after: Obj | undefined,
    preconditions?: Write['preconditions'],
    removed?: Obj,
  ): void {
    const rv = this.rv;
    const object = (after ?? removed) as Obj;
    deepFreeze(object);
    this.order.delete(gvr(p.def));
    const w: Write = {
      seq: this.writes.length,
      at: this.o.now(),
      actor,
      verb,
      resource: gvr(p.def),
      name: object.metadata.name,
      ...(p.subresource ? { subresource: p.subresource } : {}),
      ...(object.metadata.namespace ? { namespace: object.metadata.namespace } : {}),
      ...(before ? { before } : {}),
      ...(after ? { after } : {}),
      ...(preconditions && Object.keys(preconditions).length > 0 ? { preconditions } : {}),
    };
    this.writes.push(w);
    const entry: LogEntry = {
      rv,
      type: !before ? 'ADDED' : after ? 'MODIFIED' : 'DELETED',
      ...(before ? { before } : {}),
      object,
    };
    this.history.get(gvr(p.def))?.push(entry);
    for (const watch of this.watches)
      if (watch.resource === gvr(p.def) && entry.rv > watch.from) this.push(watch, entry);
    for (const h of this.commitHooks) h(w);
  }

  /** An event as a watch with a label selector sees it: an object that starts or stops matching is added or deleted. */
  private push(w: ServerWatch & { selector: Selector }, e: LogEntry): void {
    const d = BY_GVR.get(w.resource) as ResourceDef;
    const was = e.before !== undefined && matches(w.selector, e.before);
    const is = e.type !== 'DELETED' && matches(w.selector, e.object);
    let type: WatchEventType;
    if (e.type === 'DELETED') {
      if (!was) return;
      type = 'DELETED';
    } else if (is && was) type = 'MODIFIED';
    else if (is) type = 'ADDED';
    else if (was) type = 'DELETED';
    else return;
    w.queue.push({ type, object: this.typed(d, e.object) });
    w.onEvents();
  }

  private suffix(): string {
    const chars = 'bcdfghjklmnpqrstvwxz2456789';
    const r = this.o.random ?? Math.random;
    let s = '';
    for (let i = 0; i < 5; i++) s += chars[Math.floor(r() * chars.length)];
    return s;
  }
}

function conflict(p: Parsed): StatusError {
  return failure(
    409,
    `Operation cannot be fulfilled on ${p.def.resource}.${p.def.group} "${p.name ?? ''}": ` +
      'the object has been modified; please apply your changes to the latest version and try again',
  );
}

function gone(asked: number, oldest: number): Status {
  return failure(410, `too old resource version: ${asked} (${oldest})`, 'Expired').status;
}

/** /api/v1/[namespaces/ns/]resource[/name[/sub]] and /apis/group/version/…; /api/v1/pods lists every namespace. */
export function parsePath(path: string): Parsed {
  const s = path.split('?')[0]?.split('/').filter(Boolean) ?? [];
  let group: string;
  let version: string;
  let rest: string[];
  if (s[0] === 'api') [group, version, rest] = ['', s[1] ?? '', s.slice(2)];
  else if (s[0] === 'apis') [group, version, rest] = [s[1] ?? '', s[2] ?? '', s.slice(3)];
  else throw failure(404, `the server could not find the requested resource ${path}`, 'NotFound');
  let namespace: string | undefined;
  if (rest[0] === 'namespaces' && rest.length >= 3) {
    namespace = rest[1];
    rest = rest.slice(2);
  }
  const def = RESOURCES.find((d) => d.group === group && d.version === version && d.resource === rest[0]);
  if (!def) throw failure(404, `the server could not find the requested resource ${path}`, 'NotFound');
  if (!def.namespaced && namespace !== undefined) throw failure(404, `${def.resource} is not namespaced`);
  if (def.namespaced && namespace === undefined && rest[1] !== undefined)
    throw failure(404, `${def.resource} is namespaced: the path names no namespace`);
  return {
    def,
    ...(namespace !== undefined ? { namespace } : {}),
    ...(rest[1] !== undefined ? { name: rest[1] } : {}),
    ...(rest[2] !== undefined ? { subresource: rest[2] } : {}),
  };
}

/** labelSelector: `k`, `!k`, `k=v`, `k==v`, `k!=v`, comma-separated; fieldSelector: the same on a few fields. */
function selectorOf(p: Parsed, query: Record<string, unknown>): Selector {
  const labels: Selector['labels'] = [];
  const fields: Selector['fields'] = [];
  const ls = typeof query.labelSelector === 'string' ? query.labelSelector : '';
  for (const term of ls
    .split(',')
    .map((t) => t.trim())
    .filter(Boolean)) {
    const m = /^(!?)([\w./-]+)\s*(?:(==|=|!=)\s*([\w.-]*))?$/.exec(term);
    if (!m) throw failure(400, `unable to parse requirement: ${term}`);
    const [, not, key, op, value] = m as unknown as [string, string, string, string | undefined, string | undefined];
    if (op === undefined) labels.push(not ? (l) => !(key in l) : (l) => key in l);
    else if (op === '!=') labels.push((l) => l[key] !== value);
    else labels.push((l) => l[key] === value);
  }
  const fs = typeof query.fieldSelector === 'string' ? query.fieldSelector : '';
  for (const term of fs
    .split(',')
    .map((t) => t.trim())
    .filter(Boolean)) {
    const m = /^([\w.]+)\s*(==|=|!=)\s*(.*)$/.exec(term);
    if (!m) throw failure(400, `invalid field selector: ${term}`);
    const [, field, op, value] = m as unknown as [string, string, string, string];
    const get = FIELDS[field];
    if (!get) throw failure(400, `field label not supported: ${field}`);
    fields.push(op === '!=' ? (o) => get(o) !== value : (o) => get(o) === value);
  }
  return { ...(p.namespace !== undefined ? { namespace: p.namespace } : {}), labels, fields };
}

const FIELDS: Record<string, (o: Obj) => string> = {
  'metadata.name': (o) => o.metadata.name,
  'metadata.namespace': (o) => o.metadata.namespace ?? '',
  'spec.nodeName': (o) => (o.spec as { nodeName?: string } | undefined)?.nodeName ?? '',
  'status.phase': (o) => (o.status as { phase?: string } | undefined)?.phase ?? '',
};

function matches(s: Selector, o: Obj): boolean {
  if (s.namespace !== undefined && o.metadata.namespace !== s.namespace) return false;
  const l = o.metadata.labels ?? {};
  return s.labels.every((f) => f(l)) && s.fields.every((f) => f(o));
}

/** RFC 7386. */
export function mergePatch(target: unknown, patch: unknown): unknown {
  if (patch === null || typeof patch !== 'object' || Array.isArray(patch)) return clone(patch);
  const out: Record<string, unknown> =
    target !== null && typeof target === 'object' && !Array.isArray(target) ? { ...target } : {};
  for (const [k, v] of Object.entries(patch)) {
    if (v === null) delete out[k];
    else out[k] = mergePatch(out[k], v);
  }
  return out;
}

interface Op {
  op: string;
  path: string;
  value?: unknown;
  from?: string;
}

/**
 * RFC 6902. A failed operation, a failed `test` included, is answered 422 Invalid, as the apiserver does:
 * k8s.io/apiserver/pkg/endpoints/handlers/patch.go, jsonPatcher.applyJSPatch, `patchObj.Apply` failing →
 * errors.NewGenericServerResponse(http.StatusUnprocessableEntity, …), whose reason for 422 is StatusReasonInvalid
 * (k8s.io/apimachinery/pkg/api/errors). An undecodable patch is 400 BadRequest.
 */
export function jsonPatch(doc: Obj, patch: unknown): Obj {
  if (!Array.isArray(patch)) throw failure(400, 'json: cannot unmarshal object into Go value of type jsonpatch.Patch');
  let out: unknown = clone(doc);
  for (const raw of patch as Op[]) {
    if (!raw || typeof raw.op !== 'string' || typeof raw.path !== 'string')
      throw failure(400, 'invalid JSON patch operation');
    const op = raw;
    const fail = (why: string): never => {
      throw failure(422, why);
    };
    switch (op.op) {
      case 'add':
        out = put(out, pointer(op.path), clone(op.value), 'add', fail);
        break;
      case 'replace':
        out = put(out, pointer(op.path), clone(op.value), 'replace', fail);
        break;
      case 'remove':
        out = del(out, pointer(op.path), fail);
        break;
      case 'test':
        if (!same(at(out, pointer(op.path), fail), op.value)) fail(`testing value ${op.path} failed: test failed`);
        break;
      case 'move': {
        const v = at(out, pointer(op.from ?? ''), fail);
        out = del(out, pointer(op.from ?? ''), fail);
        out = put(out, pointer(op.path), v, 'add', fail);
        break;
      }
      case 'copy':
        out = put(out, pointer(op.path), clone(at(out, pointer(op.from ?? ''), fail)), 'add', fail);
        break;
      default:
        throw failure(400, `unexpected kind: ${op.op}`);
    }
  }
  return out as Obj;
}

function pointer(p: string): string[] {
  if (p === '') return [];
  if (!p.startsWith('/')) throw failure(422, `JSON pointer must start with /: ${p}`);
  return p
    .slice(1)
    .split('/')
    .map((s) => s.replace(/~1/g, '/').replace(/~0/g, '~'));
}

function at(doc: unknown, path: string[], fail: (w: string) => never): unknown {
  let cur = doc;
  for (const seg of path) {
    if (Array.isArray(cur)) {
      const i = Number(seg);
      if (!Number.isInteger(i) || i < 0 || i >= cur.length) fail(`array index ${seg} out of bounds`);
      cur = cur[i];
    } else if (cur !== null && typeof cur === 'object' && seg in cur) cur = (cur as Record<string, unknown>)[seg];
    else fail(`missing value at ${path.join('/')}`);
  }
  return cur;
}

function put(doc: unknown, path: string[], value: unknown, op: 'add' | 'replace', fail: (w: string) => never): unknown {
  if (path.length === 0) return value;
  const parent = at(doc, path.slice(0, -1), fail);
  const last = path[path.length - 1] as string;
  if (Array.isArray(parent)) {
    const i = last === '-' ? parent.length : Number(last);
    if (!Number.isInteger(i) || i < 0 || i > parent.length || (op === 'replace' && i === parent.length))
      fail(`array index ${last} out of bounds`);
    if (op === 'add') parent.splice(i, 0, value);
    else parent[i] = value;
  } else if (parent !== null && typeof parent === 'object') {
    if (op === 'replace' && !(last in parent)) fail(`replace operation does not apply: doc is missing key: ${last}`);
    (parent as Record<string, unknown>)[last] = value;
  } else fail(`no object at ${path.slice(0, -1).join('/')}`);
  return doc;
}

function del(doc: unknown, path: string[], fail: (w: string) => never): unknown {
  if (path.length === 0) fail('cannot remove the whole document');
  const parent = at(doc, path.slice(0, -1), fail);
  const last = path[path.length - 1] as string;
  if (Array.isArray(parent)) {
    const i = Number(last);
    if (!Number.isInteger(i) || i < 0 || i >= parent.length) fail(`array index ${last} out of bounds`);
    parent.splice(i, 1);
  } else if (parent !== null && typeof parent === 'object' && last in parent)
    delete (parent as Record<string, unknown>)[last];
  else fail(`remove operation does not apply: doc is missing path: ${path.join('/')}`);
  return doc;
}

/** Deep equality of JSON values, key order aside (`undefined` members count as absent). */
export function same(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false;
  if (Array.isArray(a) !== Array.isArray(b)) return false;
  if (Array.isArray(a)) {
    const bs = b as unknown[];
    return a.length === bs.length && a.every((x, i) => same(x, bs[i]));
  }
  const ao = a as Record<string, unknown>;
  const bo = b as Record<string, unknown>;
  const ak = Object.keys(ao).filter((k) => ao[k] !== undefined);
  const bk = Object.keys(bo).filter((k) => bo[k] !== undefined);
  return ak.length === bk.length && ak.every((k) => same(ao[k], bo[k]));
}
