// Turns our source JSON Schemas into the two published forms:
//  - a structural OpenAPI v3 schema for a CustomResourceDefinition (apiextensions.k8s.io/v1), and
//  - a self-contained schema for yaml-language-server and kubeconform (CRDs-catalog layout).
// The source is written in a subset both can express; what only one side understands is translated here.
import type { JsonSchema } from './deref.js';

/** Formats the apiserver validates; other format names are ours (checked by ajv) and are dropped from CRDs. */
const KUBERNETES_FORMATS = new Set(['date-time', 'date', 'int32', 'int64', 'byte', 'uri', 'email', 'hostname', 'uuid']);

/** Keywords that only guide our own tooling. */
const TOOLING_KEYWORDS = new Set(['$schema', '$id', 'title', 'definitions', '$comment']);

const isOurs = (key: string): boolean => key.startsWith('x-noderotation-');

function mapChildren(node: JsonSchema, fn: (child: JsonSchema) => JsonSchema): JsonSchema {
  const out: JsonSchema = { ...node };
  if (node.properties && typeof node.properties === 'object') {
    out.properties = Object.fromEntries(
      Object.entries(node.properties as Record<string, JsonSchema>).map(([k, v]) => [k, fn(v)]),
    );
  }
  if (node.items && typeof node.items === 'object' && !Array.isArray(node.items))
    out.items = fn(node.items as JsonSchema);
  if (node.additionalProperties && typeof node.additionalProperties === 'object') {
    out.additionalProperties = fn(node.additionalProperties as JsonSchema);
  }
  if (node.not && typeof node.not === 'object') out.not = fn(node.not as JsonSchema);
  return out;
}

export interface CrdSchemaOptions {
  /**
   * Drop every `default` below spec. A MaintenancePlan's defaults and overrides must keep "unset"
   * distinguishable from "the default": an override the apiserver had filled with `readyTimeout: 15m`
   * would silently reset what the plan's defaults said. Defaults are applied after the merge instead.
   */
  specDefaults?: boolean;
  /**
   * The time zone names our `iana-timezone` format accepts. The apiserver knows no such format, so the CRD
   * enumerates them: admission then refuses exactly what `validate` refuses (about 600 names, ~10 KB per
   * timezone field; an enum costs nothing against the CEL budget).
   */
  timezones?: readonly string[];
}

/** `format: iana-timezone` → `enum` of the names, when they are given; other formats pass through. */
function zoneEnum(node: JsonSchema, timezones: readonly string[] | undefined): JsonSchema {
  if (node.format !== 'iana-timezone' || timezones === undefined) return node;
  const out: JsonSchema = { ...node, enum: [...timezones] };
  delete out.format;
  return out;
}

/** A dereferenced resource schema → the CRD's openAPIV3Schema (structural, no $ref, no closed objects). */
export function toCrdSchema(resource: JsonSchema, options: CrdSchemaOptions = {}): JsonSchema {
  const convert = (input: JsonSchema, keepDefaults: boolean): JsonSchema => {
    const node = zoneEnum(input, options.timezones);
    const out: JsonSchema = {};
    for (const [key, value] of Object.entries(node)) {
      if (TOOLING_KEYWORDS.has(key) || isOurs(key)) continue;
      if (key === 'additionalProperties' && value === false) continue; // the apiserver prunes unknown fields instead
      if (key === 'uniqueItems') continue; // translated to list-type set below
      if (key === 'default' && !keepDefaults) continue;
      if (key === 'format' && !KUBERNETES_FORMATS.has(value as string)) continue;
      if (key === 'x-kubernetes-validations') {
        out[key] = (value as JsonSchema[]).map(({ rule, message }) => ({ rule, message }));
        continue;
      }
      out[key] = value;
    }
    if (node.uniqueItems === true && out['x-kubernetes-list-type'] === undefined) out['x-kubernetes-list-type'] = 'set';
    return mapChildren(out, (child) => convert(child, keepDefaults));
  };

  const props = (resource.properties ?? {}) as Record<string, JsonSchema>;
  const properties: Record<string, JsonSchema> = {
    apiVersion: {
      type: 'string',
      description: 'APIVersion defines the versioned schema of this representation of an object.',
    },
    kind: {
      type: 'string',
      description: 'Kind is a string value representing the REST resource this object represents.',
    },
    metadata: { type: 'object' },
  };
  for (const [name, schema] of Object.entries(props)) {
    if (name in properties) continue;
    properties[name] = convert(schema, name !== 'spec' || options.specDefaults !== false);
  }
  const out: JsonSchema = { type: 'object', properties };
  if (typeof resource.description === 'string') out.description = resource.description;
  const required = ((resource.required ?? []) as string[]).filter((r) => r === 'spec');
  if (required.length > 0) out.required = required;
  return out;
}

