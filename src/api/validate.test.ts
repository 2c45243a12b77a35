import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { checks } from './checks.js';
import { formatInputError, readDocuments } from './documents.js';
import { allSchemas } from './registry.js';
import { validateAgainst } from './validate.js';

const ROOT = join(import.meta.dirname, '..', '..');
const policy = (spec: Record<string, unknown>) => ({
  apiVersion: 'noderotation.io/v1alpha1',
  kind: 'RotationPolicy',
  metadata: { name: 'p' },
  spec,
});
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
      allowed: /greater than zero/,
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
      allowed: /at least 1/,
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
      found: 'an unknown field',
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

describe('CEL rules', () => {
  it('every x-kubernetes-validations rule in every schema has an offline check', () => {
    const names: string[] = [];
    const walk = (node: unknown): void => {
      if (Array.isArray(node)) return node.forEach(walk);
      if (typeof node !== 'object' || node === null) return;
      const rules = (node as Record<string, unknown>)['x-kubernetes-validations'];
      if (Array.isArray(rules)) for (const r of rules) names.push(String(r['x-check']));
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
        text: '---\napiVersion: karpenter.sh/v1\nkind: NodePool\nmetadata: {name: x}\nspec: {template: {spec: {expireAfter: 14d}}}\n',
      },
    ]);
    const lines = docs.errors.map(formatInputError);
    expect(lines[0]).toMatch(/^a\.yaml, document 1: \(document\): found YAML that does not parse/);
    expect(lines[1]).toBe(
      'b.yaml, document 1 (NodePool/x): spec.template.spec.expireAfter: found "14d"; allowed: a duration in s, m and h such as 336h, or Never',
    );
  });
});
