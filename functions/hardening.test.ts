// Malformed input through a real gRPC server: every request is answered with INVALID_ARGUMENT (bytes that
// are not a RunFunctionRequest) or with a FATAL result naming the field (a request that decodes but is not a
// usable plan) — never INTERNAL, never a hang; every failed call is logged (one JSON line) and counted.
// Decoding is the official SDK's (ts-proto): what it refuses and what it skips is its behaviour, pinned here.
import { RunFunctionRequest, RunFunctionResponse, Severity, Status } from '@crossplane-org/function-sdk-typescript';
import { status, type ServiceError } from '@grpc/grpc-js';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { rawFunctionClient, type RawFunctionClient } from './client.js';
import { nodePool, planXr, scaledPlan, TOKYO_WED_SAT, WORKED_EXAMPLE } from './fixtures.js';
import type { JsonObject } from './json.js';
import { planRequest } from './request.js';
import { startFunctionServer, type FunctionServer } from './server.js';
import { MAX_MESSAGE_BYTES } from './service.js';
import { serverCredentials } from './tls.js';

const NOW = Date.parse('2027-01-04T00:00:00Z');
let server: FunctionServer;
let client: RawFunctionClient;
const logLines: string[] = [];

beforeAll(async () => {
  server = await startFunctionServer({
    address: '127.0.0.1:0',
    credentials: serverCredentials({ insecure: true, tlsCertsDir: undefined }),
    metricsAddress: '127.0.0.1:0',
    log: (level, msg, fields = {}) => logLines.push(JSON.stringify({ level, msg, ...fields })),
    now: () => NOW,
  });
  client = rawFunctionClient(`127.0.0.1:${server.port}`);
});

afterAll(async () => {
  client.close();
  await server.shutdown(1000);
});

const encode = (req: RunFunctionRequest): Uint8Array => RunFunctionRequest.encode(req).finish();
const valid = (): Uint8Array => encode(planRequest({ composite: WORKED_EXAMPLE.xr, nodePools: WORKED_EXAMPLE.pools }));

/** The call's outcome: the decoded response, or the gRPC status it failed with. */
async function outcome(bytes: Uint8Array): Promise<RunFunctionResponse | ServiceError> {
  try {
    return RunFunctionResponse.decode(await client.call(bytes, 20_000));
  } catch (err) {
    return err as ServiceError;
  }
}

const isError = (o: RunFunctionResponse | ServiceError): o is ServiceError => 'code' in o && 'details' in o;

async function metric(result: string): Promise<number> {
  const text = await (await fetch(`http://127.0.0.1:${server.metricsPort}/metrics`)).text();
  return Number(new RegExp(`^function_noderotation_runs_total\\{result="${result}"\\} (\\d+)$`, 'm').exec(text)?.[1]);
}

/** Protobuf bytes by hand: tag, then payload. */
const tag = (no: number, wire: number): number[] => varint((no << 3) | wire);
function varint(n: number): number[] {
  const out: number[] = [];
  while (n > 0x7f) {
    out.push((n & 0x7f) | 0x80);
    n >>>= 7;
  }
  out.push(n);
  return out;
}
const delimited = (no: number, payload: number[] | Uint8Array): number[] => [
  ...tag(no, 2),
  ...varint(payload.length),
  ...payload,
];
/** google.protobuf.Struct {key: {struct_value: inner}} nested `levels` deep. */
function nestedStruct(levels: number): number[] {
  let struct: number[] = [];
  for (let i = 0; i < levels; i++) {
    const value = delimited(5, struct); // Value.struct_value
    const entry = [...delimited(1, [...Buffer.from('d')]), ...delimited(2, value)];
    struct = delimited(1, entry); // Struct.fields
  }
  return struct;
}

interface Malformed {
  reason: string;
  bytes: () => Uint8Array;
  /** Part of the INVALID_ARGUMENT details: the field named, or the problem. */
  details: RegExp;
}

