// The composition function as a real process: `noderotation function --insecure …` from the TypeScript sources
// (cli/from-source.ts), its log (stderr) collected. One way to start it for the tests and the benchmarks.
import { spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';

const ROOT = join(import.meta.dirname, '..', '..');

export interface FunctionProcess {
  child: ChildProcess;
  /** Its log so far (JSON lines on stderr). */
  log: () => string;
  /** Its exit status, once it has exited. */
  exited: Promise<number | null>;
}

/** Starts `noderotation function --insecure` with `flags` (--address, --metrics-address, …). */
export function spawnFunction(flags: readonly string[]): FunctionProcess {
  const child = spawn(
    process.execPath,
    ['--import', 'tsx', join(ROOT, 'cli', 'from-source.ts'), 'function', '--insecure', ...flags],
    { cwd: ROOT, stdio: ['ignore', 'ignore', 'pipe'] },
  );
  let log = '';
  child.stderr.on('data', (d: Buffer) => (log += d.toString()));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  return { child, log: () => log, exited };
}

/**
 * The ports it bound, from its first log line ("function-noderotation serving"), which it writes once both
 * listen. Throws with its log when it exits first or does not serve within `withinMs` (a bound on the wait).
 */
export async function servingPorts(
  f: FunctionProcess,
  withinMs = 30_000,
): Promise<{ port: number; metricsPort: number }> {
  const deadline = Date.now() + withinMs;
  while (!f.log().includes('"port"')) {
    if (f.child.exitCode !== null || Date.now() > deadline) {
      f.child.kill('SIGKILL');
      throw new Error(`the function did not start: ${f.log()}`);
    }
    await new Promise((r) => setTimeout(r, 20));
  }
  return JSON.parse(f.log().split('\n')[0] as string) as { port: number; metricsPort: number };
}

/** SIGTERM, and its exit status once it has shut down. */
export function stopFunction(f: FunctionProcess): Promise<number | null> {
  if (f.child.exitCode === null) f.child.kill('SIGTERM');
  return f.exited;
}
