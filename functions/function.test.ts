// RunFunction through a real gRPC client over loopback: the behaviour table, the requirements loop,
// determinism, malformed input, health, metrics and the message limit (mutual TLS: tls.test.ts).
import { status } from '@grpc/grpc-js';
import {
  Ready,
  Requirements,
  RunFunctionRequest,
  RunFunctionResponse,
  Severity,
  Status,
} from '@crossplane-org/function-sdk-typescript';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HealthCheckResponse_ServingStatus as Serving } from './generated/grpc/health/v1/health.js';
import { functionClient, type FunctionClient } from './client.js';
import { nodePool, planXr, TOKYO_WED_SAT, WORKED_EXAMPLE } from './fixtures.js';
import type { JsonObject } from './json.js';
import { planRequest } from './request.js';
import { NODEPOOLS } from './run.js';
import { startFunctionServer, type FunctionServer } from './server.js';
import { serverCredentials } from './tls.js';

const NOW = Date.parse('2027-01-04T13:45:00Z'); // the server takes the start of this UTC day
const quiet = (): void => {};

/** What an earlier pipeline step desired: must come back byte for byte. */
const EARLIER = {
  composite: { resource: { status: { fromEarlierStep: true } } },
  resources: {
    'earlier-bucket': {
      resource: { apiVersion: 'example.org/v1', kind: 'Bucket', metadata: { name: 'b' }, spec: { size: 3 } },
      ready: Ready.READY_TRUE,
    },
  },
};

interface Extra {
  input?: JsonObject;
  context?: JsonObject;
  extraResources?: Record<string, { items: { resource: JsonObject }[] }>;
}

function request(xr: JsonObject | undefined, pools: JsonObject[] | null, extra: Extra = {}): RunFunctionRequest {
  return RunFunctionRequest.fromPartial({
    meta: { tag: 'tag-1' },
    observed: xr === undefined ? {} : { composite: { resource: xr } },
    desired: EARLIER,
    requiredResources: pools === null ? {} : { [NODEPOOLS]: { items: pools.map((resource) => ({ resource })) } },
    ...extra,
  });
}

const desiredBytes = (r: RunFunctionRequest | RunFunctionResponse): string =>
  Buffer.from(RunFunctionRequest.encode(RunFunctionRequest.fromPartial({ desired: r.desired })).finish()).toString(
    'hex',
  );

const policyOf = (rsp: RunFunctionResponse, key: string): JsonObject =>
  rsp.desired?.resources[key]?.resource as JsonObject;
const annotationsOf = (rsp: RunFunctionResponse, key: string): Record<string, string> =>
  ((policyOf(rsp, key).metadata as JsonObject).annotations ?? {}) as Record<string, string>;
const results = (rsp: RunFunctionResponse): { severity: string; reason: string | undefined; message: string }[] =>
  rsp.results.map((r) => ({
    severity: Severity[r.severity].replace(/^SEVERITY_/, ''),
    reason: r.reason,
    message: r.message,
  }));
const planValid = (rsp: RunFunctionResponse): { status: string; reason: string } | undefined => {
  const c = rsp.conditions.find((x) => x.type === 'PlanValid');
  return c && { status: Status[c.status].replace(/^STATUS_/, ''), reason: c.reason };
};

/** A fatal answer: FATAL results, PlanValid False, and the desired state exactly as the request had it. */
function expectRejected(req: RunFunctionRequest, rsp: RunFunctionResponse, reason: string): void {
  expect(
    results(rsp)
      .filter((r) => r.severity === 'FATAL')
      .map((r) => r.reason),
  ).toContain(reason);
  expect(planValid(rsp)).toEqual({ status: 'CONDITION_FALSE', reason: results(rsp)[0]?.reason });
  expect(desiredBytes(rsp)).toBe(desiredBytes(req));
  expect(Object.keys(rsp.desired?.resources ?? {})).toEqual(['earlier-bucket']);
}

let server: FunctionServer;
let client: FunctionClient;

beforeAll(async () => {
  server = await startFunctionServer({
    address: '127.0.0.1:0',
    credentials: serverCredentials({ insecure: true, tlsCertsDir: undefined }),
    metricsAddress: '127.0.0.1:0',
    log: quiet,
    now: () => NOW,
  });
  client = functionClient(`127.0.0.1:${server.port}`);
});

