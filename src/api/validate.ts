// Validation of our resources against the source schemas (ajv), with errors a person can act on: the file,
// the document, the field path, what was found and what is allowed.
import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv';
import addFormatsModule from 'ajv-formats';
import { isValidTimezone, suggestTimezone } from '../schedule/zone.js';
import { describeValue } from '../util/describe.js';
import { didYouMean, nearValues } from '../util/near-names.js';
import { parseExpireAfter, parseKarpenterDuration } from '../util/duration.js';
import { isQuantity, QUANTITY_ALLOWED } from '../util/quantity.js';
import { checkDetails, checks } from './checks.js';
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

/** At most this many errors per document: a document with a million bad items gets a bounded report. */
export const MAX_ERRORS = 50;

// Exactly the names of the tz database Go bundles (TZDATA_VERSION), case-sensitive: docs/scheduling.md.
export const TIMEZONE_ALLOWED = 'an IANA time zone name such as Asia/Tokyo, Europe/Berlin or UTC';

function succeeds(parse: () => unknown): boolean {
  try {
    parse();
    return true;
  } catch {
    return false;
  }
}

interface DataCxt {
  instancePath: string;
}

/** A list-map (x-kubernetes-list-map-keys) holds each key tuple once; the apiserver refuses duplicates. */
function duplicateKeyErrors(keys: string[], data: unknown, cxt: DataCxt | undefined): Partial<ErrorObject>[] {
  if (!Array.isArray(data)) return [];
  const first = new Map<string, number>();
  const errors: Partial<ErrorObject>[] = [];
  data.forEach((item: unknown, index) => {
    if (typeof item !== 'object' || item === null) return;
    const tuple = keys.map((k) => (item as Record<string, unknown>)[k]);
    if (tuple.some((v) => v === undefined)) return; // a missing key is `required`'s error
    const id = JSON.stringify(tuple);
    const seen = first.get(id);
    if (seen === undefined) first.set(id, index);
    else {
      const key = keys.length === 1 ? `/${keys[0] as string}` : '';
      errors.push({
        keyword: 'x-kubernetes-list-map-keys',
        instancePath: `${cxt?.instancePath ?? ''}/${index}${key}`,
        message: `${keys.join(', ')} already used by item [${seen}]`,
        // ajv overwrites `data` with the list itself, so the duplicate travels in params.
        params: { keys, first: seen, index, value: keys.length === 1 ? tuple[0] : tuple },
      });
    }
  });
  return errors;
}
function build(): Ajv {
  const ajv = new Ajv({ allErrors: true, verbose: true, strict: true, strictRequired: false, allowUnionTypes: false });
  addFormats(ajv, ['date-time']);
  ajv.addFormat('iana-timezone', { type: 'string', validate: isValidTimezone });
  // Karpenter's patterns, read by the one duration parser (a pattern-valid value beyond Go's range fails too).
  ajv.addFormat('karpenter-duration', {
    type: 'string',
    validate: (t: string) => succeeds(() => parseKarpenterDuration(t)),
  });
  ajv.addFormat('karpenter-expire-after', {
    type: 'string',
    validate: (t: string) => succeeds(() => parseExpireAfter(t)),
  });
  // A Kubernetes int-or-string quantity: a string in resource.Quantity's grammar or a finite number.
  ajv.addKeyword({
    keyword: 'x-noderotation-quantity',
    schemaType: 'boolean',
    errors: true,
    compile() {
      const validate = (data: unknown): boolean => {
        const ok = isQuantity(data);
        (validate as unknown as { errors: Partial<ErrorObject>[] }).errors = ok
          ? []
          : [{ keyword: 'x-noderotation-quantity', message: QUANTITY_ALLOWED, params: {} }];
        return ok;
      };
      return validate;
    },
  });
  for (const kw of [
    'x-kubernetes-list-type',
    'x-kubernetes-map-type',
    'x-noderotation-allowed',
    'x-noderotation-detail',
  ]) {
    ajv.addKeyword({ keyword: kw, schemaType: ['string', 'array'] });
  }
  ajv.addKeyword({
    keyword: 'x-kubernetes-list-map-keys',
    schemaType: 'array',
    errors: true,
    compile(keys: string[]) {
      const validate = (data: unknown, cxt?: DataCxt): boolean => {
        const errors = duplicateKeyErrors(keys, data, cxt);
        (validate as unknown as { errors: Partial<ErrorObject>[] }).errors = errors;
        return errors.length === 0;
      };
      return validate;
    },
  });
  ajv.addKeyword({
    keyword: 'x-kubernetes-validations',
    schemaType: 'array',
    errors: true,
    compile(rules: Rule[]) {
      // Resolved when the schema compiles, so a rule without an offline equivalent fails at once, not per value.
      const bound = rules.map((r) => {
        const check = r['x-check'] ? checks[r['x-check']] : undefined;
        if (!check) throw new Error(`schema rule "${r.rule}" names no offline check`);
        return { rule: r, check, detail: r['x-check'] ? checkDetails[r['x-check']] : undefined };
      });
      const validate = (data: unknown): boolean => {
        // Each check ignores values of the wrong type: those are reported once, by `type`.
        const failed = bound.filter(({ check }) => !check(data));
        (validate as unknown as { errors: Partial<ErrorObject>[] }).errors = failed.map(({ rule, detail }) => {
          const why = detail?.(data);
          return {
            keyword: 'x-kubernetes-validations',
            message: why === undefined ? rule.message : `${rule.message} (here: ${why})`,
            params: { rule: rule.rule },
          };
        });
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

/** The known fields an unknown one (an additionalProperties error) is near: its likely meaning. */
function meantField(e: ErrorObject): string[] {
  const props = Object.keys((e.parentSchema as Record<string, unknown>)?.properties ?? {});
  return nearValues((e.params as { additionalProperty: string }).additionalProperty, props);
}

/**
 * A misspelt field (`nodePool:` for `nodePools:`) leaves the field it was meant to be unset, so the object also
 * fails the rules that need that field ("set exactly one of nodePoolSelector or nodePools", "this field is
 * required"): the same mistake two or three times, one of them a dump of the object. When an unknown field is
 * near exactly one known field the object lacks, only the unknown field is reported, naming the one meant; the
 * object's own errors and the meant field's come back on the next run if the rename did not cure them.
 */
function typoConsequences(errors: readonly ErrorObject[]): Set<string> {
  const drop = new Set<string>();
  for (const e of errors) {
    if (e.keyword !== 'additionalProperties') continue;
    const meant = meantField(e);
    const data = e.data as Record<string, unknown>;
    if (meant.length !== 1 || Object.prototype.hasOwnProperty.call(data, meant[0] as string)) continue;
    drop.add(fieldPath(e.instancePath));
    drop.add(fieldPath(e.instancePath, meant[0]));
  }
  return drop;
}

function allowedText(e: ErrorObject): string {
  const hint: unknown = e.parentSchema?.['x-noderotation-allowed'];
  switch (e.keyword) {
    case 'required':
      return 'this field is required';
    case 'additionalProperties': {
      const props = Object.keys((e.parentSchema as Record<string, unknown>)?.properties ?? {});
      return props.length > 0
        ? `one of the known fields: ${props.join(', ')}${didYouMean(meantField(e))}`
        : 'no fields here';
    }
    case 'enum': {
      const values = (e.params as { allowedValues: unknown[] }).allowedValues;
      const strings = values.filter((v): v is string => typeof v === 'string');
      const near = typeof e.data === 'string' ? nearValues(e.data, strings) : [];
      return `one of ${values.map((v) => JSON.stringify(v)).join(', ')}${didYouMean(near)}`;
    }
    case 'type': {
      const type = `a value of type ${(e.params as { type: string }).type}`;
      return typeof hint === 'string' ? `${type} (${hint})` : type;
    }
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
    case 'x-noderotation-quantity':
      return QUANTITY_ALLOWED;
    case 'x-kubernetes-list-map-keys':
      return `a unique ${((e.params as { keys: string[] }).keys ?? []).join(', ')} per item (the list is keyed by it)`;
    case 'x-kubernetes-validations':
      return e.message ?? 'the rule to hold';
    case 'format':
      if ((e.params as { format: string }).format === 'iana-timezone') {
        const hint = typeof e.data === 'string' ? suggestTimezone(e.data) : undefined;
        return `${TIMEZONE_ALLOWED}${didYouMean(hint === undefined ? [] : [hint])}`;
      }
      if ((e.params as { format: string }).format === 'date-time')
        return 'an RFC 3339 timestamp such as 2026-12-24T00:00:00Z';
      return typeof hint === 'string' ? hint : `format ${(e.params as { format: string }).format}`;
    case 'pattern': {
      // A pattern whose check can say which part of the value is wrong (x-noderotation-detail names it).
      const detail: unknown = e.parentSchema?.['x-noderotation-detail'];
      const why = typeof detail === 'string' ? checkDetails[detail]?.(e.data) : undefined;
      const text = typeof hint === 'string' ? hint : (e.message ?? e.keyword);
      return why === undefined ? text : `${text} (here: ${why})`;
    }
    default:
      return typeof hint === 'string' ? hint : (e.message ?? e.keyword);
  }
}

/** The path an error is reported at (toFieldError's). */
const pathOf = (e: ErrorObject): string =>
  e.keyword === 'required'
    ? fieldPath(e.instancePath, (e.params as { missingProperty: string }).missingProperty)
    : fieldPath(e.instancePath);

function toFieldError(e: ErrorObject): FieldError {
  if (e.keyword === 'required') {
    const missing = (e.params as { missingProperty: string }).missingProperty;
    return { path: fieldPath(e.instancePath, missing), found: 'nothing', allowed: allowedText(e) };
  }
  if (e.keyword === 'additionalProperties') {
    const extra = (e.params as { additionalProperty: string }).additionalProperty;
    const found = `an unknown field${didYouMean(meantField(e))}`;
    return { path: fieldPath(e.instancePath, extra), found, allowed: allowedText(e) };
  }
  if (e.keyword === 'uniqueItems') {
    const { i, j } = e.params as { i: number; j: number };
    const item = Array.isArray(e.data) ? (e.data as unknown[])[i] : undefined;
    const found = `${describeValue(item)} twice (items [${Math.min(i, j)}] and [${Math.max(i, j)}])`;
    return { path: fieldPath(e.instancePath), found, allowed: allowedText(e) };
  }
  if (e.keyword === 'x-kubernetes-list-map-keys') {
    const { first, value } = e.params as { first: number; value: unknown };
    const found = `${describeValue(value)}, already used by item [${first}]`;
    return { path: fieldPath(e.instancePath), found, allowed: allowedText(e) };
  }
  const out: FieldError = { path: fieldPath(e.instancePath), found: describeValue(e.data), allowed: allowedText(e) };
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

/**
 * Compiles the validators of `names` now rather than at their first use. A long-running process (the
 * controller) calls it while its caches sync, so that compiling the schema (a tenth of a second) is part of its
 * start and not of its first pass.
 */
export function prepareValidators(names: readonly SchemaName[]): void {
  for (const n of names) validator(schemaIds[n]);
}

export function validateAgainst(name: SchemaName, doc: unknown): FieldError[] {
  const fn = validator(schemaIds[name]);
  if (fn(doc)) return [];
  const raw = fn.errors ?? [];
  const consequences = typoConsequences(raw);
  const errors = dedupe(
    raw.filter((e) => e.keyword === 'additionalProperties' || !consequences.has(pathOf(e))).map(toFieldError),
  ).sort((a, b) => a.path.localeCompare(b.path));
  if (errors.length <= MAX_ERRORS) return errors;
  const more = errors.length - MAX_ERRORS;
  return [
    ...errors.slice(0, MAX_ERRORS),
    { path: '(document)', found: `${more} more problem(s) not listed`, allowed: 'fix the ones above first' },
  ];
}
