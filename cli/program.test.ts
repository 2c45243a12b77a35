// The command line's conventions (issue 21): per-command --help, versions, one-line usage errors, -o yaml
// wherever -o json is, simulate --fail-on, --kubeconfig/--context pointing at a cluster, and the completion
// scripts written from the same command tree.
import { execFileSync, spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Command } from 'commander';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { TTL_SECONDS } from '../functions/run.js';
import { cli } from '../test/support/cli-harness.js';
import { main } from './main.js';
import { completionScript } from './completion.js';
import { parseFunctionArgs } from './function-flags.js';
import { buildProgram } from './program.js';
import { runStatus } from './status-command.js';
import { SHELLS } from './shells.js';

const ROOT = join(import.meta.dirname, '..');
const ex = (f: string): string => join(ROOT, 'examples', f);
const VERSION = (JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { version: string }).version;

/** The program's tree, as main.ts builds it (nothing is run). */
function tree(): Command {
  const out = { write: () => true };
  return buildProgram(
    {
      io: { stdout: out, stderr: out, now: () => 0, readStdin: () => '' },
      env: {},
      stopSignal: () => new Promise(() => undefined),
      sleep: () => Promise.resolve(),
    },
    () => undefined,
  );
}

const COMMANDS = tree().commands.map((c) => c.name());

describe('help', () => {
  it.each(COMMANDS)('%s --help: exit 0, its own usage with every flag it takes, nothing on stderr', async (name) => {
    const cmd = tree().commands.find((c) => c.name() === name) as Command;
    const r = await cli([name, '--help']);
    expect(r.code, r.err).toBe(0);
    expect(r.err).toBe('');
    expect(r.out).toMatch(new RegExp(`^Usage: noderotation ${name} `));
    for (const o of cmd.options) expect(r.out).toContain(o.long);
  });

  it('help COMMAND is the same text as COMMAND --help; no command prints the overview and exits 2', async () => {
    expect((await cli(['help', 'simulate'])).out).toBe((await cli(['simulate', '--help'])).out);
    const none = await cli([]);
    expect(none.code).toBe(2);
    for (const name of COMMANDS) expect(none.out).toContain(`  ${name} `);
  });

  it('explain --legend names every column of the table, in its order, without reading input', async () => {
    const legend = await cli(['explain', '--legend']);
    expect(legend.code).toBe(0);
    const table = await cli(['explain', '-f', ex('rotationpolicy-worked-example.yaml'), '-f', ex('nodepools.yaml')]);
    const header = (table.out.split('\n')[0] as string).split(/\s+/).filter(Boolean);
    expect(
      legend.out
        .split('\n')
        .filter(Boolean)
        .map((l) => l.split(/\s+/)[0]),
    ).toEqual(header);
  });
});

describe('version', () => {
  it.each([['version'], ['--version'], ['controller', '--version'], ['function', '--version']])(
    '%j prints the same line: package.json version and the Node that runs it',
    async (...args: string[]) => {
      const r = await cli(args);
      expect(r.code).toBe(0);
      expect(r.out).toBe(`noderotation ${VERSION} (Node ${process.version})\n`);
    },
  );

  it('version: text, and the same in -o json and -o yaml', async () => {
    const json = JSON.parse((await cli(['version', '-o', 'json'])).out) as unknown;
    expect(json).toEqual({ version: VERSION, node: process.version });
    expect(parse((await cli(['version', '-o', 'yaml'])).out)).toEqual(json);
  });
});

