// What every subcommand shares with the entry point: its view of the process (output, clock, input,
// environment) and the exit statuses (main.ts's usage text names them).
export interface Io {
  stdout: { write(text: string): unknown };
  stderr: { write(text: string): unknown };
  now: () => number;
  /** Standard input, at most `limit` bytes (more means the input is over the limit). */
  readStdin: (limit: number) => Buffer | string;
  /** Milliseconds from an arbitrary start, for progress lines only (never in results). */
  monotonic?: () => number;
  /** The environment the kubeconfig is resolved from (--from-cluster); process.env when unset. */
  env?: NodeJS.ProcessEnv;
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
