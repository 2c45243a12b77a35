// The images as far as a machine without Docker can check them: the runtime stage of images/Dockerfile is
// assembled exactly as its COPY lines say (the `deps` stage's `npm ci --omit=dev` run for real, `dist` compiled by
// the same tsc as the `build` stage), and each target's CMD is started from that tree with node, as the
// distroless entrypoint would: every module the entry point loads must be in it, and no dev dependency may be.
import { spawnSync } from 'node:child_process';
import { cpSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ok, repoRoot } from './tools.js';

interface Stage {
  from: string;
  name: string;
  lines: string[];
}

/** The stages of a Dockerfile, each with its instructions (comments and continuations folded). */
export function stages(text: string): Stage[] {
  const out: Stage[] = [];
  const logical = text
    .replace(/\\\n/g, ' ')
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l !== '' && !l.startsWith('#'));
  for (const line of logical) {
    const from = /^FROM\s+(\S+)(?:\s+AS\s+(\S+))?$/i.exec(line);
    if (from) out.push({ from: from[1]!, name: from[2] ?? '', lines: [] });
    else out.at(-1)?.lines.push(line);
  }
  return out;
}

const dockerfile = stages(readFileSync(path.join(repoRoot, 'images/Dockerfile'), 'utf8'));
const stage = (name: string): Stage => {
  const s = dockerfile.find((x) => x.name === name);
  if (!s) throw new Error(`images/Dockerfile has no stage ${name}`);
  return s;
};
const work = mkdtempSync(path.join(tmpdir(), 'noderotation-image-'));
// Removing a node_modules tree takes a while on a busy machine.
afterAll(() => rmSync(work, { recursive: true, force: true }), 120_000);

/** The `deps` stage for real: its COPY sources, then its RUN (npm ci --omit=dev), in a scratch directory. */
function buildDeps(): string {
  const dir = path.join(work, 'deps');
  const deps = stage('deps');
  for (const line of deps.lines) {
    const copy = /^COPY\s+(.+)\s+\.\/$/.exec(line);
    if (copy) for (const f of copy[1]!.split(/\s+/)) cpSync(path.join(repoRoot, f), path.join(dir, f));
  }
  const runLine = deps.lines.find((l) => l.startsWith('RUN '));
  expect(runLine).toMatch(/^RUN npm ci --omit=dev /);
  // --prefer-offline: the packages are in npm's cache since the clone's own `npm ci`.
  const args = runLine!.slice('RUN npm '.length).split(/\s+/).concat('--prefer-offline');
  ok('npm', ['--prefix', dir, ...args]);
  return dir;
}

/** The runtime stage's /app, from its COPY lines: `--from=deps` from the deps build, `--from=build` and plain
 * COPYs from the clone (whose dist/ the same `tsc -p tsconfig.build.json` compiled). */
function assemble(): { app: string; env: Record<string, string> } {
  const deps = buildDeps();
  const app = path.join(work, 'app');
  const env: Record<string, string> = {};
  const runtime = stage('runtime');
  for (const line of runtime.lines) {
    const copy = /^COPY\s+(?:--from=(\S+)\s+)?(\S+)\s+(\S+)$/.exec(line);
    if (copy) {
      const [, from, src, dest] = copy as unknown as [string, string | undefined, string, string];
      const source =
        from === 'deps'
          ? path.join(deps, src.replace(/^\/src\//, ''))
          : path.join(repoRoot, src.replace(/^\/src\//, ''));
      cpSync(source, path.join(app, dest), { recursive: true });
      continue;
    }
    const e = /^ENV\s+(\S+)=(\S+)$/.exec(line);
    if (e) env[e[1]!] = e[2]!;
  }
  return { app, env };
}

const { app, env } = assemble();

function cmd(target: string): string[] {
  const s = stage(target);
  expect(s.from).toBe('runtime');
  const line = s.lines.find((l) => l.startsWith('CMD '));
  return JSON.parse(line!.slice(4)) as string[];
}

describe('images/Dockerfile', () => {
  it('builds on distroless Node 24 as non-root, in stages', () => {
    expect(stage('runtime').from).toBe('gcr.io/distroless/nodejs24-debian12:nonroot');
    expect(stage('runtime').lines).toContain('USER nonroot:nonroot');
    expect(stage('build').from).toMatch(/^node:24-/);
  });

  it('holds only the package manifest, the runtime dependencies, the compiled code and the entry point', () => {
    expect(readdirSync(app).sort()).toEqual(['bin', 'dist', 'node_modules', 'package.json']);
    const installed = readdirSync(path.join(app, 'node_modules'));
    const pkg = JSON.parse(readFileSync(path.join(repoRoot, 'package.json'), 'utf8')) as {
      dependencies: Record<string, string>;
      devDependencies: Record<string, string>;
    };
    for (const dep of Object.keys(pkg.dependencies)) {
      expect(installed).toContain(dep.split('/')[0]);
    }
    for (const dev of ['typescript', 'vitest', 'eslint', 'prettier', 'tsx', 'fast-check']) {
      expect(installed).not.toContain(dev);
    }
  });

  it('starts the controller from that tree: its flags parsed, it stops at the missing kubeconfig', () => {
    const r = spawnSync('node', cmd('controller'), {
      cwd: app,
      encoding: 'utf8',
      env: { PATH: process.env.PATH, ...env },
      timeout: 30_000,
    });
    expect(r.stderr).not.toContain('ERR_MODULE_NOT_FOUND');
    expect(r.stderr).toContain('no kubeconfig');
    expect(r.status).toBe(2);
  });

  it('starts the function from that tree: it stops at the missing certificates Crossplane would mount', () => {
    const fnEnv: Record<string, string> = { ...env };
    for (const line of stage('function').lines) {
      const e = /^ENV\s+(\S+)=(\S+)$/.exec(line);
      if (e) fnEnv[e[1]!] = e[2]!;
    }
    expect(fnEnv.TLS_SERVER_CERTS_DIR).toBe('/tls/server');
    const r = spawnSync('node', cmd('function'), {
      cwd: app,
      encoding: 'utf8',
      env: { PATH: process.env.PATH, ...fnEnv, TLS_SERVER_CERTS_DIR: path.join(work, 'no-tls') },
      timeout: 30_000,
    });
    expect(r.stderr).not.toContain('ERR_MODULE_NOT_FOUND');
    expect(r.stderr).toContain(`cannot read ${path.join(work, 'no-tls')}`);
    expect(r.status).toBe(2);
  });
});
