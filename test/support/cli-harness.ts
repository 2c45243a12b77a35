// The command line run in-process for tests: captured output, a fixed clock, standard input given.
import { main } from '../../cli/main.js';

export interface Run {
  code: number;
  out: string;
  err: string;
}

/** Runs `noderotation <args>` (or the program as `invokedAs`) with the clock at 2027-01-04T00:00:00Z. */
export async function cli(args: string[], stdin: string | Buffer = '', invokedAs?: string): Promise<Run> {
  let out = '';
  let err = '';
  const io = {
    stdout: { write: (t: string) => (out += t) },
    stderr: { write: (t: string) => (err += t) },
    now: () => Date.parse('2027-01-04T00:00:00Z'),
    readStdin: () => stdin,
  };
  const code = await main(args, io, invokedAs);
  return { code, out, err };
}
