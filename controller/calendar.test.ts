// GET /calendar.ics on the metrics port, in process against the simulation's apiserver: the controller's real
// caches list and watch it, and the calendar is built from them on each request — the CLI's calendar for the same
// objects, byte for byte, and a change the watch delivered shows in the next response.
import ICAL from 'ical.js';
import { afterEach, describe, expect, it } from 'vitest';
import { buildCalendar, DEFAULT_HORIZON_DAYS } from '../src/calendar/calendar.js';
import { calendarModel } from '../src/calendar/world.js';
import { ManualClock } from '../runtime/queue/clock.js';
import { ApiServer, type Obj } from '../test/sim/apiserver.js';
import { laggingClient } from '../test/sim/direct.js';
import { claim, DAY, nodePool, NS, policy } from '../test/support/fixtures.js';
import { Controller } from './controller.js';
import { PATHS } from './execute/executor.js';
import { close, listen, metricsHandler } from './http.js';
import { jsonLogger } from './log.js';
import { ControllerMetrics } from './metrics.js';
import { ROTATIONPOLICIES } from './status/reconciler.js';

const NOW = Date.parse('2027-01-04T00:00:00Z');
const thePolicy = policy({
  maintenanceWindows: [{ timezone: 'Europe/Berlin', days: ['Sat'], start: '22:00', end: '04:00' }],
});
const claims = [claim('a', { createdAt: NOW - 9 * DAY }), claim('b', { createdAt: NOW - 3 * DAY })];

const stops: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const s of stops.splice(0)) await s();
});

async function setup() {
  const clock = new ManualClock(NOW);
  const server = new ApiServer({ now: () => clock.now() });
  server.seed(ROTATIONPOLICIES, thePolicy as unknown as Obj);
  server.seed(PATHS.of('NodePool'), nodePool() as unknown as Obj);
  for (const c of claims) {
    server.seed(PATHS.of('NodeClaim'), c.claim as unknown as Obj);
    server.seed(PATHS.of('Node'), c.node as unknown as Obj);
  }
  const { client, deliver } = laggingClient(server);
  const metrics = new ControllerMetrics();
  const controller = new Controller({
    client,
    clock,
    log: jsonLogger('error', () => undefined),
    metrics,
    namespace: NS,
    identity: 'calendar-test',
    placeholderImage: 'registry.k8s.io/pause:3.10',
    priorityClass: 'noderotation-placeholder',
    concurrency: 1,
    resyncMs: 600_000,
  });
  const handler = metricsHandler(metrics, () => controller.calendar(clock.now()));
  const { server: http, port } = await listen({ host: '127.0.0.1', port: 0 }, handler);
  stops.push(async () => {
    await controller.stop();
    await close(http);
  });
  const get = async (path: string) => {
    const res = await fetch(`http://127.0.0.1:${port}${path}`);
    return { status: res.status, type: res.headers.get('content-type'), body: await res.text() };
  };
  return { clock, server, controller, deliver, get };
}

const summaries = (ics: string): string[] =>
  ICAL.Component.fromString(ics)
    .getAllSubcomponents('vevent')
    .filter((v) => !v.hasProperty('recurrence-id'))
    .map((v) => String(v.getFirstPropertyValue('summary')));

describe('GET /calendar.ics', () => {
  it('503 until the caches have synced; then the calendar of the cached objects, as the CLI writes it', async () => {
    const h = await setup();
    expect((await h.get('/calendar.ics')).status).toBe(503);
    await h.controller.sync();
    const r = await h.get('/calendar.ics');
    expect([r.status, r.type]).toEqual([200, 'text/calendar; charset=utf-8']);
    const expected = buildCalendar(
      calendarModel({ policies: [thePolicy], nodePools: [nodePool()], nodeClaims: claims.map((c) => c.claim) }, NOW, {
        horizonSeconds: DEFAULT_HORIZON_DAYS * 86400,
      }),
    );
    expect(r.body).toBe(expected);
    expect(summaries(r.body)).toEqual([
      'Maintenance window: NodePool general',
      'Rotation: NodeClaim b (NodePool general)',
      'AT RISK: NodeClaim a (NodePool general) is expired by Karpenter, not rotated',
    ]);
    // A query string does not change the answer.
    expect((await h.get('/calendar.ics?refresh=1')).body).toBe(r.body);
  });

  it('built on each request: a freeze the watch delivered and the clock show in the next response', async () => {
    const h = await setup();
    await h.controller.sync();
    const before = await h.get('/calendar.ics');
    const res = h.server.handle('operator', {
      method: 'PATCH',
      path: `${PATHS.of('NodePool')}/general`,
      contentType: 'application/merge-patch+json',
      body: { metadata: { annotations: { 'noderotation.io/freeze': '2027-01-06T00:00:00Z' } } },
    });
    expect(res.code).toBe(200);
    // Not delivered yet: the caches, and so the calendar, are as they were.
    expect((await h.get('/calendar.ics')).body).toBe(before.body);
    h.deliver();
    h.clock.advance(60_000);
    const after = await h.get('/calendar.ics');
    expect(summaries(after.body)).toContain('Freeze: NodePool general (NodePool general: noderotation.io/freeze)');
    expect(after.body).toContain('\r\nDTSTAMP:20270104T000100Z\r\n');
  });

  it('/metrics is still served beside it, and any other path is 404', async () => {
    const h = await setup();
    await h.controller.sync();
    const m = await h.get('/metrics');
    expect([m.status, m.type]).toEqual([200, 'text/plain; version=0.0.4; charset=utf-8']);
    expect((await h.get('/calendar')).status).toBe(404);
  });
});