const malformed: Malformed[] = [
  {
    reason: 'cut short in the middle of the NodePools',
    bytes: () => valid().subarray(0, Math.floor(valid().length * 0.7)),
    details: /not a valid RunFunctionRequest: premature EOF/,
  },
  {
    reason: 'cut short by one byte',
    bytes: () => valid().subarray(0, valid().length - 1),
    details: /premature EOF/,
  },
  {
    reason: 'a length prefix beyond the end of the bytes',
    bytes: () => new Uint8Array([...tag(1, 2), ...varint(1000), 1, 2, 3]),
    details: /premature EOF/,
  },
  {
    reason: 'a nested message running past the end of its parent',
    bytes: () => new Uint8Array(delimited(1, [...tag(1, 2), ...varint(3), 0x61])).subarray(0, 4),
    details: /premature EOF/,
  },
  {
    reason: 'Struct nesting beyond the limit (51 levels of objects in the context)',
    bytes: () => new Uint8Array(delimited(5, nestedStruct(51))),
    details: /recursion limit exceeded/,
  },
  {
    reason: 'Struct nesting beyond the limit in the observed composite (33 levels: 100 nested messages)',
    bytes: () => new Uint8Array(delimited(2, delimited(1, delimited(1, nestedStruct(33))))),
    details: /recursion limit exceeded/,
  },
  {
    reason: 'a request over 4 MiB (the size and what to do are said)',
    bytes: () =>
      encode(planRequest({ composite: { ...WORKED_EXAMPLE.xr, blob: 'x'.repeat(MAX_MESSAGE_BYTES) }, nodePools: [] })),
    details: /over the 4 MiB limit.*Split the MaintenancePlan/,
  },
];

/**
 * Bytes the SDK's decoder skips rather than refuses (ts-proto reads a known field in another wire type, and a
 * group, as an unknown field, and stops at a field number 0): the call is answered, as for a request without
 * that field — here the requirements-only first answer, since no NodePools are left.
 */
const skipped: { reason: string; bytes: () => Uint8Array }[] = [
  { reason: 'wrong wire type: meta (a message) sent as a varint', bytes: () => new Uint8Array([...tag(1, 0), 5]) },
  {
    reason: 'wrong wire type: meta.tag (a string) sent as fixed64',
    bytes: () => new Uint8Array(delimited(1, [...tag(1, 1), 0, 0, 0, 0, 0, 0, 0, 0])),
  },
  { reason: 'field number 0', bytes: () => new Uint8Array([0, 0]) },
  { reason: 'a group (wire type 3)', bytes: () => new Uint8Array([...tag(99, 3), ...tag(99, 4)]) },
];

describe('malformed bytes: INVALID_ARGUMENT saying what is wrong, logged and counted', () => {
  it.each(malformed)('$reason', async ({ bytes, details }) => {
    const invalidBefore = await metric('invalid');
    const linesBefore = logLines.length;
    const o = await outcome(bytes());
    expect(isError(o) && { code: o.code, details: o.details }).toMatchObject({
      code: status.INVALID_ARGUMENT,
      details: expect.stringMatching(details) as unknown,
    });
    expect(await metric('invalid')).toBe(invalidBefore + 1);
    const logged = logLines.slice(linesBefore).map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(logged).toEqual([expect.objectContaining({ level: 'error', msg: 'RunFunction refused' })]);
  });

  it('a request beyond the transport limit (8 MiB) is refused unread, and still logged and counted', async () => {
    const invalidBefore = await metric('invalid');
    const o = await outcome(new Uint8Array(delimited(5, new Uint8Array(2 * MAX_MESSAGE_BYTES + 10))));
    expect(isError(o) && o.code).toBe(status.RESOURCE_EXHAUSTED);
    expect(await metric('invalid')).toBe(invalidBefore + 1);
    expect(logLines.at(-1)).toContain('"code":"RESOURCE_EXHAUSTED"');
  });

  it('unknown fields are not an error: the request is answered (protobuf forward compatibility)', async () => {
    const o = await outcome(new Uint8Array([...valid(), ...delimited(999, [1, 2, 3]), ...tag(998, 0), 7]));
    expect(isError(o) ? o.details : o.results).toEqual([]);
  });

  it.each(skipped)('skipped, not refused: $reason', async ({ bytes }) => {
    const errorsBefore = await metric('error');
    const o = await outcome(bytes());
    if (isError(o)) throw new Error(`call failed: ${o.details}`);
    expect(o.results).toEqual([]);
    expect(Object.keys(o.requirements?.resources ?? {})).toEqual(['nodepools']);
    expect(await metric('error')).toBe(errorsBefore);
  });

  it('Struct nesting within the limit (30 levels of objects in the context) is passed through whole', async () => {
    const o = await outcome(new Uint8Array([...valid(), ...delimited(5, nestedStruct(30))]));
    if (isError(o)) throw new Error(`call failed: ${o.details}`);
    let depth = 0;
    for (let v: JsonObject | undefined = o.context; v?.d !== undefined; v = v.d as JsonObject) depth++;
    expect(depth).toBe(30);
  });
});

