// A generated corpus: walk every field of the RotationPolicy and MaintenancePlan schemas (nested definitions
// included), derive wrong values from what each field declares (its type, bounds, length, enum, pattern, CEL
// rule), put each into an otherwise valid document and assert that `validate` refuses it with an error at
// exactly that field, saying what it found and what is allowed. A field added to a schema joins the corpus by
// itself; the fixtures below must then set it (a test says so), and it must be bounded (a test says so too).
import { describe, expect, it } from 'vitest';
import type { JsonSchema } from '../schema-tools/deref.js';
import { MAX_ECHO } from '../util/describe.js';
import { dereferenced, schemaIds } from './registry.js';
import { validateAgainst, type SchemaName } from './validate.js';

type Key = string | number;
type Json = Record<string, unknown>;

const WINDOW = { timezone: 'Asia/Tokyo', days: ['Wed', 'Sat'], start: '02:00', end: '06:00' };
const SELECTOR = {
  matchLabels: { workload: 'api' },
  matchExpressions: [{ key: 'topology.kubernetes.io/zone', operator: 'In', values: ['a'] }],
};
/** One recurring freeze of each kind; each fixture puts a different one first, so `[0]` sets every field. */
const YEARLY = { name: 'black-friday', timezone: 'America/New_York', yearly: { from: '11-27', to: '12-01' } };
const MONTHLY = { name: 'month-end', timezone: 'Europe/Berlin', monthly: { from: -2, to: 1 }, reason: 'close' };
const RRULE = {
  name: 'cyber-week',
  timezone: 'America/New_York',
  rrule: 'FREQ=YEARLY;BYMONTH=11;BYDAY=4FR',
  start: '2026-11-27T00:00',
  duration: '96h',
};
const rotated = (first: number): Record<string, unknown>[] =>
  [YEARLY, MONTHLY, RRULE].map((_, i, all) => all[(i + first) % all.length] as Record<string, unknown>);
/** Every settings field, each set to a valid value. */
const SETTINGS = {
  maintenanceWindows: [WINDOW],
  minRotationChances: 2,
  ageThreshold: '120h',
  surge: {
    maxUnavailable: 1,
    readyTimeout: '15m',
    cooldownAfter: '10m',
    failurePause: '10m',
    retryBackoff: '30m',
    drainEstimate: '5m',
    provisioningEstimate: '5m',
    matchNodeRequirements: { required: ['topology.kubernetes.io/zone'], preferred: ['kubernetes.io/arch'] },
    forcefulFallback: { enabled: false },
    wholeNodeReservation: { enabled: false },
    placeholder: { priorityClassName: 'noderotation-placeholder', image: 'registry.k8s.io/pause:3.10' },
  },
  freezes: [{ start: '2026-12-24T00:00:00Z', end: '2027-01-04T00:00:00Z', reason: 'year-end' }],
  recurringFreezes: rotated(0),
  preFreezeRotation: { enabled: false },
  suspend: false,
  prePull: { enabled: false },
};
const withFreezesFirst = (first: number): typeof SETTINGS => ({ ...SETTINGS, recurringFreezes: rotated(first) });
const METADATA = {
  name: 'api',
  labels: { team: 'platform' },
  annotations: { note: 'x' },
  creationTimestamp: '2026-01-01T00:00:00Z',
  deletionTimestamp: '2026-01-02T00:00:00Z',
};
const CONDITION = {
  type: 'Ready',
  status: 'True',
  observedGeneration: 1,
  lastTransitionTime: '2026-01-01T00:00:00Z',
  reason: 'Accepted',
  message: 'ok',
};

interface Fixture {
  schema: SchemaName;
  doc: Json;
}

