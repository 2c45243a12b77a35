import { RunFunctionRequest, RunFunctionResponse } from '@crossplane-org/function-sdk-typescript';
import { BinaryReader } from '@bufbuild/protobuf/wire';
import { createHash } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { readSchemaFiles } from '../scripts/generate-io.js';
import type { JsonSchema } from '../src/schema-tools/deref.js';
import { structuralProblems } from '../src/schema-tools/transform.js';
import { generatePackageFiles, generateProtoCode, ROOT, XRD_PATH } from './codegen.js';
import { functionRunnerService } from './service.js';

/** The parts of the generated XRD the test reads. */
interface SchemaNode {
  properties: Record<string, SchemaNode>;
  items: SchemaNode;
}
interface Xrd {
  spec: { versions: { schema: { openAPIV3Schema: SchemaNode & JsonSchema } }[] };
}

const proto = generateProtoCode();
const pkg = generatePackageFiles(readSchemaFiles());

describe('generated function files', () => {
  it.each([...proto.keys(), ...pkg.keys()])(
    '%s is up to date (run `node --import tsx functions/generate.ts`)',
    (path) => {
      expect(readFileSync(join(ROOT, path), 'utf8')).toBe(proto.get(path) ?? pkg.get(path));
    },
  );

  it('functions/generated/ holds nothing the generator did not write', () => {
    const found: string[] = [];
    const walk = (dir: string): void => {
      for (const e of readdirSync(dir, { withFileTypes: true })) {
        if (e.isDirectory()) walk(join(dir, e.name));
        else found.push(relative(ROOT, join(dir, e.name)).split('\\').join('/'));
      }
    };
    walk(join(ROOT, 'functions', 'generated'));
    expect(found.sort()).toEqual([...proto.keys()].sort());
  });

  it('the proto ghz calls the function with is the upstream file of Crossplane v2.2.4, unmodified', () => {
    // crossplane/crossplane proto/fn/v1/run_function.proto at v2.2.4 (identical on main when copied).
    const text = readFileSync(join(ROOT, 'bench/ghz/proto/fn/v1/run_function.proto'));
    expect(createHash('sha256').update(text).digest('hex')).toBe(
      '19b274c155048dfa4cb27d83b278623efb662f4f73de8c8c6d6c1feaf890b62c',
    );
  });

  it("the SDK's messages carry the field numbers of Crossplane v2.2.4's proto (wire compatibility)", () => {
    // Each field set alone (from its JSON form): the one tag on the wire is that field's number.
    const tagOf = (bytes: Uint8Array): number => new BinaryReader(bytes).tag()[0];
    const map = { k: {} };
    const request: [keyof RunFunctionRequest, object][] = [
      ['meta', { tag: 't' }],
      ['observed', {}],
      ['desired', {}],
      ['input', {}],
      ['context', {}],
      ['extraResources', map],
      ['credentials', map],
      ['requiredResources', map],
      ['requiredSchemas', map],
    ];
    expect(
      request.map(([field, value]) => [
        field,
        tagOf(RunFunctionRequest.encode(RunFunctionRequest.fromJSON({ [field]: value })).finish()),
      ]),
    ).toEqual(request.map(([field], i) => [field, i + 1]));
    const response: [keyof RunFunctionResponse, object][] = [
      ['meta', { tag: 't' }],
      ['desired', {}],
      ['results', [{}]],
      ['context', {}],
      ['requirements', {}],
      ['conditions', [{}]],
      ['output', {}],
    ];
    expect(
      response.map(([field, value]) => [
        field,
        tagOf(RunFunctionResponse.encode(RunFunctionResponse.fromJSON({ [field]: value })).finish()),
      ]),
    ).toEqual(response.map(([field], i) => [field, i + 1]));
    expect(functionRunnerService.runFunction.path).toBe('/apiextensions.fn.proto.v1.FunctionRunnerService/RunFunction');
  });

  it('the XRD: crossplane.io/v2, cluster-scoped, structural, no spec defaults or Crossplane-owned fields', () => {
    const xrd = parse(pkg.get(XRD_PATH) as string) as Xrd;
    expect(xrd).toMatchObject({
      apiVersion: 'apiextensions.crossplane.io/v2',
      kind: 'CompositeResourceDefinition',
      spec: { scope: 'Cluster', group: 'noderotation.io', names: { kind: 'MaintenancePlan' } },
    });
    const schema = (xrd.spec.versions[0] as Xrd['spec']['versions'][number]).schema.openAPIV3Schema;
    expect(structuralProblems(schema)).toEqual([]);
    expect(Object.keys(schema.properties)).toEqual(['spec', 'status']);
    expect(JSON.stringify(schema.properties.spec)).not.toContain('"default"');
    const status = schema.properties.status as SchemaNode;
    expect(status.properties.conditions).toBeUndefined();
    expect(Object.keys((status.properties.nodePools as SchemaNode).items.properties)).toContain(
      'capacityPerOccurrence',
    );
  });
});
