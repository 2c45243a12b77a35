// `simulate --from-cluster -o html` through the command line: the cluster's objects served by a stand-in that
// answers the four list calls on 127.0.0.1 (the real apiserver runs these reads in test/e2e), a changed policy
// in a file, and the before/after page for a chosen pool.
import { createServer, type Server } from 'node:http';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { whatIfFleet } from '../test/browser/fleets.js';
import { cli } from '../test/support/cli-harness.js';

const dir = mkdtempSync(join(tmpdir(), 'nr-simulate-html-'));
const fleet = whatIfFleet(3, 10);
/** The objects as the cluster holds them: without the `source` the reader adds. */
const plain = <T extends object>(o: T) => {
  const { source: _source, ...rest } = o as T & { source?: unknown };
  return rest;
};
const LISTS: Record<string, object[]> = {
  '/apis/karpenter.sh/v1/nodepools': fleet.before.nodePools,
  '/apis/karpenter.sh/v1/nodeclaims': fleet.before.nodeClaims,
  '/apis/noderotation.io/v1alpha1/rotationpolicies': fleet.before.policies.map(plain),
  '/apis/noderotation.io/v1alpha1/maintenanceplans': [],
};
let server: Server;
let kubeconfig: string;
let changed: string;

beforeAll(async () => {
  server = createServer((req, res) => {
    const items = LISTS[new URL(req.url ?? '/', 'http://x').pathname];
    res.writeHead(items ? 200 : 404, { 'content-type': 'application/json' });
    res.end(JSON.stringify(items ? { items, metadata: {} } : { kind: 'Status', code: 404, message: 'not found' }));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  kubeconfig = join(dir, 'kubeconfig');
  writeFileSync(
    kubeconfig,
    JSON.stringify({
      apiVersion: 'v1',
      kind: 'Config',
      // Plain HTTP on the loopback: client-node allows it only with TLS verification off.
      clusters: [{ name: 'c', cluster: { server: `http://127.0.0.1:${port}`, 'insecure-skip-tls-verify': true } }],
      users: [{ name: 'u', user: { token: 't' } }],
      contexts: [{ name: 'test', context: { cluster: 'c', user: 'u' } }],
      'current-context': 'test',
    }),
  );
  changed = join(dir, 'changed.json');
  writeFileSync(changed, JSON.stringify(plain(fleet.after.policies[0] as object)));
});

afterAll(async () => {
  await new Promise((resolve) => server.close(resolve));
  rmSync(dir, { recursive: true, force: true });
});

const args = (...more: string[]) => [
  'simulate',
  '--from-cluster',
  '--kubeconfig',
  kubeconfig,
  '-f',
  changed,
  '--now',
  '2027-01-04T00:00:00Z',
  '--duration',
  '30d',
  ...more,
];

describe('simulate --from-cluster -o html', () => {
  it('the page: the fleet before and after, the changed pool charted and drawn node by node', async () => {
    const r = await cli(args('-o', 'html', '--pool', 'pool-00', '--sample', '7'));
    expect(r.err).not.toContain('error');
    expect(r.code).toBe(0);
    expect(r.out).toMatch(/^<!doctype html>/);
    expect(r.out).toContain('What if: 3 NodePools, 30 nodes');
    expect(r.out).toContain('data-panel="after: pool-00"');
    expect(r.out).toContain('pool-00 after, node by node');
    expect(r.out.match(/class="row-label"/g)).toHaveLength(2 * 7);
    // pool-01 and pool-02 are unchanged by the file: no chart of their own.
    expect(r.out).not.toContain('data-panel="after: pool-01"');
    // The JSON of the same run names the same difference.
    const j = await cli(args('-o', 'json'));
    expect(j.code, j.err).toBe(0); // under load this once printed nothing: the error says why
    const json = JSON.parse(j.out) as {
      nodePools: {
        nodePool: string;
        before: { forcefulExpirations: number };
        after: { forcefulExpirations: number };
      }[];
    };
    const p0 = json.nodePools.find((p) => p.nodePool === 'pool-00');
    expect(p0?.after.forcefulExpirations).toBeGreaterThan(p0?.before.forcefulExpirations ?? Infinity);
    expect(r.out).toContain(`<td class="n">${p0?.before.forcefulExpirations} → ${p0?.after.forcefulExpirations}</td>`);
  });

  it.each([
    {
      reason: '--pool naming no pool of the fleet lists the pools there are',
      more: ['-o', 'html', '--pool', 'gpu'],
      err: '--pool gpu: no such NodePool in cluster (context test); the NodePools: pool-00, pool-01, pool-02',
    },
    { reason: '--pool without the page', more: ['--pool', 'pool-00'], err: '--pool is for -o html' },
    { reason: '--sample without the page', more: ['--sample', '5'], err: '--sample is for -o html' },
    {
      reason: '--sample without --pool: no pool would be drawn node by node',
      more: ['-o', 'html', '--sample', '5'],
      err: '--sample with --from-cluster sets the rows of the --pool NAME pool; give --pool too',
    },
  ])('$reason', async ({ more, err }) => {
    const r = await cli(args(...more));
    expect(r.code).toBe(2);
    expect(r.err).toContain(err);
  });
});
