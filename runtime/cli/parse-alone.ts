// One command's flags parsed from its arguments alone, outside the program: the controller's and the function's
// tests parse their flags this way, with commander's own checks, its errors turned into the command's usage error.
import { CommanderError, type Command } from 'commander';

export function parseAlone<T>(cmd: Command, args: string[], usageError: (message: string) => Error): T {
  cmd.exitOverride().configureOutput({ writeOut: () => undefined, writeErr: () => undefined });
  try {
    cmd.parse(args, { from: 'user' });
  } catch (e) {
    if (e instanceof CommanderError) throw usageError(e.message.replace(/^error: /, ''));
    throw e;
  }
  return cmd.opts<T & Record<string, unknown>>();
}