afterAll(async () => {
  client.close();
  await server.shutdown(1000);
});

interface Case {
  reason: string;
  req: () => RunFunctionRequest;
  check: (rsp: RunFunctionResponse, req: RunFunctionRequest) => void;
}

const cases: Case[] = [
  {
    reason: "recurring freezes declared once in the plan's defaults are carried into each composed RotationPolicy",
    req: () => {
      const freezes: JsonObject[] = [
        { name: 'black-friday', timezone: 'America/New_York', yearly: { from: '11-27', to: '12-01' } },
        { name: 'month-end', timezone: 'Europe/Berlin', monthly: { from: -1, to: 1 } },
      ];
      const xr = planXr({
        defaults: { maintenanceWindows: [TOKYO_WED_SAT], minRotationChances: 2, recurringFreezes: freezes },
        rules: [{ name: 'general', nodePools: ['general'], overrides: { minRotationChances: 2 } }],
      });
      return request(xr, [nodePool('general')]);
    },
    check: (rsp) => {
      const spec = policyOf(rsp, 'rotationpolicy-general').spec as JsonObject;
      expect((spec.recurringFreezes as JsonObject[]).map((f) => f.name)).toEqual(['black-friday', 'month-end']);
      // Their findings come back as the plan's results, each naming its freeze.
      for (const r of results(rsp).filter((x) => x.reason === 'FreezeCutsChances'))
        expect(r.message).toMatch(/"(black-friday|month-end)"/);
    },
  },
  {
    reason:
      'the worked example (§3.2): one RotationPolicy <plan>-<pool>, fully resolved, the figures as annotations, ready',
    req: () => request(WORKED_EXAMPLE.xr, WORKED_EXAMPLE.pools),
    check: (rsp) => {
      expect(results(rsp)).toEqual([]);
      expect(Object.keys(rsp.desired?.resources ?? {})).toEqual(['earlier-bucket', 'rotationpolicy-general']);
      expect(rsp.desired?.resources['rotationpolicy-general']?.ready).toBe(Ready.READY_TRUE);
      const policy = policyOf(rsp, 'rotationpolicy-general');
      expect(policy).toMatchObject({
        apiVersion: 'noderotation.io/v1alpha1',
        kind: 'RotationPolicy',
        metadata: { name: 'platform-general', labels: { 'noderotation.io/plan': 'platform' } },
        spec: {
          nodePools: ['general'],
          minRotationChances: 2,
          ageThreshold: 'auto',
          surge: { readyTimeout: '15m', cooldownAfter: '10m', maxUnavailable: 1 },
        },
      });
      expect((policy.spec as JsonObject).crossplane).toBeUndefined();
      expect(annotationsOf(rsp, 'rotationpolicy-general')).toEqual(WORKED_EXAMPLE.annotations);
      expect(planValid(rsp)).toEqual({ status: 'CONDITION_TRUE', reason: 'Accepted' });
      const xr = rsp.desired?.composite?.resource as JsonObject;
      expect(xr.status).toEqual({
        fromEarlierStep: true,
        nodePools: [
          {
            name: 'general',
            policy: 'platform-general',
            windowPeriod: '96h0m0s',
            ageThreshold: '142h43m0s',
            leadTime: '193h17m0s',
            guaranteedChances: 2,
            capacityPerOccurrence: 10,
          },
        ],
      });
      expect(rsp.desired?.resources['earlier-bucket']?.resource).toEqual(EARLIER.resources['earlier-bucket'].resource);
      expect(rsp.meta?.tag).toBe('tag-1');
    },
  },
  {
    reason:
      'the first call of the requirements loop: only the NodePool requirement, desired passed through, nothing judged',
    req: () => request(planXr({}), null),
    check: (rsp, req) => {
      expect(results(rsp)).toEqual([]);
      expect(rsp.conditions).toEqual([]);
      expect(desiredBytes(rsp)).toBe(desiredBytes(req));
      expect(rsp.requirements?.resources[NODEPOOLS]).toMatchObject({
        apiVersion: 'karpenter.sh/v1',
        kind: 'NodePool',
        matchLabels: { labels: {} },
      });
      expect(rsp.requirements?.resources[NODEPOOLS]?.namespace).toBeUndefined();
    },
  },
  {
    reason: 'NodePools supplied in the deprecated extra_resources (Crossplane before v2) are read too',
    req: () =>
      request(WORKED_EXAMPLE.xr, null, {
        extraResources: { [NODEPOOLS]: { items: WORKED_EXAMPLE.pools.map((resource) => ({ resource })) } },
      }),
    check: (rsp) => expect(annotationsOf(rsp, 'rotationpolicy-general')).toEqual(WORKED_EXAMPLE.annotations),
  },
  {
    reason:
      'rules: first match decides, overrides deep-merge, exclude leaves a pool alone, the plan selector limits pools',
    req: () =>
      request(
        planXr({
          nodePoolSelector: { matchExpressions: [{ key: 'managed', operator: 'NotIn', values: ['no'] }] },
          defaults: { maintenanceWindows: [TOKYO_WED_SAT], surge: { readyTimeout: '20m', cooldownAfter: '5m' } },
          rules: [
            { name: 'skip-gpu', nodePoolSelector: { matchLabels: { tier: 'gpu' } }, exclude: true },
            { name: 'api', nodePools: ['api'], overrides: { minRotationChances: 3, surge: { readyTimeout: '10m' } } },
          ],
        }),
        [
          nodePool('api'),
          nodePool('gpu', { labels: { tier: 'gpu' } }),
          nodePool('web'),
          nodePool('legacy', { labels: { managed: 'no' } }),
        ],
      ),
    check: (rsp) => {
      expect(Object.keys(rsp.desired?.resources ?? {})).toEqual([
        'earlier-bucket',
        'rotationpolicy-api',
        'rotationpolicy-web',
      ]);
      expect((policyOf(rsp, 'rotationpolicy-api').spec as JsonObject).surge).toMatchObject({
        readyTimeout: '10m',
        cooldownAfter: '5m',
      });
      expect((policyOf(rsp, 'rotationpolicy-api').spec as JsonObject).minRotationChances).toBe(3);
      expect(annotationsOf(rsp, 'rotationpolicy-api')['noderotation.io/rule']).toBe('api');
      const bound = (key: string): string | undefined => annotationsOf(rsp, key)['noderotation.io/rotation-bound'];
      expect(bound('rotationpolicy-api')).toBe('1h12m0s'); // 10m + 1h + 2m
      expect(bound('rotationpolicy-web')).toBe('1h22m0s'); // 20m + 1h + 2m
      expect(annotationsOf(rsp, 'rotationpolicy-web')['noderotation.io/rule']).toBeUndefined();
      expect(planValid(rsp)).toEqual({ status: 'CONDITION_TRUE', reason: 'Accepted' });
    },
  },
  {
    reason:
      'a warning (K = 1) is a WARNING result with its reason; the policy is still composed and the summary lists it',
    req: () =>
      request(planXr({ defaults: { maintenanceWindows: [TOKYO_WED_SAT], minRotationChances: 1 } }), [
        nodePool('general'),
      ]),
    check: (rsp) => {
      expect(results(rsp)).toEqual([
        {
          severity: 'WARNING',
          reason: 'SingleRotationChance',
          message: expect.stringMatching(
            /^NodePool general \(RotationPolicy platform-general\): spec\.defaults\.minRotationChances: /,
          ) as unknown,
        },
      ]);
      expect(annotationsOf(rsp, 'rotationpolicy-general')['noderotation.io/guaranteed-chances']).toBe('1');
      expect(((rsp.desired?.composite?.resource as JsonObject).status as JsonObject).nodePools).toMatchObject([
        { name: 'general', warnings: ['SingleRotationChance'] },
      ]);
      expect(planValid(rsp)).toEqual({ status: 'CONDITION_TRUE', reason: 'Accepted' });
    },
  },
  {
    reason:
      'a rule naming a NodePool that does not exist → WARNING UnknownNodePool at the name, with the near name; ' +
      'the plan is still composed',
    req: () =>
      request(
        planXr({
          defaults: { maintenanceWindows: [TOKYO_WED_SAT] },
          rules: [{ name: 'batch', nodePools: ['generall'], overrides: { minRotationChances: 3 } }],
        }),
        [nodePool('general')],
      ),
    check: (rsp) => {
      expect(results(rsp)).toEqual([
        {
          severity: 'WARNING',
          reason: 'UnknownNodePool',
          message:
            'MaintenancePlan platform: spec.rules[0].nodePools[0]: rule batch names NodePool "generall", which is ' +
            'not among the 1 NodePools given, so it matches nothing. Did you mean "general"? Fix the name or ' +
            'remove it.',
        },
      ]);
      expect(policyOf(rsp, 'rotationpolicy-general')).toBeDefined();
      expect(planValid(rsp)).toEqual({ status: 'CONDITION_TRUE', reason: 'Accepted' });
    },
  },
  {
    reason:
      "a rule's selector that matches no NodePool → WARNING SelectorMatchesNothing at the label, with the near " +
      'value; the plan is still composed',
    req: () =>
      request(
        planXr({
          defaults: { maintenanceWindows: [TOKYO_WED_SAT] },
          rules: [{ name: 'api', nodePoolSelector: { matchLabels: { team: 'paymnets' } }, overrides: {} }],
        }),
        [nodePool('general', { labels: { team: 'payments' } })],
      ),
    check: (rsp) => {
      expect(results(rsp)).toEqual([
        {
          severity: 'WARNING',
          reason: 'SelectorMatchesNothing',
          message:
            "MaintenancePlan platform: spec.rules[0].nodePoolSelector.matchLabels.team: rule api's " +
            'spec.rules[0].nodePoolSelector matches none of the 1 NodePool given: no NodePool has team=paymnets ' +
            '(did you mean "payments"?), so its overrides reach no NodePool. Set ' +
            'spec.rules[0].nodePoolSelector.matchLabels.team to payments, or fix the selector otherwise.',
        },
      ]);
      expect(policyOf(rsp, 'rotationpolicy-general')).toBeDefined();
      expect(planValid(rsp)).toEqual({ status: 'CONDITION_TRUE', reason: 'Accepted' });
    },
  },
  {
    reason: "a warning caused by a rule's override names that override (spec.rules[i].overrides...), not the defaults",
    req: () =>
      request(
        planXr({
          defaults: { maintenanceWindows: [TOKYO_WED_SAT], surge: { retryBackoff: '30m' } },
          rules: [{ name: 'fast-retry', nodePools: ['general'], overrides: { surge: { retryBackoff: '5m' } } }],
        }),
        [nodePool('general')],
      ),
    check: (rsp) => {
      expect(results(rsp)).toEqual([
        {
          severity: 'WARNING',
          reason: 'RetryFasterThanAttempt',
          message: expect.stringMatching(
            new RegExp(
              '^NodePool general \\(RotationPolicy platform-general, rule fast-retry\\): ' +
                'spec\\.rules\\[0\\]\\.overrides\\.surge\\.retryBackoff: .* Set it in MaintenancePlan ' +
                'platform at spec\\.rules\\[0\\]\\.overrides\\.surge\\.retryBackoff\\.$',
            ),
          ) as unknown,
        },
      ]);
      expect(Object.keys(rsp.desired?.resources ?? {})).toContain('rotationpolicy-general');
    },
  },
  {
    reason:
      'expireAfter: Never derives no deadline: the age threshold and guaranteed chances are left out, not invented',
    req: () => request(WORKED_EXAMPLE.xr, [nodePool('general', { expireAfter: 'Never' })]),
    check: (rsp) => {
      const a = annotationsOf(rsp, 'rotationpolicy-general');
      expect(a['noderotation.io/age-threshold']).toBeUndefined();
      expect(a['noderotation.io/guaranteed-chances']).toBeUndefined();
      expect(a['noderotation.io/window-period']).toBe('96h0m0s');
    },
  },
  {
    reason:
      'a fatal finding (weekly window, expireAfter 14d) is FATAL naming NodePool, plan field and fix; nothing composed',
    req: () =>
      request(
        planXr({
          defaults: { maintenanceWindows: [TOKYO_WED_SAT] },
          rules: [
            {
              name: 'weekly',
              nodePools: ['general'],
              overrides: { maintenanceWindows: [{ timezone: 'UTC', days: ['Sun'], start: '01:00', end: '03:00' }] },
            },
          ],
        }),
        [nodePool('general', { expireAfter: '336h' }), nodePool('other')],
      ),
    check: (rsp, req) => {
      expectRejected(req, rsp, 'NonPositiveAgeThreshold');
      const fatal = results(rsp)[0];
      // ageThreshold is auto, set nowhere: the field is the NodePool's expireAfter (explain's), not
      // spec.defaults.ageThreshold; no expireAfter within the 21-day lifetime helps, so the way out is window days.
      expect(fatal?.message).toMatch(
        new RegExp(
          '^NodePool general \\(RotationPolicy platform-general, rule weekly\\): NodePool field ' +
            'spec\\.template\\.spec\\.expireAfter: expireAfter 336h is not longer than the lead time .* Instead, ' +
            'add window days so that no window opens more than 111h34m after the one before',
        ),
      );
      expect(results(rsp)).toHaveLength(1); // NodePool other is fine; one pool's fatal still blocks the whole plan
    },
  },
  {
    reason: 'missing spec → FATAL InvalidPlan, desired untouched',
    req: () =>
      request({ apiVersion: 'noderotation.io/v1alpha1', kind: 'MaintenancePlan', metadata: { name: 'p' } }, [
        nodePool('a'),
      ]),
    check: (rsp, req) => {
      expectRejected(req, rsp, 'InvalidPlan');
      expect(results(rsp)[0]?.message).toContain('MaintenancePlan p: spec: found nothing');
    },
  },
  {
    reason: 'no observed composite at all → FATAL InvalidPlan, desired untouched',
    req: () => request(undefined, [nodePool('a')]),
    check: (rsp, req) => expectRejected(req, rsp, 'InvalidPlan'),
  },
  {
    reason: 'wrong types (minRotationChances "two", days a string) → FATAL per field with found and allowed',
    req: () =>
      request(
        planXr({ defaults: { maintenanceWindows: [{ ...TOKYO_WED_SAT, days: 'Wed' }], minRotationChances: 'two' } }),
        [nodePool('a')],
      ),
    check: (rsp, req) => {
      expectRejected(req, rsp, 'InvalidPlan');
      const messages = results(rsp)
        .map((r) => r.message)
        .join('\n');
      expect(messages).toContain(
        'MaintenancePlan platform: spec.defaults.minRotationChances: found "two"; allowed: a value of type integer',
      );
      expect(messages).toContain('spec.defaults.maintenanceWindows[0].days: found "Wed"');
    },
  },
  {
    reason: 'an unknown time zone → FATAL InvalidTimezone naming the field and what is allowed',
    req: () =>
      request(planXr({ defaults: { maintenanceWindows: [{ ...TOKYO_WED_SAT, timezone: 'Mars/Olympus_Mons' }] } }), [
        nodePool('a'),
      ]),
    check: (rsp, req) => {
      expectRejected(req, rsp, 'InvalidTimezone');
      expect(results(rsp)[0]?.message).toContain(
        'spec.defaults.maintenanceWindows[0].timezone: found "Mars/Olympus_Mons"; allowed: an IANA time zone name',
      );
    },
  },
  {
    reason:
      'merged settings that are no RotationPolicy (no windows for one pool) → FATAL InvalidPolicy naming pool and path',
    req: () =>
      request(
        planXr({
          defaults: { minRotationChances: 2 },
          rules: [{ name: 'a-only', nodePools: ['a'], overrides: { maintenanceWindows: [TOKYO_WED_SAT] } }],
        }),
        [nodePool('a'), nodePool('b')],
      ),
    check: (rsp, req) => {
      expectRejected(req, rsp, 'InvalidPolicy');
      expect(results(rsp)[0]?.message).toMatch(
        /^MaintenancePlan platform, NodePool b: spec\.defaults\.maintenanceWindows: found nothing/,
      );
    },
  },
  {
    reason:
      'a plan that governs no NodePool → FATAL NoGovernedNodePools (also when Crossplane found no NodePools at all)',
    req: () => request(planXr({ defaults: { maintenanceWindows: [TOKYO_WED_SAT] } }), []),
    check: (rsp, req) => {
      expectRejected(req, rsp, 'NoGovernedNodePools');
      expect(results(rsp)[0]?.message).toContain(
        'MaintenancePlan platform: spec.nodePoolSelector: the plan governs none of the 0 NodePools given',
      );
    },
  },
  {
    reason: 'a malformed NodePool (expireAfter "soon") → FATAL InvalidNodePool, never a crash',
    req: () => request(WORKED_EXAMPLE.xr, [nodePool('general', { expireAfter: 'soon' })]),
    check: (rsp, req) => {
      expectRejected(req, rsp, 'InvalidNodePool');
      expect(results(rsp)[0]?.message).toContain(
        'NodePool general (required resource nodepools): spec.template.spec.expireAfter: found "soon"',
      );
    },
  },
  {
    reason:
      'a NodePool field the derivation cannot read (spec.limits.cpu "lots") → FATAL InvalidNodePool, not a failed call',
    req: () =>
      request(WORKED_EXAMPLE.xr, [
        { ...nodePool('general'), spec: { ...(nodePool('general').spec as JsonObject), limits: { cpu: 'lots' } } },
      ]),
    check: (rsp, req) => {
      expectRejected(req, rsp, 'InvalidNodePool');
      expect(results(rsp)[0]?.message).toContain(
        'NodePool general (required resource nodepools) cannot be analysed: "lots" is not a Kubernetes quantity',
      );
    },
  },
  {
    reason: 'a required resource that is not a NodePool or has no template → FATAL InvalidNodePool',
    req: () =>
      request(WORKED_EXAMPLE.xr, [
        { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'x' } },
        { apiVersion: 'karpenter.sh/v1', kind: 'NodePool', metadata: { name: 'y' }, spec: 'none' },
      ]),
    check: (rsp, req) => {
      expectRejected(req, rsp, 'InvalidNodePool');
      expect(results(rsp).map((r) => r.message.split(':')[0])).toEqual([
        'NodePool x (required resource nodepools)',
        'NodePool y (required resource nodepools)',
      ]);
    },
  },
  {
    reason: 'a bad step input (unknown field, calendarStart not a timestamp) → FATAL InvalidInput',
    req: () =>
      request(WORKED_EXAMPLE.xr, WORKED_EXAMPLE.pools, {
        input: {
          apiVersion: 'noderotation.fn.crossplane.io/v1alpha1',
          kind: 'Input',
          calendarStart: 'tomorrow',
          calendarstart: '2027-01-01T00:00:00Z',
        },
      }),
    check: (rsp, req) => {
      expectRejected(req, rsp, 'InvalidInput');
      const messages = results(rsp).map((r) => r.message);
      expect(messages).toContain(
        'Composition step input: input.calendarStart: found "tomorrow"; allowed: an RFC 3339 timestamp such as ' +
          "2027-01-04T00:00:00Z. Fix the input of this function's step in the Composition.",
      );
      expect(messages.join('\n')).toContain(
        'input.calendarstart: found an unknown field (did you mean "calendarStart"?); allowed: one of calendarStart',
      );
    },
  },
  {
    reason: 'a valid step input with calendarStart is accepted',
    req: () =>
      request(WORKED_EXAMPLE.xr, WORKED_EXAMPLE.pools, {
        input: {
          apiVersion: 'noderotation.fn.crossplane.io/v1alpha1',
          kind: 'Input',
          calendarStart: '2030-06-01T00:00:00Z',
        },
      }),
    check: (rsp) => expect(annotationsOf(rsp, 'rotationpolicy-general')).toEqual(WORKED_EXAMPLE.annotations),
  },
  {
    reason: 'a NodePool name too long for `rotationpolicy-<name>` as a label value gets a stable hashed key',
    req: () => request(WORKED_EXAMPLE.xr, [nodePool(`pool-${'x'.repeat(80)}`)]),
    check: (rsp) => {
      const keys = Object.keys(rsp.desired?.resources ?? {}).filter((k) => k !== 'earlier-bucket');
      expect(keys).toHaveLength(1);
      expect(keys[0]).toMatch(/^rotationpolicy-pool-x+-[0-9a-f]{10}$/);
      expect(keys[0]?.length).toBeLessThanOrEqual(63);
    },
  },
];

