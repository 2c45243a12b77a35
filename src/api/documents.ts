// Reading Kubernetes-style YAML: every document of every file, with where it came from, sorted by kind.
import { Composer, Lexer, Parser } from 'yaml';
import type { MaintenancePlan, RotationPolicy } from '../generated/api-types.js';
import type { NodeClaim, NodePool } from '../karpenter/types.js';
import { validateAgainst, type FieldError } from './validate.js';
import { describeValue, truncate } from '../util/describe.js';

export interface Source {
  file: string;
  /** 1-based document number within the file (items of a List count as their own documents). */
  document: number;
}

export interface InputError extends Source {
  /** kind/name when known */
  object?: string;
  path: string;
  found: string;
  allowed: string;
  reason?: string;
}

export interface Inputs {
  policies: (RotationPolicy & { source: Source })[];
  plans: (MaintenancePlan & { source: Source })[];
  nodePools: NodePool[];
  nodeClaims: NodeClaim[];
  /** Documents of kinds these tools do not read; reported, never silently dropped. */
  ignored: (Source & { kind: string })[];
  /** The first YAML_LIMITS.errors problems; omittedErrors counts the rest. */
  errors: InputError[];
  omittedErrors: number;
  /** Every named object read, in input order, for duplicateErrors. */
  named: { kind: string; name: string; source: Source }[];
}

export function formatInputError(e: InputError): string {
  const where = `${e.file}, document ${e.document}${e.object ? ` (${e.object})` : ''}`;
  return `${where}: ${e.path}: found ${e.found}; allowed: ${e.allowed}${e.reason ? ` (${e.reason})` : ''}`;
}

const TIMESTAMP = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/;

/**
 * The fields of Karpenter objects we read: Karpenter's own constraints (schemas/karpenter/), plus the
 * creationTimestamp the engine reads ages from.
 */
function karpenterErrors(doc: Record<string, unknown>, kind: 'NodePool' | 'NodeClaim'): FieldError[] {
  const errors = validateAgainst(kind === 'NodePool' ? 'nodePool' : 'nodeClaim', doc);
  const ts = (doc.metadata as Record<string, unknown> | undefined)?.creationTimestamp;
  if (ts !== undefined && (typeof ts !== 'string' || !TIMESTAMP.test(ts) || Number.isNaN(Date.parse(ts))))
    errors.push({
      path: 'metadata.creationTimestamp',
      found: typeof ts === 'string' ? describeValue(ts) : describeType(ts),
      allowed: 'an RFC 3339 time such as 2027-01-04T00:00:00Z',
    });
  return errors;
}

/** Caps on one file's YAML, so no input can take unbounded time or memory (docs/simulate.md#limits). */
export const YAML_LIMITS = {
  /** Documents per file; a List's items count as one document. */
  documents: 10_000,
  /** Alias expansions per document: yaml's own guard against alias bombs ("billion laughs"). */
  aliases: 100,
  /** Nesting of [ and { (flow collections); yaml's parser needs memory per open level. */
  flowDepth: 100,
  /** YAML nodes per file: about 2,000 NodeClaims as `kubectl get -o yaml` prints them. */
  nodes: 200_000,
  /** Nesting of the parsed value (objects and lists); Kubernetes objects are far shallower. */
  depth: 100,
  /** YAML errors reported per file; the rest are counted. */
  errorsPerFile: 5,
  /** Problems kept over all files; the rest are counted in Inputs.omittedErrors. */
  errors: 100,
} as const;

export interface ParsedDocument {
  /** 1-based, counting documents that are not empty. */
  document: number;
  value: unknown;
}

function linePosition(text: string, offset: number): string {
  let line = 1;
  let lineStart = 0;
  for (let i = text.indexOf('\n'); i !== -1 && i < offset; i = text.indexOf('\n', i + 1)) {
    line++;
    lineStart = i + 1;
  }
  return `line ${line}, column ${offset - lineStart + 1}`;
}

/**
 * A first pass with yaml's own lexer (linear, so quotes and comments are respected) for what would make the
 * parser itself take memory without bound: flow collections or same-line block items nested too deep, too
 * many nodes (each parsed node costs the parser about a kilobyte). The problem, or null.
 */
