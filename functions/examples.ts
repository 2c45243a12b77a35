// The Crossplane examples (examples/crossplane/) as the tests and docs use them: where they are, the
// calendar the expected output was rendered with, and the `crossplane render` arguments (the CLI itself is
// built by test/e2e/cluster/cluster.sh and found through the cluster's env file).
import { join } from 'node:path';
export const EXAMPLES = join(import.meta.dirname, '..', 'examples', 'crossplane');

/**
 * The clock the expected output was rendered with (the function takes the start of its UTC day). The
 * examples' zones give the same figures for any calendar year, but pinning it keeps the check exact.
 */
export const EXAMPLES_NOW = Date.parse('2027-01-04T12:00:00Z');

/** `crossplane render` arguments for the examples against a function listening on target (host:port). */
export function renderArgs(target: string): string[] {
  return [
    'render',
    'xr.yaml',
    'composition.yaml',
    'functions.yaml',
    '--include-function-results',
    '--required-resources',
    'required-nodepools.yaml',
    '--function-annotations',
    `render.crossplane.io/runtime-development-target=${target}`,
    '--timeout',
    '60s',
  ];
}
