// The controller's client in the simulation: the same interface as KubeClient (KubeApi), carried by the
// scheduler instead of sockets. A request is two tasks — its arrival at the server (where it is applied) and
// its answer's arrival back — so a watch event of a write may come before or after the write's own answer,
// and a process killed in between leaves a write applied whose answer nobody reads. Each open watch delivers
// its events in order, one task at a time. A request's body crosses as JSON text, as on the wire; an answer or an
// event carries the apiserver's stored objects themselves, frozen (ApiServer.shared): the same as a copy to a
// client that never changes what it is sent, and a TypeError for one that does.
import {
  ApiError,
  NotLeader,
  type Json,
  type KubeApi,
  type Query,
  type RequestOptions,
  type Wire,
} from '../../runtime/kube/client.js';
import type { ApiServer, ServerWatch, Status } from './apiserver.js';
import { StatusError } from './apiserver.js';
import type { Rng, Scheduler } from './scheduler.js';

export interface TransportFaults {
  /** Per request: answered 429 or 500 without being applied. */
  errors: number;
  /** Per precondition-carrying write (resourceVersion patch, preconditioned delete): a spurious 409. */
  conflicts: number;
  /** Per write: applied, but the answer is lost (the client sees its timeout after 30 s). */
  lostAnswers: number;
  /** Per delivered watch event: the stream is cut after it. */
  cuts: number;
  /** Per request: extra latency up to this many ms (0: answers within 1–50 ms). */
  delayMs: number;
  /** Per request: it hangs — never applied, never answered — until the client's own timeout (30 s). */
  hung: number;
  /** Per write: answered 422 Invalid without being applied. */
  invalid: number;
  /**
   * Per delivered watch event: the stream stalls before its next event for 12–60 s, open and silent (a lagging
   * watch cache, a stalled HTTP/2 stream) — longer than a pass waits to read its own writes, so the next pass
   * decides on a cache that does not show them and only its writes' preconditions keep it from acting twice.
   */
  stalls: number;
}

export const NO_FAULTS: TransportFaults = {
  errors: 0,
  conflicts: 0,
  lostAnswers: 0,
  cuts: 0,
  delayMs: 0,
  hung: 0,
  invalid: 0,
  stalls: 0,
};

const BOOKMARK_EVERY_MS = 60_000;
const STALL_MS: readonly [number, number] = [12_000, 60_000];
const REQUEST_TIMEOUT_MS = 30_000;

const abortError = (): Error => Object.assign(new Error('This operation was aborted'), { name: 'AbortError' });
const wire = <T>(v: unknown): T => (v === undefined ? ({} as T) : (JSON.parse(JSON.stringify(v)) as T));

export class SimTransport implements KubeApi, Wire {
  private readonly owner: string;
  private readonly open = new Set<ServerWatch>();

  constructor(
    private readonly server: ApiServer,
    private readonly sched: Scheduler,
    private readonly rng: Rng,
    /** The process: its tasks die with it. */
    owner: string,
    private readonly faults: () => TransportFaults,
  ) {
    this.owner = owner;
  }

  private dead = false;
  /** Writes the fence refused (NotLeader): nothing sent. */
  fenced = 0;

  /** Unfenced, as KubeClient: the replica's writes go through `fencedApi` over this wire (controller/replica.ts). */
  fenceUp(): boolean {
    return true;
  }

  /**
   * The process died: the server drops its watches (the connections closed). Requests already on the wire
   * still reach the server and are applied (their tasks are the wire's, not the process's); nobody reads
   * their answers.
   */
  kill(): void {
    this.dead = true;
    for (const w of this.open) this.server.closeWatch(w);
    this.open.clear();
  }

  private latency(): number {
    const f = this.faults();
    return this.rng.int(1, 50) + (f.delayMs > 0 ? this.rng.int(0, f.delayMs) : 0);
  }

  request<T = Json>(method: string, path: string, opts: RequestOptions = {}): Promise<T> {
    return this.exchange<T>(method, path, opts, null);
  }