function lexicalProblem(text: string): Omit<FieldError, 'path'> | null {
  let flow = 0;
  let sameLine = 0;
  let nodes = 0;
  for (const token of new Lexer().lex(text)) {
    const c = token[0];
    if (c === ' ' || c === '&' || c === '!') continue; // spaces, anchors and tags: part of the next node
    if (c === '-' || c === '?' || c === ':') {
      if (token.length === 1 && ++sameLine > YAML_LIMITS.depth)
        return {
          found: `block collections nested more than ${YAML_LIMITS.depth} deep on one line`,
          allowed: `at most ${YAML_LIMITS.depth} levels`,
        };
    } else sameLine = 0;
    if (token === '[' || token === '{') {
      if (++flow > YAML_LIMITS.flowDepth)
        return {
          found: `[ or { nested more than ${YAML_LIMITS.flowDepth} deep`,
          allowed: `at most ${YAML_LIMITS.flowDepth} levels of flow collections`,
        };
    } else if ((token === ']' || token === '}') && flow > 0) flow--;
    else if (token === '\x02' || token === '\x18') flow = 0; // a new document, or the lexer ended a flow
    if (c === '\x1f' || c === '"' || c === "'" || c === '*' || c === '[' || c === '{' || token === '-') {
      if (++nodes > YAML_LIMITS.nodes)
        return {
          found: `more than ${YAML_LIMITS.nodes.toLocaleString('en-US')} YAML nodes (values, lists and maps)`,
          allowed: `at most ${YAML_LIMITS.nodes.toLocaleString('en-US')} per file; split the file`,
        };
    }
  }
  return null;
}

/** Whether a parsed value nests deeper than `limit`, walked without recursion. */
function deeperThan(value: unknown, limit: number): boolean {
  const stack: [unknown, number][] = [[value, 0]];
  while (stack.length > 0) {
    const [v, d] = stack.pop() as [unknown, number];
    if (typeof v !== 'object' || v === null) continue;
    if (d >= limit) return true;
    for (const child of Object.values(v)) stack.push([child, d + 1]);
  }
  return false;
}

function yamlError(file: string, document: number, position: string, message: string): InputError {
  const first = (message.split('\n')[0] ?? '').slice(0, 200);
  return {
    file,
    document,
    path: '(document)',
    found: `YAML that does not parse (${position}: ${first})`,
    allowed: 'valid YAML',
  };
}

/**
 * Every non-empty document of one YAML file, bounded: at most YAML_LIMITS.documents documents, aliases
 * expanded at most YAML_LIMITS.aliases times, flow collections nested at most YAML_LIMITS.flowDepth deep; the
 * first YAML_LIMITS.errorsPerFile YAML errors with their line and column, the rest as a count.
 */
export function parseYamlFile(file: string, text: string): { documents: ParsedDocument[]; errors: InputError[] } {
  const documents: ParsedDocument[] = [];
  const errors: InputError[] = [];
  const problem = lexicalProblem(text);
  if (problem !== null) {
    errors.push({ file, document: 1, path: '(file)', ...problem });
    return { documents, errors };
  }
  const composer = new Composer({ uniqueKeys: true, logLevel: 'error' });
  const counted = countErrors(composer);
  let skipped = 0;
  let shown = 0;
  let document = 0;
  let n = 0;
  // Error objects capture a stack trace each; none is ever shown, and a broken file can have a million.
  const stackTraceLimit = Error.stackTraceLimit;
  Error.stackTraceLimit = 0;
  try {
    for (const doc of composeBounded(composer, text, () => skipped++)) {
      if (++n > YAML_LIMITS.documents) {
        errors.push({
          file,
          document: n,
          path: '(document)',
          found: `more than ${YAML_LIMITS.documents} documents`,
          allowed: `at most ${YAML_LIMITS.documents} documents per file; split the file`,
        });
        break;
      }
      if (doc.errors.length > 0) {
        document++;
        for (const e of doc.errors.slice(0, YAML_LIMITS.errorsPerFile - shown))
          errors.push(yamlError(file, document, linePosition(text, e.pos[0]), e.message));
        shown = Math.min(YAML_LIMITS.errorsPerFile, shown + doc.errors.length);
        continue;
      }
      const value = toValue(doc);
      if (!('value' in value)) {
        document++;
        errors.push({ file, document, ...value });
      } else if (value.value !== null && value.value !== undefined) {
        document++;
        documents.push({ document, value: value.value });
      } // else an empty document (e.g. a trailing ---): not counted
    }
  } catch (err) {
    // yaml recurses per nesting level: a deep enough block structure overflows the stack.
    if (!(err instanceof RangeError)) throw err;
    errors.push(yamlError(file, document + 1, 'somewhere', `nested too deeply: ${err.message}`));
  } finally {
    Error.stackTraceLimit = stackTraceLimit;
  }
  const total = counted() + skipped;
  if (total > shown)
    errors.push({
      file,
      document,
      path: '(file)',
      found: `${total - shown} more YAML errors, not shown`,
      allowed: 'valid YAML',
    });
  return { documents, errors };
}

/**
 * composer.compose, except that the parser's error tokens past YAML_LIMITS.errorsPerFile are counted, not
 * composed: each would become an error object in the document, and a file of broken lines has one per line.
 */
