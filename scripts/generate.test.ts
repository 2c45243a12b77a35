import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { structuralProblems } from '../src/schema-tools/transform.js';
import { generateAll } from './generate-lib.js';
import { readSchemaFiles, ROOT } from './generate-io.js';

const generated = await generateAll(readSchemaFiles());

describe('generated files', () => {
  it.each([...generated.keys()])('%s is up to date (run `npm run generate`)', (path) => {
    expect(readFileSync(join(ROOT, path), 'utf8')).toBe(generated.get(path));
  });

  it('detects a hand edit: changing one character of a generated CRD makes it differ', () => {
    const path = 'deploy/crds/noderotation.io_rotationpolicies.yaml';
    const edited = (generated.get(path) as string).replace('minimum: 1', 'minimum: 0');
    expect(edited).not.toBe(generated.get(path));
  });

  it('CRDs are structural, cluster-scoped and have a status subresource', () => {
    for (const [path, text] of generated) {
      if (!path.startsWith('deploy/crds/')) continue;
      const crd = parse(text);
      expect(crd.spec.scope).toBe('Cluster');
      const version = crd.spec.versions[0];
      expect(version.subresources).toEqual({ status: {} });
      expect(structuralProblems(version.schema.openAPIV3Schema)).toEqual([]);
      expect(text).not.toMatch(/\$ref|x-noderotation|x-check|additionalProperties: false|uniqueItems/);
    }
  });

  it('the MaintenancePlan CRD carries no defaults in spec, so an unset override stays unset', () => {
    const crd = parse(generated.get('deploy/crds/noderotation.io_maintenanceplans.yaml') as string);
    expect(JSON.stringify(crd.spec.versions[0].schema.openAPIV3Schema.properties.spec)).not.toContain('"default"');
    const rp = parse(generated.get('deploy/crds/noderotation.io_rotationpolicies.yaml') as string);
    expect(rp.spec.versions[0].schema.openAPIV3Schema.properties.spec.properties.minRotationChances.default).toBe(2);
  });

  it('catalog schemas are self-contained and closed', () => {
    for (const [path, text] of generated) {
      if (!path.startsWith('deploy/schemas/')) continue;
      expect(path).toMatch(/^deploy\/schemas\/noderotation\.io\/[a-z]+_v1alpha1\.json$/);
      expect(text).not.toMatch(/\$ref|definitions|x-kubernetes|x-noderotation/);
      const schema = JSON.parse(text);
      const open: string[] = [];
      const walk = (node: Record<string, unknown>, at: string): void => {
        if (node.type === 'object' && node.properties && node.additionalProperties !== false && at !== '.metadata')
          open.push(at);
        for (const [k, v] of Object.entries((node.properties ?? {}) as Record<string, Record<string, unknown>>))
          walk(v, `${at}.${k}`);
        if (node.items) walk(node.items as Record<string, unknown>, `${at}[]`);
      };
      walk(schema, '');
      expect(open).toEqual([]);
    }
  });
});