const byName: Fixture = {
  schema: 'rotationPolicy',
  doc: {
    apiVersion: 'noderotation.io/v1alpha1',
    kind: 'RotationPolicy',
    metadata: METADATA,
    spec: { nodePools: ['api'], ...SETTINGS },
    status: {
      observedGeneration: 1,
      matchedNodePools: 1,
      rotatingNodePools: 1,
      nodePools: [
        {
          name: 'general',
          windowOpen: true,
          windowClosesAt: '2026-01-07T06:00:00Z',
          windowOpensAt: '2026-01-10T02:00:00Z',
          frozenUntil: '2026-01-08T00:00:00Z',
          candidates: 0,
          activeRotation: { nodeClaim: 'general-abc12', mode: 'surge', phase: 'pending', drainStuck: false },
          waiting: 'the placeholder is not running yet',
          lastRotationAt: '2026-01-01T03:00:00Z',
          lastFailureAt: '2026-01-02T03:00:00Z',
          figures: {
            windowPeriod: '96h0m0s',
            rotationBound: '1h17m0s',
            leadTime: '193h17m0s',
            ageThreshold: '142h43m0s',
            guaranteedChances: 2,
            expectedRotation: '15m0s',
            capacityPerOccurrence: 10,
          },
          forecast: {
            nextRotations: [
              { nodeClaim: 'general-def34', window: '2026-01-10T02:00:00Z', dueBy: '2026-01-12T00:00:00Z' },
            ],
            claimsAtRisk: 1,
            atRisk: ['general-ghi56'],
          },
        },
      ],
      conditions: [CONDITION],
    },
  },
};
const bySelector: Fixture = {
  schema: 'rotationPolicy',
  doc: { ...byName.doc, spec: { nodePoolSelector: SELECTOR, ...withFreezesFirst(1) } },
};
const byNameRrule: Fixture = {
  schema: 'rotationPolicy',
  doc: { ...byName.doc, spec: { nodePools: ['api'], ...withFreezesFirst(2) } },
};
const plan = (rule: Json, defaults: Json = SETTINGS): Fixture => ({
  schema: 'maintenancePlan',
  doc: {
    apiVersion: 'noderotation.io/v1alpha1',
    kind: 'MaintenancePlan',
    metadata: METADATA,
    spec: { nodePoolSelector: SELECTOR, defaults, rules: [rule] },
    status: {
      observedGeneration: 1,
      nodePools: [
        {
          name: 'api',
          policy: 'org-api',
          rule: 'web',
          windowPeriod: '96h0m0s',
          ageThreshold: '142h43m0s',
          leadTime: '193h17m0s',
          guaranteedChances: 2,
          capacityPerOccurrence: 10,
          warnings: ['w'],
        },
      ],
      conditions: [CONDITION],
    },
  },
});
const planByName = plan({ name: 'web', nodePools: ['api'], exclude: false, overrides: SETTINGS });
const planBySelector = plan({ name: 'web', nodePoolSelector: SELECTOR }, withFreezesFirst(1));
const planMonthly = plan({ name: 'web', nodePools: ['api'], overrides: withFreezesFirst(1) }, withFreezesFirst(2));
const planRrule = plan({ name: 'web', nodePools: ['api'], overrides: withFreezesFirst(2) });

const FIXTURES: Record<SchemaName & ('rotationPolicy' | 'maintenancePlan'), Fixture[]> = {
  rotationPolicy: [byName, bySelector, byNameRrule],
  maintenancePlan: [planByName, planBySelector, planMonthly, planRrule],
};

interface Field {
  keys: Key[];
  schema: JsonSchema;
}

/** Every node of a dereferenced schema with its path: properties, list items ([0]) and map values (.k). */
function fields(schema: JsonSchema, keys: Key[] = []): Field[] {
  const out: Field[] = keys.length > 0 ? [{ keys, schema }] : [];
  for (const [name, sub] of Object.entries((schema.properties ?? {}) as Record<string, JsonSchema>))
    out.push(...fields(sub, [...keys, name]));
  if (typeof schema.items === 'object' && schema.items !== null)
    out.push(...fields(schema.items as JsonSchema, [...keys, 0]));
  if (typeof schema.additionalProperties === 'object' && schema.additionalProperties !== null)
    out.push(...fields(schema.additionalProperties as JsonSchema, [...keys, firstKey(keys)]));
  return out;
}

/** The map key the fixtures use under a map-valued field. */
function firstKey(keys: Key[]): string {
  const last = keys[keys.length - 1];
  return last === 'matchLabels' ? 'workload' : last === 'labels' ? 'team' : 'note';
}

function get(doc: unknown, keys: Key[]): unknown {
  let node = doc;
  for (const k of keys) {
    if (typeof node !== 'object' || node === null) return undefined;
    node = (node as Record<Key, unknown>)[k];
  }
  return node;
}

function withValue(doc: Json, keys: Key[], value: unknown): Json {
  const copy = structuredClone(doc);
  let node = copy as Record<Key, unknown>;
  for (const k of keys.slice(0, -1)) node = node[k] as Record<Key, unknown>;
  node[keys[keys.length - 1] as Key] = value;
  return copy;
}

/** spec.maintenanceWindows[0].timezone, as validate writes paths. */
function pathText(keys: Key[]): string {
  return keys
    .map((k, i) =>
      typeof k === 'number' ? `[${k}]` : /^[A-Za-z_][A-Za-z0-9_]*$/.test(k) ? (i === 0 ? k : `.${k}`) : `["${k}"]`,
    )
    .join('');
}

interface Mutation {
  what: string;
  value: unknown;
}

const DURATION_RULE = /duration\(self\)/;

