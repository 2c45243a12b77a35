// The command line run in-process for tests: captured output, a fixed clock, standard input given.
import { main } from '../../cli/main.js';

export interface Run {
  code: number;
  out: string;
  err: string;
}

/** Runs `noderotation <args>` with the clock at 2027-01-04T00:00:00Z. */
export async function cli(args: string[], stdin: string | Buffer = ''): Promise<Run> {
  let out = '';
  let err = '';
  const code = await main(args, {
    stdout: { write: (t: string) => (out += t) },
    stderr: { write: (t: string) => (err += t) },
    now: () => Date.parse('2027-01-04T00:00:00Z'),
    readStdin: () => stdin,
  });
  return { code, out, err };
}
