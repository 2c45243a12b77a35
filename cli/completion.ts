// `noderotation completion bash|zsh|fish`: a completion script written from the program's command tree
// (program.ts), so a command or flag added there completes without another word here. Values complete as the
// flag declares them: its choices (-o), file names (-f, --kubeconfig), directories (--tls-certs-dir), the
// kubeconfig's contexts (--context, through kubectl when it is installed); other values are left to the user.
import type { Command, Option } from 'commander';
import type { Shell } from './shells.js';

/** What a flag's value completes to. */
type Values = { kind: 'none' } | { kind: 'choices'; words: readonly string[] } | { kind: 'file' | 'dir' | 'context' };

/** How one shell completes each kind of value. */
interface ValueActions {
  choices: (words: readonly string[]) => string;
  file: string;
  dir: string;
  context: string;
  none: string;
}

const actionFor = (v: Values, actions: ValueActions): string =>
  v.kind === 'choices' ? actions.choices(v.words) : actions[v.kind];

/** The kubeconfig's context names, when kubectl is installed. */
const CONTEXTS = 'kubectl config get-contexts -o name 2>/dev/null';

interface Flag {
  short?: string;
  long: string;
  description: string;
  /** Undefined for a flag without a value. */
  values?: Values;
}

interface Sub {
  name: string;
  description: string;
  flags: Flag[];
  /** The choices of its one argument (completion's shell), if any. */
  args: readonly string[];
}

const FILE_FLAGS = new Set(['--filename', '--kubeconfig']);
const DIR_FLAGS = new Set(['--tls-certs-dir']);

function valuesOf(o: Option): Values | undefined {
  if (!o.required && !o.optional) return undefined;
  if (o.argChoices) return { kind: 'choices', words: o.argChoices };
  if (o.long !== undefined && FILE_FLAGS.has(o.long)) return { kind: 'file' };
  if (o.long !== undefined && DIR_FLAGS.has(o.long)) return { kind: 'dir' };
  if (o.long === '--context') return { kind: 'context' };
  return { kind: 'none' };
}

/** A command's flags as its --help shows them (the help and version flags included). */
const flagsOf = (cmd: Command): Flag[] =>
  cmd
    .createHelp()
    .visibleOptions(cmd)
    .filter((o) => o.long !== undefined)
    .map((o) => {
      const values = valuesOf(o);
      return {
        ...(o.short !== undefined ? { short: o.short } : {}),
        long: o.long as string,
        description: o.description,
        ...(values !== undefined ? { values } : {}),
      };
    });

/** The tree as the scripts need it: each command (help's own excluded) with its flags. */
function tree(program: Command): { root: Flag[]; subs: Sub[] } {
  const subs = program.commands.map((c) => ({
    name: c.name(),
    description: c.description(),
    flags: flagsOf(c),
    args: c.registeredArguments.flatMap((a) => a.argChoices ?? []),
  }));
  subs.push({ name: 'help', description: 'show help for a command', flags: [], args: subs.map((s) => s.name) });
  return { root: flagsOf(program), subs };
}

export function completionScript(program: Command, shell: Shell): string {
  const t = tree(program);
  switch (shell) {
    case 'bash':
      return bash(t);
    case 'zsh':
      return zsh(t);
    case 'fish':
      return fish(t);
  }
}

const NAMES = ['noderotation', 'kubectl-noderotation'];
const words = (flags: readonly Flag[]): string => flags.flatMap((f) => [f.short, f.long].filter(Boolean)).join(' ');

function bash({ root, subs }: { root: Flag[]; subs: Sub[] }): string {
  const valueCases = (flags: readonly Flag[]): string[] =>
    flags
      .filter((f) => f.values !== undefined)
      .map((f) => {
        const pattern = [f.short, f.long].filter(Boolean).join('|');
        const action = actionFor(f.values as Values, {
          choices: (words) => `COMPREPLY=($(compgen -W '${words.join(' ')}' -- "$cur"))`,
          file: 'COMPREPLY=($(compgen -f -- "$cur"))',
          dir: 'COMPREPLY=($(compgen -d -- "$cur"))',
          context: `COMPREPLY=($(compgen -W "$(${CONTEXTS})" -- "$cur"))`,
          none: 'COMPREPLY=()',
        });
        return `        ${pattern}) ${action}; return ;;`;
      });
  const cases = subs.map((s) =>
    [
      `    ${s.name})`,
      '      case "$prev" in',
      ...valueCases(s.flags),
      '      esac',
      s.args.length > 0
        ? `      COMPREPLY=($(compgen -W '${[...s.args, ...words(s.flags).split(' ')].join(' ').trim()}' -- "$cur")) ;;`
        : `      COMPREPLY=($(compgen -W '${words(s.flags)}' -- "$cur")) ;;`,
    ].join('\n'),
  );
  return `# bash completion for noderotation: source <(noderotation completion bash)
_noderotation() {
  local cur="\${COMP_WORDS[COMP_CWORD]}" prev="\${COMP_WORDS[COMP_CWORD-1]}" cmd="" i
  for ((i = 1; i < COMP_CWORD; i++)); do
    case "\${COMP_WORDS[i]}" in
      -*) ;;
      *) cmd="\${COMP_WORDS[i]}"; break ;;
    esac
  done
  case "$cmd" in
    '') COMPREPLY=($(compgen -W '${[...subs.map((s) => s.name), ...words(root).split(' ')].join(' ')}' -- "$cur")) ;;
${cases.join('\n')}
  esac
}
complete -o default -F _noderotation ${NAMES.join(' ')}
`;
}

