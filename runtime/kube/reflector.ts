// One resource kept current in memory by list + watch, client-go's reflector in miniature:
//  - a streaming list (a watch with sendInitialEvents, KEP-3157; pages of 500 where the apiserver refuses it)
//    gives the store and a resourceVersion; the watch follows it from there, asking for bookmarks so that a
//    quiet resource's version stays fresh (a restart then resumes instead of relisting);
//  - a watch that ends is resumed from the last version seen; "410 Gone" (the version was compacted away)
//    means a relist, whose differences are reported as changes so no event is lost;
//  - failures back off exponentially (1 s to 30 s) and are reported through health();
//  - objects are reduced to a Shape before they are stored, and an update that changes nothing the engine
//    reads keeps the stored object (same identity: the engine's caches key on it) and reports nothing.
import { shareJson } from '../../src/util/canonical.js';
import type { Clock } from '../queue/clock.js';
import { ApiError, isGone, typedItems, type Json, type KubeApi, type Query } from './client.js';
import { compareResourceVersion } from './resource-version.js';
import { pick, type Shape } from './shape.js';

export interface ResourceSpec {
  /** For logs and health: "nodeclaims". */
  name: string;
  /** Collection path, e.g. /apis/karpenter.sh/v1/nodeclaims or /api/v1/namespaces/ns/pods. */
  path: string;
  shape: Shape;
  /** labelSelector / fieldSelector. */
  query?: Query;
  /**
   * Called on each object before it is stored (a new object or a changed one, already cut to `shape`), and
   * what it returns is stored and handed to the change handlers: the caller's chance to freeze what the cache
   * holds. It must return its argument or an equal value.
   */
  seal?: (object: object) => object;
}

export type ChangeHandler<T> = (key: string, previous: T | undefined, current: T | undefined) => void;

export interface ReflectorHealth {
  name: string;
  synced: boolean;
  lastError: string | null;
  /** Relists after the first list (410 Gone or a failed resume). */
  relists: number;
}

interface Meta {
  metadata?: { name?: string; namespace?: string; resourceVersion?: string };
}

const keyOf = (o: Meta): string =>
  o.metadata?.namespace ? `${o.metadata.namespace}/${o.metadata.name ?? ''}` : (o.metadata?.name ?? '');

/**
 * Whether `next` (shareJson'd onto `prev`) differs from `prev` in its resourceVersion only: every other member,
 * and every other member of its metadata, is prev's own.
 */
const versionOnly = (prev: unknown, next: unknown): boolean => {
  const x = prev as Record<string, unknown> & { metadata?: Record<string, unknown> };
  const y = next as Record<string, unknown> & { metadata?: Record<string, unknown> };
  const same = (a: Record<string, unknown>, b: Record<string, unknown>, skip: string): boolean => {
    const keys = (o: Record<string, unknown>) => Object.keys(o).filter((k) => k !== skip && o[k] !== undefined);
    const ka = keys(a);
    return ka.length === keys(b).length && ka.every((k) => a[k] === b[k]);
  };
  return same(x, y, 'metadata') && same(x.metadata ?? {}, y.metadata ?? {}, 'resourceVersion');
};

/** The annotation of the BOOKMARK that ends a streaming list's initial events (KEP-3157). */
const INITIAL_EVENTS_END = 'k8s.io/initial-events-end';

/** The apiserver does not serve streaming lists: the reflector lists in pages instead. */
class StreamingListRefused extends Error {
  constructor() {
    super('the apiserver does not serve streaming lists (sendInitialEvents)');
  }
}

/** An ERROR watch event: its Status as the error the watch ends with (410 Gone among them). */
function watchError(object: Json): ApiError {
  const status = object as { code?: number; message?: string };
  return new ApiError(status.code ?? 500, 'WatchError', status.message ?? 'watch error');
}

/** The watch event types that carry the resource's version forward. */
const FOLLOWED = new Set(['ADDED', 'MODIFIED', 'DELETED', 'BOOKMARK']);

export class Reflector<T> {
  private readonly store = new Map<string, T>();
  /** The latest resourceVersion per key: an update that only moved it keeps the stored object. */
  private readonly versions = new Map<string, string>();
  private version: string | null = null;
  private synced = false;
  private lastError: string | null = null;
  private relists = -1;
  private failures = 0;
  /** 410s since the last event: more than one in a row backs off. */
  private goneStreak = 0;
  /** Lists as watches with sendInitialEvents (KEP-3157) until the apiserver refuses one; then in pages. */
  private streamingLists = true;
  /** The keys a streaming list in progress has sent; null outside one. */
  private initial: Set<string> | null = null;
  private readonly handlers: ChangeHandler<T>[] = [];
  private syncWaiters: (() => void)[] = [];