/**
 * A dereferenced resource schema → a self-contained schema for editors and kubeconform: closed objects
 * (additionalProperties: false) so typos are caught, but no CEL and none of our private keywords.
 */
export function toCatalogSchema(resource: JsonSchema, description: string, timezones?: readonly string[]): JsonSchema {
  const convert = (input: JsonSchema): JsonSchema => {
    const node = zoneEnum(input, timezones);
    const out: JsonSchema = {};
    for (const [key, value] of Object.entries(node)) {
      if (TOOLING_KEYWORDS.has(key) || isOurs(key) || key.startsWith('x-kubernetes-')) continue;
      if (key === 'format' && !KUBERNETES_FORMATS.has(value as string)) continue;
      out[key] = value;
    }
    return mapChildren(out, convert);
  };
  return { $schema: 'http://json-schema.org/draft-07/schema#', description, ...convert(resource) };
}

/** Problems that would make the apiserver reject the schema as non-structural or invalid. */
export function structuralProblems(schema: JsonSchema, path = 'openAPIV3Schema'): string[] {
  const problems: string[] = [];
  const forbidden = [
    '$ref',
    'definitions',
    '$defs',
    'patternProperties',
    'const',
    'if',
    'then',
    'else',
    'uniqueItems',
    '$schema',
    '$id',
  ];
  for (const key of forbidden) if (key in schema) problems.push(`${path}: ${key} is not allowed in a CRD schema`);
  if (schema.additionalProperties === false) problems.push(`${path}: additionalProperties: false is not allowed`);
  if (Array.isArray(schema.type)) problems.push(`${path}: type must be a single string`);
  const preserves =
    schema['x-kubernetes-preserve-unknown-fields'] === true || schema['x-kubernetes-int-or-string'] === true;
  if (typeof schema.type !== 'string' && !preserves) problems.push(`${path}: every node needs a type`);
  if (schema.properties && schema.additionalProperties)
    problems.push(`${path}: properties and additionalProperties are exclusive`);
  for (const [k, v] of Object.entries((schema.properties ?? {}) as Record<string, JsonSchema>)) {
    problems.push(...structuralProblems(v, `${path}.properties.${k}`));
  }
  if (schema.items && typeof schema.items === 'object')
    problems.push(...structuralProblems(schema.items as JsonSchema, `${path}.items`));
  if (schema.additionalProperties && typeof schema.additionalProperties === 'object') {
    problems.push(...structuralProblems(schema.additionalProperties as JsonSchema, `${path}.additionalProperties`));
  }
  for (const junctor of ['allOf', 'anyOf', 'oneOf']) {
    for (const sub of (schema[junctor] ?? []) as JsonSchema[]) {
      // const is no keyword of Kubernetes' schemas: inside a `not` it made every value invalid (the apiserver
      // dropped it and refused everything the empty schema accepts).
      for (const bad of ['type', 'default', 'additionalProperties', 'nullable', 'description', 'const']) {
        if (bad in sub) problems.push(`${path}.${junctor}: ${bad} is not allowed inside a junctor`);
      }
    }
  }
  if (schema.not && typeof schema.not === 'object') {
    for (const bad of ['type', 'default', 'additionalProperties', 'nullable', 'description', 'const']) {
      if (bad in (schema.not as JsonSchema)) problems.push(`${path}.not: ${bad} is not allowed inside not`);
    }
  }
  return problems;
}
