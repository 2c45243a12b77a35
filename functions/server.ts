// The gRPC shell around run(): FunctionRunnerService/RunFunction, grpc.health.v1, metrics, graceful
// shutdown. Everything that is not transport lives in run.ts. startFunctionServer runs named steps:
// create the state (metrics, caches, health) → register the services → bind gRPC → bind metrics → serve;
// shutdown() is the last step. A step that fails undoes the ones before it, so no port stays bound.
import type { Server as HttpServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import {
  Server,
  ServerInterceptingCall,
  ServerListenerBuilder,
  status,
  ServerCredentials,
  type ServerInterceptor,
  type ServerUnaryCall,
  type ServerWritableStream,
  type sendUnaryData,
} from '@grpc/grpc-js';
import { RunFunctionRequest, RunFunctionResponse, Severity, Status } from '@crossplane-org/function-sdk-typescript';
import {
  HealthCheckResponse_ServingStatus as Serving,
  type HealthCheckRequest,
  type HealthCheckResponse,
} from './generated/grpc/health/v1/health.js';
import { figuresCache, type FiguresCache } from '../src/schedule/figures-cache.js';
import { outcomeMemo, type OutcomeMemo } from './memo.js';
import { functionMetrics, serveMetrics, type FunctionMetrics, type RunOutcome } from './metrics.js';
import { run, suppliedNodePools } from './run.js';
import { functionRunnerService, healthService, MAX_MESSAGE_BYTES } from './service.js';
import { shown } from './show.js';
import { listenMutualTls, MutualTls, type FunctionCredentials, type MutualTlsListener } from './tls.js';

const DAY_MS = 86_400_000;
const RUN_FUNCTION_PATH = functionRunnerService.runFunction.path;
/**
 * What grpc-js itself accepts: twice the protocol's limit. A request between the two gets INVALID_ARGUMENT
 * with its size and what to do (grpc-js alone would answer RESOURCE_EXHAUSTED); beyond it the transport
 * refuses it unread, so memory stays bounded.
 */
const TRANSPORT_RECEIVE_LIMIT = 2 * MAX_MESSAGE_BYTES;

/** The calendar instant the figures start from: the current UTC day, so output changes at most daily. */
export const startOfUtcDay = (now: number): number => Math.floor(now / DAY_MS) * DAY_MS;

/** Crossplane's `:9443` (all interfaces) in the host:port form grpc-js binds; other forms pass through. */
export function grpcAddress(address: string): string {
  return address.startsWith(':') ? `0.0.0.0${address}` : address;
}

/** host:port (host may be empty, or a bracketed IPv6 address) → parts, for the HTTP metrics listener. */
export function splitHostPort(address: string): { host: string; port: number } {
  const m = /^(\[[^\]]*\]|[^:[\]]*):(\d{1,5})$/.exec(address);
  const port = m ? Number(m[2]) : Number.NaN;
  if (!m || port > 65535) {
    throw new Error(`${shown(address)} is not host:port with a port 0–65535 (e.g. :8080 or 127.0.0.1:8080)`);
  }
  const host = (m[1] as string).replace(/^\[|\]$/g, '');
  return { host: host === '' ? '0.0.0.0' : host, port };
}

export type Log = (
  level: 'info' | 'debug' | 'warn' | 'error',
  message: string,
  fields?: Record<string, unknown>,
) => void;

export interface ServerOptions {
  /** grpc-js form, e.g. 0.0.0.0:9443 or 127.0.0.1:0 */
  address: string;
  /** grpc-js's insecure credentials, or mutual TLS with the client certificate checked by tls.ts. */
  credentials: FunctionCredentials;
  /** host:port for /metrics, or null for none. */
  metricsAddress: string | null;
  log: Log;
  /** The wall clock, read only to pick the calendar day and to time calls. */
  now?: () => number;
  /** meta.ttl of every response, whole seconds (run.ts TTL_SECONDS when unset). */
  ttlSeconds?: number;
}

export interface FunctionServer {
  /** The bound gRPC port (useful with port 0). */
  port: number;
  metricsPort: number | null;
  /** Stops accepting calls, lets running ones finish for up to graceMs, then closes everything. */
  shutdown(graceMs?: number): Promise<void>;
}

/** The request as the server's deserializer hands it to the handler: decoded, or why it could not be. */
type Decoded = { ok: true; request: RunFunctionRequest } | { ok: false; problem: string; bytes: number };

