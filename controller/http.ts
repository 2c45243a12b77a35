// The controller's two HTTP endpoints, as controller-runtime serves them: /metrics on the metrics address and
// /healthz + /readyz on the health-probe address. Ready means every watch cache has synced (a replica that is
// not the leader is ready too: it is a warm standby). The metrics address also serves /calendar.ics (calendar.ts).
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { describeValue } from '../src/util/describe.js';

/** ":8080" → all interfaces; "127.0.0.1:0" → an ephemeral port; "0" → disabled (controller-runtime's rule). */
export function parseBindAddress(flag: string, text: string): { host: string; port: number } | null {
  if (text === '0') return null;
  const m = /^(.*):(\d{1,5})$/.exec(text);
  const port = m ? Number(m[2]) : NaN;
  if (!m || port > 65535) {
    throw new Error(
      `--${flag}: found ${describeValue(text)}; allowed: HOST:PORT or :PORT (e.g. :8080), or 0 to disable`,
    );
  }
  const host = (m[1] as string).replace(/^\[(.*)\]$/, '$1');
  return { host: host === '' ? '0.0.0.0' : host, port };
}

export interface Probe {
  healthy(): { ok: boolean; detail: string };
  ready(): { ok: boolean; detail: string };
}

export async function listen(
  addr: { host: string; port: number },
  handler: http.RequestListener,
): Promise<{ server: http.Server; port: number }> {
  const server = http.createServer(handler);
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(addr.port, addr.host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  return { server, port: (server.address() as AddressInfo).port };
}

/**
 * The metrics port: /metrics, and /calendar.ics when a calendar is given (null from it: the caches have not
 * synced yet, 503). A query string is ignored.
 */
export function metricsHandler(
  metrics: { text(): Promise<string> },
  calendar?: () => string | null,
): http.RequestListener {
  return (req, res) => {
    const path = (req.url ?? '').split('?')[0];
    if (path === '/calendar.ics' && calendar) {
      let body: string | null;
      try {
        body = calendar();
      } catch (err) {
        res.writeHead(500).end(`${String(err)}\n`);
        return;
      }
      if (body === null) res.writeHead(503, { 'Content-Type': 'text/plain' }).end('the caches have not synced yet\n');
      else res.writeHead(200, { 'Content-Type': 'text/calendar; charset=utf-8' }).end(body);
      return;
    }
    if (path !== '/metrics') {
      res.writeHead(404).end('not found\n');
      return;
    }
    metrics
      .text()
      .then((text) => res.writeHead(200, { 'Content-Type': 'text/plain; version=0.0.4; charset=utf-8' }).end(text))
      .catch((err: unknown) => res.writeHead(500).end(`${String(err)}\n`));
  };
}

export function probeHandler(probe: Probe): http.RequestListener {
  return (req, res) => {
    const path = (req.url ?? '').split('?')[0];
    const check = path === '/healthz' ? probe.healthy() : path === '/readyz' ? probe.ready() : null;
    if (!check) {
      res.writeHead(404).end('not found\n');
      return;
    }
    res.writeHead(check.ok ? 200 : 503, { 'Content-Type': 'text/plain' }).end(`${check.detail}\n`);
  };
}

export async function close(server: http.Server | undefined): Promise<void> {
  if (!server) return;
  server.closeAllConnections();
  await new Promise<void>((r) => server.close(() => r()));
}
