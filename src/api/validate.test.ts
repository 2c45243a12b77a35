import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { checks } from './checks.js';
import { formatInputError, readDocuments } from './documents.js';
import { allSchemas } from './registry.js';
import { validateAgainst } from './validate.js';
import { RRULE_PARTS, RRULE_SUBSET_PATTERN } from '../schedule/rrule-subset.js';
import { rotationPolicy } from '../../test/support/fixtures.js';

const ROOT = join(import.meta.dirname, '..', '..');
const policy = (spec: Record<string, unknown>) => rotationPolicy('p', spec);
const WIN = { timezone: 'UTC', days: ['Sat'], start: '02:00', end: '06:00' };

describe('schema validation errors name the field, what was found and what is allowed', () => {
  it.each([
    {
      reason: 'a time that is not HH:MM',
      spec: { nodePools: ['a'], maintenanceWindows: [{ ...WIN, start: '25:00' }] },
      path: 'spec.maintenanceWindows[0].start',
      found: '"25:00"',
      allowed: /HH:MM/,
    },
    {
      reason: 'an unknown day',
      spec: { nodePools: ['a'], maintenanceWindows: [{ ...WIN, days: ['Sat', 'Funday'] }] },
      path: 'spec.maintenanceWindows[0].days[1]',
      found: '"Funday"',
      allowed: /"Mon"/,
    },
    {
      reason: 'an unknown time zone (InvalidTimezone)',
      spec: { nodePools: ['a'], maintenanceWindows: [{ ...WIN, timezone: 'Asia/Atlantis' }] },
      path: 'spec.maintenanceWindows[0].timezone',
      found: '"Asia/Atlantis"',
      allowed: /IANA/,
    },
    {
      reason: 'both targets set (exactly one of)',
      spec: { nodePools: ['a'], nodePoolSelector: {}, maintenanceWindows: [WIN] },
      path: 'spec',
      found: /nodePools/,
      allowed: /exactly one/,
    },
    {
      reason: 'neither target set',
      spec: { maintenanceWindows: [WIN] },
      path: 'spec',
      found: /maintenanceWindows/,
      allowed: /exactly one/,
    },
    {
      reason: 'a zero readyTimeout',
      spec: { nodePools: ['a'], maintenanceWindows: [WIN], surge: { readyTimeout: '0m' } },
      path: 'spec.surge.readyTimeout',
      found: '"0m"',
      allowed: /from 1s to 168h/,
    },
    {
      reason: 'a day-unit duration',
      spec: { nodePools: ['a'], maintenanceWindows: [WIN], surge: { cooldownAfter: '1d' } },
      path: 'spec.surge.cooldownAfter',
      found: '"1d"',
      allowed: /Go duration/,
    },
    {
      reason: 'K below 1',
      spec: { nodePools: ['a'], maintenanceWindows: [WIN], minRotationChances: 0 },
      path: 'spec.minRotationChances',
      found: '0',
      allowed: /from 1 to 100/,
    },
    {
      reason: 'maxUnavailable other than 1',
      spec: { nodePools: ['a'], maintenanceWindows: [WIN], surge: { maxUnavailable: 2 } },
      path: 'spec.surge.maxUnavailable',
      found: '2',
      allowed: /1/,
    },
    {
      reason: 'a typo in a field name',
      spec: { nodePools: ['a'], maintenanceWindow: [WIN] },
      path: 'spec.maintenanceWindow',
      found: 'an unknown field (did you mean "maintenanceWindows"?)',
      allowed: /maintenanceWindows/,
    },
    {
      reason: 'In without values',
      spec: { nodePoolSelector: { matchExpressions: [{ key: 'a', operator: 'In' }] }, maintenanceWindows: [WIN] },
      path: 'spec.nodePoolSelector.matchExpressions[0]',
      found: /In/,
      allowed: /at least one value/,
    },
    {
      reason: 'a freeze that ends before it starts',
      spec: {
        nodePools: ['a'],
        maintenanceWindows: [WIN],
        freezes: [{ start: '2027-01-02T00:00:00Z', end: '2027-01-01T00:00:00Z' }],
      },
      path: 'spec.freezes[0]',
      found: /start/,
      allowed: /after start/,
    },
    {
      reason: 'prePull enabled (reserved)',
      spec: { nodePools: ['a'], maintenanceWindows: [WIN], prePull: { enabled: true } },
      path: 'spec.prePull',
      found: /true/,
      allowed: /reserved/,
    },
  ])('$reason', ({ spec, path, found, allowed }) => {
    const errors = validateAgainst('rotationPolicy', policy(spec));
    const e = errors.find((x) => x.path === path);
    expect(e, JSON.stringify(errors)).toBeDefined();
    if (typeof found === 'string') expect(e?.found).toBe(found);
    else expect(e?.found).toMatch(found);
    expect(e?.allowed).toMatch(allowed);
  });

  const plan = (spec: Record<string, unknown>) => ({
    apiVersion: 'noderotation.io/v1alpha1',
    kind: 'MaintenancePlan',
    metadata: { name: 'x' },
    spec,
  });
  it.each([
    {
      reason: 'nodePool for nodePools: one error, not also "set exactly one of" with a dump of the spec',
      schema: 'rotationPolicy' as const,
      doc: policy({ nodePool: ['a'], maintenanceWindows: [WIN] }),
      errors: [['spec.nodePool', 'an unknown field (did you mean "nodePools"?)']],
    },
    {
      reason: 'a misspelt required field: not also "this field is required"',
      schema: 'rotationPolicy' as const,
      doc: policy({ nodePools: ['a'], maintenanceWindow: [WIN] }),
      errors: [['spec.maintenanceWindow', 'an unknown field (did you mean "maintenanceWindows"?)']],
    },
    {
      reason: "the same in a plan's rule",
      schema: 'maintenancePlan' as const,
      doc: plan({ defaults: { maintenanceWindows: [WIN] }, rules: [{ name: 'r', nodePool: ['a'] }] }),
      errors: [['spec.rules[0].nodePool', 'an unknown field (did you mean "nodePools"?)']],
    },
    {
      reason: 'the field meant is also there: the typo is not why the object fails, so both are reported',
      schema: 'rotationPolicy' as const,
      doc: policy({ nodePools: ['a'], nodePool: ['b'], nodePoolSelector: {}, maintenanceWindows: [WIN] }),
      errors: [
        ['spec', expect.stringContaining('"nodePool":["b"]')],
        ['spec.nodePool', 'an unknown field (did you mean "nodePools"?)'],
      ],
    },
    {
      reason: 'no field near: nothing guessed, and nothing else hidden',
      schema: 'rotationPolicy' as const,
      doc: policy({ targets: ['a'], maintenanceWindows: [WIN] }),
      errors: [
        ['spec', expect.stringContaining('"targets"')],
        ['spec.targets', 'an unknown field'],
      ],
    },
  ])('an unknown field: $reason', ({ schema, doc, errors }) => {
    expect(validateAgainst(schema, doc).map((e) => [e.path, e.found])).toEqual(errors);
  });

  const window = (w: Record<string, unknown>) => policy({ nodePools: ['a'], maintenanceWindows: [{ ...WIN, ...w }] });
  it.each([
    { reason: 'a day in lower case', doc: window({ days: ['wed'] }), path: 'days[0]', hint: '(did you mean "Wed"?)' },
    { reason: 'a day written out', doc: window({ days: ['Wednesday'] }), path: 'days[0]', hint: '"Wed"?' },
    { reason: 'a day one letter off: the nearest', doc: window({ days: ['Tus'] }), path: 'days[0]', hint: '"Tue"?' },
    {
      reason: 'two letters: each day one edit away',
      doc: window({ days: ['Tu'] }),
      path: 'days[0]',
      hint: '"Tue" or "Thu"?',
    },
    { reason: 'nothing near: no guess', doc: window({ days: ['Funday'] }), path: 'days[0]', hint: null },
    {
      reason: 'an enum value with two letters swapped',
      doc: {
        ...policy({ nodePools: ['a'], maintenanceWindows: [WIN] }),
        status: { nodePools: [{ name: 'a', activeRotation: { nodeClaim: 'c', mode: 'sruge', phase: 'pending' } }] },
      },
      path: 'activeRotation.mode',
      hint: '(did you mean "surge"?)',
    },
    {
      reason: 'a typo in a zone name',
      doc: window({ timezone: 'Europe/Berln' }),
      path: 'timezone',
      hint: '(did you mean "Europe/Berlin"?)',
    },
  ])('did you mean the near value: $reason', ({ doc, path, hint }) => {
    const errors = validateAgainst('rotationPolicy', doc);
    const e = errors.find((x) => x.path.endsWith(path));
    expect(e, JSON.stringify(errors)).toBeDefined();
    if (hint === null) expect(e?.allowed).not.toContain('did you mean');
    else expect(e?.allowed).toContain(hint);
  });

  it.each([
    { reason: 'JST is an ICU abbreviation, not a tz database name', timezone: 'JST' },
    { reason: 'PST is an ICU abbreviation', timezone: 'PST' },
    { reason: 'IST is ambiguous (India, Israel, Ireland)', timezone: 'IST' },
    { reason: 'BST is read by ICU as +06:00', timezone: 'BST' },
    { reason: 'CST is ambiguous', timezone: 'CST' },
    { reason: 'names are case-sensitive', timezone: 'asia/tokyo' },
    { reason: "Local is the controller's own zone", timezone: 'Local' },
  ])('timezone refused with InvalidTimezone: $reason', ({ timezone }) => {
    const errors = validateAgainst(
      'rotationPolicy',
      policy({ nodePools: ['a'], maintenanceWindows: [{ ...WIN, timezone }] }),
    );
    expect(errors).toEqual([
      expect.objectContaining({
        path: 'spec.maintenanceWindows[0].timezone',
        found: JSON.stringify(timezone),
        reason: 'InvalidTimezone',
      }),
    ]);
  });

  it.each([
    { reason: 'EST5EDT is in the tz database', timezone: 'EST5EDT' },
    { reason: 'links are names too', timezone: 'US/Pacific' },
    { reason: 'UTC', timezone: 'UTC' },
  ])('timezone accepted: $reason', ({ timezone }) => {
    expect(
      validateAgainst('rotationPolicy', policy({ nodePools: ['a'], maintenanceWindows: [{ ...WIN, timezone }] })),
    ).toEqual([]);
  });

  const surge = (s: Record<string, unknown>) => policy({ nodePools: ['a'], maintenanceWindows: [WIN], surge: s });
  it.each([
    {
      reason: '1ns rounds to 0: below what the controller acts on',
      doc: surge({ readyTimeout: '1ns' }),
      path: 'spec.surge.readyTimeout',
      allowed: /from 1s to 168h/,
    },
    {
      reason: '999ms is still below 1s',
      doc: surge({ retryBackoff: '999ms' }),
      path: 'spec.surge.retryBackoff',
      allowed: /from 1s/,
    },
    {
      reason: 'a duration beyond the bound',
      doc: surge({ failurePause: '169h' }),
      path: 'spec.surge.failurePause',
      allowed: /to 168h/,
    },
    {
      reason: 'a duration beyond Go (no Infinity)',
      doc: surge({ drainEstimate: '99999999999999999999h' }),
      path: 'spec.surge.drainEstimate',
      allowed: /to 168h/,
    },
    {
      reason: 'cooldownAfter between 0 and 1s',
      doc: surge({ cooldownAfter: '500ms' }),
      path: 'spec.surge.cooldownAfter',
      allowed: /^0, or/,
    },
    {
      reason: 'a negative duration',
      doc: surge({ readyTimeout: '-15m' }),
      path: 'spec.surge.readyTimeout',
      allowed: /Go duration/,
    },
    {
      reason: 'ageThreshold beyond 10 years',
      doc: policy({ nodePools: ['a'], maintenanceWindows: [WIN], ageThreshold: '87601h' }),
      path: 'spec.ageThreshold',
      allowed: /87600h/,
    },
    {
      reason: 'ageThreshold 0',
      doc: policy({ nodePools: ['a'], maintenanceWindows: [WIN], ageThreshold: '0' }),
      path: 'spec.ageThreshold',
      allowed: /from 1s/,
    },
    {
      reason: 'K of a billion',
      doc: policy({ nodePools: ['a'], maintenanceWindows: [WIN], minRotationChances: 1e9 }),
      path: 'spec.minRotationChances',
      allowed: /from 1 to 100/,
    },
  ])('durations and numbers out of range: $reason', ({ doc, path, allowed }) => {
    const errors = validateAgainst('rotationPolicy', doc);
    expect(errors.find((e) => e.path === path)?.allowed, JSON.stringify(errors)).toMatch(allowed);
  });

  it.each([
    { reason: 'fractions, as Go reads them', s: { readyTimeout: '1.5h', retryBackoff: '.5h' } },
    { reason: 'cooldownAfter may be 0 in either spelling', s: { cooldownAfter: '0' } },
    { reason: 'cooldownAfter 0s', s: { cooldownAfter: '0s' } },
    { reason: 'the bounds themselves', s: { readyTimeout: '1s', failurePause: '168h', cooldownAfter: '1s' } },
    { reason: 'µ and μ', s: { readyTimeout: '1000000000µs', retryBackoff: '1000000000μs' } },
  ])('durations accepted: $reason', ({ s: settings }) => {
    expect(validateAgainst('rotationPolicy', surge(settings))).toEqual([]);
  });

  it.each([
    { reason: 'NaN', value: NaN, found: 'NaN' },
    { reason: 'Infinity (YAML .inf, JSON 1e400)', value: Infinity, found: 'Infinity' },
    { reason: '-Infinity', value: -Infinity, found: '-Infinity' },
    { reason: 'a huge number', value: 1e300, found: '1e+300 (too large)' },
  ])('numbers JSON cannot spell are named, never "null": $reason', ({ value, found }) => {
    const errors = validateAgainst(
      'rotationPolicy',
      policy({ nodePools: ['a'], maintenanceWindows: [WIN], minRotationChances: value }),
    );
    expect(errors.find((e) => e.path === 'spec.minRotationChances')?.found).toBe(found);
  });

  it('a long value is echoed cut, with the cut marked', () => {
    const errors = validateAgainst(
      'rotationPolicy',
      policy({ nodePools: ['a'], maintenanceWindows: [{ ...WIN, timezone: 'X'.repeat(5000) }] }),
    );
    for (const e of errors) expect(e.found.length).toBeLessThanOrEqual(80);
    expect(errors[0]?.found).toMatch(/…"$/);
  });

  it('a document with thousands of mistakes gets a bounded report', () => {
    const windows = Array.from({ length: 5000 }, () => ({ ...WIN, start: 'x' }));
    const errors = validateAgainst('rotationPolicy', policy({ nodePools: ['a'], maintenanceWindows: windows }));
    expect(errors.length).toBe(51);
    expect(errors.at(-1)?.found).toMatch(/more problem/);
  });

  it('accepts a reference-style policy unchanged (drop-in compatibility)', () => {
    const ref = policy({
      nodePoolSelector: { matchLabels: { workload: 'api' } },
      ageThreshold: 'auto',
      minRotationChances: 2,
      maintenanceWindows: [{ timezone: 'Asia/Tokyo', days: ['Wed', 'Sat'], start: '02:00', end: '06:00' }],
      surge: {
        maxUnavailable: 1,
        readyTimeout: '15m',
        cooldownAfter: '10m',
        retryBackoff: '30m',
        matchNodeRequirements: { required: ['topology.kubernetes.io/zone'], preferred: [] },
        forcefulFallback: { enabled: false },
      },
      prePull: { enabled: false },
    });
    expect(validateAgainst('rotationPolicy', ref)).toEqual([]);
  });
});

describe('lists keyed by a field (x-kubernetes-list-map-keys) hold each key once, as the apiserver requires', () => {
  const plan = (rules: unknown[]) => ({
    apiVersion: 'noderotation.io/v1alpha1',
    kind: 'MaintenancePlan',
    metadata: { name: 'org' },
    spec: { defaults: { maintenanceWindows: [WIN] }, rules },
  });
  it.each([
    {
      reason: 'two rules named alike: the error names both indices',
      rules: [
        { name: 'gpu', nodePools: ['a'] },
        { name: 'web', nodePools: ['b'] },
        { name: 'gpu', nodePools: ['c'] },
      ],
      errors: [
        {
          path: 'spec.rules[2].name',
          found: '"gpu", already used by item [0]',
          allowed: 'a unique name per item (the list is keyed by it)',
        },
      ],
    },
    {
      reason: 'three alike: each later one is named',
      rules: [
        { name: 'a', nodePools: ['a'] },
        { name: 'a', nodePools: ['b'] },
        { name: 'a', nodePools: ['c'] },
      ],
      errors: [
        {
          path: 'spec.rules[1].name',
          found: '"a", already used by item [0]',
          allowed: 'a unique name per item (the list is keyed by it)',
        },
        {
          path: 'spec.rules[2].name',
          found: '"a", already used by item [0]',
          allowed: 'a unique name per item (the list is keyed by it)',
        },
      ],
    },
    {
      reason: 'distinct names are fine',
      rules: [
        { name: 'a', nodePools: ['a'] },
        { name: 'b', nodePools: ['a'] },
      ],
      errors: [],
    },
  ])('$reason', ({ rules, errors }) => {
    expect(validateAgainst('maintenancePlan', plan(rules))).toEqual(errors);
  });

  it('duplicate set items name both positions', () => {
    const errors = validateAgainst('rotationPolicy', policy({ nodePools: ['a', 'b', 'a'], maintenanceWindows: [WIN] }));
    expect(errors).toEqual([
      { path: 'spec.nodePools', found: '"a" twice (items [0] and [2])', allowed: 'no duplicate items' },
    ]);
  });
});

describe("Karpenter NodePools and NodeClaims: the fields we read, with Karpenter's own constraints", () => {
  const pool = (spec: Record<string, unknown>, metadata: Record<string, unknown> = { name: 'p' }) => ({
    apiVersion: 'karpenter.sh/v1',
    kind: 'NodePool',
    metadata,
    spec: { template: { spec: {} }, ...spec },
  });
  const tpl = (t: Record<string, unknown>) => pool({ template: { spec: t } });
  it.each([
    {
      reason: 'a limit that is not a quantity',
      doc: pool({ limits: { cpu: 'lots' } }),
      path: 'spec.limits.cpu',
      found: '"lots"',
      allowed: /Kubernetes quantity/,
    },
    {
      reason: 'a limit of Infinity (YAML .inf)',
      doc: pool({ limits: { memory: Infinity } }),
      path: 'spec.limits.memory',
      found: 'Infinity',
      allowed: /quantity/,
    },
    {
      reason: 'a limit of NaN (YAML .nan)',
      doc: pool({ limits: { cpu: NaN } }),
      path: 'spec.limits.cpu',
      found: 'NaN',
      allowed: /quantity/,
    },
    {
      reason: 'a limit that is a list',
      doc: pool({ limits: { cpu: ['1'] } }),
      path: 'spec.limits.cpu',
      found: '["1"]',
      allowed: /quantity/,
    },
    {
      reason: 'limits that are not a map',
      doc: pool({ limits: 'x' }),
      path: 'spec.limits',
      found: '"x"',
      allowed: /type object/,
    },
    {
      reason: 'labels that are a list',
      doc: pool({}, { name: 'p', labels: ['a'] }),
      path: 'metadata.labels',
      found: '["a"]',
      allowed: /type object \(a map of label names/,
    },
    {
      reason: 'a label value that is a number',
      doc: pool({}, { name: 'p', labels: { a: 1 } }),
      path: 'metadata.labels.a',
      found: '1',
      allowed: /type string/,
    },
    { reason: 'no name', doc: pool({}, {}), path: 'metadata.name', found: 'nothing', allowed: /required/ },
    {
      reason: "expireAfter with a fraction (Karpenter's CRD refuses it)",
      doc: tpl({ expireAfter: '1.5h' }),
      path: 'spec.template.spec.expireAfter',
      found: '"1.5h"',
      allowed: /336h, or Never/,
    },
    {
      reason: 'expireAfter beyond Go',
      doc: tpl({ expireAfter: '99999999999999h' }),
      path: 'spec.template.spec.expireAfter',
      found: '"99999999999999h"',
      allowed: /Never/,
    },
    {
      reason: 'terminationGracePeriod in ms',
      doc: tpl({ terminationGracePeriod: '1500ms' }),
      path: 'spec.template.spec.terminationGracePeriod',
      found: '"1500ms"',
      allowed: /1h or 90m/,
    },
    {
      reason: 'requirements not a list',
      doc: tpl({ requirements: { key: 'a' } }),
      path: 'spec.template.spec.requirements',
      found: '{"key":"a"}',
      allowed: /type array/,
    },
    {
      reason: 'a requirement without operator',
      doc: tpl({ requirements: [{ key: 'a' }] }),
      path: 'spec.template.spec.requirements[0].operator',
      found: 'nothing',
      allowed: /required/,
    },
    {
      reason: 'an unknown operator',
      doc: tpl({ requirements: [{ key: 'a', operator: 'Near' }] }),
      path: 'spec.template.spec.requirements[0].operator',
      found: '"Near"',
      allowed: /"In"/,
    },
    {
      reason: 'a template without spec',
      doc: pool({ template: {} }),
      path: 'spec.template.spec',
      found: 'nothing',
      allowed: /required/,
    },
    {
      reason: 'status.nodes negative',
      doc: { ...pool({}), status: { nodes: -1 } },
      path: 'status.nodes',
      found: '-1',
      allowed: /≥ 0/,
    },
  ])('$reason', ({ doc, path, found, allowed }) => {
    const errors = validateAgainst('nodePool', doc);
    const e = errors.find((x) => x.path === path);
    expect(e, JSON.stringify(errors)).toBeDefined();
    expect(e?.found).toBe(found);
    expect(e?.allowed).toMatch(allowed);
  });

  it('a NodeClaim with a capacity that is not a quantity', () => {
    const claim = {
      apiVersion: 'karpenter.sh/v1',
      kind: 'NodeClaim',
      metadata: { name: 'c' },
      spec: {},
      status: { capacity: { cpu: '4 cores' } },
    };
    expect(validateAgainst('nodeClaim', claim)).toEqual([
      expect.objectContaining({ path: 'status.capacity.cpu', found: '"4 cores"' }),
    ]);
  });

  it('accepts the example NodePools and other Karpenter fields it does not read', () => {
    const ok = pool({ limits: { cpu: '1000', memory: '1000Gi', nodes: 21 }, disruption: { budgets: [] }, weight: 10 });
    expect(validateAgainst('nodePool', ok)).toEqual([]);
  });
});

describe('CEL rules', () => {
  it('every x-kubernetes-validations rule in every schema has an offline check', () => {
    const names: string[] = [];
    const walk = (node: unknown): void => {
      if (Array.isArray(node)) return node.forEach(walk);
      if (typeof node !== 'object' || node === null) return;
      const rules = (node as Record<string, unknown>)['x-kubernetes-validations'];
      if (Array.isArray(rules)) for (const r of rules as Record<string, unknown>[]) names.push(String(r['x-check']));
      Object.values(node).forEach(walk);
    };
    for (const schema of allSchemas().values()) walk(schema);
    expect(names.length).toBeGreaterThan(0);
    for (const name of names) expect(Object.keys(checks)).toContain(name);
  });
});

describe('documents', () => {
  it('every example file validates', () => {
    const dir = join(ROOT, 'examples');
    const files = readdirSync(dir, { recursive: true, withFileTypes: true })
      .filter((f) => f.isFile() && /\.ya?ml$/.test(f.name))
      .map((f) => ({ name: join(f.parentPath, f.name), text: readFileSync(join(f.parentPath, f.name), 'utf8') }));
    expect(files.length).toBeGreaterThan(0);
    const docs = readDocuments(files);
    expect(docs.errors.map(formatInputError)).toEqual([]);
  });

  it('reports YAML syntax errors and wrong Karpenter fields with file and document', () => {
    const docs = readDocuments([
      { name: 'a.yaml', text: 'kind: [\n' },
      {
        name: 'b.yaml',
        text: [
          '---',
          'apiVersion: karpenter.sh/v1',
          'kind: NodePool',
          'metadata: {name: x}',
          'spec: {template: {spec: {expireAfter: 14d}}}',
          '',
        ].join('\n'),
      },
    ]);
    const lines = docs.errors.map(formatInputError);
    expect(lines[0]).toMatch(/^a\.yaml, document 1: \(document\): found YAML that does not parse/);
    expect(lines[1]).toBe(
      'b.yaml, document 1 (NodePool/x): spec.template.spec.expireAfter: found "14d"; ' +
        'allowed: a duration in s, m and h such as 336h, or Never',
    );
  });
});

describe('recurring freezes: what the patterns cannot say', () => {
  const freeze = (f: Record<string, unknown>) =>
    policy({ nodePools: ['a'], maintenanceWindows: [WIN], recurringFreezes: [{ name: 'f', timezone: 'UTC', ...f }] });
  const rrule = (r: string) => freeze({ rrule: r, start: '2026-11-27T00:00', duration: '96h' });
  it.each([
    {
      reason: 'April 31st',
      doc: freeze({ yearly: { from: '04-31', to: '05-02' } }),
      path: '.yearly.from',
      allowed: /exists in its month/,
    },
    {
      reason: 'February 30th as `to`',
      doc: freeze({ yearly: { from: '02-01', to: '02-30' } }),
      path: '.yearly.to',
      allowed: /exists in its month/,
    },
    {
      reason: 'an hourly part',
      doc: rrule('FREQ=DAILY;BYHOUR=3'),
      path: '.rrule',
      allowed: /"BYHOUR" is not a part of the subset/,
    },
    {
      reason: 'FREQ=HOURLY',
      doc: rrule('FREQ=HOURLY'),
      path: '.rrule',
      allowed: /FREQ takes DAILY, WEEKLY, MONTHLY or YEARLY/,
    },
    {
      reason: 'a weekday that is not one',
      doc: rrule('FREQ=WEEKLY;BYDAY=XX'),
      path: '.rrule',
      allowed: /BYDAY=XX: BYDAY takes weekdays/,
    },
    { reason: 'an ordinal beyond 53', doc: rrule('FREQ=YEARLY;BYDAY=54FR'), path: '.rrule', allowed: /BYDAY takes/ },
    {
      reason: 'UNTIL that is not a date',
      doc: rrule('FREQ=DAILY;UNTIL=20261301'),
      path: '.rrule',
      allowed: /UNTIL takes a date YYYYMMDD/,
    },
    {
      reason: 'COUNT 0',
      doc: rrule('FREQ=DAILY;COUNT=0'),
      path: '.rrule',
      allowed: /COUNT takes a whole number from 1/,
    },
    {
      reason: 'INTERVAL beyond 9999',
      doc: rrule('FREQ=DAILY;INTERVAL=10000'),
      path: '.rrule',
      allowed: /INTERVAL takes/,
    },
    {
      reason: 'a part twice',
      doc: rrule('FREQ=DAILY;COUNT=2;COUNT=3'),
      path: '.rrule',
      allowed: /each part at most once.*COUNT appears twice/,
    },
    {
      reason: 'COUNT and UNTIL together',
      doc: rrule('FREQ=DAILY;COUNT=2;UNTIL=20270101'),
      path: '.rrule',
      allowed: /COUNT and UNTIL cannot be used together/,
    },
    { reason: 'a part without a value', doc: rrule('FREQ=DAILY;BYMONTH='), path: '.rrule', allowed: /RRULE/ },
    {
      reason: 'BYMONTHDAY 32',
      doc: rrule('FREQ=MONTHLY;BYMONTHDAY=32'),
      path: '.rrule',
      allowed: /BYMONTHDAY takes days 1 to 31/,
    },
    { reason: 'BYSETPOS 0', doc: rrule('FREQ=MONTHLY;BYDAY=MO;BYSETPOS=0'), path: '.rrule', allowed: /BYSETPOS takes/ },
    {
      // A CEL rule: a `not: {const: 0}` in the CRD made the apiserver refuse every monthly freeze.
      reason: 'a monthly day 0',
      doc: freeze({ monthly: { from: 0, to: 3 } }),
      path: '.monthly.from',
      allowed: /0 is no day of the month: use 1 to 31, or -1/,
    },
  ])('$reason', ({ doc, path, allowed }) => {
    const errors = validateAgainst('rotationPolicy', doc).filter((e) => e.path === `spec.recurringFreezes[0]${path}`);
    expect(errors.length).toBeGreaterThan(0);
    expect(errors.map((e) => `found ${e.found}; allowed: ${e.allowed}`).join('\n')).toMatch(allowed);
  });

  it.each([
    {
      reason: 'February 29th (taken as the 28th in other years)',
      doc: freeze({ yearly: { from: '02-29', to: '03-01' } }),
    },
    { reason: 'the last days of long months', doc: freeze({ yearly: { from: '12-31', to: '01-31' } }) },
    { reason: 'the fourth Friday of November', doc: rrule('WKST=MO;FREQ=YEARLY;BYMONTH=11;BYDAY=4FR;INTERVAL=1') },
    {
      reason: 'the last weekday of the month',
      doc: rrule('FREQ=MONTHLY;BYDAY=MO,TU,WE,TH,FR;BYSETPOS=-1;UNTIL=20301231T235959Z'),
    },
    { reason: 'every other week, ten times', doc: rrule('FREQ=WEEKLY;INTERVAL=2;COUNT=10;BYDAY=+1SA') },
  ])('accepts $reason', ({ doc }) => {
    expect(validateAgainst('rotationPolicy', doc)).toEqual([]);
  });

  it("the schema's CEL rules for the RRULE are the offline checks' expressions", () => {
    const text = readFileSync(join(ROOT, 'schemas/definitions/recurring-freeze.schema.json'), 'utf8');
    const schema = JSON.parse(text) as {
      properties: { rrule: { pattern: string; 'x-kubernetes-validations': { rule: string }[] } };
    };
    // The subset is the field's pattern (OpenAPI, no CEL cost: as a CEL rule it exceeded the MaintenancePlan
    // CRD's cost budget, 128 rules × 16 freezes); the parts-once rule stays CEL.
    expect(schema.properties.rrule.pattern).toBe(RRULE_SUBSET_PATTERN);
    const [once] = schema.properties.rrule['x-kubernetes-validations'];
    for (const part of Object.keys(RRULE_PARTS)) expect(once?.rule).toContain(`'(^|;)${part}=.*;${part}='`);
    expect(checks.monthDayExists?.('02-29')).toBe(true);
    expect(checks.monthDayExists?.('11-31')).toBe(false);
  });
});
