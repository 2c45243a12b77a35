// kubeconform schemas for what our manifests use besides our own kinds, made offline from the sources of the
// versions we test with (kubeconform's default location is on the network): the built-in kinds from Kubernetes'
// own OpenAPI document (api/openapi-spec/swagger.json of k8s.io/kubernetes) and third-party kinds from their CRDs
// (prometheus-operator's ServiceMonitor and PrometheusRule, Crossplane's Function and DeploymentRuntimeConfig).
// Strict like kubeconform's `-strict` flavour: an object with declared properties accepts no others.
// Layout: <out>/<group>/<kind>_<version>.json, the core group under v1/ (kubeconform's
// `{{.Group}}/{{.ResourceKind}}_{{.ResourceAPIVersion}}.json`).
//   node --import tsx test/install/kube-schemas.ts <out> <swagger.json> [crd.yaml]...
import { mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseAllDocuments } from 'yaml';

type Schema = Record<string, unknown>;

/** Makes objects closed, and the Kubernetes int-or-string markers plain JSON Schema. */
function strict(s: Schema): Schema {
  if (s['x-kubernetes-int-or-string'] === true || s.format === 'int-or-string') {
    return { oneOf: [{ type: 'string' }, { type: 'integer' }] };
  }
  const out: Schema = {};
  for (const [k, v] of Object.entries(s)) {
    if (k === 'properties' && v && typeof v === 'object') {
      out.properties = Object.fromEntries(Object.entries(v as Schema).map(([p, ps]) => [p, strict(ps as Schema)]));
    } else if ((k === 'items' || k === 'additionalProperties') && v && typeof v === 'object' && !Array.isArray(v)) {
      out[k] = strict(v as Schema);
    } else if ((k === 'allOf' || k === 'anyOf' || k === 'oneOf') && Array.isArray(v)) {
      out[k] = v.map((x) => strict(x as Schema));
    } else out[k] = v;
  }
  if (s.nullable === true && typeof s.type === 'string') out.type = [s.type, 'null'];
  if (out.properties && out.additionalProperties === undefined && s['x-kubernetes-preserve-unknown-fields'] !== true) {
    out.additionalProperties = false;
  }
  return out;
}

const QUANTITY = 'io.k8s.apimachinery.pkg.api.resource.Quantity';
const INT_OR_STRING = 'io.k8s.apimachinery.pkg.util.intstr.IntOrString';

/** Inlines every `$ref` of a swagger definition; a cycle (JSONSchemaProps) is cut with an open schema. */
function inline(s: unknown, defs: Record<string, Schema>, stack: string[]): unknown {
  if (Array.isArray(s)) return s.map((x) => inline(x, defs, stack));
  if (!s || typeof s !== 'object') return s;
  const o = s as Schema;
  if (typeof o.$ref === 'string') {
    const name = o.$ref.replace('#/definitions/', '');
    // YAML writes quantities as numbers as often as strings (cpu: 1).
    if (name === QUANTITY) return { oneOf: [{ type: 'string' }, { type: 'number' }] };
    if (name === INT_OR_STRING) return { oneOf: [{ type: 'string' }, { type: 'integer' }] };
    if (stack.includes(name)) return {};
    return inline(defs[name], defs, [...stack, name]);
  }
  return Object.fromEntries(Object.entries(o).map(([k, v]) => [k, inline(v, defs, stack)]));
}

function write(out: string, group: string, kind: string, version: string, schema: Schema): void {
  // kubeconform's {{.Group}} of a core kind (apiVersion v1) is the whole apiVersion.
  const dir = join(out, group === '' ? version : group);
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, `${kind.toLowerCase()}_${version}.json`), `${JSON.stringify(schema)}\n`);
}

export function makeSchemas(out: string, swaggerFile: string, crdFiles: string[]): number {
  let n = 0;
  const swagger = JSON.parse(readFileSync(swaggerFile, 'utf8')) as { definitions: Record<string, Schema> };
  for (const [name, def] of Object.entries(swagger.definitions)) {
    const gvks = def['x-kubernetes-group-version-kind'] as
      { group: string; version: string; kind: string }[] | undefined;
    if (!gvks) continue;
    const schema = strict(inline(def, swagger.definitions, [name]) as Schema);
    for (const g of gvks) {
      write(out, g.group, g.kind, g.version, schema);
      n++;
    }
  }
  n += crdSchemas(out, crdFiles);
  return n;
}

/** The schema of every version of every CRD in `crdFiles`, written to `out`; how many were written. */
export function crdSchemas(out: string, crdFiles: string[]): number {
  let n = 0;
  for (const file of crdFiles) {
    for (const doc of parseAllDocuments(readFileSync(file, 'utf8'))) {
      const crd = doc.toJS() as {
        kind?: string;
        spec?: {
          group: string;
          names: { kind: string };
          versions: { name: string; schema?: { openAPIV3Schema: Schema } }[];
        };
      } | null;
      if (crd?.kind !== 'CustomResourceDefinition' || !crd.spec) continue;
      for (const v of crd.spec.versions) {
        if (!v.schema) continue;
        write(out, crd.spec.group, crd.spec.names.kind, v.name, strict(v.schema.openAPIV3Schema));
        n++;
      }
    }
  }
  return n;
}

if (process.argv[1] && import.meta.filename === process.argv[1]) {
  const [out, swagger, ...crds] = process.argv.slice(2);
  if (!out || !swagger) throw new Error('usage: kube-schemas.ts <out> <swagger.json> [crd.yaml]...');
  // Written aside and renamed, so an interrupted run never leaves a half set that later runs would trust.
  const tmp = `${out}.tmp.${process.pid}`;
  rmSync(tmp, { recursive: true, force: true });
  const n = makeSchemas(tmp, swagger, crds);
  renameSync(tmp, out);
  console.error(`wrote ${n} schemas to ${out}`);
}
