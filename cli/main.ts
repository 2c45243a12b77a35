// The `noderotation` command line: the program (program.ts) parsed, and every way it can end turned into an exit
// status and at most a few lines. Each subcommand is a thin shell over the pure core: it reads input, injects
// the clock, and prints.
import { setTimeout as delay } from 'node:timers/promises';
import { CommanderError } from 'commander';
import { InputFileError, readStdinBounded } from './io.js';
import { buildProgram, CommandUsageError } from './program.js';
import { EXIT_INTERNAL, EXIT_INVALID, processStopSignal, tolerateClosedPipe, type Io } from './process.js';

/** Commander's ends that are not errors: --help, help, --version. */
const CLEAN_EXITS = new Set(['commander.helpDisplayed', 'commander.help', 'commander.version']);

/**
 * The process's own run (bin/ and cli/from-source.ts): its standard streams, which a reader may close early.
 * `invokedAs`: the name its usage and errors give it (bin/kubectl-noderotation.js: `kubectl noderotation`).
 */
export function mainProcess(argv: string[], invokedAs?: string): Promise<number> {
  tolerateClosedPipe(process.stdout);
  tolerateClosedPipe(process.stderr);
  return main(argv, { stdout: process.stdout, stderr: process.stderr }, invokedAs);
}

export async function main(
  argv: string[],
  io: Partial<Io> & Pick<Io, 'stdout' | 'stderr'>,
  invokedAs = 'noderotation',
): Promise<number> {
  const full: Io = {
    now: () => Date.now(),
    readStdin: (limit) => readStdinBounded(limit),
    monotonic: () => performance.now(),
    ...io,
  };
  let code = 0;
  const program = buildProgram(
    {
      io: full,
      env: full.env ?? process.env,
      stopSignal: processStopSignal,
      // Aborted: resolves at once and clears its timer, so that nothing keeps a stopped command alive.
      sleep: (ms, signal) => delay(ms, undefined, { signal }).catch(() => undefined),
    },
    (c) => (code = c),
    invokedAs,
  );
  if (argv.length === 0) {
    full.stdout.write(program.helpInformation());
    return EXIT_INVALID;
  }
  try {
    await program.parseAsync(argv, { from: 'user' });
    return code;
  } catch (err) {
    if (err instanceof CommanderError) {
      if (CLEAN_EXITS.has(err.code)) return 0;
      const sub = program.commands.find((c) => c.name() === argv[0]);
      const unknownCommand = err.code === 'commander.unknownCommand';
      usageLine(full, sub && !unknownCommand ? `${invokedAs} ${sub.name()}` : invokedAs, err.message);
      return EXIT_INVALID;
    }
    if (err instanceof CommandUsageError) {
      usageLine(full, err.command, err.message);
      return EXIT_INVALID;
    }
    if (err instanceof InputFileError) {
      full.stderr.write(`invalid input:\n${err.lines.map((l) => `  ${l}`).join('\n')}\n`);
      return EXIT_INVALID;
    }
    // Every input problem has a message of its own; anything else is a bug, reported in one line, not a trace.
    const message = err instanceof Error ? `${err.name}: ${err.message}` : String(err);
    full.stderr.write(
      `noderotation: internal error (a bug; please report it with the input): ${message.slice(0, 500)}\n`,
    );
    return EXIT_INTERNAL;
  }
}

/**
 * A usage error as one line: the command, the problem (commander's "error: " prefix and its line breaks
 * dropped) and where the flags are described. Never the whole usage: in a controller's log it would hide why
 * the container stopped.
 */
function usageLine(io: Io, command: string, message: string): void {
  const problem = message
    .replace(/^error: /, '')
    .replace(/\s*\n\s*/g, ' ')
    .replace(/\.$/, '');
  io.stderr.write(`${command}: ${problem}; see '${command} --help'\n`);
}
