// The controller as a real process against the e2e apiserver (KWOK cannot run its Pod): started through the
// CLI as a user would, its JSON logs collected, its /metrics and /readyz scraped, stopped by SIGTERM or killed.
import { spawn, type ChildProcess } from 'node:child_process';
import { createServer } from 'node:net';
import path from 'node:path';
import { readClusterEnv, repoRoot } from './cluster.js';
import { waitFor } from './k8s.js';

export interface LogLine {
  level: string;
  msg: string;
  [key: string]: unknown;
}

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => resolve(port));
    });
  });
}

export class ControllerProcess {
  readonly logs: LogLine[] = [];
  private child: ChildProcess | null = null;
  private exit: Promise<number | null> | null = null;
  private exitSignal: Promise<NodeJS.Signals | null> | null = null;
  metricsPort = 0;
  healthPort = 0;

  /** `kubeconfig`: the controller's own identity (default: the cluster admin's). */
  constructor(
    private readonly namespace: string,
    private readonly extraArgs: string[] = [],
    private readonly kubeconfig?: string,
    /** Extra environment, e.g. NODEROTATION_FAILPOINT for a crash test. */
    private readonly env: Record<string, string> = {},
  ) {}

  async start(): Promise<void> {
    const env = readClusterEnv();
    this.metricsPort = await freePort();
    this.healthPort = await freePort();
    const entry = path.join(repoRoot, 'cli/from-source.ts');
    const child = spawn(
      process.execPath,
      [
        '--import',
        'tsx',
        entry,
        'controller',
        '--kubeconfig',
        this.kubeconfig ?? env.kubeconfig,
        '--namespace',
        this.namespace,
        '--metrics-bind-address',
        `127.0.0.1:${this.metricsPort}`,
        '--health-probe-bind-address',
        `127.0.0.1:${this.healthPort}`,
        '--log-level',
        'debug',
        ...this.extraArgs,
      ],
      { cwd: repoRoot, stdio: ['ignore', 'ignore', 'pipe'], env: { ...process.env, ...this.env } },
    );
    this.child = child;
    let buf = '';
    child.stderr?.setEncoding('utf8');
    child.stderr?.on('data', (chunk: string) => {
      buf += chunk;
      let i;
      while ((i = buf.indexOf('\n')) >= 0) {
        const line = buf.slice(0, i);
        buf = buf.slice(i + 1);
        try {
          this.logs.push(JSON.parse(line) as LogLine);
        } catch {
          this.logs.push({ level: 'raw', msg: line });
        }
      }
    });
    this.exit = new Promise((resolve) => child.once('exit', (code) => resolve(code)));
    this.exitSignal = new Promise((resolve) => child.once('exit', (_code, signal) => resolve(signal)));
    // Ready, or already gone (a crash test's failpoint can fire within the first pass).
    const gone = (): boolean => child.exitCode !== null || child.signalCode !== null;
    await waitFor(
      'the controller to be ready (caches synced)',
      async () => gone() || (await this.get('/readyz', true)) === 200,
      {
        timeoutMs: 60_000,
        intervalMs: 250,
        describe: () => this.tail(),
      },
    );
  }

  get pid(): number | undefined {
    return this.child?.pid;
  }

  /** Status code of a probe (health port) or the body of /metrics (metrics port). */
  async get(pathname: string, health = false): Promise<number> {
    try {
      const r = await fetch(`http://127.0.0.1:${health ? this.healthPort : this.metricsPort}${pathname}`);
      await r.text();
      return r.status;
    } catch {
      return 0;
    }
  }

  async metrics(): Promise<string> {
    const r = await fetch(`http://127.0.0.1:${this.metricsPort}/metrics`);
    return r.text();
  }

  /** The body of /calendar.ics (metrics port), or null while it is not served (503 until the caches sync). */
  async calendar(): Promise<string | null> {
    const r = await fetch(`http://127.0.0.1:${this.metricsPort}/calendar.ics`);
    const body = await r.text();
    return r.status === 200 ? body : null;
  }

  /** Resolves with the signal that ended the process (null after a normal exit). */
  async ended(): Promise<NodeJS.Signals | null> {
    return (await this.exitSignal) ?? null;
  }

  /** The exit code once the process has ended of its own accord (null when a signal ended it). */
  async exited(): Promise<number | null> {
    return (await this.exit) ?? null;
  }

  /** SIGSTOP: the process is frozen (no timer, no I/O) until `resume`, as a long GC pause or a stopped VM. */
  pause(): void {
    this.child?.kill('SIGSTOP');
  }

  /** SIGCONT after `pause`. */
  resume(): void {
    this.child?.kill('SIGCONT');
  }

  /** SIGTERM and wait for the exit code. */
  async stop(): Promise<number | null> {
    if (!this.child || this.child.exitCode !== null) return this.child?.exitCode ?? null;
    this.child.kill('SIGTERM');
    return this.exit;
  }

  /** kill -9: no clean-up of any kind. */
  async kill(): Promise<void> {
    if (!this.child || this.child.exitCode !== null) return;
    this.child.kill('SIGKILL');
    await this.exit;
  }

  tail(n = 15): string {
    return this.logs
      .slice(-n)
      .map((l) => JSON.stringify(l))
      .join('\n');
  }

  /** Log lines of level error (a test asserts there are none after a clean run). */
  errors(): LogLine[] {
    return this.logs.filter((l) => l.level === 'error');
  }
}
