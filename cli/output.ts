// Structured output: -o json and -o yaml print the same data. YAML is written for YAML 1.1 readers: kubectl and
// other Go tools read 1.1, where an unquoted 03:00 is the number 180 and 2027-01-04T00:00:00Z a timestamp, so
// what 1.1 would misread is quoted and stays a string for every reader.
import { stringify } from 'yaml';

export const YAML_OUT = { lineWidth: 0, version: '1.1' } as const;

/** `value` as indented JSON or as YAML, ending in a newline. */
export function structured(value: unknown, format: 'json' | 'yaml'): string {
  return format === 'json' ? `${JSON.stringify(value, null, 2)}\n` : stringify(value, YAML_OUT);
}

/** Kubernetes objects as kubectl prints several: YAML documents, or one JSON List. */
export function objects(items: readonly unknown[], format: 'json' | 'yaml'): string {
  if (format === 'json') return structured({ apiVersion: 'v1', kind: 'List', items }, 'json');
  return items.map((o) => stringify(o, YAML_OUT)).join('---\n');
}
