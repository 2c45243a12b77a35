// Reading Kubernetes-style YAML: every document of every file, with where it came from, sorted by kind.
import { parseAllDocuments } from 'yaml';
import type { MaintenancePlan, RotationPolicy } from '../generated/api-types.js';
import type { NodeClaim, NodePool } from '../karpenter/types.js';
import { validateAgainst, type FieldError } from './validate.js';

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
  errors: InputError[];
}

export function formatInputError(e: InputError): string {
  const where = `${e.file}, document ${e.document}${e.object ? ` (${e.object})` : ''}`;
  return `${where}: ${e.path}: found ${e.found}; allowed: ${e.allowed}${e.reason ? ` (${e.reason})` : ''}`;
}

export function readDocuments(files: readonly { name: string; text: string }[]): Inputs {
  const out: Inputs = { policies: [], plans: [], nodePools: [], nodeClaims: [], ignored: [], errors: [] };
  for (const { name, text } of files) {
    let n = 0;
    const docs = parseAllDocuments(text, { prettyErrors: true });
    for (const d of Array.isArray(docs) ? docs : [docs]) {
      n++;
      if (d.errors.length > 0) {
        for (const err of d.errors) {
          out.errors.push({
            file: name,
            document: n,
            path: '(document)',
            found: 'YAML that does not parse',
            allowed: err.message.split('\n')[0] ?? 'valid YAML',
          });
        }
        continue;
      }
      const value = d.toJS() as unknown;
      if (value === null || value === undefined) {
        n--;
        continue;
      } // empty document (e.g. trailing ---)
      const items = isList(value) ? (value as { items: unknown[] }).items : [value];
      for (const item of items) classify(item, { file: name, document: n }, out);
    }
  }
  return out;
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

function classify(value: unknown, source: Source, out: Inputs): void {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    out.errors.push({
      ...source,
      path: '(document)',
      found: JSON.stringify(value),
      allowed: 'a Kubernetes object with apiVersion and kind',
    });
    return;
  }
  const doc = value as Record<string, unknown>;
  const kind = String(doc.kind ?? '');
  const object = `${kind || 'object'}/${String((doc.metadata as { name?: unknown } | undefined)?.name ?? '?')}`;
  const group = String(doc.apiVersion ?? '').split('/')[0];
  const push = (errors: FieldError[]): boolean => {
    for (const e of errors) out.errors.push({ ...source, object, ...e });
    return errors.length === 0;
  };
  if (group === 'noderotation.io' && kind === 'RotationPolicy') {
    if (push(validateAgainst('rotationPolicy', doc)))
      out.policies.push({ ...(doc as unknown as RotationPolicy), source });
  } else if (group === 'noderotation.io' && kind === 'MaintenancePlan') {
    if (push(validateAgainst('maintenancePlan', doc)))
      out.plans.push({ ...(doc as unknown as MaintenancePlan), source });
  } else if (doc.apiVersion === 'karpenter.sh/v1' && (kind === 'NodePool' || kind === 'NodeClaim')) {
    // Karpenter's fields we read, with Karpenter's own constraints (schemas/karpenter/).
    if (!push(validateAgainst(kind === 'NodePool' ? 'nodePool' : 'nodeClaim', doc))) return;
    if (kind === 'NodePool') out.nodePools.push(doc as unknown as NodePool);
    else out.nodeClaims.push(doc as unknown as NodeClaim);
  } else if (!kind || !doc.apiVersion) {
    out.errors.push({
      ...source,
      object,
      path: doc.apiVersion ? 'kind' : 'apiVersion',
      found: 'nothing',
      allowed: 'a Kubernetes object with apiVersion and kind',
    });
  } else {
    out.ignored.push({ ...source, kind: `${String(doc.apiVersion)} ${kind}` });
  }
}