/** Everything the handlers share for the server's lifetime. */
interface ServerState {
  log: Log;
  now: () => number;
  metrics: FunctionMetrics;
  figures: FiguresCache;
  memo: OutcomeMemo;
  ttlSeconds: number | undefined;
  /** grpc.health.v1 status by service name. */
  health: Map<string, Serving>;
  watchers: Set<{ service: string; stream: ServerWritableStream<HealthCheckRequest, HealthCheckResponse> }>;
}

export async function startFunctionServer(options: ServerOptions): Promise<FunctionServer> {
  // Checked before anything is bound: a bad metrics address must not leave a gRPC port behind.
  const metricsListen = options.metricsAddress === null ? null : splitHostPort(options.metricsAddress);
  const state = createState(options);
  const server = registerServices(state);
  const { port, tlsListener } = await bindGrpc(server, state, options);
  let http: HttpServer | null = null;
  try {
    http = metricsListen && (await serveMetrics(state.metrics.registry, metricsListen.host, metricsListen.port));
  } catch (err) {
    tlsListener?.close();
    server.forceShutdown();
    throw err;
  }
  const metricsPort = http ? (http.address() as AddressInfo).port : null;
  state.log('info', 'function-noderotation serving', { address: options.address, port, metricsPort });
  let stopping: Promise<void> | null = null;
  return {
    port,
    metricsPort,
    shutdown(graceMs = 10_000) {
      stopping ??= shutdown(state, server, tlsListener, http, graceMs);
      return stopping;
    },
  };
}

function createState(options: ServerOptions): ServerState {
  return {
    log: options.log,
    now: options.now ?? Date.now,
    metrics: functionMetrics(),
    figures: figuresCache(),
    memo: outcomeMemo(),
    ttlSeconds: options.ttlSeconds,
    // The server as a whole ("") and the function service by name.
    health: new Map([
      ['', Serving.SERVING],
      ['apiextensions.fn.proto.v1.FunctionRunnerService', Serving.SERVING],
    ]),
    watchers: new Set(),
  };
}

/**
 * RunFunction as the server sees it: requests decoded into `Decoded` (a malformed one is not an exception in
 * grpc-js, which would answer INTERNAL) and responses encoded by the handler, which can then check their size.
 */
const runFunctionServerDefinition = {
  runFunction: {
    ...functionRunnerService.runFunction,
    requestDeserialize: decodeRequest,
    responseSerialize: (bytes: Buffer): Buffer => bytes,
  },
};

function decodeRequest(bytes: Buffer): Decoded {
  if (bytes.length > MAX_MESSAGE_BYTES) {
    return {
      ok: false,
      bytes: bytes.length,
      problem:
        `the request is ${mib(bytes.length)}, over the 4 MiB limit of Crossplane's functions. ` +
        'Split the MaintenancePlan into several plans with spec.nodePoolSelector so that each sees fewer NodePools.',
    };
  }
  try {
    return { ok: true, request: RunFunctionRequest.decode(bytes) };
  } catch (err) {
    const what = err instanceof Error ? err.message : String(err);
    return { ok: false, bytes: bytes.length, problem: `not a valid RunFunctionRequest: ${what}` };
  }
}

const mib = (bytes: number): string => `${(bytes / 1024 / 1024).toFixed(2)} MiB (${bytes} bytes)`;

function registerServices(state: ServerState): Server {
  const server = new Server({
    'grpc.max_receive_message_length': TRANSPORT_RECEIVE_LIMIT,
    'grpc.max_send_message_length': MAX_MESSAGE_BYTES,
    interceptors: [transportFailures(state)],
  });
  server.addService(runFunctionServerDefinition, {
    runFunction: (call: ServerUnaryCall<Decoded, Buffer>, callback: sendUnaryData<Buffer>) =>
      handleRunFunction(state, call.request, callback),
  });
  server.addService(healthService, {
    check(
      call: ServerUnaryCall<HealthCheckRequest, HealthCheckResponse>,
      callback: sendUnaryData<HealthCheckResponse>,
    ) {
      const service = call.request.service;
      if (!state.health.has(service)) callback({ code: status.NOT_FOUND, details: `unknown service "${service}"` });
      else callback(null, healthOf(state, service));
    },
    watch(stream: ServerWritableStream<HealthCheckRequest, HealthCheckResponse>) {
      const entry = { service: stream.request.service, stream };
      state.watchers.add(entry);
      stream.on('cancelled', () => state.watchers.delete(entry));
      stream.write(healthOf(state, entry.service));
    },
  });
  return server;
}

