// The Crossplane examples (examples/crossplane/) as the tests and docs use them: where they are, the
// calendar the expected output was rendered with, and where the real Crossplane CLI is cached.
import { homedir } from 'node:os';
import { join } from 'node:path';
export const EXAMPLES = join(import.meta.dirname, '..', 'examples', 'crossplane');

/**
 * The clock the expected output was rendered with (the function takes the start of its UTC day). The
 * examples' zones give the same figures for any calendar year, but pinning it keeps the check exact.
 */
export const EXAMPLES_NOW = Date.parse('2027-01-04T12:00:00Z');

export const CROSSPLANE_VERSION = 'v2.2.4';

/** The crank binary test/e2e/cluster/cluster.sh builds (same cache root as cluster.sh). */
export function crossplaneBinary(env: NodeJS.ProcessEnv = process.env): string {
  const cache = env.NODEROTATION_CACHE ?? join(env.XDG_CACHE_HOME ?? join(homedir(), '.cache'), 'noderotation');
  return join(cache, 'bin', `crossplane-${CROSSPLANE_VERSION}`, 'crossplane');
}

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