/** Text inside single quotes in a zsh _arguments spec or _describe entry: its quotes and the spec's own
 * separators (`:`, brackets) escaped, as _arguments reads them. */
const zshText = (s: string): string => s.replace(/([:[\]\\])/g, '\\$1').replace(/'/g, `'\\''`);

function zsh({ root, subs }: { root: Flag[]; subs: Sub[] }): string {
  const spec = (f: Flag): string => {
    const names = [f.short, f.long].filter(Boolean) as string[];
    const repeat = f.long === '--filename' || f.long === '--fail-on';
    const exclusive = repeat || names.length < 2 ? '' : `(${names.join(' ')})`;
    const head =
      names.length > 1 ? `'${repeat ? '*' : exclusive}'{${names.join(',')}}` : `'${repeat ? '*' : ''}${names[0]}`;
    const action =
      f.values === undefined
        ? ''
        : actionFor(f.values, {
            choices: (words) => `:value:(${words.join(' ')})`,
            file: ':file:_files',
            dir: ':directory:_files -/',
            context: `:context:($(${CONTEXTS}))`,
            none: ':value: ',
          });
    const body = `[${zshText(f.description)}]${action}'`;
    return names.length > 1 ? `${head}'${body}` : `${head}${body}`;
  };
  const cases = subs.map((s) =>
    [
      `    ${s.name})`,
      `      _arguments -s${s.flags.map((f) => ` \\\n        ${spec(f)}`).join('')}${
        s.args.length > 0 ? ` \\\n        '1:argument:(${s.args.join(' ')})'` : ''
      } ;;`,
    ].join('\n'),
  );
  return `#compdef ${NAMES.join(' ')}
# zsh completion for noderotation: source <(noderotation completion zsh)
_noderotation() {
  local -a commands
  commands=(
${subs.map((s) => `    '${s.name}:${zshText(s.description)}'`).join('\n')}
  )
  if (( CURRENT == 2 )); then
    _describe -t commands command commands
    _arguments -s${root.map((f) => ` ${spec(f)}`).join('')}
    return
  fi
  local cmd=$words[2]
  shift words
  (( CURRENT-- ))
  case $cmd in
${cases.join('\n')}
  esac
}
if [[ $zsh_eval_context[-1] == loadautofunc ]]; then
  _noderotation "$@"
else
  compdef _noderotation ${NAMES.join(' ')}
fi
`;
}

/** A word inside fish's single quotes. */
const fishText = (s: string): string => `'${s.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}'`;

function fish({ root, subs }: { root: Flag[]; subs: Sub[] }): string {
  const lines: string[] = ['# fish completion for noderotation: noderotation completion fish | source'];
  for (const name of NAMES) {
    const c = `complete -c ${name}`;
    const names = subs.map((s) => s.name).join(' ');
    lines.push(`${c} -f`);
    for (const s of subs) lines.push(`${c} -n '__fish_use_subcommand' -a ${s.name} -d ${fishText(s.description)}`);
    const flagLine = (cond: string, f: Flag): string => {
      const parts = [c, '-n', fishText(cond)];
      if (f.short) parts.push('-s', f.short.replace(/^-/, ''));
      parts.push('-l', f.long.replace(/^--/, ''));
      if (f.values !== undefined)
        parts.push(
          actionFor(f.values, {
            choices: (words) => `-x -a ${fishText(words.join(' '))}`,
            file: '-r -F',
            dir: "-x -a '(__fish_complete_directories)'",
            context: `-x -a '(${CONTEXTS})'`,
            none: '-x',
          }),
        );
      parts.push('-d', fishText(f.description));
      return parts.join(' ');
    };
    for (const f of root) lines.push(flagLine('__fish_use_subcommand', f));
    for (const s of subs) {
      const cond = `__fish_seen_subcommand_from ${s.name}; and not __fish_seen_subcommand_from ${names
        .split(' ')
        .filter((n) => n !== s.name)
        .join(' ')}`;
      for (const f of s.flags) lines.push(flagLine(`__fish_seen_subcommand_from ${s.name}`, f));
      if (s.args.length > 0) lines.push(`${c} -n ${fishText(cond)} -a ${fishText(s.args.join(' '))}`);
    }
  }
  return `${lines.join('\n')}\n`;
}