function* composeBounded(composer: Composer, text: string, skip: () => void) {
  let errorTokens = 0;
  for (const token of new Parser().parse(text)) {
    if (token.type === 'error' && ++errorTokens > YAML_LIMITS.errorsPerFile) {
      skip();
      continue;
    }
    yield* composer.next(token);
  }
  yield* composer.end(true, text.length);
}

/**
 * Bounds the composer's error objects. It creates one per problem, and a file of broken lines has one per few
 * bytes; past YAML_LIMITS.errorsPerFile it keeps one per document (so the document is still known to be
 * broken) and only counts the rest. The composer reads its onError and pending `errors` at each document.
 */
function countErrors(composer: Composer): () => number {
  const inner = composer as unknown as {
    onError: (source: unknown, code: unknown, message: string, warning?: boolean) => void;
    errors: unknown[];
  };
  const original = inner.onError.bind(composer);
  let count = 0;
  inner.onError = (source, code, message, warning) => {
    if (warning) return;
    count++;
    if (count <= YAML_LIMITS.errorsPerFile || inner.errors.length === 0) original(source, code, message, warning);
  };
  return () => count;
}

/** A composed document as a plain value, or why not: an alias bomb, an unresolved alias, nesting too deep. */
function toValue(doc: { toJS(options: { maxAliasCount: number }): unknown }): { value: unknown } | FieldError {
  const where = '(document)';
  let value: unknown;
  try {
    value = doc.toJS({ maxAliasCount: YAML_LIMITS.aliases });
  } catch (err) {
    if (err instanceof RangeError)
      return { path: where, found: 'YAML nested too deeply to read', allowed: 'a Kubernetes object' };
    if (err instanceof ReferenceError && /excessive alias count/i.test(err.message))
      return {
        path: where,
        found: `YAML aliases that expand more than ${YAML_LIMITS.aliases} times (an alias bomb?)`,
        allowed: `aliases (*name) that expand at most ${YAML_LIMITS.aliases} times in all`,
      };
    return {
      path: where,
      found: `YAML that cannot be read (${(err as Error).message.slice(0, 200)})`,
      allowed: 'valid YAML',
    };
  }
  if (deeperThan(value, YAML_LIMITS.depth))
    return {
      path: where,
      found: `objects and lists nested more than ${YAML_LIMITS.depth} deep (an alias that contains itself?)`,
      allowed: `at most ${YAML_LIMITS.depth} levels`,
    };
  return { value };
}

/**
 * Every document of every file sorted by kind. `objects` are inputs that are already values (the objects
 * --from-cluster lists): read first, with the same checks, each named by its source and position.
 */
export function readDocuments(
  files: readonly { name: string; text: string }[],
  objects: readonly { name: string; values: readonly unknown[] }[] = [],
): Inputs {
  const out: Inputs = {
    policies: [],
    plans: [],
    nodePools: [],
    nodeClaims: [],
    ignored: [],
    errors: [],
    omittedErrors: 0,
    named: [],
  };
  for (const { name, values } of objects) values.forEach((v, i) => classify(v, { file: name, document: i + 1 }, out));
  for (const { name, text } of files) {
    const parsed = parseYamlFile(name, text);
    for (const e of parsed.errors) pushError(out, e);
    for (const { document, value } of parsed.documents) {
      const items = isList(value) ? (value as { items: unknown[] }).items : [value];
      for (const item of items) classify(item, { file: name, document }, out);
    }
  }
  return out;
}

/** Two readings as one, `first`'s objects first; the errors stay within YAML_LIMITS.errors, the rest counted. */
export function mergeInputs(first: Inputs, second: Inputs): Inputs {
  const out: Inputs = {
    policies: [...first.policies, ...second.policies],
    plans: [...first.plans, ...second.plans],
    nodePools: [...first.nodePools, ...second.nodePools],
    nodeClaims: [...first.nodeClaims, ...second.nodeClaims],
    ignored: [...first.ignored, ...second.ignored],
    errors: [],
    omittedErrors: first.omittedErrors + second.omittedErrors,
    named: [...first.named, ...second.named],
  };
  for (const e of [...first.errors, ...second.errors]) pushError(out, e);
  return out;
}

/** Keeps the first YAML_LIMITS.errors problems and counts the rest, so output stays short for any input. */
function pushError(out: Inputs, e: InputError): void {
  if (out.errors.length < YAML_LIMITS.errors) out.errors.push(e);
  else out.omittedErrors++;
}

const where = (s: Source): string => `${s.file}, document ${s.document}`;

/**
 * Two objects of one kind with one name: the API server would keep one, so the input means two things at
 * once. Each later copy is an error naming where the first is.
 */
