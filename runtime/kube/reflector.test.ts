// The reflector's protocol against a scripted HTTP server speaking the apiserver's list/watch wire format:
// streaming lists (and pages, from a server that refuses them), resume from the last resourceVersion,
// bookmarks, 410 Gone → relist with the differences reported, errors retried. (The real apiserver is exercised
// by the e2e suite; a compaction, which produces 410, cannot be forced there on demand.)
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { KubeConfig } from '@kubernetes/client-node';
import { afterEach, describe, expect, it } from 'vitest';
import { realClock } from '../queue/clock.js';
import { getEventListeners } from 'node:events';
import { KubeClient } from './client.js';
import { Reflector } from './reflector.js';

interface Obj {
  metadata: { name: string; resourceVersion: string };
  data?: string;
  noise?: string;
}

class ScriptedServer {
  items = new Map<string, Obj>();
  rv = 1;
  /** Watches asking for a version below this get 410 Gone. */
  compactedBelow = 0;
  /** Paginated list requests served. */
  lists = 0;
  /** Streaming lists (watches with sendInitialEvents) served. */
  streams = 0;
  /** false: refuses sendInitialEvents with 422, as an apiserver whose WatchList feature is off. */
  streaming = true;
  /** Streaming lists to cut before their end bookmark (the connection closes after the first object). */
  cutStreams = 0;
  watches: { rv: string | null; res: http.ServerResponse }[] = [];
  failNext = 0;
  server = http.createServer((req, res) => this.handle(req, res));

