// What explain, validate and render share: reading every -f, the notes on what is skipped, and the one way
// invalid input is reported (exit 2, one line per problem, a bounded number of lines).
import { duplicateErrors, formatInputError, readDocuments, YAML_LIMITS, type Inputs } from '../api/documents.js';
import { EXIT_INVALID } from './explain-command.js';
import { MAX_NOTES, readInputs } from './io.js';
import type { Io } from './main.js';

/** Every -f read and sorted by kind; skipped documents are noted on stderr. */
export function readCommandInputs(paths: readonly string[], io: Io): Inputs {
  const files = readInputs(paths, { stdin: io.readStdin, note: (line) => io.stderr.write(`${line}\n`) });
  const inputs = readDocuments(files);
  for (const ignored of inputs.ignored.slice(0, MAX_NOTES))
    io.stderr.write(
      `note: ${ignored.file}, document ${ignored.document}: ${ignored.kind} is not read by noderotation; skipped\n`,
    );
  if (inputs.ignored.length > MAX_NOTES)
    io.stderr.write(`note: ${inputs.ignored.length - MAX_NOTES} more documents of other kinds skipped\n`);
  return inputs;
}

export interface Problems {
  lines: string[];
  /** Problems found but not kept, so the report stays short for any input. */
  omitted: number;
}

/** The input errors as lines, duplicates included (two objects of one kind and name), at most YAML_LIMITS.errors. */
export function inputProblems(inputs: Inputs): Problems {
  const all = [...inputs.errors, ...duplicateErrors(inputs)];
  const kept = all.slice(0, YAML_LIMITS.errors);
  return { lines: kept.map(formatInputError), omitted: inputs.omittedErrors + all.length - kept.length };
}

/** Prints the problems under "invalid input:" (with the count of those not shown) and returns exit 2. */
export function reportInvalid(io: Io, { lines: problems, omitted }: Problems): number {
  const more = omitted > 0 ? `\n  … and ${omitted} more problems, not shown` : '';
  io.stderr.write(`invalid input:\n${problems.map((p) => `  ${p}`).join('\n')}${more}\n`);
  return EXIT_INVALID;
}
