// `noderotation render` and `noderotation function`: exit codes, flags, credentials, and a real process
// stopped by SIGTERM.
import { createServer, type AddressInfo } from 'node:net';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { main } from '../cli/main.js';
import { runFunctionCommand } from '../cli/function-command.js';
import { parseFunctionArgs } from '../cli/function-flags.js';
import { functionClient } from './client.js';
import { ROOT } from './codegen.js';
import { EXAMPLES, EXAMPLES_NOW } from './examples.js';
import { WORKED_EXAMPLE } from './fixtures.js';
import { planRequest } from './request.js';
import { servingPorts, spawnFunction, stopFunction } from '../test/support/function-process.js';
import { grpcAddress, splitHostPort, startOfUtcDay } from './server.js';

interface Captured {
  code: number;
  out: string;
  err: string;
}

async function cli(args: string[], stdin = ''): Promise<Captured> {
  let out = '';
  let err = '';
  const code = await main(args, {
    stdout: { write: (t: string) => (out += t) },
    stderr: { write: (t: string) => (err += t) },
    now: () => EXAMPLES_NOW,
    readStdin: () => stdin,
  });
  return { code, out, err };
}

const PLAN = (defaults: string): string => `
apiVersion: noderotation.io/v1alpha1
kind: MaintenancePlan
metadata: {name: p}
spec:
  defaults: ${defaults}
---
apiVersion: karpenter.sh/v1
kind: NodePool
metadata: {name: a}
spec: {template: {spec: {expireAfter: 336h, terminationGracePeriod: 1h}}}
`;
const WINDOWS = '[{timezone: UTC, days: [Wed, Sat], start: "02:00", end: "06:00"}]';

describe('noderotation render', () => {
  it('exits 1 on a plan that cannot work, prints the FATAL with its fix and no policy', async () => {
    const r = await cli([
      'render',
      '-f',
      join(EXAMPLES, 'xr.yaml'),
      '-f',
      join(EXAMPLES, 'fatal', 'required-nodepools.yaml'),
    ]);
    expect(r.code).toBe(1);
    expect(r.out).toBe('');
    expect(r.err).toContain(
      'FATAL NonPositiveAgeThreshold: NodePool general (RotationPolicy platform-general): ' +
        'NodePool field spec.template.spec.expireAfter: expireAfter 72h is not longer than the lead time K·P + ' +
        "t_rot = 2×72h + 1h17m = 145h17m, so no node can be guaranteed 2 windows. Raise the NodePool's expireAfter " +
        'to 218h or more',
    );
  });

  const read = (f: string): string => readFileSync(join(ROOT, 'examples', f), 'utf8');
  const pools = read('nodepools.yaml');
  it.each([
    {
      reason:
        "Saturday-only batch windows, every NodePool at 300h: the NodePool's expireAfter, not a plan field set nowhere",
      plan: read('maintenanceplan.yaml').replace('days: [Sat, Sun]', 'days: [Sat]'),
      pools: pools.replace(/expireAfter: \d+h/g, 'expireAfter: 300h'),
      code: 1,
      check: (lines: string[]) => {
        const batch = lines.find((l) => l.includes('NonPositiveAgeThreshold: NodePool batch'));
        expect(batch).toContain('NodePool field spec.template.spec.expireAfter: expireAfter 300h');
        expect(batch).not.toContain('ageThreshold:');
      },
    },
    {
      reason: 'the default freeze to 2027-01-20: one end for the three NodePools sharing it, which clears all three',
      plan: read('maintenanceplan.yaml').replace('2026-12-29T00:00:00Z', '2027-01-20T00:00:00Z'),
      pools,
      code: 0,
      check: (lines: string[], fixes: { path: string; value: unknown }[]) => {
        const freeze = fixes.filter((f) => f.path === 'spec.defaults.freezes[0].end');
        expect(freeze).toHaveLength(3);
        expect(new Set(freeze.map((f) => f.value)).size).toBe(1);
        const shared = lines.filter((l) => l.includes('FreezeOutlastsNodes'));
        for (const l of shared) expect(l).toContain(String(freeze[0]?.value));
      },
    },
  ])('render names the field and fix explain does: $reason', async ({ plan, pools: nodePools, code, check }) => {
    const input = `${plan}\n---\n${nodePools}`;
    const explained = await cli(['explain', '-o', 'json', '-f', '-'], input);
    const rendered = await cli(['render', '-f', '-'], input);
    expect([explained.code, rendered.code]).toEqual([code, code]);
    type Found = { reason: string; message: string; fix?: { object: string; path: string; value: unknown } };
    const report = (JSON.parse(explained.out) as { nodePools: { nodePool: string; findings: Found[] }[] }).nodePools;
    const lines = rendered.err.split('\n').filter(Boolean);
    const found = report.flatMap((p) => p.findings.map((f) => ({ pool: p.nodePool, f })));
    expect(found.length).toBeGreaterThan(0);
    for (const { pool, f } of found) {
      const line = lines.find((l) => l.includes(` ${f.reason}: NodePool ${pool} (`)) ?? '';
      // The same message, after the field render names: the NodePool's own for a NodePool fix, else a plan path.
      expect(line.replace(/^.*?\): (?:NodePool field \S+|spec\.\S+): /, ''), line).toBe(f.message);
      if (f.fix?.object === 'NodePool') expect(line).toContain(`: NodePool field ${f.fix.path}: `);
    }
    check(
      lines,
      found.flatMap(({ f }) => (f.fix ? [f.fix as { path: string; value: unknown }] : [])),
    );
  });

  it('exits 2 on invalid input (errors name file, document, field) and on merged settings not a policy', async () => {
    const tz = await cli(
      ['render', '-f', '-'],
      PLAN('{maintenanceWindows: [{timezone: Mars/Base, days: [Sat], start: "02:00", end: "06:00"}]}'),
    );
    expect(tz.code).toBe(2);
    expect(tz.err).toContain(
      '(stdin), document 1 (MaintenancePlan/p): spec.defaults.maintenanceWindows[0].timezone: found "Mars/Base"',
    );
    const merged = await cli(['render', '-f', '-'], PLAN('{minRotationChances: 2}'));
    expect(merged.code).toBe(2);
    expect(merged.err).toContain(
      'FATAL InvalidPolicy: MaintenancePlan p, NodePool a: spec.defaults.maintenanceWindows: found nothing',
    );
    expect((await cli(['render', '-f', join(ROOT, 'examples', 'nodepools.yaml')])).err).toContain('no MaintenancePlan');
    expect((await cli(['render'])).code).toBe(2);
  });

  it('quotes what YAML 1.1 readers (kubectl) would misread: times and timestamps stay strings', async () => {
    const r = await cli(
      ['render', '-f', '-'],
      PLAN(`{maintenanceWindows: ${WINDOWS}, freezes: [{start: "2027-12-24T00:00:00Z", end: "2028-01-02T00:00:00Z"}]}`),
    );
    expect(r.code).toBe(0);
    expect(r.out).toContain('start: "02:00"');
    expect(r.out).toContain('start: "2027-12-24T00:00:00Z"');
  });
});