const healthOf = (state: ServerState, service: string): HealthCheckResponse => ({
  status: state.health.get(service) ?? Serving.SERVICE_UNKNOWN,
});

/**
 * Calls that end in grpc-js before a request reaches the handler (one beyond the transport's limit, an
 * unsupported compression, a client giving up while sending) are logged and counted here, so that every
 * failed call is. grpc-js ends every call, whatever its status, by cancelling the listener: without a
 * message received first, the call failed before the function saw it.
 */
function transportFailures(state: ServerState): ServerInterceptor {
  return (method, call) => {
    let reachedHandler = false;
    const started = performance.now();
    const listener = new ServerListenerBuilder()
      .withOnReceiveMessage((message, next) => {
        reachedHandler = true;
        next(message);
      })
      .withOnCancel(() => {
        if (reachedHandler || method.path !== RUN_FUNCTION_PATH) return;
        state.metrics.observe('invalid', (performance.now() - started) / 1000);
        state.log('error', 'RunFunction refused', {
          code: 'RESOURCE_EXHAUSTED',
          details:
            `the call ended before its request was read: larger than the transport's limit of ` +
            `${TRANSPORT_RECEIVE_LIMIT} bytes, or abandoned by the client`,
        });
      })
      .build();
    return new ServerInterceptingCall(call, { start: (next) => next(listener) });
  };
}

/** The most severe result decides the outcome label (and the log level of a call). */
function outcome(rsp: RunFunctionResponse, answeredEarly: boolean): RunOutcome {
  if (rsp.results.some((r) => r.severity === Severity.SEVERITY_FATAL)) return 'fatal';
  if (rsp.results.some((r) => r.severity === Severity.SEVERITY_WARNING)) return 'warning';
  return answeredEarly ? 'requirements' : 'success';
}

function handleRunFunction(state: ServerState, decoded: Decoded, callback: sendUnaryData<Buffer>): void {
  const started = performance.now();
  const seconds = (): number => (performance.now() - started) / 1000;
  if (!decoded.ok) {
    state.metrics.observe('invalid', seconds());
    state.log('error', 'RunFunction refused', {
      code: 'INVALID_ARGUMENT',
      bytes: decoded.bytes,
      details: decoded.problem,
    });
    callback({ code: status.INVALID_ARGUMENT, details: `function-noderotation: ${decoded.problem}` });
    return;
  }
  const req = decoded.request;
  const tag = req.meta?.tag ?? '';
  try {
    const rsp = run(req, {
      calendarStart: startOfUtcDay(state.now()),
      figures: state.figures,
      memo: state.memo,
      ttlSeconds: state.ttlSeconds,
    });
    const { bytes, response } = encodeWithinLimit(req, rsp);
    const result = outcome(response, suppliedNodePools(req) === undefined);
    state.metrics.observe(result, seconds());
    const fields = {
      tag,
      composite: compositeName(req),
      result,
      results: response.results.length,
      desiredResources: Object.keys(response.desired?.resources ?? {}).length,
      bytes: bytes.length,
      seconds: seconds(),
    };
    // A FATAL result fails the composition: always logged, with the first reason and message.
    const first = response.results.find((r) => r.severity === Severity.SEVERITY_FATAL);
    if (first) state.log('warn', 'RunFunction fatal', { ...fields, reason: first.reason, message: first.message });
    else state.log('debug', 'RunFunction', fields);
    callback(null, bytes);
  } catch (err) {
    // run() reports every bad input as a FATAL result and decoding problems never get here; reaching here is a
    // bug. Failing the call makes Crossplane keep what it has (no desired state is applied): the safe outcome.
    state.metrics.observe('error', seconds());
    state.log('error', 'RunFunction failed', { tag, error: (err as Error).stack ?? String(err) });
    callback({ code: status.INTERNAL, details: `function-noderotation: internal error: ${(err as Error).message}` });
  }
}

const compositeName = (req: RunFunctionRequest): unknown =>
  (req.observed?.composite?.resource?.metadata as { name?: unknown } | undefined)?.name;

/**
 * The encoded response, or, when it would not fit in one 4 MiB message, a FATAL result saying so and how to
 * split the plan (with the desired state passed through unchanged, or left out if even that does not fit).
 */
