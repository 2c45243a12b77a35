// A small JSON client for the Kubernetes API. kubeconfig.ts loads the kubeconfig (file, in-cluster, exec and
// token refresh) and signs each request; the bodies we send and read are plain JSON, so that what is
// written is exactly what the code says (merge patches that touch only our keys, resourceVersion and UID
// preconditions) and what is read keeps its wire form (RFC 3339 strings, never Date objects: the engine's
// contract, docs/engine-contract.md).
import http from 'node:http';
import https from 'node:https';
import { createInterface } from 'node:readline';
import type { KubeAuth } from './kubeconfig.js';

export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly reason: string,
    message: string,
  ) {
    super(message);
  }
}

/** A mutating request refused before it was sent: the fence (leadership) was down. */
export class NotLeader extends Error {
  constructor(method: string, path: string) {
    super(`${method} ${path}: not sent: leadership could have lapsed (the fence is down)`);
  }
}

/**
 * A list's items with the list's apiVersion and kind filled in: the items of a list carry neither (the list
 * does), and without them an item does not read as the object it is (a RotationPolicy fails its own schema; a
 * watch event's object, which carries them, would look changed).
 */
export function typedItems(page: { apiVersion?: string; kind?: string; items: Json[] }): Json[] {
  const typed = { apiVersion: page.apiVersion, kind: page.kind?.replace(/List$/, '') };
  return page.items.map((item) => ({ ...typed, ...item }));
}

export const isConflict = (e: unknown): boolean => e instanceof ApiError && e.status === 409;
export const isNotFound = (e: unknown): boolean => e instanceof ApiError && e.status === 404;
export const isGone = (e: unknown): boolean => e instanceof ApiError && e.status === 410;

export type Query = Record<string, string | number | boolean | undefined>;

export interface RequestOptions {
  query?: Query;
  body?: unknown;
  /** Defaults to application/json; patches name their type (merge-patch+json, json-patch+json). */
  contentType?: string;
  signal?: AbortSignal;
}

export interface Json {
  [key: string]: unknown;
}

/** Counts every request by verb and resource, for the benchmark's "API requests per idle minute". */
export type RequestObserver = (method: string, path: string, status: number) => void;

/** What the controller uses of a client: a KubeClient, or one fenced by leadership (`KubeClient.fenced`). */
export interface KubeApi {
  request<T = Json>(method: string, path: string, opts?: RequestOptions): Promise<T>;
  watch(path: string, query: Query, onEvent: (type: string, object: Json) => void, signal: AbortSignal): Promise<void>;
  /** Whether a mutating request would be sent now (always, unfenced); the check itself (it may end leadership). */
  fenceUp(): boolean;
}

const MUTATING = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

/**
 * What carries requests: KubeClient's sockets, or the simulation's scheduler (test/sim/transport.ts). `gate`,
 * when given, is called synchronously in the very turn the request is handed to the wire, with no await in
 * between; if it throws, nothing is sent and the request rejects with what it threw.
 */
export interface Wire {
  exchange<T = Json>(method: string, path: string, opts: RequestOptions, gate: (() => void) | null): Promise<T>;
  watch(path: string, query: Query, onEvent: (type: string, object: Json) => void, signal: AbortSignal): Promise<void>;
}

/**
 * The requests of `wire`, whose mutating ones (POST, PUT, PATCH, DELETE) are sent only while `fence()` is true:
 * it is called synchronously right before the request goes to the wire, and a false answer rejects with
 * NotLeader instead. Reads and watches are not fenced. The one fence of both the real client and the simulation.
 */
export function fencedApi(wire: Wire, fence: () => boolean): KubeApi {
  const gate = (method: string, path: string): (() => void) | null =>
    MUTATING.has(method)
      ? () => {
          if (!fence()) throw new NotLeader(method, path);
        }
      : null;
  return {
    request: <T = Json>(method: string, path: string, opts: RequestOptions = {}) =>
      wire.exchange<T>(method, path, opts, gate(method, path)),
    watch: (path, query, onEvent, signal) => wire.watch(path, query, onEvent, signal),
    fenceUp: fence,
  };
}

export class KubeClient implements KubeApi, Wire {
  private agent: { agent: https.Agent; tls: string } | null = null;
  private readonly server: URL;

  constructor(
    private readonly kc: KubeAuth,
    private readonly observe?: RequestObserver,
  ) {
    const cluster = kc.getCurrentCluster();
    if (!cluster) throw new Error('kubeconfig has no current cluster');
    this.server = new URL(cluster.server);
  }

  request<T = Json>(method: string, path: string, opts: RequestOptions = {}): Promise<T> {
    return this.exchange<T>(method, path, opts, null);
  }

