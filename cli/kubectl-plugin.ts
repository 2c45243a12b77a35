// `kubectl noderotation …`: kubectl runs an executable named kubectl-noderotation on PATH with the words after
// the plugin's name. A kubectl user means the cluster kubectl is pointed at, so status always reads it, and
// explain/validate/render read it unless files are given (-f alone stays an offline check, as in CI).
const CLUSTER_COMMANDS = new Set(['status', 'explain', 'validate', 'render']);

export function pluginArgs(argv: readonly string[]): string[] {
  const [command, ...rest] = argv;
  if (command === undefined || !CLUSTER_COMMANDS.has(command) || rest.includes('--from-cluster')) return [...argv];
  const files = rest.some(
    (a) => a === '-f' || a === '--filename' || a.startsWith('-f=') || a.startsWith('--filename='),
  );
  return command === 'status' || !files ? [command, '--from-cluster', ...rest] : [...argv];
}
