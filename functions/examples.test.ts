// The fast, in-process counterpart of test/e2e/crossplane-render.test.ts: Crossplane's requirements loop
// driven over loopback gRPC on the examples, checked against the same expected-output.txt that the real
// `crossplane render` produces (minus what Crossplane itself adds), and `noderotation render` agreeing.
import { Severity, Status } from '@crossplane-org/function-sdk-typescript';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse, parseAllDocuments } from 'yaml';
import { main } from '../cli/main.js';
import { functionClient, type FunctionClient } from './client.js';
import { EXAMPLES, EXAMPLES_NOW } from './examples.js';
import type { JsonObject } from './json.js';
import { planRequest } from './request.js';
import { startFunctionServer, type FunctionServer } from './server.js';
import { serverCredentials } from './tls.js';

const docs = (path: string): JsonObject[] =>
  parseAllDocuments(readFileSync(path, 'utf8'))
    .map((d) => d.toJS() as JsonObject)
    .filter((d) => d !== null);
const xr = docs(join(EXAMPLES, 'xr.yaml'))[0] as JsonObject;
const nodePools = docs(join(EXAMPLES, 'required-nodepools.yaml'));
const expected = docs(join(EXAMPLES, 'expected-output.txt'));
const expectedPolicies = expected.filter((d) => d.kind === 'RotationPolicy');
const expectedXr = expected.find((d) => d.kind === 'MaintenancePlan') as JsonObject;

/** A composed resource as Crossplane renders it, with what Crossplane adds taken out again. */
function withoutCrossplane(doc: JsonObject): { key: string; policy: JsonObject } {
  const meta = structuredClone(doc.metadata) as {
    annotations: Record<string, string>;
    labels: Record<string, string>;
    ownerReferences?: unknown;
  };
  const key = meta.annotations['crossplane.io/composition-resource-name'] as string;
  delete meta.annotations['crossplane.io/composition-resource-name'];
  delete meta.labels['crossplane.io/composite'];
  delete meta.ownerReferences;
  return { key, policy: { ...doc, metadata: meta } as unknown as JsonObject };
}

let server: FunctionServer;
let client: FunctionClient;
beforeAll(async () => {
  server = await startFunctionServer({
    address: '127.0.0.1:0',
    credentials: serverCredentials({ insecure: true, tlsCertsDir: undefined }),
    metricsAddress: null,
    log: () => {},
    now: () => EXAMPLES_NOW,
  });
  client = functionClient(`127.0.0.1:${server.port}`);
});
afterAll(async () => {
  client.close();
  await server.shutdown(1000);
});

describe('examples/crossplane', () => {
  it('xr.yaml and required-nodepools.yaml are the plan and NodePools of examples/ (kept identical)', () => {
    expect(xr).toEqual(parse(readFileSync(join(EXAMPLES, '..', 'maintenanceplan.yaml'), 'utf8')));
    expect(nodePools).toEqual(docs(join(EXAMPLES, '..', 'nodepools.yaml')));
  });

  it('the requirements loop over gRPC composes the RotationPolicies and XR status of expected-output.txt', async () => {
    const first = await client.runFunction(planRequest({ composite: xr, nodePools: null }));
    expect(Object.keys(first.requirements?.resources ?? {})).toEqual(['nodepools']);
    const rsp = await client.runFunction(planRequest({ composite: xr, nodePools }));
    const composed = Object.fromEntries(Object.entries(rsp.desired?.resources ?? {}).map(([k, r]) => [k, r.resource]));
    expect(composed).toEqual(
      Object.fromEntries(expectedPolicies.map(withoutCrossplane).map(({ key, policy }) => [key, policy])),
    );
    expect((rsp.desired?.composite?.resource as JsonObject).status).toEqual({
      nodePools: (expectedXr.status as JsonObject).nodePools,
    });
    const planValid = ((expectedXr.status as JsonObject).conditions as JsonObject[]).find(
      (c) => c.type === 'PlanValid',
    );
    expect(
      rsp.conditions.map((c) => ({
        type: c.type,
        status: Status[c.status].replace(/^STATUS_/, ''),
        reason: c.reason,
        message: c.message,
      })),
    ).toEqual([
      { type: 'PlanValid', status: 'CONDITION_TRUE', reason: planValid?.reason, message: planValid?.message },
    ]);
    const expectedResults = expected
      .filter((d) => d.kind === 'Result')
      .map((d) => ({ severity: d.severity, message: d.message }));
    expect(rsp.results.map((r) => ({ severity: Severity[r.severity], message: r.message }))).toEqual(expectedResults);
  });

  it('`noderotation render` prints the same RotationPolicies, sorted, and exits 0', async () => {
    let out = '';
    let err = '';
    const code = await main(
      [
        'render',
        '-f',
        join(EXAMPLES, 'xr.yaml'),
        '-f',
        join(EXAMPLES, 'required-nodepools.yaml'),
        '--now',
        new Date(EXAMPLES_NOW).toISOString(),
      ],
      {
        stdout: { write: (t: string) => (out += t) },
        stderr: { write: (t: string) => (err += t) },
      },
    );
    expect(code).toBe(0);
    expect(parseAllDocuments(out).map((d) => d.toJS() as unknown)).toEqual(
      expectedPolicies.map((d) => withoutCrossplane(d).policy),
    );
    expect(err).toMatch(/^WARNING HardCapExceeded: NodePool batch /);
  });
});
