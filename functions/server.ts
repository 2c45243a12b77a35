// The gRPC shell around run(): FunctionRunnerService/RunFunction, grpc.health.v1, metrics, graceful
// shutdown. Everything that is not transport lives in run.ts.
import type { Server as HttpServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import {
  Server,
  status,
  type ServerCredentials,
  type ServerUnaryCall,
  type ServerWritableStream,
  type sendUnaryData,
} from '@grpc/grpc-js';
import { create } from '@bufbuild/protobuf';
import { Severity, type RunFunctionRequest, type RunFunctionResponse } from './generated/fn/v1/run_function_pb.js';
import {
  HealthCheckResponseSchema,
  HealthCheckResponse_ServingStatus as Serving,
  type HealthCheckRequest,
  type HealthCheckResponse,
} from './generated/grpc/health/v1/health_pb.js';
import { figuresCache } from '../src/schedule/figures-cache.js';
import { outcomeMemo } from './memo.js';
import { functionMetrics, serveMetrics, type RunOutcome } from './metrics.js';
import { run, suppliedNodePools } from './run.js';
import { functionRunnerService, healthService, MAX_MESSAGE_BYTES } from './service.js';

const DAY_MS = 86_400_000;

/** The calendar instant the figures start from: the current UTC day, so output changes at most daily. */
export const startOfUtcDay = (now: number): number => Math.floor(now / DAY_MS) * DAY_MS;

/** Crossplane's `:9443` (all interfaces) in the host:port form grpc-js binds; other forms pass through. */
export function grpcAddress(address: string): string {
  return address.startsWith(':') ? `0.0.0.0${address}` : address;
}

/** host:port (host may be empty, or a bracketed IPv6 address) → parts, for the HTTP metrics listener. */
export function splitHostPort(address: string): { host: string; port: number } {
  const m = /^(\[[^\]]*\]|[^:]*):(\d+)$/.exec(address);
  if (!m) throw new Error(`"${address}" is not host:port (e.g. :8080 or 127.0.0.1:8080)`);
  const host = (m[1] as string).replace(/^\[|\]$/g, '');
  return { host: host === '' ? '0.0.0.0' : host, port: Number(m[2]) };
}

export type Log = (level: 'info' | 'debug' | 'error', message: string, fields?: Record<string, unknown>) => void;

export interface ServerOptions {
  /** grpc-js form, e.g. 0.0.0.0:9443 or 127.0.0.1:0 */
  address: string;
  credentials: ServerCredentials;
  /** host:port for /metrics, or null for none. */
  metricsAddress: string | null;
  log: Log;
  /** The wall clock, read only to pick the calendar day and to time calls. */
  now?: () => number;
}

export interface FunctionServer {
  /** The bound gRPC port (useful with port 0). */
  port: number;
  metricsPort: number | null;
  /** Stops accepting calls, lets running ones finish for up to graceMs, then closes everything. */
  shutdown(graceMs?: number): Promise<void>;
}

/** The most severe result decides the outcome label (and the log level of a call). */
function outcome(rsp: RunFunctionResponse, answeredEarly: boolean): RunOutcome {
  if (rsp.results.some((r) => r.severity === Severity.FATAL)) return 'fatal';
  if (rsp.results.some((r) => r.severity === Severity.WARNING)) return 'warning';
  return answeredEarly ? 'requirements' : 'success';
}

export async function startFunctionServer(options: ServerOptions): Promise<FunctionServer> {
  const now = options.now ?? Date.now;
  const { log } = options;
  const metrics = functionMetrics();
  const figures = figuresCache();
  const memo = outcomeMemo();
  const server = new Server({
    'grpc.max_receive_message_length': MAX_MESSAGE_BYTES,
    'grpc.max_send_message_length': MAX_MESSAGE_BYTES,
  });

  server.addService(functionRunnerService, {
    RunFunction(
      call: ServerUnaryCall<RunFunctionRequest, RunFunctionResponse>,
      callback: sendUnaryData<RunFunctionResponse>,
    ) {
      const started = performance.now();
      const req = call.request;
      try {
        const rsp = run(req, { calendarStart: startOfUtcDay(now()), figures, memo });
        const result = outcome(rsp, suppliedNodePools(req) === undefined);
        const seconds = (performance.now() - started) / 1000;
        metrics.observe(result, seconds);
        log('debug', 'RunFunction', {
          tag: req.meta?.tag ?? '',
          composite: (req.observed?.composite?.resource?.metadata as { name?: string } | undefined)?.name,
          result,
          results: rsp.results.length,
          desiredResources: Object.keys(rsp.desired?.resources ?? {}).length,
          seconds,
        });
        callback(null, rsp);
      } catch (err) {
        // run() reports every bad input as a FATAL result; reaching here is a bug. Failing the call makes
        // Crossplane keep what it has (no desired state is applied), which is the safe outcome.
        metrics.observe('error', (performance.now() - started) / 1000);
        log('error', 'RunFunction failed', { tag: req.meta?.tag ?? '', error: (err as Error).stack ?? String(err) });
        callback({
          code: status.INTERNAL,
          details: `function-noderotation: internal error: ${(err as Error).message}`,
        });
      }
    },
  });

  // grpc.health.v1: the server as a whole ("") and the function service by name.
  const services = new Map<string, Serving>([
    ['', Serving.SERVING],
    ['apiextensions.fn.proto.v1.FunctionRunnerService', Serving.SERVING],
  ]);
  const watchers = new Set<{
    service: string;
    stream: ServerWritableStream<HealthCheckRequest, HealthCheckResponse>;
  }>();
  const healthOf = (service: string): HealthCheckResponse =>
    create(HealthCheckResponseSchema, { status: services.get(service) ?? Serving.SERVICE_UNKNOWN });
  server.addService(healthService, {
    Check(
      call: ServerUnaryCall<HealthCheckRequest, HealthCheckResponse>,
      callback: sendUnaryData<HealthCheckResponse>,
    ) {
      const service = call.request.service;
      if (!services.has(service)) callback({ code: status.NOT_FOUND, details: `unknown service "${service}"` });
      else callback(null, healthOf(service));
    },
    Watch(stream: ServerWritableStream<HealthCheckRequest, HealthCheckResponse>) {
      const entry = { service: stream.request.service, stream };
      watchers.add(entry);
      stream.on('cancelled', () => watchers.delete(entry));
      stream.write(healthOf(entry.service));
    },
  });

  const port = await new Promise<number>((resolve, reject) => {
    server.bindAsync(options.address, options.credentials, (err, bound) => (err ? reject(err) : resolve(bound)));
  });

  let http: HttpServer | null = null;
  if (options.metricsAddress !== null) {
    const { host, port: metricsPort } = splitHostPort(options.metricsAddress);
    try {
      http = await serveMetrics(metrics.registry, host, metricsPort);
    } catch (err) {
      server.forceShutdown();
      throw err;
    }
  }
  const metricsPort = http ? (http.address() as AddressInfo).port : null;
  log('info', 'function-noderotation serving', { address: options.address, port, metricsPort });

  let stopping: Promise<void> | null = null;
  return {
    port,
    metricsPort,
    shutdown(graceMs = 10_000) {
      stopping ??= (async () => {
        for (const key of services.keys()) services.set(key, Serving.NOT_SERVING);
        for (const w of watchers) {
          w.stream.write(healthOf(w.service));
          w.stream.end();
        }
        watchers.clear();
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
        log('info', 'function-noderotation stopped', {});
      })();
      return stopping;
    },
  };
}
