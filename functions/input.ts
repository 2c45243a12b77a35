// The optional step input of function-noderotation (the `input:` block of its pipeline step). One schema,
// used both to check the input at run time and to generate the documenting CRD in functions/package/input/.
import type { JsonObject, JsonValue } from './json.js';
import { shown } from './show.js';
import { didYouMean, nearValues } from '../src/util/near-names.js';

export const INPUT_GROUP = 'noderotation.fn.crossplane.io';
export const INPUT_VERSION = 'v1alpha1';
export const INPUT_API_VERSION = `${INPUT_GROUP}/${INPUT_VERSION}`;
export const INPUT_KIND = 'Input';

const RFC3339 = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/;

/** The fields of the Input, as an OpenAPI v3 schema (the CRD's `openAPIV3Schema.properties`). */
export const INPUT_PROPERTIES = {
  calendarStart: {
    type: 'string',
    format: 'date-time',
    description:
      'The instant the window figures (P, D, gap) are taken from, over the following year (docs/scheduling.md). ' +
      'Unset: the start of the current UTC day, so the output changes at most once a day. Set it to pin the output, ' +
      'e.g. for reproducible renders.',
  },
} as const;

export interface StepInput {
  /** Epoch milliseconds, or null when the input does not set it. */
  calendarStart: number | null;
}

export interface InputError {
  path: string;
  found: string;
  allowed: string;
}

const show = (v: JsonValue | undefined): string => shown(v);

/** Reads the step input; absent input is valid (every field has a default). */
export function parseInput(input: JsonObject | undefined): { input: StepInput; errors: InputError[] } {
  const out: StepInput = { calendarStart: null };
  const errors: InputError[] = [];
  if (input === undefined) return { input: out, errors };
  if (input.apiVersion !== INPUT_API_VERSION) {
    errors.push({
      path: 'input.apiVersion',
      found: show(input.apiVersion),
      allowed: JSON.stringify(INPUT_API_VERSION),
    });
  }
  if (input.kind !== INPUT_KIND)
    errors.push({ path: 'input.kind', found: show(input.kind), allowed: JSON.stringify(INPUT_KIND) });
  const known = new Set(['apiVersion', 'kind', 'metadata', ...Object.keys(INPUT_PROPERTIES)]);
  // At most 10 unknown fields are named: enough to fix them, bounded whatever the input holds.
  for (const key of Object.keys(input)
    .filter((k) => !known.has(k))
    .sort()
    .slice(0, 10)) {
    // A misspelt field would otherwise be ignored silently and the default used instead.
    if (!known.has(key))
      errors.push({
        path: `input.${key.length > 64 ? `${key.slice(0, 64)}…` : key}`,
        found: `an unknown field${didYouMean(nearValues(key, Object.keys(INPUT_PROPERTIES)))}`,
        allowed: `one of ${Object.keys(INPUT_PROPERTIES).join(', ')}`,
      });
  }
  const start = input.calendarStart;
  if (start !== undefined && start !== null) {
    const t = typeof start === 'string' && RFC3339.test(start) ? Date.parse(start) : Number.NaN;
    if (Number.isNaN(t))
      errors.push({
        path: 'input.calendarStart',
        found: show(start),
        allowed: 'an RFC 3339 timestamp such as 2027-01-04T00:00:00Z',
      });
    else out.calendarStart = t;
  }
  return { input: out, errors };
}
