import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { TIMEZONES } from '../src/generated/timezones.js';
import { structuralProblems } from '../src/schema-tools/transform.js';
import { GO_DURATION_PATTERN } from '../src/util/duration.js';
import { generateAll } from './generate-lib.js';
import { readSchemaFiles, ROOT } from './generate-io.js';
import { readGoZoneInfo, zipEntryNames } from './zoneinfo.js';

// Needs Go on PATH: the time zone list is generated from Go's own tz database (readGoZoneInfo says so if not).
const zones = readGoZoneInfo();
const generated = await generateAll(readSchemaFiles(), zones);

type Node = Record<string, unknown>;
/** A value inside parsed YAML/JSON by path, typed as a plain object (the tests then assert on it). */
function at(root: unknown, ...path: (string | number)[]): Node {
  let node = root;
  for (const key of path) node = (node as Record<string | number, unknown>)[key];
  return node as Node;
}
const crdSchema = (path: string): Node =>
  at(parse(generated.get(path) as string), 'spec', 'versions', 0, 'schema', 'openAPIV3Schema');
const RP = 'deploy/crds/noderotation.io_rotationpolicies.yaml';
const MP = 'deploy/crds/noderotation.io_maintenanceplans.yaml';

describe('generated files', () => {
  it.each([...generated.keys()])('%s is up to date (run `npm run generate`)', (path) => {
    expect(readFileSync(join(ROOT, path), 'utf8')).toBe(generated.get(path));
  });

  it('detects a hand edit: changing one character of a generated CRD makes it differ', () => {
    const edited = (generated.get(RP) as string).replace('minimum: 1', 'minimum: 0');
    expect(edited).not.toBe(generated.get(RP));
  });

  it('CRDs are structural, cluster-scoped and have a status subresource', () => {
    for (const [path, text] of generated) {
      if (!path.startsWith('deploy/crds/')) continue;
      const crd = parse(text) as unknown;
      expect(at(crd, 'spec', 'scope')).toBe('Cluster');
      expect(at(crd, 'spec', 'versions', 0, 'subresources')).toEqual({ status: {} });
      expect(structuralProblems(crdSchema(path))).toEqual([]);
      expect(text).not.toMatch(/\$ref|x-noderotation|x-check|additionalProperties: false|uniqueItems/);
    }
  });

  it('the MaintenancePlan CRD carries no defaults in spec, so an unset override stays unset', () => {
    expect(JSON.stringify(at(crdSchema(MP), 'properties', 'spec'))).not.toContain('"default"');
    expect(at(crdSchema(RP), 'properties', 'spec', 'properties', 'minRotationChances').default).toBe(2);
  });

  it('every timezone field of the CRDs enumerates exactly the accepted names', () => {
    const windows = [
      at(crdSchema(RP), 'properties', 'spec', 'properties', 'maintenanceWindows'),
      at(crdSchema(MP), 'properties', 'spec', 'properties', 'defaults', 'properties', 'maintenanceWindows'),
      at(crdSchema(MP), 'properties', 'spec', 'properties', 'rules', 'items', 'properties', 'overrides'),
    ];
    const overrides = windows[2] as Node;
    windows[2] = at(overrides, 'properties', 'maintenanceWindows');
    for (const w of windows) {
      const timezone = at(w, 'items', 'properties', 'timezone');
      expect(timezone.enum).toEqual(TIMEZONES);
      expect(timezone.format).toBeUndefined();
    }
  });

  it('lists keyed by name in the CRD: rules (duplicate names are refused at admission)', () => {
    const rules = at(crdSchema(MP), 'properties', 'spec', 'properties', 'rules');
    expect(rules['x-kubernetes-list-type']).toBe('map');
    expect(rules['x-kubernetes-list-map-keys']).toEqual(['name']);
  });

  it('CRDs stay far below what kubectl apply can store (last-applied annotation: 256 KiB)', () => {
    for (const path of [RP, MP]) {
      const json = JSON.stringify(parse(generated.get(path) as string));
      expect(json.length, path).toBeLessThan(200_000);
    }
  });

  it('every duration pattern in schemas/ is the parser pattern (the schema and parseDuration agree)', () => {
    const patterns = new Set<string>();
    const walk = (node: unknown): void => {
      if (Array.isArray(node)) return node.forEach(walk);
      if (typeof node !== 'object' || node === null) return;
      const n = node as Node;
      if (typeof n.pattern === 'string' && n.pattern.includes('(ns|us|')) patterns.add(n.pattern);
      // Under `not` sits the zero pattern of positive-duration, a subset of the parser pattern by construction.
      for (const [key, value] of Object.entries(n)) if (key !== 'not') walk(value);
    };
    for (const schema of readSchemaFiles().values()) walk(schema);
    const withAuto = GO_DURATION_PATTERN.replace('^(0|', '^(auto|0|');
    expect([...patterns].filter((p) => p !== GO_DURATION_PATTERN && p !== withAuto)).toEqual([]);
  });

  it('catalog schemas are self-contained and closed', () => {
    for (const [path, text] of generated) {
      if (!path.startsWith('deploy/schemas/')) continue;
      expect(path).toMatch(/^deploy\/schemas\/noderotation\.io\/[a-z]+_v1alpha1\.json$/);
      expect(text).not.toMatch(/\$ref|definitions|x-kubernetes|x-noderotation/);
      const schema = JSON.parse(text) as Node;
      const open: string[] = [];
      const walk = (node: Node, where: string): void => {
        if (node.type === 'object' && node.properties && node.additionalProperties !== false && where !== '.metadata')
          open.push(where);
        for (const [k, v] of Object.entries((node.properties ?? {}) as Record<string, Node>)) walk(v, `${where}.${k}`);
        if (node.items) walk(node.items as Node, `${where}[]`);
      };
      walk(schema, '');
      expect(open).toEqual([]);
    }
  });
});

describe("the time zone list comes from Go's zoneinfo.zip", () => {
  it("names the tz release and holds Go's names, less Factory", () => {
    expect(zones.version).toMatch(/^20[0-9]{2}[a-z]$/);
    expect(generated.get('src/generated/timezones.ts')).toContain(`TZDATA_VERSION = "${zones.version}"`);
    expect(zones.names).toContain('Factory');
    expect(TIMEZONES).not.toContain('Factory');
    expect(TIMEZONES.length).toBe(zones.names.length - 1);
  });

  it('reads entry names from a zip central directory, and refuses what is not a zip', () => {
    // A minimal archive: one stored, empty entry "A/B" (local header, central header, end record).
    const name = Buffer.from('A/B');
    const local = Buffer.alloc(30);
    local.writeUInt32LE(0x04034b50, 0);
    local.writeUInt16LE(name.length, 26);
    const central = Buffer.alloc(46);
    central.writeUInt32LE(0x02014b50, 0);
    central.writeUInt16LE(name.length, 28);
    const end = Buffer.alloc(22);
    end.writeUInt32LE(0x06054b50, 0);
    end.writeUInt16LE(1, 8);
    end.writeUInt16LE(1, 10);
    end.writeUInt32LE(central.length + name.length, 12);
    end.writeUInt32LE(local.length + name.length, 16);
    expect(zipEntryNames(Buffer.concat([local, name, central, name, end]))).toEqual(['A/B']);
    expect(() => zipEntryNames(Buffer.alloc(100))).toThrow(/not a zip archive/);
  });
});
