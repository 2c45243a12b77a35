// Flux beside the e2e cluster (`cluster.sh flux up|down`, test/e2e/cluster/flux.sh) and a fleet repository on
// its Git server: started by the Flux GitOps test and stopped after it, so no other test sees it running.
import { spawn, spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { clusterScript, logTails, readEnvFile, repoRoot, runScript } from './cluster.js';

export interface FluxEnv {
  namespace: string;
  /** Where the Git server serves bare repositories from, and its base URL. */
  gitRoot: string;
  gitUrl: string;
}

/**
 * `cluster.sh <subcommand...>` without blocking the event loop, so that Crossplane and Flux start side by side
 * while the test prepares its NodePool. Resolves with the path the script prints (its env file).
 */
export function clusterAsync(...args: string[]): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn('bash', [clusterScript, ...args], { cwd: repoRoot, stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    child.stdout.on('data', (c: Buffer) => (out += c.toString()));
    child.on('error', reject);
    child.on('close', (code) => {
      if (code === 0) resolve(out.trim());
      else reject(new Error(`cluster.sh ${args.join(' ')} failed (exit ${String(code)})\n${logTails()}`));
    });
  });
}

/** `cluster.sh flux up`: source-controller, kustomize-controller and the Git server. */
export async function fluxUp(): Promise<FluxEnv> {
  const get = readEnvFile(await clusterAsync('flux', 'up'));
  return { namespace: get('FLUX_NAMESPACE'), gitRoot: get('GIT_ROOT'), gitUrl: get('GIT_URL') };
}

export function fluxDown(): void {
  const r = runScript('flux', 'down');
  if (r.status !== 0) throw new Error(`cluster.sh flux down failed (exit ${String(r.status)})`);
}

function git(cwd: string, args: string[]): string {
  const r = spawnSync('git', args, {
    cwd,
    encoding: 'utf8',
    // No user configuration or credential helper of the machine's: the commits are the same everywhere.
    env: {
      PATH: process.env.PATH,
      HOME: cwd,
      GIT_CONFIG_NOSYSTEM: '1',
      GIT_AUTHOR_NAME: 'e2e',
      GIT_AUTHOR_EMAIL: 'e2e@noderotation.test',
      GIT_COMMITTER_NAME: 'e2e',
      GIT_COMMITTER_EMAIL: 'e2e@noderotation.test',
    },
  });
  if (r.status !== 0) throw new Error(`git ${args.join(' ')}: ${r.stderr}`);
  return r.stdout.trim();
}

/**
 * A fleet repository as a platform team has one: a bare repository on the Git server, and a clone in a temporary
 * directory that the test edits, commits and pushes over HTTP (the way a user's push reaches the server).
 */
export class FleetRepo {
  readonly url: string;
  private readonly work: string;

  constructor(
    env: FluxEnv,
    readonly name: string,
  ) {
    const bare = join(env.gitRoot, `${name}.git`);
    rmSync(bare, { recursive: true, force: true });
    mkdirSync(bare, { recursive: true });
    git(bare, ['init', '--quiet', '--bare', '--initial-branch=main']);
    this.url = `${env.gitUrl}/${name}.git`;
    this.work = mkdtempSync(join(tmpdir(), `${name}-`));
    git(this.work, ['init', '--quiet', '--initial-branch=main']);
    git(this.work, ['remote', 'add', 'origin', this.url]);
  }

  write(path: string, text: string): void {
    mkdirSync(dirname(join(this.work, path)), { recursive: true });
    writeFileSync(join(this.work, path), text);
  }

  remove(path: string): void {
    git(this.work, ['rm', '--quiet', path]);
  }

  /** Commits everything and pushes to main; returns the commit's SHA (Flux reports `main@sha1:<sha>`). */
  push(message: string): string {
    git(this.work, ['add', '--all']);
    git(this.work, ['commit', '--quiet', '-m', message]);
    git(this.work, ['push', '--quiet', 'origin', 'main']);
    return git(this.work, ['rev-parse', 'HEAD']);
  }

  cleanup(): void {
    rmSync(this.work, { recursive: true, force: true });
  }
}
