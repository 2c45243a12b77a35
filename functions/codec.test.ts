// The fast codec must be indistinguishable from protobuf-es: same bytes as toBinary, same messages as
// fromBinary, on the function's real traffic, on every field kind the protos use, and on random JSON.
import { create, fromBinary, toBinary, type DescMessage, type JsonObject, type Message } from '@bufbuild/protobuf';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { CodecError, decode, encode, freezeStruct } from './codec.js';
import { nodePool, planXr, scaledPlan, TOKYO_WED_SAT, WORKED_EXAMPLE } from './fixtures.js';
import {
  Capability,
  RunFunctionRequestSchema,
  RunFunctionResponseSchema,
  Severity,
  Status,
  Target,
} from './generated/fn/v1/run_function_pb.js';
import { HealthCheckResponse_ServingStatus, HealthCheckResponseSchema } from './generated/grpc/health/v1/health_pb.js';
import { planRequest } from './request.js';
import { run } from './run.js';

const env = { calendarStart: Date.parse('2027-01-04T00:00:00Z') };

function same(desc: DescMessage, message: Message): void {
  const reference = toBinary(desc, message);
  const ours = encode(desc, message);
  expect(Buffer.from(ours).toString('hex')).toBe(Buffer.from(reference).toString('hex'));
  expect(decode(desc, reference)).toEqual(fromBinary(desc, reference));
}

const tricky: JsonObject = {
  nothing: null,
  int: 9007199254740991,
  negative: -42,
  frac: 0.1,
  tiny: -2.5e-300,
  zero: 0,
  text: 'ü "quoted" \n ☃ 𝄞',
  long: 'x'.repeat(200),
  longer: 'ÿ'.repeat(9000),
  yes: true,
  no: false,
  nested: [[1, [2, [3, null]]], [], {}, [{ a: [] }], 'b'],
  empty: {},
  '': 'empty key',
};