  /** A request; `gate` (the fence) runs in the turn it is handed to the wire, as in KubeClient. */
  exchange<T = Json>(method: string, path: string, opts: RequestOptions, gate: (() => void) | null): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      if (opts.signal?.aborted) return reject(abortError());
      try {
        gate?.();
      } catch (e) {
        if (e instanceof NotLeader) this.fenced++;
        return reject(e instanceof Error ? e : new Error(String(e)));
      }
      let answered = false;
      const onAbort = (): void => {
        if (answered) return;
        answered = true;
        reject(abortError());
      };
      const answer = (label: string, delay: number, fn: () => void): void => {
        if (this.dead) return;
        this.sched.add(this.owner, label, delay, () => {
          if (answered) return;
          answered = true;
          opts.signal?.removeEventListener('abort', onAbort);
          fn();
        });
      };
      opts.signal?.addEventListener('abort', onAbort, { once: true });
      const what = `${method} ${path}${queryText(opts.query)}`;
      this.sched.add(`${this.owner} (wire)`, `→ ${what}`, this.latency(), () => {
        const f = this.faults();
        const write = method !== 'GET';
        const preconditioned = hasPrecondition(opts.body);
        if (this.rng.chance(f.errors)) {
          const code = this.rng.pick([429, 500]);
          const reason = code === 429 ? 'TooManyRequests' : 'InternalError';
          return answer(`← ${code} (injected) ${what}`, this.latency(), () =>
            reject(new ApiError(code, reason, `injected ${reason}`)),
          );
        }
        if (this.rng.chance(f.hung)) {
          return answer(`← hung (never applied) ${what}`, REQUEST_TIMEOUT_MS, () =>
            reject(new Error(`${method} ${path}: timed out`)),
          );
        }
        if (write && this.rng.chance(f.invalid)) {
          return answer(`← 422 (injected) ${what}`, this.latency(), () =>
            reject(new ApiError(422, 'Invalid', `injected Invalid: ${method} ${path} is invalid`)),
          );
        }
        if (write && preconditioned && this.rng.chance(f.conflicts)) {
          return answer(`← 409 (injected) ${what}`, this.latency(), () =>
            reject(new ApiError(409, 'Conflict', 'injected conflict: the object has been modified')),
          );
        }
        const res = this.server.handle(this.owner, {
          method,
          path,
          ...(opts.query ? { query: opts.query } : {}),
          ...(opts.body !== undefined ? { body: wire(opts.body) } : {}),
          ...(opts.contentType ? { contentType: opts.contentType } : {}),
        });
        if (write && this.rng.chance(f.lostAnswers)) {
          return answer(`← lost answer (${res.code}) ${what}`, REQUEST_TIMEOUT_MS, () =>
            reject(new Error(`${method} ${path}: timed out`)),
          );
        }
        answer(`← ${res.code} ${what}`, this.latency(), () => {
          if (res.code >= 300) {
            const s = res.body as Status;
            reject(new ApiError(res.code, s.reason, s.message));
          } else resolve(res.body === undefined ? ({} as T) : (this.server.shared(res.body) as T));
        });
      });
    });
  }

  watch(path: string, query: Query, onEvent: (type: string, object: Json) => void, signal: AbortSignal): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      if (signal.aborted) return resolve();
      const what = `WATCH ${path}${queryText(query)}`;
      let sw: ServerWatch | null = null;
      let delivering = false;
      /** The event just delivered was followed by a stall: the next waits. */
      let stalled = false;
      let lastEvent = this.sched.now;
      let ended = false;
      const timers: { cancel(): void }[] = [];
      const clock = this.sched.clock(this.owner);
      const end = (err?: Error): void => {
        if (ended) return;
        ended = true;
        if (sw) {
          this.server.closeWatch(sw);
          this.open.delete(sw);
        }
        for (const t of timers) t.cancel();
        signal.removeEventListener('abort', onAbort);
        if (err === undefined) resolve();
        else reject(err);
      };
      const onAbort = (): void => end();
      signal.addEventListener('abort', onAbort, { once: true });
      const pump = (): void => {
        if (ended || delivering || !sw || sw.queue.length === 0) return;
        delivering = true;
        const ev = sw.queue[0] as { type: string; object: Record<string, unknown> };
        const stall = stalled ? this.rng.int(...STALL_MS) : 0;
        stalled = false;
        const after = stall > 0 ? ` (after a ${stall / 1000} s stall)` : '';
        const label = `⇠ ${ev.type} ${nameOf(ev.object)} on ${what}${after}`;
        this.sched.add(this.owner, label, stall + this.rng.int(1, 20), () => {
          delivering = false;
          if (ended || !sw) return;
          sw.queue.shift();
          lastEvent = this.sched.now;
          try {
            onEvent(ev.type, this.server.shared(ev.object) as Json);
          } catch (e) {
            return end(e instanceof Error ? e : new Error(String(e)));
          }
          if (sw.closed && sw.queue.length === 0) return end();
          if (this.rng.chance(this.faults().cuts)) return end();
          stalled = this.rng.chance(this.faults().stalls);
          pump();
        });
      };
      this.sched.add(this.owner, `→ ${what}`, this.latency(), () => {
        if (ended) return;
        const f = this.faults();
        if (this.rng.chance(f.errors)) {
          this.sched.add(this.owner, `← 500 (injected) ${what}`, this.latency(), () =>
            end(new ApiError(500, 'InternalError', 'injected InternalError')),
          );
          return;
        }
        try {
          sw = this.server.watch(path, query, pump);
          this.open.add(sw);
        } catch (e) {
          if (!(e instanceof StatusError)) throw e;
          const s = e.status;
          this.sched.add(this.owner, `← ${s.code} ${what}`, this.latency(), () =>
            end(new ApiError(s.code, s.reason, s.message)),
          );
          return;
        }
        const seconds = Number(query.timeoutSeconds ?? 0);
        if (seconds > 0)
          timers.push(
            clock.after(seconds * 1000, () => {
              if (sw) this.server.closeWatch(sw);
              if (sw && sw.queue.length === 0 && !delivering) end();
            }),
          );
        // A bookmark a minute to a watch that has been quiet that long (one with events has a fresh version).
        const bookmark = (): void => {
          if (ended || !sw) return;
          const quiet = clock.now() - lastEvent;
          if (quiet >= BOOKMARK_EVERY_MS) this.server.bookmark(sw);
          timers.push(clock.after(BOOKMARK_EVERY_MS - (quiet % BOOKMARK_EVERY_MS), bookmark));
        };
        if (sw.bookmarks) timers.push(clock.after(BOOKMARK_EVERY_MS, bookmark));
        pump();
      });
    });
  }
}

function hasPrecondition(body: unknown): boolean {
  const b = body as { metadata?: { resourceVersion?: string }; preconditions?: unknown } | undefined;
  return b?.metadata?.resourceVersion !== undefined || b?.preconditions !== undefined;
}

function queryText(q: Query | undefined): string {
  if (!q) return '';
  const parts = Object.entries(q)
    .filter(([k, v]) => v !== undefined && k !== 'timeoutSeconds' && k !== 'allowWatchBookmarks' && k !== 'limit')
    .map(([k, v]) => `${k}=${String(v)}`);
  return parts.length > 0 ? `?${parts.join('&')}` : '';
}

function nameOf(o: Record<string, unknown>): string {
  const m = o.metadata as { name?: string; resourceVersion?: string } | undefined;
  return `${m?.name ?? ''}@${m?.resourceVersion ?? ''}`;
}