describe('noderotation function', () => {
  it('refuses to start with neither certificates nor --insecure (exit 2, says what to pass)', async () => {
    const r = await cli(['function', '--address', '127.0.0.1:0', '--metrics-address', '']);
    expect(r.code).toBe(2);
    expect(r.err).toContain('no TLS certificates: pass --tls-certs-dir DIR (or set TLS_SERVER_CERTS_DIR)');
  });

  it.each([
    {
      reason: 'a metrics address that is no host:port',
      args: ['--metrics-address', 'nope'],
      message: /--metrics-address: "nope" is not host:port/,
    },
    {
      reason: 'a gRPC address that is no host:port',
      args: ['--address', '9443'],
      message: /--address: "9443" is not host:port/,
    },
    { reason: 'a port beyond 65535', args: ['--metrics-address', ':70000'], message: /port 0–65535/ },
    {
      reason: 'a response TTL that is no duration',
      args: ['--response-ttl', '10'],
      message: /--response-ttl: .*"10"/,
    },
    {
      reason: 'a response TTL under a second (meta.ttl in whole seconds; Crossplane would call back at once)',
      args: ['--response-ttl', '500ms'],
      message: /--response-ttl: found "500ms"; use whole seconds, at least 1s/,
    },
  ])('an unusable flag ($reason): exit 2 and a message naming it, nothing bound', async ({ args, message }) => {
    // A free port unless the case is the address itself (a flag given twice is refused before its value is read).
    const address = args.includes('--address') ? [] : ['--address', '127.0.0.1:0'];
    const r = await cli(['function', '--insecure', ...address, ...args]);
    expect(r.code).toBe(2);
    expect(r.err).toMatch(message);
  });

  it.each([
    { reason: 'the gRPC port in use', flags: (port: number) => ['--address', `127.0.0.1:${port}`] },
    {
      reason: 'the metrics port in use (the gRPC port bound first is released)',
      flags: (port: number) => ['--address', '127.0.0.1:0', '--metrics-address', `127.0.0.1:${port}`],
    },
  ])('$reason: exit 2, a clear message, and every port freed', async ({ flags }) => {
    const blocker = createServer();
    await new Promise<void>((resolve) => blocker.listen(0, '127.0.0.1', resolve));
    const port = (blocker.address() as AddressInfo).port;
    let err = '';
    const io = {
      stdout: { write: () => true },
      stderr: { write: (t: string) => (err += t) },
      now: Date.now,
      readStdin: () => '',
    };
    const code = await runFunctionCommand(
      parseFunctionArgs(['--insecure', '--metrics-address', '', ...flags(port)]),
      io,
      {
        stopSignal: new Promise(() => {}),
      },
    );
    await new Promise<void>((resolve) => blocker.close(() => resolve()));
    expect(code).toBe(2);
    expect(err).toMatch(/cannot start: .*(EADDRINUSE|address already in use|No address added)/i);
    // Nothing stays bound: the port can be taken again at once (the gRPC port too, had one been bound).
    const again = createServer();
    await new Promise<void>((resolve, reject) => again.once('error', reject).listen(port, '127.0.0.1', resolve));
    await new Promise<void>((resolve) => again.close(() => resolve()));
  });

  it('a real process with an unusable flag exits 2 by itself (no port left serving, no signal needed)', async () => {
    const f = spawnFunction(['--address', '127.0.0.1:0', '--metrics-address', 'nope']);
    // A bound on the wait, not a timing assertion: a process left serving would never exit.
    const kill = setTimeout(() => f.child.kill('SIGKILL'), 30_000);
    const exited = await f.exited;
    clearTimeout(kill);
    expect({ exited, err: f.log().split('\n')[0] }).toEqual({
      exited: 2,
      err: expect.stringContaining('--metrics-address: "nope" is not host:port') as unknown,
    });
  });

  it('reads the certificate directory from TLS_SERVER_CERTS_DIR when --tls-certs-dir is not given', async () => {
    const io = { stdout: { write: () => true }, stderr: { write: () => true }, now: Date.now, readStdin: () => '' };
    await expect(
      runFunctionCommand(parseFunctionArgs(['--address', '127.0.0.1:0']), io, {
        tlsServerCertsDir: '/nonexistent/certs',
        stopSignal: new Promise(() => {}),
      }),
    ).rejects.toThrow(/cannot read \/nonexistent\/certs\/ca\.crt/);
  });

  it('serves with --insecure until the stop signal, then shuts down and exits 0', async () => {
    let err = '';
    let stop: (signal: string) => void = () => {};
    const io = {
      stdout: { write: () => true },
      stderr: { write: (t: string) => (err += t) },
      now: Date.now,
      readStdin: () => '',
    };
    const running = runFunctionCommand(
      parseFunctionArgs([
        '--insecure',
        '--address',
        '127.0.0.1:0',
        '--metrics-address',
        '127.0.0.1:0',
        '--debug',
        '--response-ttl',
        '2m',
      ]),
      io,
      {
        stopSignal: new Promise((resolve) => (stop = resolve)),
      },
    );
    while (!err.includes('serving')) await new Promise((r) => setTimeout(r, 10));
    const port = (JSON.parse(err.split('\n')[0] as string) as { port: number }).port;
    const client = functionClient(`127.0.0.1:${port}`);
    const rsp = await client.runFunction(
      planRequest({ composite: WORKED_EXAMPLE.xr, nodePools: WORKED_EXAMPLE.pools }),
    );
    client.close();
    expect(Object.keys(rsp.desired?.resources ?? {})).toEqual(['rotationpolicy-general']);
    expect(rsp.meta?.ttl).toMatchObject({ seconds: 120, nanos: 0 }); // --response-ttl 2m
    stop('SIGTERM');
    expect(await running).toBe(0);
    const lines = err
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { level: string; msg: string });
    expect(lines.map((l) => l.msg)).toEqual([
      'function-noderotation serving',
      'RunFunction',
      'SIGTERM: shutting down',
      'function-noderotation stopped',
    ]);
  });

  it('a real process: starts from the CLI, answers, and exits 0 on SIGTERM', async () => {
    const f = spawnFunction(['--address', '127.0.0.1:0', '--metrics-address', '127.0.0.1:0']);
    const { port, metricsPort } = await servingPorts(f);
    const client = functionClient(`127.0.0.1:${port}`);
    expect(
      (await client.runFunction(planRequest({ composite: WORKED_EXAMPLE.xr, nodePools: WORKED_EXAMPLE.pools })))
        .results,
    ).toEqual([]);
    client.close();
    expect(await (await fetch(`http://127.0.0.1:${metricsPort}/metrics`)).text()).toContain(
      'function_noderotation_runs_total{result="success"} 1',
    );
    expect(await stopFunction(f)).toBe(0);
    expect(f.log()).toContain('SIGTERM: shutting down');
  });
});

describe('serving helpers', () => {
  it("translates Crossplane's :9443 for grpc-js and parses metrics addresses", () => {
    expect(grpcAddress(':9443')).toBe('0.0.0.0:9443');
    expect(grpcAddress('127.0.0.1:0')).toBe('127.0.0.1:0');
    expect(splitHostPort(':8080')).toEqual({ host: '0.0.0.0', port: 8080 });
    expect(splitHostPort('[::1]:9090')).toEqual({ host: '::1', port: 9090 });
    expect(() => splitHostPort('8080')).toThrow(/not host:port/);
  });

  it('the calendar start is the start of the UTC day', () => {
    expect(new Date(startOfUtcDay(Date.parse('2027-01-04T23:59:59.999Z'))).toISOString()).toBe(
      '2027-01-04T00:00:00.000Z',
    );
  });
});
