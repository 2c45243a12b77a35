// The real Crossplane CLI (built by cluster.sh from the wrapper module test/e2e/cluster/modules/crossplane)
// renders the examples against the function running on loopback: the output must be
// examples/crossplane/expected-output.txt, byte for byte. It needs no cluster, only the binary, which is why it
// lives in the e2e suite: cluster.sh builds it with the rest, and a missing binary fails here, never skips.
import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EXAMPLES, EXAMPLES_NOW, renderArgs } from '../../functions/examples.js';
import { startFunctionServer, type FunctionServer } from '../../functions/server.js';
import { serverCredentials } from '../../functions/tls.js';
import { readClusterEnv } from './helpers/cluster.js';

const env = readClusterEnv();
const binary = env.crossplane;
let server: FunctionServer | undefined;
const calls: string[] = [];

beforeAll(async () => {
  if (!existsSync(binary)) {
    throw new Error(
      `the Crossplane CLI ${binary} is missing: \`npm run cluster -- build\` builds it ` +
        '(test/e2e/cluster/modules/crossplane, docs/cluster.md)',
    );
  }
  server = await startFunctionServer({
    address: '127.0.0.1:0',
    credentials: serverCredentials({ insecure: true, tlsCertsDir: undefined }),
    metricsAddress: null,
    log: (_level, message, fields) => calls.push(`${message} ${resultOf(fields)}`),
    now: () => EXAMPLES_NOW,
  });
});

afterAll(async () => {
  await server?.shutdown(1000);
});

/** The `result` field the function logs with each RunFunction call (a string), or ''. */
function resultOf(fields: Record<string, unknown> | undefined): string {
  return typeof fields?.result === 'string' ? fields.result : '';
}

// Asynchronous: the function is served from this process, so the event loop must keep running.
const crossplane = async (args: string[]): Promise<string> =>
  (await promisify(execFile)(binary, args, { cwd: EXAMPLES, encoding: 'utf8', timeout: 90_000 })).stdout;

function render(nodePools = 'required-nodepools.yaml'): Promise<string> {
  if (!server) throw new Error('the function server did not start (see beforeAll)');
  const args = renderArgs(`127.0.0.1:${server.port}`);
  return crossplane(args.map((a) => (a === 'required-nodepools.yaml' ? nodePools : a)));
}

describe(`crossplane render (${binary})`, () => {
  it('is the version the wrapper module pins, stamped into the binary', async () => {
    expect(await crossplane(['version', '--client'])).toBe(`Client Version: ${env.versions.crossplane}\n`);
  });

  it('renders the example plan into the expected XR status and RotationPolicies', async () => {
    expect(await render()).toBe(readFileSync(join(EXAMPLES, 'expected-output.txt'), 'utf8'));
  });

  it('went through the requirements loop: a requirements-only call, then the full answer', async () => {
    calls.length = 0;
    await render();
    expect(calls.filter((c) => c.startsWith('RunFunction'))).toEqual([
      'RunFunction requirements',
      'RunFunction warning',
    ]);
  });

  // Its linter allows only the Function meta and CRDs in a function package.
  it('`crossplane xpkg build` accepts functions/package', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'xpkg-'));
    try {
      await crossplane([
        'xpkg',
        'build',
        '--package-root',
        join(EXAMPLES, '..', '..', 'functions', 'package'),
        '-o',
        join(dir, 'function-noderotation.xpkg'),
      ]);
      expect(statSync(join(dir, 'function-noderotation.xpkg')).size).toBeGreaterThan(0);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('fails the render with the FATAL message when the plan cannot work', async () => {
    const failure = await render(join('fatal', 'required-nodepools.yaml')).then(
      (out) => `unexpected success:\n${out}`,
      (err: { stderr?: string }) => String(err.stderr),
    );
    expect(failure).toContain(
      'pipeline step "rotation-policies" returned a fatal result: NodePool general ' +
        '(RotationPolicy platform-general): NodePool field spec.template.spec.expireAfter: ' +
        'expireAfter 72h is not longer than the lead time',
    );
  });
});