function encodeWithinLimit(
  req: RunFunctionRequest,
  rsp: RunFunctionResponse,
): { bytes: Buffer; response: RunFunctionResponse } {
  const bytes = encode(rsp);
  if (bytes.length <= MAX_MESSAGE_BYTES) return { bytes, response: rsp };
  const governed = Object.keys(rsp.desired?.resources ?? {}).length - Object.keys(req.desired?.resources ?? {}).length;
  const perPolicy = governed > 0 ? bytes.length / governed : bytes.length;
  const fits = Math.max(1, Math.floor((MAX_MESSAGE_BYTES * 0.8) / perPolicy));
  const message =
    `MaintenancePlan ${shown(compositeName(req))}: the response for ${governed} RotationPolicies would be ` +
    `${mib(bytes.length)}, over the 4 MiB gRPC message limit between Crossplane and its functions. ` +
    `Split the plan: several MaintenancePlans, each with a spec.nodePoolSelector governing at most about ${fits} ` +
    'NodePools.';
  const fatal: RunFunctionResponse = {
    meta: rsp.meta,
    desired: req.desired,
    context: req.context,
    requirements: rsp.requirements,
    results: [{ severity: Severity.SEVERITY_FATAL, reason: 'PlanTooLarge', message }],
    conditions: [{ type: 'PlanValid', status: Status.STATUS_CONDITION_FALSE, reason: 'PlanTooLarge', message }],
  };
  const fatalBytes = encode(fatal);
  if (fatalBytes.length <= MAX_MESSAGE_BYTES) return { bytes: fatalBytes, response: fatal };
  // Crossplane applies nothing after a FATAL result, so the pass-through can go when it alone is too large.
  const bare: RunFunctionResponse = { ...fatal, desired: undefined, context: undefined };
  return { bytes: encode(bare), response: bare };
}

/** The SDK's encoder (ts-proto); the bytes are wrapped for grpc-js, not copied. */
function encode(rsp: RunFunctionResponse): Buffer {
  const b = RunFunctionResponse.encode(rsp).finish();
  return Buffer.from(b.buffer, b.byteOffset, b.byteLength);
}

/**
 * Insecure: grpc-js binds the address itself. Mutual TLS: our listener (tls.ts) does the handshake and checks
 * the client certificate, and hands each accepted connection to grpc-js through its connection injector
 * (plaintext HTTP/2 over the already established TLS connection).
 */
async function bindGrpc(
  server: Server,
  state: ServerState,
  options: ServerOptions,
): Promise<{ port: number; tlsListener: MutualTlsListener | null }> {
  const creds = options.credentials;
  if (creds instanceof MutualTls) {
    const injector = server.createConnectionInjector(ServerCredentials.createInsecure());
    try {
      const tlsListener = await listenMutualTls(creds, splitHostPort(grpcAddress(options.address)), {
        accept: (socket) => injector.injectConnection(socket),
        refused: (problem, remote) => state.log('warn', 'TLS client refused', { remote, problem }),
        handshakeFailed: (error, remote) =>
          state.log('debug', 'TLS handshake failed', { remote, error: error.message }),
        // Certificates are judged by the real clock, as Go's TLS does; options.now may be a test's calendar.
        now: Date.now,
      });
      return { port: tlsListener.port, tlsListener };
    } catch (err) {
      server.forceShutdown();
      throw new Error(`cannot listen for gRPC on ${options.address}: ${(err as Error).message}`);
    }
  }
  return new Promise((resolve, reject) => {
    server.bindAsync(options.address, creds, (err, bound) => {
      if (!err) return resolve({ port: bound, tlsListener: null });
      server.forceShutdown();
      reject(new Error(`cannot listen for gRPC on ${options.address}: ${err.message}`));
    });
  });
}

async function shutdown(
  state: ServerState,
  server: Server,
  tlsListener: MutualTlsListener | null,
  http: HttpServer | null,
  graceMs: number,
): Promise<void> {
  // No new connections; those already handed to grpc-js are closed by it below.
  tlsListener?.close();
  for (const key of state.health.keys()) state.health.set(key, Serving.NOT_SERVING);
  for (const w of state.watchers) {
    w.stream.write(healthOf(state, w.service));
    w.stream.end();
  }
  state.watchers.clear();
  await new Promise<void>((resolve) => {
    const force = setTimeout(() => {
      server.forceShutdown();
      resolve();
    }, graceMs);
    server.tryShutdown(() => {
      clearTimeout(force);
      resolve();
    });
  });
  if (http) {
    const h = http;
    await new Promise<void>((resolve) => h.close(() => resolve()));
    h.closeAllConnections();
  }
  state.log('info', 'function-noderotation stopped', {});
}
