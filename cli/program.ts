// The command tree of `noderotation`, declared once with commander: every command's flags and its --help, the
// shell completion (completion.ts walks this tree) and usage errors in one line. An action loads its command's
// module when it runs, so a process loads only its own command's code (the controller does not carry the
// simulator, the function server or the YAML writer).
import { Argument, Command, InvalidArgumentError, Option } from 'commander';
import {
  controllerOptions,
  controllerFlags,
  ControllerUsageError,
  type ControllerOptions,
} from '../controller/flags.js';
import { programVersion } from '../runtime/version/version.js';
import { describeValue } from '../src/util/describe.js';
import { functionOptions, type FunctionOptions } from './function-flags.js';
import { FAIL_ON, OUTPUTS } from './formats.js';
import { COMPLETION_HELP, SHELLS, type Shell } from './shells.js';
import { UsageError } from './io.js';
import { EXIT_OK, type Io } from './process.js';

/** What the actions need of the process. */
export interface ProgramRuntime {
  io: Io;
  env: NodeJS.ProcessEnv;
  /** SIGTERM or SIGINT, whichever comes first (a server's or -w's end). */
  stopSignal: () => Promise<string>;
  /** Waits `ms`, or until `signal` is aborted. */
  sleep: (ms: number, signal?: AbortSignal) => Promise<void>;
}

/** A usage error of one command: printed as one line naming the command, with a pointer to its --help. */
export class CommandUsageError extends Error {
  constructor(
    readonly command: string,
    message: string,
  ) {
    super(message);
  }
}

/** The flags shared by the commands that read input files. */
export interface FileOptions {
  filename?: string[];
  recursive?: boolean;
}

/** The flags that point a command at a cluster. */
export interface ClusterOptions {
  fromCluster?: boolean;
  kubeconfig?: string;
  context?: string;
}

const FILE_HELP = `
FILE holds RotationPolicies or MaintenancePlans, Karpenter NodePools and optionally NodeClaims (YAML, several
documents per file); a directory reads its *.yaml, *.yml and *.json files (with -R its sub-directories too);
a pipe such as <(kubectl get nodepools -o yaml) is read like - (standard input).
Limits: 10 MiB per file, 50 MiB and 10000 files over all -f, 10000 YAML documents per file.`;

const EXIT_HELP = `
Exit status: 0 no fatal finding, 1 a fatal finding (simulate: what --fail-on names happened), 2 invalid input
or usage, 3 an internal error (a bug).`;

const CALENDAR_EXIT_HELP = `
Exit status: 0 the calendar was written, 2 invalid input or usage, 3 an internal error (a bug).`;

const collect = (value: string, previous: string[] | undefined): string[] => [...(previous ?? []), value];

/**
 * The line `version` and every --version print: the program, its version and the Node that runs it (what a bug
 * report needs); `version -o json` has the same two fields for scripts.
 */
const versionLine = (): string => `noderotation ${programVersion()} (Node ${process.version})`;

function fileFlags(cmd: Command, recursive = true): Command {
  cmd.option('-f, --filename <file>', 'a file, a directory, a pipe, or - for standard input; repeatable', collect);
  return recursive ? cmd.option('-R, --recursive', 'read the sub-directories of a -f directory too') : cmd;
}

function clusterFlags(cmd: Command): Command {
  return cmd
    .option('--from-cluster', 'also read the cluster kubectl points at (list calls only)')
    .addOption(
      new Option('--kubeconfig <file>', 'kubeconfig file, resolved as kubectl does (implies --from-cluster)').implies({
        fromCluster: true,
      }),
    )
    .addOption(
      new Option('--context <name>', 'kubeconfig context to use (implies --from-cluster)').implies({
        fromCluster: true,
      }),
    );
}

/** -o: its formats offered to --help and completion; the command checks the value (oneOf, one message for all). */
function outputFlag(cmd: Command, formats: readonly string[]): Command {
  const opt = new Option('-o, --output <format>', 'output format').default(formats[0]);
  opt.argChoices = [...formats];
  return cmd.addOption(opt);
}

const nowFlag = (cmd: Command): Command =>
  cmd.option('--now <time>', 'the clock for the run, RFC 3339 (e.g. 2027-01-04T00:00:00Z); default: now');

/**
 * A flag that takes one value and is given twice is refused, naming both values: taking the last one silently
 * would, say, simulate the second of two files.
 */
function refuseRepeats(cmd: Command, path: string): void {
  const seen = new Map<string, string[]>();
  for (const opt of cmd.options) {
    if (!opt.required || REPEATABLE.has(opt.attributeName())) continue;
    const flag = [opt.short, opt.long].filter(Boolean).join('/');
    cmd.on(`option:${opt.name()}`, (value: string) => {
      const values = [...(seen.get(opt.name()) ?? []), value];
      seen.set(opt.name(), values);
      if (values.length > 1)
        throw new CommandUsageError(path, `${flag} given ${values.length} times (${values.join(', ')}); give it once`);
    });
  }
}