/** Wrong values for one field, from what its schema declares. */
function mutations(schema: JsonSchema, valid: unknown): Mutation[] {
  const out: Mutation[] = [
    { what: 'NaN', value: NaN },
    { what: 'Infinity', value: Infinity },
    { what: '-Infinity', value: -Infinity },
  ];
  const type = schema.type as string | undefined;
  if (type !== 'string') out.push({ what: 'a string', value: 'a string' });
  if (type !== 'object') out.push({ what: 'an object', value: { a: 1 } });
  if (type !== 'array') out.push({ what: 'a list', value: ['x'] });
  if (type === 'string' || type === 'object' || type === 'array') out.push({ what: 'a number', value: 42 });
  if (type !== 'boolean' && type !== 'integer') out.push({ what: 'a boolean', value: true });
  if (type === 'integer') {
    out.push({ what: 'a fraction', value: 1.5 }, { what: 'a huge number (1e300)', value: 1e300 });
    if (typeof schema.minimum === 'number') out.push({ what: 'below minimum', value: schema.minimum - 1 });
    if (typeof schema.maximum === 'number') out.push({ what: 'above maximum', value: schema.maximum + 1 });
  }
  if (type === 'string') {
    if (typeof schema.maxLength === 'number') out.push({ what: 'too long', value: 'a'.repeat(schema.maxLength + 1) });
    if (typeof schema.minLength === 'number' && schema.minLength > 0) out.push({ what: 'empty', value: '' });
    if (Array.isArray(schema.enum)) out.push({ what: 'not in the enum', value: 'NotAnAllowedValue' });
    if (typeof schema.pattern === 'string' || typeof schema.format === 'string')
      out.push({ what: 'malformed', value: 'not valid ☃' });
    const rules = (schema['x-kubernetes-validations'] ?? []) as { rule: string }[];
    if (rules.some((r) => DURATION_RULE.test(r.rule))) {
      out.push({ what: 'below the smallest duration', value: '1ns' });
      out.push({ what: 'beyond the largest duration', value: '9999999h' });
    }
  }
  if (type === 'array') {
    if (typeof schema.maxItems === 'number' && Array.isArray(valid) && valid.length > 0)
      out.push({
        what: 'too many items',
        value: Array.from({ length: schema.maxItems + 1 }, (): unknown => (valid as unknown[])[0]),
      });
    if (typeof schema.minItems === 'number' && schema.minItems > 0) out.push({ what: 'no items', value: [] });
  }
  if (type === 'object' && typeof schema.maxProperties === 'number')
    out.push({
      what: 'too many entries',
      value: Object.fromEntries(Array.from({ length: schema.maxProperties + 1 }, (_, i) => [`k${i}`, 'v'])),
    });
  return out;
}

describe.each(Object.entries(FIXTURES))('generated corpus: %s', (name, fixtures) => {
  const schemaName = name as SchemaName;
  const all = fields(dereferenced(schemaIds[schemaName]));
  const fixtureFor = (keys: Key[]): Fixture | undefined => fixtures.find((f) => get(f.doc, keys) !== undefined);

  it('the fixtures are valid and set every field of the schema', () => {
    for (const f of fixtures) expect(validateAgainst(schemaName, f.doc)).toEqual([]);
    const unset = all.filter((f) => fixtureFor(f.keys) === undefined).map((f) => pathText(f.keys));
    expect(unset).toEqual([]);
  });

  it('every field is bounded: strings by length or enum, numbers by a maximum, lists and maps by a count', () => {
    const unbounded = all
      .filter(({ schema: s }) => {
        if (s.type === 'string') return s.maxLength === undefined && s.enum === undefined;
        if (s.type === 'integer' || s.type === 'number') return s.maximum === undefined;
        if (s.type === 'array') return s.maxItems === undefined;
        if (s.type === 'object' && typeof s.additionalProperties === 'object') return s.maxProperties === undefined;
        return false;
      })
      .map((f) => pathText(f.keys));
    expect(unbounded).toEqual([]);
  });

  it('every schema default is accepted in place', () => {
    for (const { keys, schema } of all) {
      if (schema.default === undefined) continue;
      const fixture = fixtureFor(keys) as Fixture;
      expect(validateAgainst(schemaName, withValue(fixture.doc, keys, schema.default)), pathText(keys)).toEqual([]);
    }
  });

  const cases = all.flatMap(({ keys, schema }) =>
    mutations(schema, fixtureFor(keys) ? get(fixtureFor(keys)?.doc, keys) : undefined).map((m) => ({
      title: `${pathText(keys)}: ${m.what}`,
      keys,
      value: m.value,
    })),
  );

  it(`${cases.length} malformed values, each refused at exactly its field with found/allowed`, () => {
    expect(cases.length).toBeGreaterThan(300);
    const problems: string[] = [];
    for (const { title, keys, value } of cases) {
      const fixture = fixtureFor(keys) as Fixture;
      const errors = validateAgainst(schemaName, withValue(fixture.doc, keys, value));
      const here = errors.filter((e) => e.path === pathText(keys));
      if (here.length === 0) problems.push(`${title}: no error at the field, got ${JSON.stringify(errors)}`);
      for (const e of errors) {
        if (e.found === '' || e.allowed === '') problems.push(`${title}: empty found/allowed at ${e.path}`);
        if (typeof value === 'number' && !Number.isFinite(value) && e.found === 'null')
          problems.push(`${title}: ${String(value)} shown as null`);
        if (e.found.length > MAX_ECHO + 40) problems.push(`${title}: found is ${e.found.length} characters`);
      }
    }
    expect(problems).toEqual([]);
  });
});