  async start(): Promise<string> {
    await new Promise<void>((r) => this.server.listen(0, '127.0.0.1', () => r()));
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  put(name: string, data: string, noise = ''): Obj {
    const o = { metadata: { name, resourceVersion: String(++this.rv) }, data, noise };
    const type = this.items.has(name) ? 'MODIFIED' : 'ADDED';
    this.items.set(name, o);
    this.send(type, o);
    return o;
  }

  remove(name: string): void {
    const o = this.items.get(name);
    if (!o) return;
    this.items.delete(name);
    this.send('DELETED', { ...o, metadata: { ...o.metadata, resourceVersion: String(++this.rv) } });
  }

  bookmark(): void {
    this.send('BOOKMARK', { metadata: { name: '', resourceVersion: String(++this.rv) } });
  }

  /** Ends every open watch, as the apiserver does at timeoutSeconds. */
  endWatches(): void {
    for (const w of this.watches.splice(0)) w.res.end();
  }

  /** As the apiserver: a watch event's object carries apiVersion and kind, a list's items do not. */
  private send(type: string, object: unknown): void {
    const typed = { apiVersion: 'x/v1', kind: 'Thing', ...(object as object) };
    for (const w of this.watches) w.res.write(`${JSON.stringify({ type, object: typed })}\n`);
  }

  private handle(req: http.IncomingMessage, res: http.ServerResponse): void {
    const url = new URL(req.url ?? '/', 'http://x');
    if (this.failNext > 0) {
      this.failNext--;
      res.writeHead(500, { 'Content-Type': 'application/json' }).end('{"kind":"Status","code":500,"message":"boom"}');
      return;
    }
    if (url.searchParams.get('watch') === 'true' && url.searchParams.get('sendInitialEvents') === 'true') {
      if (!this.streaming) {
        res.writeHead(422, { 'Content-Type': 'application/json' });
        res.end('{"kind":"Status","code":422,"message":"sendInitialEvents is forbidden for watch"}');
        return;
      }
      this.streams++;
      res.writeHead(200, { 'Content-Type': 'application/json' });
      const all = [...this.items.values()].sort((a, b) => a.metadata.name.localeCompare(b.metadata.name));
      const line = (type: string, object: object) =>
        `${JSON.stringify({ type, object: { apiVersion: 'x/v1', kind: 'Thing', ...object } })}\n`;
      if (this.cutStreams > 0) {
        this.cutStreams--;
        res.end(all.length > 0 ? line('ADDED', all[0] as Obj) : '');
        return;
      }
      for (const o of all) res.write(line('ADDED', o));
      const end = { 'k8s.io/initial-events-end': 'true' };
      res.write(line('BOOKMARK', { metadata: { resourceVersion: String(this.rv), annotations: end } }));
      this.watches.push({ rv: null, res });
      return;
    }
    if (url.searchParams.get('watch') === 'true') {
      const from = Number(url.searchParams.get('resourceVersion'));
      res.writeHead(200, { 'Content-Type': 'application/json' });
      if (from < this.compactedBelow) {
        res.end(`${JSON.stringify({ type: 'ERROR', object: { kind: 'Status', code: 410, message: 'too old' } })}\n`);
        return;
      }
      this.watches.push({ rv: url.searchParams.get('resourceVersion'), res });
      return;
    }
    this.lists++;
    // Two items a page, to exercise `continue`.
    const all = [...this.items.values()].sort((a, b) => a.metadata.name.localeCompare(b.metadata.name));
    const start = Number(url.searchParams.get('continue') ?? 0);
    const page = all.slice(start, start + 2);
    const next = start + 2 < all.length ? String(start + 2) : undefined;
    res.writeHead(200, { 'Content-Type': 'application/json' }).end(
      JSON.stringify({
        apiVersion: 'x/v1',
        kind: 'ThingList',
        items: page,
        metadata: { resourceVersion: String(this.rv), continue: next },
      }),
    );
  }

  async stop(): Promise<void> {
    this.endWatches();
    this.server.closeAllConnections();
    await new Promise<void>((r) => this.server.close(() => r()));
  }
}

function clientFor(server: string): KubeClient {
  const kc = new KubeConfig();
  kc.loadFromOptions({
    clusters: [{ name: 'c', server, skipTLSVerify: true }],
    users: [{ name: 'u' }],
    contexts: [{ name: 'x', cluster: 'c', user: 'u' }],
    currentContext: 'x',
  });
  return new KubeClient(kc);
}

const until = async (what: string, f: () => boolean, ms = 5000): Promise<void> => {
  const end = Date.now() + ms;
  while (!f()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
};

describe('Reflector', () => {
  const cleanups: (() => Promise<void>)[] = [];
  afterEach(async () => {
    for (const c of cleanups.splice(0).reverse()) await c();
  });

  /** A scripted server (prepared by `prepare` before anything connects) and a running reflector against it. */
  async function setup(prepare: (server: ScriptedServer) => void = () => undefined, seal?: (o: object) => object) {
    const server = new ScriptedServer();
    prepare(server);
    const url = await server.start();
    const client = clientFor(url);
    const reflector = new Reflector<Obj>(
      {
        name: 'things',
        path: '/apis/x/v1/things',
        shape: { apiVersion: true, kind: true, metadata: { name: true, resourceVersion: true }, data: true },
        ...(seal ? { seal } : {}),
      },
      client,
      realClock,
      [1, 1],
    );
    const changes: string[] = [];
    reflector.onChange((key, prev, cur) => changes.push(`${key}:${prev?.data ?? '-'}→${cur?.data ?? '-'}`));
    const abort = new AbortController();
    const running = reflector.run(abort.signal);
    cleanups.push(async () => {
      abort.abort();
      await running;
      client.close();
      await server.stop();
    });
    return { server, reflector, changes, signal: abort.signal };
  }

  // An update only in unread fields, or in the apiVersion and kind a list's items lack, keeps the object.
  it.each([
    { reason: 'a streaming list, then the same stream', streaming: true, lists: 0, streams: 1 },
    {
      reason: 'from a server that refuses streaming lists: pages, then a watch',
      streaming: false,
      lists: 3,
      streams: 0,
    },
  ])('$reason; an update only in unread fields keeps the object', async ({ streaming, lists, streams }) => {
    const {
      server,
      reflector: r,
      changes,
    } = await setup((server) => {
      server.streaming = streaming;
      for (const n of ['a', 'b', 'c', 'd', 'e'])
        server.items.set(n, { metadata: { name: n, resourceVersion: '1' }, data: n });
    });
    await r.whenSynced();
    expect(r.list().map((o) => o.metadata.name)).toEqual(['a', 'b', 'c', 'd', 'e']);
    expect(r.caughtUpTo(String(server.rv))).toBe(true);
    expect(r.caughtUpTo(String(server.rv + 1))).toBe(false);
    await until('the watch', () => server.watches.length === 1);
    expect([server.lists, server.streams]).toEqual([lists, streams]); // two items a page
    const before = r.get('a');
    server.put('a', 'a', 'heartbeat'); // `noise` is not in the shape
    server.put('b', 'B');
    await until('the change of b', () => changes.includes('b:b→B'));
    expect(r.get('a')).toBe(before);
    expect(changes.filter((c) => c.startsWith('a:'))).toEqual(['a:-→a']);
    expect(r.resourceVersionOf('a')).toBe(String(server.rv - 1));
    expect(r.get('b')?.data).toBe('B');
    expect(r.caughtUpTo(String(server.rv))).toBe(true);
  });

  it('stores what `seal` returns and hands that to the change handlers; an unchanged update keeps it', async () => {
    const sealed = new WeakSet<object>();
    const seal = (o: object): object => {
      sealed.add(Object.freeze(o));
      return o;
    };
    const seen: (Obj | undefined)[] = [];
    const { server, reflector: r } = await setup(
      (server) => server.items.set('a', { metadata: { name: 'a', resourceVersion: '1' }, data: 'a' }),
      seal,
    );
    r.onChange((_key, _prev, cur) => seen.push(cur));
    await r.whenSynced();
    const first = r.get('a') as Obj;
    expect(sealed.has(first)).toBe(true);
    await until('the watch', () => server.watches.length === 1);
    server.put('a', 'a', 'heartbeat');
    server.put('a', 'A');
    await until('the change', () => r.get('a')?.data === 'A');
    expect(sealed.has(r.get('a') as Obj)).toBe(true);
    expect(Object.isFrozen(r.get('a'))).toBe(true);
    // The list's object, then the change; the heartbeat changed nothing read: no change, the object kept.
    expect(seen).toHaveLength(2);
    expect(seen[0]).toBe(first);
    expect(seen[1]).toBe(r.get('a'));
  });

  it('a streaming list cut before its end is not a sync: it is asked for again', async () => {
    const { server, reflector: r } = await setup((server) => {
      for (const n of ['a', 'b']) server.items.set(n, { metadata: { name: n, resourceVersion: '1' }, data: n });
      server.cutStreams = 1;
    });
    await until('the cut reported', () => r.health().lastError !== null);
    expect(r.health()).toMatchObject({ synced: false, lastError: 'the streaming list ended before its last object' });
    expect(r.caughtUpTo('1')).toBe(false);
    await r.whenSynced();
    expect(r.list().map((o) => o.metadata.name)).toEqual(['a', 'b']);
    expect([server.lists, server.streams]).toEqual([0, 2]);
  });

  it('resumes a watch the server ended from the last version seen (bookmarks included), without a relist', async () => {
    const { server, reflector } = await setup();
    await reflector.whenSynced();
    await until('the watch', () => server.watches.length === 1);
    server.put('x', '1');
    server.bookmark();
    const bookmarkRv = String(server.rv);
    await until('x', () => reflector.get('x') !== undefined);
    await new Promise((r) => setTimeout(r, 50));
    server.endWatches();
    await until('a second watch', () => server.watches.length === 1);
    expect(server.watches[0]?.rv).toBe(bookmarkRv);
    expect([server.lists, server.streams]).toEqual([0, 1]);
  });

  it('410 Gone: relists and reports exactly the differences (added, changed, deleted) it missed', async () => {
    const { server, reflector, changes } = await setup();
    server.put('keep', 'k');
    server.put('gone', 'g');
    await reflector.whenSynced();
    await until('the watch', () => server.watches.length === 1);
    changes.length = 0;
    // The world moves on unseen (no events sent) and the history is compacted; then the watch ends, and
    // resuming it from the last version seen is refused with 410.
    server.items.delete('gone');
    server.items.set('keep', { metadata: { name: 'keep', resourceVersion: String(++server.rv) }, data: 'K' });
    server.items.set('new', { metadata: { name: 'new', resourceVersion: String(++server.rv) }, data: 'n' });
    server.compactedBelow = server.rv;
    server.endWatches();
    await until('the relist', () => server.streams >= 2);
    await until('the changes', () => changes.length === 3);
    expect(changes.sort()).toEqual(['gone:g→-', 'keep:k→K', 'new:-→n']);
    await until('the watch resumed from the relist', () => server.watches.length === 1);
    expect([server.lists, server.streams]).toEqual([0, 2]);
    expect(reflector.health()).toMatchObject({ synced: true, relists: 1, lastError: null });
  });

  it('a failing apiserver is retried with backoff and reported in health until it recovers', async () => {
    const { reflector: r, signal } = await setup((server) => (server.failNext = 5));
    await until('an error reported', () => r.health().lastError !== null);
    expect(r.health()).toMatchObject({ synced: false, lastError: 'boom' });
    await r.whenSynced();
    expect(r.health()).toMatchObject({ synced: true, lastError: null });
    // The five backoff sleeps left no listener on the stop signal: only the running watch's (its request's and
    // its stream's). One per sleep used to stay, and Node warned once a controller had retried a few times.
    expect(getEventListeners(signal, 'abort').length).toBeLessThanOrEqual(2);
  });
});