describe('codec: encode = toBinary, decode = fromBinary', () => {
  it.each([
    ['the first call (requirements only)', planRequest({ composite: WORKED_EXAMPLE.xr, nodePools: null })],
    ['the worked example', planRequest({ composite: WORKED_EXAMPLE.xr, nodePools: WORKED_EXAMPLE.pools, tag: 't' })],
    [
      'a fatal plan',
      planRequest({
        composite: planXr({ defaults: { maintenanceWindows: [{ ...TOKYO_WED_SAT, timezone: 'Nowhere' }] } }),
        nodePools: [nodePool('a')],
      }),
    ],
    [
      '100 NodePools',
      planRequest({ ...scaledPlan(100), composite: scaledPlan(100).xr, nodePools: scaledPlan(100).pools }),
    ],
  ])('request and response of %s', (_name, req) => {
    same(RunFunctionRequestSchema, req);
    same(RunFunctionResponseSchema, run(req, env));
  });

  it('every field kind the protos use: packed enums, bytes maps, oneofs, optionals, int64, unknown fields', () => {
    const req = create(RunFunctionRequestSchema, {
      meta: {
        tag: 'x',
        capabilities: [Capability.CAPABILITIES, Capability.REQUIRED_RESOURCES, Capability.REQUIRED_SCHEMAS],
      },
      observed: {
        composite: {
          resource: tricky,
          connectionDetails: { pw: new Uint8Array([0, 1, 255]), empty: new Uint8Array(0) },
        },
      },
      desired: { resources: { a: { resource: {}, ready: 2 }, b: {} } },
      input: tricky,
      context: {},
      credentials: { c: { source: { case: 'credentialData', value: { data: { k: new Uint8Array([7]) } } } } },
      requiredSchemas: { s: { openapiV3: { type: 'object' } }, t: {} },
      requiredResources: { r: { items: [] } },
      extraResources: { e: { items: [{ resource: { a: 1 } }] } },
    });
    same(RunFunctionRequestSchema, req);
    const rsp = create(RunFunctionResponseSchema, {
      meta: { tag: 't', ttl: { seconds: 1234567890123n, nanos: -5 } },
      results: [
        { severity: Severity.WARNING, message: 'm', reason: '', target: Target.COMPOSITE_AND_CLAIM },
        { severity: Severity.NORMAL, message: '' },
      ],
      conditions: [{ type: 'T', status: Status.CONDITION_FALSE, reason: 'R', message: '' }],
      requirements: {
        resources: { byName: { apiVersion: 'v1', kind: 'K', match: { case: 'matchName', value: '' }, namespace: '' } },
        extraResources: {
          byLabel: {
            apiVersion: 'v1',
            kind: 'K',
            match: { case: 'matchLabels', value: { labels: { a: 'b', c: '' } } },
          },
        },
        schemas: { s: { apiVersion: 'v1', kind: 'K' } },
      },
      output: tricky,
    });
    same(RunFunctionResponseSchema, rsp);
    // Fields this version does not know (a newer Crossplane) survive a decode/encode round trip.
    const withUnknown = new Uint8Array([
      ...toBinary(RunFunctionResponseSchema, rsp),
      0x50,
      0x96,
      0x01,
      0x5a,
      0x02,
      0x68,
      0x69,
    ]);
    expect(Buffer.from(encode(RunFunctionResponseSchema, decode(RunFunctionResponseSchema, withUnknown)))).toEqual(
      Buffer.from(toBinary(RunFunctionResponseSchema, fromBinary(RunFunctionResponseSchema, withUnknown))),
    );
    same(
      HealthCheckResponseSchema,
      create(HealthCheckResponseSchema, { status: HealthCheckResponse_ServingStatus.NOT_SERVING }),
    );
  });

  it('random JSON survives as a Struct exactly as protobuf-es encodes and decodes it', () => {
    fc.assert(
      // "__proto__" is the one key where protobuf-es itself is wrong (it assigns it, replacing the prototype);
      // it has its own test below.
      fc.property(
        fc
          .dictionary(
            fc.string().filter((k) => k !== '__proto__'),
            fc.jsonValue({ depthSize: 'small' }),
          )
          .filter((o) => !JSON.stringify(o).includes('"__proto__"')),
        (obj) => {
          same(RunFunctionRequestSchema, create(RunFunctionRequestSchema, { context: obj as JsonObject }));
        },
      ),
      { numRuns: 300 },
    );
  });

  it('a "__proto__" key stays data: encoded, decoded as an own property, no prototype touched', () => {
    const obj = JSON.parse('{"__proto__": {"polluted": true}, "a": 1}') as JsonObject;
    const bytes = encode(RunFunctionRequestSchema, create(RunFunctionRequestSchema, { context: obj }));
    const back = decode<ReturnType<typeof create<typeof RunFunctionRequestSchema>>>(RunFunctionRequestSchema, bytes)
      .context as JsonObject;
    expect(Object.keys(back)).toEqual(['__proto__', 'a']);
    expect(Object.getPrototypeOf(back)).toBe(Object.prototype);
    expect((back as { polluted?: boolean }).polluted).toBeUndefined();
    expect(JSON.stringify(back)).toBe('{"__proto__":{"polluted":true},"a":1}');
  });

  it('frozen Structs (memoised policies) are encoded once and copied after, with the same bytes', () => {
    const policy = freezeStruct({ metadata: { name: 'p', annotations: { a: '1' } }, spec: { list: [1, 'two', null] } });
    expect(Object.isFrozen((policy.spec as { list: unknown[] }).list)).toBe(true);
    const rsp = create(RunFunctionResponseSchema, {
      desired: { resources: { a: { resource: policy }, b: { resource: policy } } },
    });
    same(RunFunctionResponseSchema, rsp);
    expect(Buffer.from(encode(RunFunctionResponseSchema, rsp))).toEqual(
      Buffer.from(toBinary(RunFunctionResponseSchema, rsp)),
    );
  });

  it('Struct fields nobody reads are never decoded, and reading one gives plain data', () => {
    const req = create(RunFunctionRequestSchema, {
      observed: { resources: { a: { resource: { kind: 'RotationPolicy', spec: { x: [1] } } } } },
    });
    const decoded = decode<typeof req>(RunFunctionRequestSchema, encode(RunFunctionRequestSchema, req));
    const holder = decoded.observed?.resources.a as object;
    expect(typeof Object.getOwnPropertyDescriptor(holder, 'resource')?.get).toBe('function');
    expect(decoded.observed?.resources.a?.resource).toEqual({ kind: 'RotationPolicy', spec: { x: [1] } });
    expect(Object.getOwnPropertyDescriptor(holder, 'resource')?.value).toEqual({
      kind: 'RotationPolicy',
      spec: { x: [1] },
    });
  });

  it('rejects nesting beyond 100 levels when the message is decoded, naming the field, not on first access', () => {
    let deep: JsonObject = {};
    for (let i = 0; i < 150; i++) deep = { d: deep };
    const bytes = toBinary(RunFunctionRequestSchema, create(RunFunctionRequestSchema, { context: deep }));
    let caught: unknown;
    try {
      decode(RunFunctionRequestSchema, bytes);
    } catch (err) {
      caught = err;
    }
    expect(caught).toBeInstanceOf(CodecError);
    expect((caught as CodecError).describe()).toMatch(/^context\["d"\]\["d"\].*: nesting deeper than 100 levels/);
    // Each JSON object level is two messages (Struct, Value): 50 levels of objects fit, 51 do not.
    const nested = (levels: number): Uint8Array => {
      let v: JsonObject = {};
      for (let i = 1; i < levels; i++) v = { d: v };
      return toBinary(RunFunctionRequestSchema, create(RunFunctionRequestSchema, { context: v }));
    };
    expect(() => decode(RunFunctionRequestSchema, nested(50))).not.toThrow();
    expect(() => decode(RunFunctionRequestSchema, nested(51))).toThrow(CodecError);
  });
});
