// Validation of our resources against the source schemas (ajv), with errors a person can act on: the file,
// the document, the field path, what was found and what is allowed.
import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv';
import addFormatsModule from 'ajv-formats';
import { isValidTimezone } from '../schedule/zone.js';
import { checks } from './checks.js';
import { allSchemas, schemaIds } from './registry.js';

// ajv-formats is CommonJS; under NodeNext its default export arrives wrapped.
type AddFormats = (ajv: Ajv, formats: string[]) => Ajv;
const addFormats: AddFormats =
  (addFormatsModule as unknown as { default?: AddFormats }).default ?? (addFormatsModule as unknown as AddFormats);

export interface FieldError {
  /** e.g. spec.maintenanceWindows[0].start */
  path: string;
  found: string;
  allowed: string;
  /** Set when the problem has a finding reason of its own (e.g. InvalidTimezone). */
  reason?: string;
}

type Rule = { rule: string; message: string; 'x-check'?: string };

function build(): Ajv {
  const ajv = new Ajv({ allErrors: true, verbose: true, strict: true, strictRequired: false, allowUnionTypes: false });
  addFormats(ajv, ['date-time']);
  ajv.addFormat('iana-timezone', { type: 'string', validate: isValidTimezone });
  for (const kw of [
    'x-kubernetes-list-type',
    'x-kubernetes-list-map-keys',
    'x-kubernetes-map-type',
    'x-noderotation-allowed',
  ]) {
    ajv.addKeyword({ keyword: kw, schemaType: ['string', 'array'] });
  }
  ajv.addKeyword({
    keyword: 'x-kubernetes-validations',
    schemaType: 'array',
    errors: true,
    compile(rules: Rule[]) {
      const validate = (data: unknown): boolean => {
        if (typeof data !== 'object' || data === null) return true; // type errors are reported by `type`
        const failed = rules.filter((r) => {
          const check = r['x-check'] ? checks[r['x-check']] : undefined;
          if (!check) throw new Error(`schema rule "${r.rule}" names no offline check`);
          return !check(data as Record<string, unknown>);
        });
        (validate as unknown as { errors: Partial<ErrorObject>[] }).errors = failed.map((r) => ({
          keyword: 'x-kubernetes-validations',
          message: r.message,
          params: { rule: r.rule },
        }));
        return failed.length === 0;
      };
      return validate;
    },
  });
  for (const [id, schema] of allSchemas()) ajv.addSchema(schema, id);
  return ajv;
}

let instance: Ajv | undefined;
const compiled = new Map<string, ValidateFunction>();

function validator(id: string): ValidateFunction {
  instance ??= build();
  let fn = compiled.get(id);
  if (!fn) {
    fn = instance.getSchema(id);
    if (!fn) throw new Error(`no schema ${id}`);
    compiled.set(id, fn);
  }
  return fn;
}

/** JSON pointer /spec/maintenanceWindows/0/start → spec.maintenanceWindows[0].start */
export function fieldPath(pointer: string, child?: string): string {
  const parts = pointer
    .split('/')
    .slice(1)
    .map((p) => p.replace(/~1/g, '/').replace(/~0/g, '~'));
  if (child !== undefined) parts.push(child);
  let out = '';
  for (const part of parts) {
    if (/^[0-9]+$/.test(part)) out += `[${part}]`;
    else if (/^[A-Za-z_][A-Za-z0-9_]*$/.test(part)) out += out === '' ? part : `.${part}`;
    else out += `[${JSON.stringify(part)}]`;
  }
  return out === '' ? '(document)' : out;
}

function show(value: unknown): string {
  if (value === undefined) return 'nothing';
  const text = JSON.stringify(value);
  return text.length > 80 ? `${text.slice(0, 77)}...` : text;
}

function allowedText(e: ErrorObject): string {
  const hint = (e.parentSchema as Record<string, unknown> | undefined)?.['x-noderotation-allowed'];
  switch (e.keyword) {
    case 'required':
      return 'this field is required';
    case 'additionalProperties': {
      const props = Object.keys(((e.parentSchema as Record<string, unknown>)?.properties ?? {}) as object);
      return props.length > 0 ? `one of the known fields: ${props.join(', ')}` : 'no fields here';
    }
    case 'enum':
      return `one of ${(e.params as { allowedValues: unknown[] }).allowedValues.map((v) => JSON.stringify(v)).join(', ')}`;
    case 'type':
      return `a value of type ${(e.params as { type: string }).type}`;
    case 'minimum':
    case 'maximum':
      return typeof hint === 'string'
        ? hint
        : `a number ${e.keyword === 'minimum' ? '≥' : '≤'} ${(e.params as { limit: number }).limit}`;
    case 'minItems':
      return `at least ${(e.params as { limit: number }).limit} item(s)`;
    case 'maxItems':
      return `at most ${(e.params as { limit: number }).limit} item(s)`;
    case 'minLength':
      return `at least ${(e.params as { limit: number }).limit} character(s)`;
    case 'maxLength':
      return `at most ${(e.params as { limit: number }).limit} character(s)`;
    case 'uniqueItems':
      return 'no duplicate items';
    case 'x-kubernetes-validations':
      return e.message ?? 'the rule to hold';
    case 'format':
      if ((e.params as { format: string }).format === 'iana-timezone')
        return 'an IANA time zone name such as Asia/Tokyo, Europe/Berlin or UTC';
      if ((e.params as { format: string }).format === 'date-time')
        return 'an RFC 3339 timestamp such as 2026-12-24T00:00:00Z';
      return `format ${(e.params as { format: string }).format}`;
    default:
      return typeof hint === 'string' ? hint : (e.message ?? e.keyword);
  }
}

function toFieldError(e: ErrorObject): FieldError {
  if (e.keyword === 'required') {
    const missing = (e.params as { missingProperty: string }).missingProperty;
    return { path: fieldPath(e.instancePath, missing), found: 'nothing', allowed: allowedText(e) };
  }
  if (e.keyword === 'additionalProperties') {
    const extra = (e.params as { additionalProperty: string }).additionalProperty;
    return { path: fieldPath(e.instancePath, extra), found: 'an unknown field', allowed: allowedText(e) };
  }
  const out: FieldError = { path: fieldPath(e.instancePath), found: show(e.data), allowed: allowedText(e) };
  if (e.keyword === 'format' && (e.params as { format: string }).format === 'iana-timezone')
    out.reason = 'InvalidTimezone';
  return out;
}

/**
 * A `not` error only says "must NOT be valid", and a failing `$ref` target reports both the inner keyword
 * and nothing useful around it; keep one error per (path, keyword) and drop ajv's "if/not" noise.
 */
function dedupe(errors: FieldError[]): FieldError[] {
  const seen = new Set<string>();
  return errors.filter((e) => {
    const key = `${e.path}\u0000${e.allowed}`;
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}

export type SchemaName = keyof typeof schemaIds;

export function validateAgainst(name: SchemaName, doc: unknown): FieldError[] {
  const fn = validator(schemaIds[name]);
  if (fn(doc)) return [];
  return dedupe((fn.errors ?? []).map(toFieldError)).sort((a, b) => a.path.localeCompare(b.path));
}