describe('random damage: never INTERNAL, never a hang', () => {
  it('bit flips of a valid request are answered or refused with INVALID_ARGUMENT (bounded: 150 cases)', async () => {
    const base = valid();
    const errorsBefore = await metric('error');
    await fc.assert(
      fc.asyncProperty(fc.array(fc.nat({ max: base.length * 8 - 1 }), { minLength: 1, maxLength: 8 }), async (bits) => {
        const bytes = base.slice();
        for (const bit of bits) bytes[bit >> 3] = (bytes[bit >> 3] as number) ^ (1 << (bit & 7));
        const o = await outcome(bytes);
        if (isError(o)) expect(o.code).toBe(status.INVALID_ARGUMENT);
        else for (const r of o.results) expect(r.message.length).toBeGreaterThan(0);
      }),
      { numRuns: 150, seed: 4242 },
    );
    expect(await metric('error')).toBe(errorsBefore);
  });

  it('random bytes are refused or answered, never INTERNAL (bounded: 100 cases)', async () => {
    await fc.assert(
      fc.asyncProperty(fc.uint8Array({ maxLength: 300 }), async (bytes) => {
        const o = await outcome(bytes);
        if (isError(o)) expect(o.code).toBe(status.INVALID_ARGUMENT);
      }),
      { numRuns: 100, seed: 4243 },
    );
    expect(await metric('error')).toBe(0);
  });
});

/** A request that decodes, but whose content is not a usable plan: a FATAL result naming the field. */
interface Unusable {
  reason: string;
  composite: JsonObject;
  pools?: JsonObject[];
  message: RegExp;
}

const unusable: Unusable[] = [
  {
    reason: 'a composite of another kind',
    composite: { ...planXr({}), apiVersion: 'example.org/v1', kind: 'Bucket' },
    message: /not a MaintenancePlan: apiVersion\/kind: found "example\.org\/v1" "Bucket"/,
  },
  {
    reason: 'NodePool labels that are not a map',
    composite: planXr({ defaults: { maintenanceWindows: [TOKYO_WED_SAT] } }),
    pools: [{ ...nodePool('a'), metadata: { name: 'a', labels: ['x', 'y'] } }],
    message: /NodePool a .*metadata\.labels: found \["x","y"\]; allowed: a map of strings/,
  },
  {
    reason: 'an expireAfter that is no duration (the parser the CLI uses, src/util/duration.ts)',
    composite: planXr({ defaults: { maintenanceWindows: [TOKYO_WED_SAT] } }),
    pools: [nodePool('a', { expireAfter: '1.5x' })],
    message: /NodePool a .*spec\.template\.spec\.expireAfter: found "1\.5x"/,
  },
  {
    reason: 'a megabyte label value is quoted cut short, not whole',
    composite: planXr({ defaults: { maintenanceWindows: [TOKYO_WED_SAT] } }),
    pools: [{ ...nodePool('a'), metadata: { name: 'a', labels: { big: 7 as never, x: 'y'.repeat(1 << 20) } } }],
    message: /metadata\.labels: found \{"big":7,"x":"yyy.*… \(\d+ characters\)/,
  },
];

describe('decodable but unusable: a FATAL result naming the field', () => {
  it.each(unusable)('$reason', async ({ composite, pools, message }) => {
    const o = await outcome(encode(planRequest({ composite, nodePools: pools ?? WORKED_EXAMPLE.pools })));
    if (isError(o)) throw new Error(`call failed: ${o.details}`);
    expect(o.results[0]?.severity).toBe(Severity.SEVERITY_FATAL);
    expect(o.results[0]?.message).toMatch(message);
    expect(o.results[0]?.message.length).toBeLessThan(1000);
  });
});

describe('a response too large for one message', () => {
  it('is a FATAL result telling the user to split the plan, with the numbers; logged, counted as fatal', async () => {
    const { xr, pools } = scaledPlan(3200);
    const req = planRequest({ composite: xr, nodePools: pools });
    const fatalBefore = await metric('fatal');
    const o = await outcome(encode(req));
    if (isError(o)) throw new Error(`call failed: ${o.details}`);
    expect(o.results.map((r) => [r.severity, r.reason])).toEqual([[Severity.SEVERITY_FATAL, 'PlanTooLarge']]);
    expect(o.conditions.map((c) => [c.type, c.status, c.reason])).toEqual([
      ['PlanValid', Status.STATUS_CONDITION_FALSE, 'PlanTooLarge'],
    ]);
    expect(o.results[0]?.message).toMatch(
      new RegExp(
        'the response for 3200 RotationPolicies would be 4\\.\\d\\d MiB \\(\\d+ bytes\\), ' +
          'over the 4 MiB gRPC message limit.*Split the plan.*at most about \\d+ NodePools',
      ),
    );
    expect(Object.keys(o.desired?.resources ?? {})).toEqual([]);
    expect(await metric('fatal')).toBe(fatalBefore + 1);
    expect(logLines.at(-1)).toContain('"reason":"PlanTooLarge"');
  }, 60_000);
});