  constructor(
    private readonly spec: ResourceSpec,
    private readonly client: KubeApi,
    private readonly clock: Clock,
    /** Watch timeout range in seconds; the server ends each watch within it and we resume. */
    private readonly watchSeconds: [number, number] = [300, 600],
  ) {}

  onChange(h: ChangeHandler<T>): void {
    this.handlers.push(h);
  }

  get(key: string): T | undefined {
    return this.store.get(key);
  }

  list(): T[] {
    return [...this.store.values()];
  }

  /** The object's latest resourceVersion (for writes conditioned on it). */
  resourceVersionOf(key: string): string | undefined {
    return this.versions.get(key);
  }

  get size(): number {
    return this.store.size;
  }

  health(): ReflectorHealth {
    return { name: this.spec.name, synced: this.synced, lastError: this.lastError, relists: Math.max(this.relists, 0) };
  }

  /**
   * Whether the cache reflects the resource at `resourceVersion` or later (a write's answer, say): its list or
   * its watch has reached that version. True too when the two cannot be compared (KEP-5504): the caller then
   * cannot tell and must not wait on it.
   */
  caughtUpTo(resourceVersion: string): boolean {
    if (this.version === null || this.version === '') return false;
    const c = compareResourceVersion(this.version, resourceVersion);
    return c === null || c >= 0;
  }

  /** Resolves once the first list has been stored. */
  whenSynced(): Promise<void> {
    if (this.synced) return Promise.resolve();
    return new Promise((r) => this.syncWaiters.push(r));
  }

  /** Runs until `signal` aborts. Never rejects. */
  async run(signal: AbortSignal): Promise<void> {
    while (!signal.aborted) {
      try {
        if (this.version === null && !this.streamingLists) await this.relist(signal);
        await this.follow(signal);
        this.failures = 0;
      } catch (err) {
        if (signal.aborted) break;
        if (err instanceof StreamingListRefused) {
          // An apiserver without streaming lists (WatchList off, before Kubernetes 1.32 by default): pages.
          this.streamingLists = false;
          continue;
        }
        if (isGone(err)) {
          // Compacted: relist now; but a server that answers 410 again right after a relist gets the backoff,
          // so a misbehaving apiserver cannot turn this into a loop of lists.
          this.version = null;
          if (++this.goneStreak === 1) continue;
        }
        this.failures++;
        this.lastError = err instanceof Error ? err.message : String(err);
        await this.sleep(Math.min(1000 * 2 ** (this.failures - 1), 30_000), signal);
      }
    }
  }

  private async relist(signal: AbortSignal): Promise<void> {
    const seen = new Set<string>();
    let cont: string | undefined;
    let version = '';
    do {
      const page = await this.client.request<{
        apiVersion?: string;
        kind?: string;
        items: Json[];
        metadata: { continue?: string; resourceVersion: string };
      }>('GET', this.spec.path, { query: { ...this.spec.query, limit: 500, continue: cont }, signal });
      // A list's items carry no apiVersion and kind, a watch event's object does: without them filled in from
      // the list, each object's first watch event (a Node heartbeat, say) would look like a change and pass
      // its NodePool for nothing.
      for (const item of typedItems(page)) seen.add(this.upsert(item));
      cont = page.metadata.continue || undefined;
      version = page.metadata.resourceVersion;
    } while (cont);
    this.listed(seen, version);
  }

