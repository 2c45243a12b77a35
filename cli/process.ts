// What every subcommand shares with the entry point: its view of the process (output, clock, input,
// environment) and the exit statuses (main.ts's usage text names them).
export interface Io {
  stdout: Out;
  stderr: Out;
  now: () => number;
  /** Standard input, at most `limit` bytes (more means the input is over the limit). */
  readStdin: (limit: number) => Buffer | string;
  /** Milliseconds from an arbitrary start, for progress lines only (never in results). */
  monotonic?: () => number;
  /** The environment the kubeconfig is resolved from (--from-cluster); process.env when unset. */
  env?: NodeJS.ProcessEnv;
}

/** An output stream; isTTY as Node's streams have it (colour only on a terminal). */
export interface Out {
  write(text: string): unknown;
  isTTY?: boolean;
}

/**
 * Whether to colour what goes to `out`: a terminal only, and never when NO_COLOR is set to anything
 * (no-color.org) or TERM is dumb.
 */
export function wantsColour(out: Out, env: NodeJS.ProcessEnv): boolean {
  return out.isTTY === true && (env.NO_COLOR ?? '') === '' && env.TERM !== 'dumb';
}

export const EXIT_OK = 0;
export const EXIT_FATAL = 1;
export const EXIT_INVALID = 2;
export const EXIT_INTERNAL = 3;

/** SIGTERM (Kubernetes) or SIGINT (a terminal), whichever comes first. */
export function processStopSignal(): Promise<string> {
  return new Promise((resolve) => {
    for (const sig of ['SIGTERM', 'SIGINT'] as const) process.once(sig, () => resolve(sig));
  });
}

/**
 * Let the reader of a pipe stop early (`noderotation explain --help | head -1`). Node reports the closed pipe as
 * an 'error' event (EPIPE) on the stream; unhandled, it ends the process with a stack trace and exit 1, which
 * means "a fatal finding". Commander writes help in several writes, so help lost that race most often; data output
 * is one write and lost it only when larger than the pipe's buffer. What is left to write is dropped, and the
 * command ends with its own status (`status -w` ends at its next refresh: readerGone). Any other error on the stream
 * is still thrown.
 */
export function tolerateClosedPipe(stream: NodeJS.WriteStream): void {
  stream.on('error', (err: NodeJS.ErrnoException) => {
    if (err.code !== 'EPIPE' && err.code !== 'ERR_STREAM_DESTROYED') throw err;
    readersGone.add(stream);
  });
}

/** The streams whose reader has gone. Node's own `errored` will not do: process.stdout clears it again. */
const readersGone = new WeakSet<object>();

/** Whether a write to `out` met a closed pipe (tolerateClosedPipe): nobody reads it any more. */
export function readerGone(out: Out): boolean {
  return readersGone.has(out);
}
