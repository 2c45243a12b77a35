// A finding's severity as the command line prints it: FATAL or WARNING, in red or yellow when the output is a
// terminal that wants colour (cli/process.ts decides: a TTY, NO_COLOR unset or empty, TERM not dumb).
export type SeverityWord = 'fatal' | 'warning';

const ANSI = { fatal: '\u001b[1;31m', warning: '\u001b[33m', reset: '\u001b[0m' } as const;

/** "FATAL" or "WARNING"; `pad` fills FATAL to WARNING's width (a column), `colour` wraps it in ANSI codes. */
export function severityLabel(severity: SeverityWord, o: { colour?: boolean; pad?: boolean } = {}): string {
  const word = severity === 'fatal' ? 'FATAL' : 'WARNING';
  const text = o.pad ? word.padEnd(7) : word;
  return o.colour ? `${ANSI[severity]}${word}${ANSI.reset}${text.slice(word.length)}` : text;
}

/** A finding about a whole input object, as a line of stderr: "FATAL Reason: MaintenancePlan x: field: message". */
export function objectFindingLine(
  f: { severity: SeverityWord; reason: string; object: string; field: string; message: string },
  colour: boolean,
): string {
  return `${severityLabel(f.severity, { colour })} ${f.reason}: ${f.object}: ${f.field}: ${f.message}\n`;
}