  fenceUp(): boolean {
    return true;
  }

  /** The same client fenced by leadership (fencedApi). */
  fenced(fence: () => boolean): KubeApi {
    return fencedApi(this, fence);
  }

  async exchange<T = Json>(method: string, path: string, opts: RequestOptions, gate: (() => void) | null): Promise<T> {
    const res = await this.send(method, path, opts, gate);
    const text = await readAll(res);
    this.observe?.(method, path, res.statusCode ?? 0);
    if ((res.statusCode ?? 0) >= 300) throw apiError(res.statusCode ?? 0, text);
    return (text === '' ? {} : JSON.parse(text)) as T;
  }

  /**
   * A watch: calls onEvent for each line's {type, object} until the server closes the stream (resolves) or
   * the request fails (rejects with ApiError). The caller restarts it.
   */
  async watch(path: string, query: Query, onEvent: (type: string, object: Json) => void, signal: AbortSignal) {
    const res = await this.send('GET', path, { query: { ...query, watch: true }, signal });
    this.observe?.('WATCH', path, res.statusCode ?? 0);
    if ((res.statusCode ?? 0) !== 200) throw apiError(res.statusCode ?? 0, await readAll(res));
    const lines = createInterface({ input: res, crlfDelay: Infinity });
    // A destroyed response does not always end readline's iterator: close it explicitly on abort and on close.
    const end = (): void => {
      res.destroy();
      lines.close();
    };
    res.once('close', end);
    signal.addEventListener('abort', end, { once: true });
    if (signal.aborted) end();
    try {
      for await (const line of lines) {
        if (line.trim() === '') continue;
        const ev = JSON.parse(line) as { type: string; object: Json };
        onEvent(ev.type, ev.object);
      }
    } finally {
      signal.removeEventListener('abort', end);
    }
  }

  private async send(
    method: string,
    path: string,
    opts: RequestOptions,
    gate: (() => void) | null = null,
  ): Promise<http.IncomingMessage> {
    const url = new URL(this.server.toString().replace(/\/$/, '') + path);
    for (const [k, v] of Object.entries(opts.query ?? {})) if (v !== undefined) url.searchParams.set(k, String(v));
    const body = opts.body === undefined ? undefined : JSON.stringify(opts.body);
    const options: https.RequestOptions = {
      method,
      protocol: url.protocol,
      hostname: url.hostname,
      port: url.port,
      path: url.pathname + url.search,
      headers: {
        Accept: 'application/json',
        ...(body === undefined
          ? {}
          : { 'Content-Type': opts.contentType ?? 'application/json', 'Content-Length': Buffer.byteLength(body) }),
      },
      signal: opts.signal,
    };
    await this.kc.applyToHTTPSOptions(options);
    // One keep-alive Agent per TLS settings reuses connections (a new Agent per call would not).
    if (url.protocol === 'https:') options.agent = this.agentFor(options);
    const mod = url.protocol === 'https:' ? https : http;
    return new Promise((resolve, reject) => {
      // The fence (fencedApi's gate): checked here, synchronously, in the same turn as the request is handed to
      // the transport.
      try {
        gate?.();
      } catch (e) {
        reject(e instanceof Error ? e : new Error(String(e)));
        return;
      }
      const req = mod.request(options, resolve);
      req.on('error', reject);
      req.setTimeout(opts.query?.watch ? 0 : 30_000, () => req.destroy(new Error(`${method} ${path}: timed out`)));
      if (body !== undefined) req.write(body);
      req.end();
    });
  }

  private agentFor(o: https.RequestOptions): https.Agent {
    const tls = { ca: o.ca, cert: o.cert, key: o.key, servername: o.servername, reject: o.rejectUnauthorized };
    const key = JSON.stringify(tls);
    if (this.agent?.tls !== key) {
      this.agent?.agent.destroy();
      const agent = new https.Agent({
        keepAlive: true,
        maxSockets: 32,
        ca: o.ca,
        cert: o.cert,
        key: o.key,
        servername: o.servername,
        ...(o.rejectUnauthorized === undefined ? {} : { rejectUnauthorized: o.rejectUnauthorized }),
      });
      this.agent = { agent, tls: key };
    }
    return this.agent.agent;
  }

  close(): void {
    this.agent?.agent.destroy();
  }
}

async function readAll(res: http.IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const c of res) chunks.push(c as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

function apiError(status: number, text: string): ApiError {
  try {
    const s = JSON.parse(text) as { reason?: string; message?: string };
    return new ApiError(status, s.reason ?? '', s.message ?? text);
  } catch {
    return new ApiError(status, '', text.slice(0, 200));
  }
}
