// The output formats of each command, declared once: the program offers them (-o, its --help and completion)
// and each command narrows its -o with them. The first is the default.
export const OUTPUTS = {
  explain: ['table', 'json', 'yaml'],
  validate: ['table', 'json', 'yaml'],
  render: ['yaml', 'json'],
  status: ['table', 'wide', 'json', 'yaml'],
  simulate: ['table', 'json', 'yaml', 'html'],
  version: ['text', 'json', 'yaml'],
} as const;

/** Former names a command still takes for one of its formats: validate's table was called text. */
export const OUTPUT_ALIASES: Partial<Record<keyof typeof OUTPUTS, Record<string, string>>> = {
  validate: { text: 'table' },
};

export type OutputOf<C extends keyof typeof OUTPUTS> = (typeof OUTPUTS)[C][number];

/** simulate --fail-on: the outcomes that make a simulation exit 1, for CI. */
export const FAIL_ON = ['forceful-expirations', 'forceful-fallbacks'] as const;
export type FailOn = (typeof FAIL_ON)[number];