describe('a reader that closes the pipe early (`noderotation explain --help | head -1`)', () => {
  /** The CLI as a real process, its standard output a pipe closed before the first byte is written. */
  function closedPipe(args: string[]): Promise<{ code: number | null; signal: string | null; err: string }> {
    const child = spawn(process.execPath, ['--import', 'tsx', join(ROOT, 'cli/from-source.ts'), ...args], {
      cwd: ROOT,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    child.stdout.destroy();
    let err = '';
    child.stderr.setEncoding('utf8').on('data', (t: string) => (err += t));
    // A bound on the wait, not a timing assertion: a process that never ends is killed (and fails), not left behind.
    const kill = setTimeout(() => child.kill('SIGKILL'), 50_000);
    return new Promise((resolve) =>
      child.on('close', (code, signal) => {
        clearTimeout(kill);
        resolve({ code, signal, err });
      }),
    );
  }

  it.each([
    [['explain', '--help'], 0],
    [['help', 'simulate'], 0],
    [['--version'], 0],
    [['version'], 0],
    [['validate', '-f', 'examples/rotationpolicy-weekly-fatal.yaml', '-f', 'examples/nodepools.yaml'], 1],
    // -w refreshes until interrupted: a reader that has gone ends it too (at the next refresh), or it never ends.
    [['status', '-w', '-f', 'examples/rotationpolicy-worked-example.yaml', '-f', 'examples/nodepools.yaml'], 0],
  ])(
    '%j: its own exit status, nothing on stderr',
    async (args, status) => {
      const r = await closedPipe(args);
      expect(r).toEqual({ code: status, signal: null, err: '' });
    },
    60_000,
  );
});

describe('usage errors: one line naming the command, the problem and its --help; exit 2; nothing on stdout', () => {
  const cases = [
    {
      reason: 'an unknown flag',
      args: ['explain', '--bogus'],
      line: "noderotation explain: unknown option '--bogus'; see 'noderotation explain --help'",
    },
    {
      reason: 'a misspelt command, with the likely one',
      args: ['explian'],
      line: "noderotation: unknown command 'explian' (Did you mean explain?); see 'noderotation --help'",
    },
    {
      reason: "a flag value the command refuses (the command's own check)",
      args: ['status', '--now', 'tomorrow', '-f', 'x'],
      line:
        'noderotation status: --now tomorrow: not an RFC 3339 date-time with an offset (YYYY-MM-DDTHH:MM:SSZ or ' +
        "±HH:MM); expected a time such as 2027-01-04T00:00:00Z; see 'noderotation status --help'",
    },
    {
      reason: 'an output format the command does not have',
      args: ['render', '-o', 'table', '-f', 'x'],
      line: "noderotation render: -o table: expected yaml or json; see 'noderotation render --help'",
    },
    {
      reason: "a controller flag (the line a CrashLoopBackOff's log ends with)",
      args: ['controller', '--log-level', 'loud'],
      line:
        "noderotation controller: option '--log-level <level>' argument 'loud' is invalid. Allowed choices are " +
        "debug, info, warn, error; see 'noderotation controller --help'",
    },
    {
      reason: 'a flag without its value',
      args: ['simulate', '-f'],
      line:
        "noderotation simulate: option '-f, --filename <file>' argument missing; " +
        "see 'noderotation simulate --help'",
    },
  ];
  it.each(cases)('$reason', async ({ args, line }) => {
    const r = await cli(args);
    expect(r.code).toBe(2);
    expect(r.out).toBe('');
    expect(r.err).toBe(`${line}\n`);
  });
});

describe('-o yaml carries what -o json carries', () => {
  const files = ['-f', ex('maintenanceplan.yaml'), '-f', ex('nodepools.yaml')];
  it.each([
    ['explain', files],
    ['validate', files],
    ['status', files],
    ['simulate', ['-f', ex('scenarios/worked-example.yaml')]],
  ])('%s', async (command, rest) => {
    const json = await cli([command, '-o', 'json', ...rest]);
    const yaml = await cli([command, '-o', 'yaml', ...rest]);
    expect(yaml.code).toBe(json.code);
    expect(parse(yaml.out)).toEqual(JSON.parse(json.out));
  });

  it('render -o json is one List of the objects render -o yaml prints as documents', async () => {
    const yaml = await cli(['render', ...files]);
    const json = await cli(['render', '-o', 'json', ...files]);
    const docs = yaml.out.split(/^---$/m).map((d) => parse(d) as unknown);
    expect(docs.length).toBeGreaterThan(1);
    expect(JSON.parse(json.out)).toEqual({ apiVersion: 'v1', kind: 'List', items: docs });
  });
});

describe('kubectl noderotation (the plugin names itself as invoked)', () => {
  it.each([[['--help']], [['explain', '--help']], [[]]])('%j: its usage says kubectl noderotation', async (args) => {
    const r = await cli(args, '', 'kubectl noderotation');
    expect(r.out).toMatch(/^Usage: kubectl noderotation /);
    expect(r.out).not.toMatch(/^Usage: noderotation/m);
  });

  it('a usage error names it and its --help', async () => {
    const r = await cli(['explain', '--bogus'], '', 'kubectl noderotation');
    expect(r.err).toBe(
      "kubectl noderotation explain: unknown option '--bogus'; see 'kubectl noderotation explain --help'\n",
    );
    const twice = await cli(['status', '--now', 'a', '--now', 'b'], '', 'kubectl noderotation');
    expect(twice.err).toMatch(/^kubectl noderotation status: --now given 2 times/);
  });

  it('bin/kubectl-noderotation.js runs the program under that name', () => {
    expect(readFileSync(join(ROOT, 'bin/kubectl-noderotation.js'), 'utf8')).toMatch(
      /mainProcess\(pluginArgs\(process\.argv\.slice\(2\)\), 'kubectl noderotation'\)/,
    );
  });
});

describe('validate -o', () => {
  const files = ['-f', ex('rotationpolicy-weekly-fatal.yaml'), '-f', ex('nodepools.yaml')];
  it('takes table, as the other commands do, the default; text is the same (its former name)', async () => {
    const plain = await cli(['validate', ...files]);
    expect(plain.out).toMatch(/checked: 1 fatal/);
    for (const o of ['table', 'text']) expect(await cli(['validate', ...files, '-o', o])).toEqual(plain);
  });

  it('offers table, json and yaml in --help', async () => {
    expect((await cli(['validate', '--help'])).out).toMatch(/choices: "table", "json", "yaml"/);
  });
});

describe('simulate --fail-on', () => {
  const scenario = ex('scenarios/worked-example.yaml');
  it('exits 1, naming the outcome, when the run shows it; 0 when it does not', async () => {
    const baseline = await cli(['simulate', '-f', scenario, '--baseline', '--fail-on', 'forceful-expirations']);
    expect(baseline.code).toBe(1);
    const expired = Number(/forceful expirations\s+(\d+)/.exec(baseline.out)?.[1]);
    expect(expired).toBeGreaterThan(0);
    expect(baseline.err).toBe(`simulate: ${expired} forceful expirations (--fail-on forceful-expirations)\n`);
    const managed = await cli(['simulate', '-f', scenario, '--fail-on', 'forceful-expirations']);
    expect(/forceful expirations\s+(\d+)/.exec(managed.out)?.[1]).toBe('0');
    expect(managed.code).toBe(0);
    // Without the flag the same baseline run exits 0: the table is the result.
    expect((await cli(['simulate', '-f', scenario, '--baseline'])).code).toBe(0);
  });

  it('takes a comma-separated list as kubectl does, as well as the flag repeated', async () => {
    const both = ['forceful-expirations', 'forceful-fallbacks'];
    const listed = await cli(['simulate', '-f', scenario, '--baseline', '--fail-on', both.join(',')]);
    const repeated = await cli(['simulate', '-f', scenario, '--baseline', ...both.flatMap((o) => ['--fail-on', o])]);
    expect(listed.code).toBe(1);
    expect(listed.err).toMatch(/\(--fail-on forceful-expirations\)/);
    expect(listed).toEqual(repeated);
    const bad = await cli(['simulate', '-f', scenario, '--fail-on', 'forceful-expirations,expirations']);
    expect(bad.code).toBe(2);
    expect(bad.err).toContain("'forceful-expirations,expirations' is invalid");
  });

  it('refuses an outcome it does not know', async () => {
    const r = await cli(['simulate', '-f', scenario, '--fail-on', 'expirations']);
    expect(r.code).toBe(2);
    expect(r.err).toContain('Allowed choices are forceful-expirations, forceful-fallbacks');
  });
});

describe('kubectl flags', () => {
  it('--kubeconfig and --context read the cluster as --from-cluster does (they imply it)', async () => {
    const r = await cli(['explain', '--kubeconfig', '/nonexistent/kubeconfig', '-f', ex('nodepools.yaml')]);
    expect(r.code).toBe(2);
    expect(r.err).toMatch(/^noderotation explain: --from-cluster: .*\/nonexistent\/kubeconfig/);
  });

  it("the controller's namespace takes kubectl's -n", async () => {
    const r = await cli(['controller', '-n', 'Bad_NS']);
    expect(r.err).toContain('--namespace: found "Bad_NS"');
  });

  it("the function's --response-ttl default is the TTL the function answers with when unset", () => {
    expect(parseFunctionArgs([]).responseTtl).toBe(`${TTL_SECONDS}s`);
  });
});

describe('completion', () => {
  const program = tree();
  /** What bash completes for `words` (the last one being completed), with the script loaded. */
  function bashComplete(script: string, words: string[]): string[] {
    const quoted = words.map((w) => `'${w}'`).join(' ');
    const out = execFileSync(
      'bash',
      [
        '-c',
        `${script}\nCOMP_WORDS=(${quoted}); COMP_CWORD=${words.length - 1}; _noderotation\n` +
          `printf '%s\\n' "\${COMPREPLY[@]}"`,
      ],
      { encoding: 'utf8', cwd: ROOT },
    );
    return out.split('\n').filter(Boolean);
  }

  it('bash: every command, and every flag and -o format of each, as the program declares them', () => {
    const script = completionScript(program, 'bash');
    expect(bashComplete(script, ['noderotation', ''])).toEqual(
      expect.arrayContaining([...COMMANDS, 'help', '--version']),
    );
    for (const cmd of program.commands) {
      const flags = bashComplete(script, ['noderotation', cmd.name(), '-']);
      for (const o of cmd.options) expect(flags, `${cmd.name()} ${o.long}`).toContain(o.long);
      const output = cmd.options.find((o) => o.long === '--output');
      if (output)
        expect(bashComplete(script, ['noderotation', cmd.name(), '-o', ''])).toEqual(output.argChoices as string[]);
    }
    expect(bashComplete(script, ['noderotation', 'completion', ''])).toEqual(expect.arrayContaining([...SHELLS]));
    expect(bashComplete(script, ['noderotation', 'explain', '-f', 'examples/node'])).toEqual([
      'examples/nodepools.yaml',
    ]);
  });

  it.each(['zsh', 'fish'] as const)('%s: every command and every flag of each is in the script', (shell) => {
    const script = completionScript(program, shell);
    for (const cmd of program.commands) {
      expect(script).toContain(shell === 'zsh' ? `'${cmd.name()}:` : `-a ${cmd.name()} `);
      for (const o of cmd.options)
        expect(script, `${cmd.name()} ${o.long}`).toContain(shell === 'zsh' ? o.long : `-l ${o.long?.slice(2)}`);
    }
  });

  it('zsh: quotes in descriptions cannot end the quoted spec early', () => {
    const script = completionScript(program, 'zsh');
    for (const line of script.split('\n').filter((l) => l.includes("'--"))) {
      const unescaped = line.replace(/'\\''/g, '');
      expect(unescaped.split("'").length % 2, line).toBe(1);
    }
  });
});

describe("the controller's log", () => {
  it('its first line names the version, before anything that can fail', async () => {
    const r = await cli(['controller', '--kubeconfig', '/nonexistent/kubeconfig', '--metrics-bind-address', '0']);
    expect(r.code).toBe(2);
    const [first, second] = r.err.split('\n');
    expect(JSON.parse(first as string)).toMatchObject({ level: 'info', msg: 'starting', version: VERSION });
    expect(second).toMatch(
      /^noderotation controller: .*\/nonexistent\/kubeconfig.*; see 'noderotation controller --help'$/,
    );
  });
});

describe('status -f with a MaintenancePlan', () => {
  const files = ['-f', ex('maintenanceplan.yaml'), '-f', ex('nodepools.yaml')];
  const policyOf = (out: string, pool: string): string | undefined =>
    new RegExp(`^${pool}\\s+(\\S+)`, 'm').exec(out)?.[1];

  it('expands the plan as the function does: each governed NodePool under its policy, the excluded none', async () => {
    const r = await cli(['status', ...files]);
    expect(r.code).toBe(0);
    expect(r.err).toBe('');
    expect(['api', 'batch', 'general', 'gpu'].map((p) => policyOf(r.out, p))).toEqual([
      'platform-api',
      'platform-batch',
      'platform-general',
      '(none)',
    ]);
  });

  it("does not expand a plan whose policies are given too (render's, or Crossplane's in a cluster)", async () => {
    const rendered = await cli(['render', ...files]);
    expect(rendered.code).toBe(0);
    const r = await cli(['status', '-f', '-', ...files], rendered.out);
    expect(r.code).toBe(0);
    // Expanded a second time, each pool would have two policies of one name, a conflict.
    expect(['api', 'general'].map((p) => policyOf(r.out, p))).toEqual(['platform-api', 'platform-general']);
    expect(r.out).not.toMatch(/conflict/i);
  });

  it('a plan that governs nothing: the fatal finding on stderr, as explain words it', async () => {
    const plan = readFileSync(join(ROOT, 'examples/maintenanceplan.yaml'), 'utf8').replace(
      'spec:\n',
      'spec:\n  nodePoolSelector: {matchLabels: {tier: genral}}\n',
    );
    const r = await cli(['status', '-f', '-', '-f', ex('nodepools.yaml')], plan);
    expect(r.code).toBe(0);
    expect(r.err).toMatch(
      /^FATAL NoGovernedNodePools: MaintenancePlan platform: spec\.nodePoolSelector\.matchLabels\.tier: /,
    );
    expect(r.err).toContain('(did you mean "general"?)');
    expect(policyOf(r.out, 'general')).toBe('(none)');
  });
});

describe('status -w', () => {
  it('an interruption ends the wait between refreshes at once (no timer keeps the process alive)', async () => {
    let interrupt: (signal: string) => void = () => undefined;
    let refreshes = 0;
    const out = { write: () => (refreshes++, true) };
    const done = runStatus(
      { watch: true, output: 'table', filename: [ex('rotationpolicy-worked-example.yaml'), ex('nodepools.yaml')] },
      { stdout: out, stderr: { write: () => true }, now: Date.now, readStdin: () => '' },
      {
        stopSignal: new Promise<string>((resolve) => (interrupt = resolve)),
        // A wait that ends only when aborted: were the interruption not passed on, the command would never end.
        sleep: (_ms, signal) =>
          new Promise<void>((resolve) => {
            signal?.addEventListener('abort', () => resolve());
            interrupt('SIGINT');
          }),
      },
    );
    expect(await done).toBe(0);
    expect(refreshes).toBeGreaterThan(0);
  });
});

describe('colour', () => {
  /** validate on the weekly fatal example, its stdout a terminal or not, in the environment given. */
  async function validate(isTTY: boolean, env: NodeJS.ProcessEnv): Promise<string> {
    let out = '';
    await main(['validate', '-f', ex('rotationpolicy-weekly-fatal.yaml'), '-f', ex('nodepools.yaml')], {
      stdout: { write: (t: string) => (out += t), isTTY },
      stderr: { write: () => true },
      env,
    });
    return out;
  }
  const RED_FATAL = '\u001b[1;31mFATAL\u001b[0m general NonPositiveAgeThreshold';

  it('on a terminal, FATAL in red; never with NO_COLOR set, with TERM=dumb, or into a pipe or file', async () => {
    expect(await validate(true, {})).toContain(RED_FATAL);
    for (const [isTTY, env] of [
      [true, { NO_COLOR: '1' }],
      [true, { TERM: 'dumb' }],
      [false, {}],
    ] as const) {
      const out = await validate(isTTY, env);
      expect(out).toContain('FATAL general NonPositiveAgeThreshold');
      expect(out).not.toContain('\u001b[');
    }
  });
});