export function duplicateErrors(inputs: Pick<Inputs, 'named'>): InputError[] {
  const first = new Map<string, Source>();
  const errors: InputError[] = [];
  for (const { kind, name, source } of inputs.named) {
    const key = `${kind}/${name}`;
    const seen = first.get(key);
    if (seen === undefined) first.set(key, source);
    else
      errors.push({
        ...source,
        object: key,
        path: 'metadata.name',
        found: `${JSON.stringify(name)} again: the same ${kind} is in ${where(seen)}`,
        allowed: `each ${kind} name once over all inputs; remove or rename one of the two`,
      });
  }
  return errors;
}

function isList(value: unknown): boolean {
  return (
    typeof value === 'object' &&
    value !== null &&
    typeof (value as { kind?: unknown }).kind === 'string' &&
    ((value as { kind: string }).kind === 'List' || (value as { kind: string }).kind.endsWith('List')) &&
    Array.isArray((value as { items?: unknown }).items)
  );
}

/** What a value is, for a message that must not echo a document of any size back. */
function describeType(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return `a list of ${value.length} items`;
  if (typeof value === 'string') return `a string of ${value.length} characters`;
  return `a ${typeof value}`;
}

/** kind/name for messages, cut so a huge name cannot flood them (the schema check reports the name itself). */
function objectLabel(kind: string, doc: Record<string, unknown>): string {
  const name = (doc.metadata as { name?: unknown } | undefined)?.name;
  const label = `${kind || 'object'}/${typeof name === 'string' && name !== '' ? name : '?'}`;
  return truncate(label, 100);
}

const OURS = 'noderotation.io/v1alpha1';
const OUR_KINDS = 'noderotation.io/v1alpha1 RotationPolicy or MaintenancePlan';
const KARPENTER = 'karpenter.sh/v1';

function classify(value: unknown, source: Source, out: Inputs): void {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    pushError(out, {
      ...source,
      path: '(document)',
      found: describeType(value),
      allowed: 'a Kubernetes object with apiVersion and kind',
    });
    return;
  }
  const doc = value as Record<string, unknown>;
  const { apiVersion, kind } = doc;
  if (typeof apiVersion !== 'string' || apiVersion === '' || typeof kind !== 'string' || kind === '') {
    const field = typeof apiVersion !== 'string' || apiVersion === '' ? 'apiVersion' : 'kind';
    pushError(out, {
      ...source,
      object: objectLabel(typeof kind === 'string' ? kind : '', doc),
      path: field,
      found: doc[field] === undefined || doc[field] === '' ? 'nothing' : describeType(doc[field]),
      allowed: 'a Kubernetes object with apiVersion and kind (strings)',
    });
    return;
  }
  const object = objectLabel(kind, doc);
  const push = (errors: FieldError[]): boolean => {
    for (const e of errors) pushError(out, { ...source, object, ...e });
    return errors.length === 0;
  };
  const named = (): void => {
    out.named.push({ kind, name: (doc.metadata as { name: string }).name, source });
  };
  const group = apiVersion.split('/')[0];
  if (group === 'noderotation.io') {
    if (apiVersion === OURS && kind === 'Scenario') {
      out.ignored.push({ ...source, kind: `${apiVersion} ${kind} (read by noderotation simulate)` });
    } else if (apiVersion !== OURS || (kind !== 'RotationPolicy' && kind !== 'MaintenancePlan')) {
      push([
        {
          path: apiVersion === OURS ? 'kind' : 'apiVersion',
          found: `${truncate(apiVersion, 60)} ${truncate(kind, 60)}`,
          allowed: `${OUR_KINDS} (a Scenario is read by noderotation simulate)`,
        },
      ]);
    } else if (kind === 'RotationPolicy') {
      if (push(validateAgainst('rotationPolicy', doc))) {
        out.policies.push({ ...(doc as unknown as RotationPolicy), source });
        named();
      }
    } else if (push(validateAgainst('maintenancePlan', doc))) {
      out.plans.push({ ...(doc as unknown as MaintenancePlan), source });
      named();
    }
  } else if (group === 'karpenter.sh' && (kind === 'NodePool' || kind === 'NodeClaim')) {
    if (apiVersion !== KARPENTER) {
      push([
        {
          path: 'apiVersion',
          found: truncate(apiVersion, 60),
          allowed: `${KARPENTER} (Karpenter 1.0 and later; convert older objects with Karpenter's upgrade guide)`,
        },
      ]);
      return;
    }
    if (!push(karpenterErrors(doc, kind))) return;
    if (kind === 'NodePool') out.nodePools.push(doc as unknown as NodePool);
    else out.nodeClaims.push(doc as unknown as NodeClaim);
    named();
  } else {
    out.ignored.push({ ...source, kind: `${truncate(apiVersion, 60)} ${truncate(kind, 60)}` });
  }
}