  /**
   * Follows the resource from the last version seen; without one, as a streaming list (KEP-3157, client-go's
   * WatchList): the apiserver sends every object as an ADDED event from its watch cache, then a BOOKMARK
   * annotated `k8s.io/initial-events-end` at the list's version, and the same stream goes on with the changes.
   * One object in memory at a time, where a list arrives as pages of hundreds (and a consistent list of custom
   * resources is read from etcd page by page).
   */
  private async follow(signal: AbortSignal): Promise<void> {
    const [lo, hi] = this.watchSeconds;
    const timeoutSeconds = lo + Math.floor(Math.random() * (hi - lo + 1));
    const listing = this.version === null;
    if (listing) this.initial = new Set();
    try {
      await this.client.watch(
        this.spec.path,
        {
          ...this.spec.query,
          ...(listing
            ? { sendInitialEvents: true, resourceVersionMatch: 'NotOlderThan' }
            : { resourceVersion: this.version ?? undefined }),
          allowWatchBookmarks: true,
          timeoutSeconds,
        },
        (type, object) => this.onEvent(type, object),
        signal,
      );
    } catch (e) {
      this.initial = null;
      if (listing && e instanceof ApiError && (e.status === 400 || e.status === 422)) throw new StreamingListRefused();
      throw e;
    }
    if (this.initial !== null) {
      this.initial = null;
      if (!signal.aborted) throw new Error('the streaming list ended before its last object');
    }
  }

  /** The end of a streaming list: what was not sent is gone; the cache is synced at the list's version. */
  private listed(seen: Set<string>, version: string): void {
    for (const key of [...this.store.keys()]) if (!seen.has(key)) this.remove(key);
    this.version = version;
    this.relists++;
    this.lastError = null;
    if (!this.synced) {
      this.synced = true;
      for (const w of this.syncWaiters) w();
      this.syncWaiters = [];
    }
  }

  private onEvent(type: string, object: Json): void {
    const rv = (object as Meta).metadata?.resourceVersion;
    if (this.initial !== null) return this.onInitialEvent(this.initial, type, object, rv);
    // The version moves first, so a change handler that queues work sees the cache at this event's version.
    if (rv && FOLLOWED.has(type)) this.version = rv;
    switch (type) {
      case 'ADDED':
      case 'MODIFIED':
        this.upsert(object);
        break;
      case 'DELETED':
        this.remove(keyOf(object));
        break;
      case 'BOOKMARK':
        break;
      case 'ERROR':
        throw watchError(object);
      default:
        return;
    }
    this.lastError = null;
    this.goneStreak = 0;
  }

  /**
   * An event of a streaming list before its end: each object as it is now (their versions in no order, so the
   * cache's version waits for the end). A bookmark without the end's annotation is a server that took the
   * request for a plain watch (it ignored sendInitialEvents): lists in pages from then on.
   */
  private onInitialEvent(seen: Set<string>, type: string, object: Json, rv: string | undefined): void {
    switch (type) {
      case 'ADDED':
        seen.add(this.upsert(object));
        return;
      case 'BOOKMARK': {
        const end = (object as { metadata?: { annotations?: Record<string, string> } }).metadata?.annotations?.[
          INITIAL_EVENTS_END
        ];
        if (end !== 'true' || !rv) throw new StreamingListRefused();
        this.initial = null;
        this.listed(seen, rv);
        this.goneStreak = 0;
        return;
      }
      case 'ERROR':
        throw watchError(object);
      default:
        // MODIFIED or DELETED before the end: not a streaming list.
        throw new StreamingListRefused();
    }
  }

  private upsert(raw: Json): string {
    const obj = pick(raw, this.spec.shape) as T;
    const key = keyOf(obj as Meta);
    const rv = (obj as Meta).metadata?.resourceVersion;
    if (rv) this.versions.set(key, rv);
    const prev = this.store.get(key);
    // What did not change stays the cached object's own, so that caches keyed by identity downstream (the
    // engine's conversions and policy checks) stay warm; an update that only moved the resourceVersion changes
    // nothing.
    const next = prev === undefined ? obj : shareJson(prev, obj);
    if (prev !== undefined && (next === prev || versionOnly(prev, next))) return key;
    const stored = (this.spec.seal ? this.spec.seal(next as object) : next) as T;
    this.store.set(key, stored);
    for (const h of this.handlers) h(key, prev, stored);
    return key;
  }

  private remove(key: string): void {
    const prev = this.store.get(key);
    if (prev === undefined) return;
    this.store.delete(key);
    this.versions.delete(key);
    for (const h of this.handlers) h(key, prev, undefined);
  }

  /** Resolves after `ms`, or at once on abort; leaves no listener on `signal` behind either way. */
  private sleep(ms: number, signal: AbortSignal): Promise<void> {
    return new Promise((resolve) => {
      const onAbort = (): void => {
        t.cancel();
        resolve();
      };
      const t = this.clock.after(ms, () => {
        signal.removeEventListener('abort', onAbort);
        resolve();
      });
      signal.addEventListener('abort', onAbort, { once: true });
    });
  }
}
