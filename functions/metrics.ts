// Prometheus metrics of the function, on a private registry (nothing global, so several servers in one
// process, e.g. in tests, keep separate counts), served over plain HTTP at /metrics.
import { createServer, type Server } from 'node:http';
import { Counter, Histogram, Registry, collectDefaultMetrics } from 'prom-client';

/** The outcome label of a run: the most severe result, or why there was none. */
/** fatal, invalid and error are the failed calls. */
export type RunOutcome = 'fatal' | 'warning' | 'success' | 'requirements' | 'invalid' | 'error';

export interface FunctionMetrics {
  registry: Registry;
  observe(outcome: RunOutcome, seconds: number): void;
}

export function functionMetrics(): FunctionMetrics {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
  const runs = new Counter({
    name: 'function_noderotation_runs_total',
    help: [
      'RunFunction calls by outcome: fatal, warning or success (the most severe result),',
      'requirements (the first call of the requirements loop, answered with the NodePool requirement only),',
      'invalid (refused with INVALID_ARGUMENT or by the transport: a malformed or oversized request),',
      'error (an internal error). Failed calls: fatal, invalid and error.',
    ].join(' '),
    labelNames: ['result'],
    registers: [registry],
  });
  const duration = new Histogram({
    name: 'function_noderotation_run_duration_seconds',
    help: [
      'Time to handle one RunFunction call in the function: the handler and encoding the response;',
      'transport and decoding the request excluded.',
    ].join(' '),
    labelNames: ['result'],
    buckets: [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5],
    registers: [registry],
  });
  // Every label value exists from the start, so dashboards and alerts see zeros rather than no series.
  for (const result of ['fatal', 'warning', 'success', 'requirements', 'invalid', 'error'] satisfies RunOutcome[]) {
    runs.labels(result).inc(0);
  }
  return {
    registry,
    observe(outcome, seconds) {
      runs.labels(outcome).inc();
      duration.labels(outcome).observe(seconds);
    },
  };
}

/** GET /metrics on host:port; resolves once listening. */
export async function serveMetrics(registry: Registry, host: string, port: number): Promise<Server> {
  const server = createServer((req, res) => {
    if (req.method !== 'GET' || (req.url ?? '').split('?')[0] !== '/metrics') {
      res.writeHead(404, { 'content-type': 'text/plain' }).end('not found: metrics are at /metrics\n');
      return;
    }
    registry.metrics().then(
      (text) => res.writeHead(200, { 'content-type': registry.contentType }).end(text),
      (err: unknown) => res.writeHead(500, { 'content-type': 'text/plain' }).end(`${String(err)}\n`),
    );
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  return server;
}
