// The GitHub Actions workflows (.github/workflows/): actionlint, built from its Go module by tools.sh, finds
// nothing in them, and does find the errors planted in a broken workflow (a linter that reports nothing at all
// cannot pass). The release workflow does what its header and docs/operations.md#releases say: its steps' scripts
// run here, in order, as the runner would run them (bash -eo pipefail, GITHUB_ENV and GITHUB_PATH honoured,
// `${{ }}` expressions evaluated), with the registry-facing commands stubbed (docker, crossplane, cosign, gh and
// helm's push and login; helm lint, package and template are the real helm) and the build-push-action steps
// recorded with their inputs; the test then checks what was built, pushed and signed, by which reference.
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import {
  chmodSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { manifests, ok, repoRoot, run, toolPath, type Manifest } from './tools.js';

interface Step {
  name?: string;
  id?: string;
  if?: string;
  uses?: string;
  run?: string;
  shell?: string;
  with?: Record<string, unknown>;
  env?: Record<string, unknown>;
}
interface Job {
  'runs-on': string;
  permissions?: Record<string, string>;
  env?: Record<string, unknown>;
  steps: Step[];
}
interface Workflow {
  name: string;
  on: unknown;
  permissions?: unknown;
  jobs: Record<string, Job>;
}

const WORKFLOWS = path.join(repoRoot, '.github/workflows');
const workflowFiles = readdirSync(WORKFLOWS)
  .filter((f) => /\.ya?ml$/.test(f))
  .sort()
  .map((f) => path.join('.github/workflows', f));
const text = (file: string): string => readFileSync(path.join(repoRoot, file), 'utf8');
const release = parse(text('.github/workflows/release.yml')) as Workflow;
const releaseSteps = Object.values(release.jobs)[0]!.steps;

const work = mkdtempSync(path.join(tmpdir(), 'noderotation-workflows-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));

describe('actionlint', () => {
  it('finds nothing in .github/workflows', () => {
    expect(workflowFiles).toEqual(
      expect.arrayContaining(['.github/workflows/ci.yml', '.github/workflows/release.yml']),
    );
    const r = run(toolPath('actionlint'), ['-no-color', ...workflowFiles]);
    expect(r.stdout + r.stderr).toBe('');
    expect(r.code).toBe(0);
  });

  it('reports the errors of a broken workflow and exits 1', () => {
    const dir = path.join(work, 'broken/.github/workflows');
    mkdirSync(dir, { recursive: true });
    const file = path.join(dir, 'broken.yml');
    writeFileSync(
      file,
      [
        'name: broken',
        'on:',
        '  push:',
        '    tags: ["v*"]',
        'permissions:',
        '  id-tokens: write',
        'jobs:',
        '  publish:',
        '    runs-on: ubuntu-24.04',
        '    needs: [build]',
        '    steps:',
        '      - run: echo "${{ steps.push.outputs.digest }}"',
        '',
      ].join('\n'),
    );
    const r = run(toolPath('actionlint'), ['-no-color', '-oneline', file]);
    expect(r.code).toBe(1);
    const lines = r.stdout.trim().split('\n');
    expect(lines).toEqual([
      expect.stringMatching(/broken\.yml:6:3: unknown permission scope "id-tokens"/),
      expect.stringMatching(/broken\.yml:8:3: job "publish" needs job "build" which does not exist/),
      expect.stringMatching(/broken\.yml:12:\d+: property "push" is not defined in object type/),
    ]);
  });
});

describe('the release workflow, read', () => {
  it('runs on a tag v* only', () => {
    expect(release.on).toEqual({ push: { tags: ['v*'] } });
  });

  it('one job, with exactly contents, packages and id-token write; nothing at the workflow level', () => {
    expect(release.permissions).toEqual({});
    expect(Object.values(release.jobs).map((j) => j.permissions)).toEqual([
      { contents: 'write', packages: 'write', 'id-token': 'write' },
    ]);
  });

  it('every action in every workflow is pinned to a full commit SHA, its version in a comment', () => {
    for (const file of workflowFiles) {
      const uses = text(file)
        .split('\n')
        .filter((l) => /^\s*(- )?uses:/.test(l));
      expect(uses.length, file).toBeGreaterThan(0);
      for (const line of uses) {
        expect(line, file).toMatch(/uses: [\w.-]+\/[\w.-]+@[0-9a-f]{40} # v\d+\.\d+\.\d+$/);
      }
    }
  });

  it('QEMU, Buildx, the ghcr.io login and cosign are set up before they are needed', () => {
    const at = (prefix: string): number => releaseSteps.findIndex((s) => s.uses?.startsWith(`${prefix}@`));
    const firstBuild = at('docker/build-push-action');
    for (const action of ['docker/setup-qemu-action', 'docker/setup-buildx-action', 'docker/login-action']) {
      expect(at(action), action).toBeGreaterThanOrEqual(0);
      expect(at(action), action).toBeLessThan(firstBuild);
    }
    const firstSign = releaseSteps.findIndex((s) => s.run?.includes('cosign sign'));
    expect(at('sigstore/cosign-installer')).toBeGreaterThanOrEqual(0);
    expect(at('sigstore/cosign-installer')).toBeLessThan(firstSign);
    expect(releaseSteps.find((s) => s.uses?.startsWith('docker/login-action@'))?.with?.registry).toBe('ghcr.io');
  });

  it('builds helm and the Crossplane CLI from their wrapper modules, as CI does', () => {
    expect(releaseSteps.find((s) => s.id === 'tools')?.run).toContain(
      'bash test/install/tools.sh build helm crossplane',
    );
  });

  it('builds images/Dockerfile targets that exist, and packages a Crossplane Function from functions/package', () => {
    const targets = [...text('images/Dockerfile').matchAll(/^FROM\s+\S+\s+AS\s+(\S+)$/gim)].map((m) => m[1]);
    expect(targets).toEqual(expect.arrayContaining(['controller', 'function']));
    const meta = parse(text('functions/package/crossplane.yaml')) as { apiVersion: string; kind: string };
    expect(meta.apiVersion).toMatch(/^meta\.pkg\.crossplane\.io\/v1(beta1)?$/);
    expect(meta.kind).toBe('Function');
  });
});

/** What one simulated run of the release workflow did. */
interface Simulation {
  code: number;
  failed?: string;
  output: string;
  /** Each stubbed command: its name and arguments. */
  calls: string[][];
  /** The build-push-action steps' inputs, expressions evaluated, by step id. */
  builds: Record<string, Record<string, unknown>>;
  env: Record<string, string>;
  runnerTemp: string;
}

const fakeDigest = (s: string): string => `sha256:${createHash('sha256').update(s).digest('hex')}`;

// Stubs of the commands that talk to a registry or GitHub: each appends its name and arguments (tab-separated)
// to $STUB_LOG and makes the files and output the next steps read.
const STUBS: Record<string, string> = {
  cosign: '',
  gh: '',
  crossplane: `
if [[ "$1 $2" == "xpkg build" ]]; then
  for a in "$@"; do
    case "$a" in
      --embed-runtime-image-tarball=*) [[ -f "\${a#*=}" ]] || { echo "no runtime tarball \${a#*=}" >&2; exit 1; } ;;
      --package-file=*) echo xpkg >"\${a#*=}" ;;
    esac
  done
fi`,
  docker: `
if [[ "$1 $2" == "buildx build" ]]; then
  for a in "$@"; do
    if [[ "$a" == type=docker,dest=* ]]; then echo tarball >"\${a#type=docker,dest=}"; fi
  done
elif [[ "$1 $2 $3" == "buildx imagetools inspect" ]]; then
  case "$6" in
    *.Manifest.Digest*) printf 'sha256:%s\\n' "$(printf '%s' "$4" | sha256sum | cut -d' ' -f1)" ;;
    *.SBOM*) printf '{"spdxVersion":"SPDX-2.3","name":"%s"}\\n' "$4" ;;
    *) exit 2 ;;
  esac
fi`,
  helm: `
case "$1" in
  registry) [[ -n "$(cat)" ]] || { echo "no password on stdin" >&2; exit 1; } ;;
  push) printf 'Pushed: %s\\nDigest: sha256:%s\\n' "$3" "$(sha256sum "$2" | cut -d' ' -f1)" ;;
  *) exec "$REAL_HELM" "$@" ;;
esac`,
};

/** Evaluates the `${{ }}` expressions the release workflow uses: context properties, nothing else. */
function evaluate(value: string, ctx: Record<string, Record<string, string>>, steps: Record<string, string>): string {
  return value.replace(/\$\{\{\s*(.+?)\s*\}\}/g, (_, expr: string) => {
    const step = /^steps\.([\w-]+)\.outputs\.([\w-]+)$/.exec(expr);
    const prop = /^(github|env|runner)\.([\w-]+)$/.exec(expr);
    // As on GitHub, a step output that was never set is the empty string.
    const v = step ? (steps[`${step[1]}.${step[2]}`] ?? '') : prop ? ctx[prop[1]!]![prop[2]!] : undefined;
    if (v === undefined) throw new Error(`an expression this runner cannot evaluate: ${expr}`);
    return v;
  });
}

function simulate(tag: string, owner = 'NodeRotation'): Simulation {
  const root = mkdtempSync(path.join(work, 'run-'));
  const stubs = path.join(root, 'stubs');
  const runnerTemp = path.join(root, 'runner-temp');
  const log = path.join(root, 'calls.log');
  mkdirSync(stubs);
  mkdirSync(runnerTemp);
  writeFileSync(log, '');
  for (const [name, body] of Object.entries(STUBS)) {
    const file = path.join(stubs, name);
    writeFileSync(
      file,
      [
        '#!/usr/bin/env bash',
        'set -euo pipefail',
        `{ printf '%s' "${name}"; printf '\\t%s' "$@"; printf '\\n'; } >>"$STUB_LOG"`,
        body,
        '',
      ].join('\n'),
    );
    chmodSync(file, 0o755);
  }
  const github: Record<string, string> = {
    ref_name: tag,
    repository: `${owner}/noderotation`,
    repository_owner: owner,
    actor: 'release-bot',
    sha: 'a'.repeat(40),
    server_url: 'https://github.com',
    token: 'ghs_not-a-token',
  };
  const env: Record<string, string> = {};
  const ctx = { github, env, runner: { temp: runnerTemp } };
  const outputs: Record<string, string> = {};
  const builds: Record<string, Record<string, unknown>> = {};
  let paths: string[] = [];
  let output = '';
  const job = Object.values(release.jobs)[0]!;
  for (const [k, v] of Object.entries(job.env ?? {})) env[k] = evaluate(String(v), ctx, outputs);

  for (const [i, step] of job.steps.entries()) {
    const label = step.name ?? step.id ?? step.uses ?? `step ${i}`;
    if (step.if !== undefined || step.shell !== undefined) throw new Error(`${label}: if/shell not simulated`);
    // The tools the step builds: the real helm stands behind the stub, crossplane is a stub.
    if (step.id === 'tools') continue;
    if (step.uses?.startsWith('docker/build-push-action@')) {
      const inputs: Record<string, unknown> = {};
      for (const [k, v] of Object.entries(step.with ?? {})) {
        inputs[k] = typeof v === 'string' ? evaluate(v, ctx, outputs) : v;
      }
      builds[step.id!] = inputs;
      outputs[`${step.id}.digest`] = fakeDigest(step.id!);
      continue;
    }
    if (step.uses) continue;
    const script = path.join(root, `step-${i}.sh`);
    const envFile = path.join(root, `env-${i}`);
    const pathFile = path.join(root, `path-${i}`);
    writeFileSync(script, step.run!);
    writeFileSync(envFile, '');
    writeFileSync(pathFile, '');
    const stepEnv: Record<string, string> = {};
    for (const [k, v] of Object.entries(step.env ?? {})) stepEnv[k] = evaluate(String(v), ctx, outputs);
    const r = spawnSync('bash', ['--noprofile', '--norc', '-eo', 'pipefail', script], {
      cwd: repoRoot,
      encoding: 'utf8',
      env: {
        HOME: process.env.HOME,
        PATH: [stubs, ...paths, process.env.PATH].join(':'),
        CI: 'true',
        GITHUB_ACTIONS: 'true',
        GITHUB_REF: `refs/tags/${tag}`,
        GITHUB_REF_NAME: tag,
        GITHUB_REPOSITORY: github.repository,
        GITHUB_REPOSITORY_OWNER: owner,
        GITHUB_ACTOR: github.actor,
        GITHUB_SHA: github.sha,
        GITHUB_SERVER_URL: github.server_url,
        GITHUB_ENV: envFile,
        GITHUB_PATH: pathFile,
        RUNNER_TEMP: runnerTemp,
        STUB_LOG: log,
        REAL_HELM: toolPath('helm'),
        ...env,
        ...stepEnv,
      },
    });
    output += `--- ${label}\n${r.stdout}${r.stderr}`;
    if (r.status !== 0)
      return { code: r.status ?? -1, failed: label, output, calls: calls(log), builds, env, runnerTemp };
    for (const line of readFileSync(envFile, 'utf8').split('\n').filter(Boolean)) {
      const m = /^(\w+)=(.*)$/.exec(line);
      if (!m) throw new Error(`${label}: GITHUB_ENV line not simulated: ${line}`);
      env[m[1]!] = m[2]!;
    }
    paths = [...readFileSync(pathFile, 'utf8').split('\n').filter(Boolean).reverse(), ...paths];
  }
  return { code: 0, output, calls: calls(log), builds, env, runnerTemp };
}

function calls(log: string): string[][] {
  return readFileSync(log, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((l) => l.split('\t'));
}

describe('the release workflow, run with the registry stubbed', () => {
  const registry = 'ghcr.io/noderotation';
  const sim = simulate('v1.2.3');
  const of = (name: string, ...prefix: string[]): string[][] =>
    sim.calls.filter((c) => c[0] === name && prefix.every((p, i) => c[i + 1] === p));
  const index = (call: string[] | undefined): number => (call ? sim.calls.indexOf(call) : -1);

  it('succeeds; the version is the tag without v, the registry the owner in lower case', () => {
    expect(sim.code, sim.output).toBe(0);
    expect(sim.env).toMatchObject({ VERSION: '1.2.3', REGISTRY: registry });
  });

  it('builds and pushes both images for linux/amd64 and linux/arm64, with SBOM and max provenance', () => {
    for (const [id, target, image] of [
      ['controller', 'controller', 'noderotation-controller'],
      ['function', 'function', 'noderotation-function'],
    ] as const) {
      expect(sim.builds[id], id).toMatchObject({
        context: '.',
        file: 'images/Dockerfile',
        target,
        push: true,
        tags: `${registry}/${image}:1.2.3`,
        sbom: true,
        provenance: 'mode=max',
      });
      expect(String(sim.builds[id]!.platforms).split(',').sort()).toEqual(['linux/amd64', 'linux/arm64']);
      expect(sim.builds[id]!.labels).toContain('org.opencontainers.image.version=1.2.3');
    }
  });

  it('builds the Crossplane package per platform around the function target and pushes one index', () => {
    const runtimes = of('docker', 'buildx', 'build');
    expect(runtimes.map((c) => c[c.indexOf('--platform') + 1])).toEqual(['linux/amd64', 'linux/arm64']);
    for (const c of runtimes)
      expect(c.slice(c.indexOf('--target'), c.indexOf('--target') + 2)).toEqual(['--target', 'function']);
    const builds = of('crossplane', 'xpkg', 'build');
    expect(builds).toHaveLength(2);
    for (const [i, arch] of ['amd64', 'arm64'].entries()) {
      expect(builds[i]).toEqual(
        expect.arrayContaining([
          '--package-root=functions/package',
          `--embed-runtime-image-tarball=${sim.runnerTemp}/function-runtime-${arch}.tar`,
          `--package-file=${sim.runnerTemp}/function-noderotation-${arch}.xpkg`,
        ]),
      );
    }
    const packages = ['amd64', 'arm64'].map((a) => `${sim.runnerTemp}/function-noderotation-${a}.xpkg`);
    expect(of('crossplane', 'xpkg', 'push')).toEqual([
      [
        'crossplane',
        'xpkg',
        'push',
        `--package-files=${packages.join(',')}`,
        `${registry}/function-noderotation:v1.2.3`,
      ],
    ]);
  });

  it('pushes the chart to oci://ghcr.io/<owner>/charts after logging in', () => {
    const chart = `${sim.runnerTemp}/release/noderotation-1.2.3.tgz`;
    expect(of('helm', 'registry')).toEqual([
      ['helm', 'registry', 'login', 'ghcr.io', '--username', 'release-bot', '--password-stdin'],
    ]);
    expect(of('helm', 'push')).toEqual([['helm', 'push', chart, `oci://${registry}/charts`]]);
    expect(index(of('helm', 'registry')[0])).toBeLessThan(index(of('helm', 'push')[0]));
  });

  it('the pushed chart is version and appVersion 1.2.3 and installs this release', () => {
    const chart = `${sim.runnerTemp}/release/noderotation-1.2.3.tgz`;
    const meta = parse(ok(toolPath('helm'), ['show', 'chart', chart])) as Record<string, unknown>;
    expect(meta).toMatchObject({ name: 'noderotation', version: '1.2.3', appVersion: '1.2.3' });
    const rendered = manifests(
      ok(toolPath('helm'), ['template', 'noderotation', chart, '--set', 'function.enabled=true']),
    );
    const find = (kind: string): Manifest => rendered.find((m) => m.kind === kind)!;
    const deployment = find('Deployment') as unknown as {
      spec: { template: { spec: { containers: { image: string }[] } } };
    };
    expect(deployment.spec.template.spec.containers[0]!.image).toBe(`${registry}/noderotation-controller:1.2.3`);
    expect((find('Function') as unknown as { spec: { package: string } }).spec.package).toBe(
      `${registry}/function-noderotation:v1.2.3`,
    );
  });

  it('signs both images, the package and the chart by digest with cosign, each after its push', () => {
    const chartDigest = `sha256:${createHash('sha256')
      .update(readFileSync(`${sim.runnerTemp}/release/noderotation-1.2.3.tgz`))
      .digest('hex')}`;
    expect(of('cosign')).toEqual([
      ['cosign', 'sign', '--yes', `${registry}/noderotation-controller@${fakeDigest('controller')}`],
      ['cosign', 'sign', '--yes', `${registry}/noderotation-function@${fakeDigest('function')}`],
      [
        'cosign',
        'sign',
        '--yes',
        `${registry}/function-noderotation@${fakeDigest(`${registry}/function-noderotation:v1.2.3`)}`,
      ],
      ['cosign', 'sign', '--yes', `${registry}/charts/noderotation@${chartDigest}`],
    ]);
    expect(index(of('crossplane', 'xpkg', 'push')[0])).toBeLessThan(index(of('cosign')[2]));
    expect(index(of('helm', 'push')[0])).toBeLessThan(index(of('cosign')[3]));
  });

  it('creates the GitHub release last, with the SBOM of each image and platform and the chart attached', () => {
    const gh = of('gh');
    expect(gh).toHaveLength(1);
    expect(sim.calls.at(-1)).toBe(gh[0]);
    const args = gh[0]!;
    expect(args.slice(0, 4)).toEqual(['gh', 'release', 'create', 'v1.2.3']);
    expect(args).toContain('--verify-tag');
    expect(args).not.toContain('--prerelease');
    const files = args.filter((a) => a.startsWith(`${sim.runnerTemp}/release/`)).map((a) => path.basename(a));
    expect(files.sort()).toEqual([
      'noderotation-1.2.3.tgz',
      'noderotation-controller-1.2.3-linux-amd64.spdx.json',
      'noderotation-controller-1.2.3-linux-arm64.spdx.json',
      'noderotation-function-1.2.3-linux-amd64.spdx.json',
      'noderotation-function-1.2.3-linux-arm64.spdx.json',
    ]);
    const sbom: unknown = JSON.parse(
      readFileSync(`${sim.runnerTemp}/release/noderotation-function-1.2.3-linux-arm64.spdx.json`, 'utf8'),
    );
    expect(sbom).toEqual({
      spdxVersion: 'SPDX-2.3',
      name: `${registry}/noderotation-function@${fakeDigest('function')}`,
    });
    const notes = readFileSync(path.join(sim.runnerTemp, 'notes.md'), 'utf8');
    expect(notes).toContain(`${registry}/function-noderotation:v1.2.3`);
    expect(notes).toContain(fakeDigest('controller'));
  });

  it('marks a pre-release tag as a pre-release', () => {
    const pre = simulate('v1.2.3-rc.1');
    expect(pre.code, pre.output).toBe(0);
    const gh = pre.calls.find((c) => c[0] === 'gh')!;
    expect(gh.slice(0, 4)).toEqual(['gh', 'release', 'create', 'v1.2.3-rc.1']);
    expect(gh).toContain('--prerelease');
  });

  it.each(['v1.2', 'v1.2.3+build.5', 'v01.2.3'])(
    'stops at a tag that is not v<semver> (%s), before anything is pushed',
    (tag) => {
      const bad = simulate(tag);
      expect(bad.code).not.toBe(0);
      expect(bad.failed).toBe('Version and registry from the tag');
      expect(bad.output).toContain(`tag ${tag} is not v<major>.<minor>.<patch>`);
      expect(bad.calls).toEqual([]);
      expect(bad.builds).toEqual({});
    },
  );
});

describe('docs/operations.md#releases', () => {
  const docs = text('docs/operations.md');
  const section = /^## Releases\n([\s\S]*?)^## /m.exec(docs)?.[1] ?? '';

  it("the certificate identity it verifies is this workflow's, at a tag", () => {
    const regexps = [...section.matchAll(/--certificate-identity-regexp '([^']+)'/g)].map((m) => m[1]!);
    expect(regexps.length).toBeGreaterThan(0);
    for (const r of regexps) {
      const re = new RegExp(r);
      expect(
        re.test('https://github.com/noderotation/noderotation/.github/workflows/release.yml@refs/tags/v1.2.3'),
      ).toBe(true);
      expect(re.test('https://github.com/noderotation/noderotation/.github/workflows/ci.yml@refs/tags/v1.2.3')).toBe(
        false,
      );
      expect(
        re.test('https://github.com/noderotation/noderotation/.github/workflows/release.yml@refs/heads/main'),
      ).toBe(false);
      expect(re.test('https://github.com/someone/noderotation/.github/workflows/release.yml@refs/tags/v1.2.3')).toBe(
        false,
      );
    }
    expect(section).toContain('--certificate-oidc-issuer https://token.actions.githubusercontent.com');
  });

  it('names every reference the workflow publishes', () => {
    for (const ref of [
      'ghcr.io/noderotation/noderotation-controller:',
      'ghcr.io/noderotation/noderotation-function:',
      'ghcr.io/noderotation/function-noderotation:v',
      'oci://ghcr.io/noderotation/charts/noderotation',
    ]) {
      expect(section).toContain(ref);
    }
    expect(existsSync(path.join(repoRoot, '.github/workflows/release.yml'))).toBe(true);
  });
});