/** The flags that may be given several times (their values collect). */
const REPEATABLE = new Set(['filename', 'failOn', 'nodepool']);

/**
 * A repeatable flag with a fixed set of values, which also takes them comma-separated as kubectl's list flags
 * do (`--fail-on a,b` is `--fail-on a --fail-on b`): each checked, all kept.
 */
function repeatableChoice(flags: string, description: string, choices: readonly string[]): Option {
  const opt = new Option(flags, description).argParser((value: string, previous: string[] | undefined) => {
    const values = value.split(',');
    if (!values.every((v) => choices.includes(v)))
      throw new InvalidArgumentError(
        `Allowed choices are ${choices.join(', ')} (comma-separated, or repeat the flag).`,
      );
    return [...(previous ?? []), ...values];
  });
  opt.argChoices = [...choices];
  return opt;
}

/**
 * The program, with `done` receiving each action's exit status. Nothing is parsed or loaded here: main.ts calls
 * parseAsync and turns its errors into exit statuses. `invokedAs` is the name its usage and errors give it:
 * `kubectl noderotation` when kubectl runs it as a plugin.
 */
export function buildProgram(rt: ProgramRuntime, done: (code: number) => void, invokedAs = 'noderotation'): Command {
  const { io } = rt;
  const program = new Command(invokedAs)
    .description('Move Karpenter node expiry into maintenance windows, gracefully.')
    .version(versionLine(), '--version', 'print the version')
    .helpOption('-h, --help', 'show help')
    .helpCommand('help [command]', 'show help for a command')
    .showSuggestionAfterError(true)
    .exitOverride()
    .configureOutput({
      writeOut: (s) => void io.stdout.write(s),
      writeErr: (s) => void io.stderr.write(s),
      // The error is printed by main.ts, in one line; commander's own print would be a second one.
      outputError: () => undefined,
    })
    .addHelpText('after', `${FILE_HELP}\n${EXIT_HELP}\n`);

  /** A subcommand whose action loads its module and runs it; a UsageError names the command. */
  const command = <O>(name: string, summary: string, run: (opts: O) => Promise<number>): Command => {
    const cmd = program.command(name).description(summary).allowExcessArguments(true);
    cmd.action(async (opts: O) => {
      try {
        // None takes arguments; a word without a flag is most often a file meant for -f.
        if (cmd.args.length > 0) {
          const files = cmd.options.some((o) => o.long === '--filename');
          throw new UsageError(
            `unexpected argument ${describeValue(cmd.args[0])}${files ? ': name input files with -f FILE' : ''}`,
          );
        }
        done(await run(opts));
      } catch (e) {
        if (e instanceof UsageError || e instanceof ControllerUsageError)
          throw new CommandUsageError(`${invokedAs} ${name}`, e.message);
        throw e;
      }
    });
    return cmd;
  };

  for (const mode of ['explain', 'validate'] as const) {
    const cmd = command(
      mode,
      mode === 'explain'
        ? 'For each NodePool: the governing policy, the derived figures, and the findings with their fixes.'
        : 'The same checks as explain, terse, for CI: one line per finding and a count.',
      async (opts: ExplainOptionsOf) => (await import('./explain-command.js')).runExplain(opts, io, mode),
    );
    clusterFlags(fileFlags(cmd));
    outputFlag(cmd, OUTPUTS[mode]);
    nowFlag(cmd);
    if (mode === 'explain') cmd.option('--legend', 'print what each column of the table means, and exit');
    cmd.addHelpText('after', `${FILE_HELP}\n${EXIT_HELP}\n`);
  }

  const render = command(
    'render',
    'The RotationPolicies the Crossplane function composes from MaintenancePlans (docs/function.md).',
    async (opts: RenderOptionsOf) => (await import('./render-command.js')).runRender(opts, io),
  );
  clusterFlags(fileFlags(render));
  outputFlag(render, OUTPUTS.render);
  nowFlag(render);
  render.addHelpText('after', `${FILE_HELP}\n${EXIT_HELP}\n`);

  const status = command(
    'status',
    'Per NodePool: its policy, the window, candidates, the rotation in flight, freezes and findings.',
    async (opts: StatusOptionsOf) =>
      (await import('./status-command.js')).runStatus(opts, io, { stopSignal: rt.stopSignal(), sleep: rt.sleep }),
  );
  clusterFlags(fileFlags(status));
  outputFlag(status, OUTPUTS.status);
  nowFlag(status);
  status
    .option('-w, --watch', 'refresh every 5 s until interrupted')
    .option('--timezone <zone>', 'the zone times are shown in (default: $TZ, else the system zone)');

  const calendar = command(
    'calendar',
    'An iCalendar (RFC 5545) of the maintenance windows, the freezes and the forecast rotations, to subscribe to.',
    async (opts: CalendarOptionsOf) => (await import('./calendar-command.js')).runCalendar(opts, io),
  );
  clusterFlags(fileFlags(calendar));
  nowFlag(calendar);
  calendar
    .option('--nodepool <name>', 'only this NodePool; repeatable (default: every governed NodePool)', collect)
    .option('--horizon <duration>', 'how far ahead the forecast rotations go, e.g. 35d or 840h (default 35d)')
    .addHelpText(
      'after',
      '\nWrites the calendar to standard output: each maintenance window as a weekly event in its own time zone ' +
        '(a year\nahead), each freeze, and, when NodeClaims are given, each planned rotation and each NodeClaim at ' +
        'risk at its\nforced deadline. The controller serves the same at /calendar.ics on its metrics port ' +
        '(docs/calendar.md).\n' +
        `${FILE_HELP}\n${CALENDAR_EXIT_HELP}\n`,
    );

  const simulate = command(
    'simulate',
    'Run the rotation engine against a model of Karpenter over weeks of simulated time (docs/simulate.md).',
    async (opts: SimulateOptionsOf) => (await import('./simulate-command.js')).runSimulate(opts, io),
  );
  fileFlags(simulate, false);
  clusterFlags(simulate);
  outputFlag(simulate, OUTPUTS.simulate);
  nowFlag(simulate);
  simulate
    .option('--baseline', "a scenario without noderotation: Karpenter's expiry alone")
    .option('--duration <duration>', 'with --from-cluster: how long to simulate, e.g. 60d or 1440h (default 60d)')
    .option('--sample <n>', 'with -o html: how many node lives to draw row by row')
    .option('--pool <name>', 'with --from-cluster -o html: the NodePool drawn node by node')
    .addOption(
      repeatableChoice(
        '--fail-on <outcome>',
        'exit 1 when the simulation shows it; repeatable or comma-separated',
        FAIL_ON,
      ),
    )
    .addHelpText(
      'after',
      '\n-f SCENARIO: one Scenario (noderotation.io/v1alpha1); with --from-cluster, -f gives changed policies ' +
        'or plans,\nsimulated against the live fleet side by side with the policies as they are.\n' +
        `${EXIT_HELP}\n`,
    );

  const fn = command(
    'function',
    'Serve the Crossplane composition function (gRPC, mTLS).',
    async (opts: FunctionOptions) =>
      (await import('./function-command.js')).runFunctionCommand(opts, io, {
        tlsServerCertsDir: rt.env.TLS_SERVER_CERTS_DIR,
        stopSignal: rt.stopSignal(),
      }),
  );
  functionOptions(fn).version(versionLine(), '--version', 'print the version');

  const controller = command(
    'controller',
    'Run the in-cluster controller (docs/controller.md).',
    async (opts: ControllerOptions) =>
      (await import('../controller/main.js')).runController(controllerFlags(opts), {
        stderr: io.stderr,
        env: rt.env,
        stopSignal: rt.stopSignal(),
      }),
  );
  controllerOptions(controller).version(versionLine(), '--version', 'print the version');

  const version = command('version', 'Print the version.', async (opts: { output: string }) => {
    const v = { version: programVersion(), node: process.version };
    if (opts.output === 'text') io.stdout.write(`${versionLine()}\n`);
    else io.stdout.write((await import('./output.js')).structured(v, opts.output as 'json' | 'yaml'));
    return EXIT_OK;
  });
  outputFlag(version, OUTPUTS.version);

  program
    .command('completion')
    .description('Print a shell completion script for bash, zsh or fish.')
    .addArgument(new Argument('<shell>', 'the shell').choices(SHELLS))
    .addHelpText('after', COMPLETION_HELP)
    .action(async (shell: Shell) => {
      io.stdout.write((await import('./completion.js')).completionScript(program, shell));
      done(EXIT_OK);
    });

  for (const cmd of program.commands) refuseRepeats(cmd, `${invokedAs} ${cmd.name()}`);
  return program;
}

// The parsed values each command receives (commander's camel-case keys).
type ExplainOptionsOf = import('./explain-command.js').ExplainOptions;
type RenderOptionsOf = import('./render-command.js').RenderOptions;
type StatusOptionsOf = import('./status-command.js').StatusOptions;
type SimulateOptionsOf = import('./simulate-command.js').SimulateOptions;
type CalendarOptionsOf = import('./calendar-command.js').CalendarOptions;
