// The real Crossplane CLI (crank v2.2.4, built into the binary cache) renders the examples against the
// function running on loopback: the output must be examples/crossplane/expected-output.txt, byte for byte.
// It needs no cluster; it lives in the e2e suite because it needs the cached binary.
import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { crossplaneBinary, EXAMPLES, EXAMPLES_NOW, renderArgs } from '../../functions/examples.js';
import { startFunctionServer, type FunctionServer } from '../../functions/server.js';
import { serverCredentials } from '../../functions/tls.js';

const binary = crossplaneBinary();
// The Go module proxy answers 403 for github.com/crossplane/crossplane (every version), so a fresh machine
// cannot build the CLI (docs/cluster.md). Where the binary is cached these tests run; elsewhere they are
// reported as skipped with the reason, rather than failing every CI run on a new machine.
const available = existsSync(binary);
if (!available)
  console.warn(
    `SKIPPED crossplane render tests: ${binary} is missing and cannot be built from the Go module proxy (docs/function.md).`,
  );
let server: FunctionServer;
const calls: string[] = [];

beforeAll(async () => {
  if (!available) return;
  server = await startFunctionServer({
    address: '127.0.0.1:0',
    credentials: serverCredentials({ insecure: true, tlsCertsDir: undefined }),
    metricsAddress: null,
    log: (_level, message, fields) => calls.push(`${message} ${String(fields?.result ?? '')}`),
    now: () => EXAMPLES_NOW,
  });
});

afterAll(async () => {
  await server?.shutdown(1000);
});

// Asynchronous: the function is served from this process, so the event loop must keep running.
const crossplane = async (args: string[]): Promise<string> =>
  (await promisify(execFile)(binary, args, { cwd: EXAMPLES, encoding: 'utf8', timeout: 90_000 })).stdout;
const render = (nodePools = 'required-nodepools.yaml'): Promise<string> =>
  crossplane(renderArgs(`127.0.0.1:${server.port}`).map((a) => (a === 'required-nodepools.yaml' ? nodePools : a)));

describe.skipIf(!available)(`crossplane render (${binary})`, () => {
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

  it('`crossplane xpkg build` accepts functions/package (its linter allows only the Function meta and CRDs)', async () => {
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
      'pipeline step "rotation-policies" returned a fatal result: NodePool general (RotationPolicy platform-general): spec.defaults.ageThreshold: expireAfter 3d is not longer than the lead time',
    );
  });
});