describe('RunFunction over loopback gRPC', () => {
  it.each(cases)('$reason', async ({ req, check }) => {
    const r = req();
    check(await client.runFunction(r), r);
  });

  it('the requirements loop settles on the second call: same requirements, then the composed policies', async () => {
    // Crossplane's loop: call, fetch what requirements ask for, call again until two answers agree.
    const first = await client.runFunction(planRequest({ composite: WORKED_EXAMPLE.xr, nodePools: null }));
    const selector = first.requirements?.resources[NODEPOOLS];
    expect(selector?.apiVersion).toBe('karpenter.sh/v1');
    const second = await client.runFunction(
      planRequest({ composite: WORKED_EXAMPLE.xr, nodePools: WORKED_EXAMPLE.pools }),
    );
    const requirementBytes = (r: RunFunctionResponse): Buffer =>
      Buffer.from(Requirements.encode(r.requirements ?? Requirements.create()).finish());
    expect(second.requirements).toEqual(first.requirements);
    expect(requirementBytes(second)).toEqual(requirementBytes(first));
    expect(Object.keys(second.desired?.resources ?? {})).toEqual(['rotationpolicy-general']);
    // Even a failing call keeps asking for the same thing.
    const failing = await client.runFunction(planRequest({ composite: planXr({}), nodePools: [] }));
    expect(failing.requirements).toEqual(first.requirements);
  });

  it('is deterministic: identical requests give byte-identical responses, whatever the NodePools order', async () => {
    const pools = [nodePool('c', { labels: { a: '1' } }), nodePool('a'), nodePool('b', { tgp: null })];
    const req = request(planXr({ defaults: { maintenanceWindows: [TOKYO_WED_SAT], minRotationChances: 1 } }), pools);
    const bytes = async (r: RunFunctionRequest): Promise<Buffer> =>
      Buffer.from(RunFunctionResponse.encode(await client.runFunction(r)).finish());
    const one = await bytes(req);
    expect(await bytes(req)).toEqual(one);
    const shuffled = request(
      planXr({ defaults: { maintenanceWindows: [TOKYO_WED_SAT], minRotationChances: 1 } }),
      [...pools].reverse(),
    );
    expect(await bytes(shuffled)).toEqual(one);
  });

  it('Struct ↔ JSON is exact: null, integers, fractions, negatives, nested lists, empty containers', async () => {
    const tricky: JsonObject = {
      nothing: null,
      int: 9007199254740991,
      frac: 0.1,
      neg: -2.5e-7,
      zero: 0,
      text: 'ü "quoted" \n',
      yes: true,
      nested: [[1, [2, [3, null]]], [], {}, [{ a: [] }]],
      empty: {},
    };
    // The function passes the context through; what comes back must be the same JSON.
    const rsp = await client.runFunction(request(WORKED_EXAMPLE.xr, WORKED_EXAMPLE.pools, { context: tricky }));
    expect(rsp.context).toEqual(tricky);
    expect(JSON.stringify(rsp.context)).toBe(JSON.stringify(tricky));
  });

  it('serves grpc.health.v1 for the server and the function service, NOT_FOUND for anything else', async () => {
    expect((await client.check('')).status).toBe(Serving.SERVING);
    expect((await client.check('apiextensions.fn.proto.v1.FunctionRunnerService')).status).toBe(Serving.SERVING);
    await expect(client.check('nope')).rejects.toMatchObject({ code: status.NOT_FOUND });
  });

  it('counts runs by result and times them on /metrics (private registry)', async () => {
    await client.runFunction(request(planXr({}), [nodePool('a')])); // fatal
    const text = await (await fetch(`http://127.0.0.1:${server.metricsPort}/metrics`)).text();
    const count = (result: string): number =>
      Number(new RegExp(`^function_noderotation_runs_total\\{result="${result}"\\} (\\d+)$`, 'm').exec(text)?.[1]);
    expect(count('fatal')).toBeGreaterThanOrEqual(1);
    expect(count('success')).toBeGreaterThanOrEqual(1);
    expect(count('warning')).toBeGreaterThanOrEqual(1);
    expect(count('requirements')).toBeGreaterThanOrEqual(1);
    expect(count('error')).toBe(0);
    expect(text).toMatch(/^function_noderotation_run_duration_seconds_bucket\{le="0\.005",result="success"\} \d+$/m);
    expect((await fetch(`http://127.0.0.1:${server.metricsPort}/other`)).status).toBe(404);
  });
});
