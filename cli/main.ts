// The `noderotation` command line. Each subcommand is a thin shell over the pure core: it reads input,
// injects the clock, and prints. A subcommand's module is loaded when it runs, so a process loads only its
// own command's code (the controller does not carry the simulator, the function server or the YAML reader).
import { InputFileError, readStdinBounded, UsageError } from './io.js';
import { CONTROLLER_USAGE, ControllerUsageError, runController } from '../controller/main.js';
import { EXIT_INTERNAL, EXIT_INVALID, processStopSignal, type Io } from './process.js';

const USAGE = `noderotation — move Karpenter node expiry into maintenance windows, gracefully

Usage:
  noderotation explain  [-f FILE... [-R]] [CLUSTER] [-o table|json] [--now RFC3339]
      For each NodePool: the governing policy, the derived figures and the findings with their fixes.
  noderotation validate [-f FILE... [-R]] [CLUSTER] [-o text|json] [--now RFC3339]
      The same checks, terse, for CI.
  noderotation render   [-f FILE... [-R]] [CLUSTER] [--now RFC3339]
      The RotationPolicies the Crossplane function composes from MaintenancePlans, as YAML (docs/function.md).
      CLUSTER: --from-cluster [--kubeconfig FILE] [--context NAME] also reads the NodePools, NodeClaims,
      RotationPolicies and MaintenancePlans of the cluster (kubeconfig as kubectl resolves it; list calls only);
      an object in -f replaces the cluster's of the same kind and name, to preview a change.
  noderotation status   [-f FILE... [-R]] [CLUSTER] [-o table|wide|json] [-w] [--timezone ZONE] [--now RFC3339]
      Per NodePool: its policy, the window (open until / next opening), candidates now and at the next
      opening, the rotation in flight, the last success and failure, freezes and findings; -w refreshes.
  noderotation simulate -f SCENARIO [-o table|json|html] [--baseline] [--sample N]
      Run the rotation engine against a model of Karpenter over weeks of simulated time (docs/simulate.md).
  noderotation simulate --from-cluster [-f CHANGED...] [--kubeconfig FILE] [--context NAME] [--duration 60d]
      [-o table|json|html] [--pool NAME] [--sample N] [--now RFC3339]
      The live fleet simulated under the policies as they are and with the changed files, side by side.
  noderotation function [--address :9443] [--insecure | --tls-certs-dir DIR] [--metrics-address :8080] [--debug]
      [--response-ttl 60s]
      Serve the Crossplane composition function (gRPC); DIR defaults to $TLS_SERVER_CERTS_DIR.
${CONTROLLER_USAGE}

FILE holds RotationPolicies or MaintenancePlans, Karpenter NodePools and optionally NodeClaims (YAML, several
documents per file; a directory reads its *.yaml, *.yml and *.json files, and with -R its sub-directories too;
a pipe such as <(kubectl get nodepools -o yaml) is read like - , standard input).
Exit status: 0 no fatal finding, 1 a fatal finding, 2 invalid input, 3 an internal error (a bug).
Limits: 10 MiB per file, 50 MiB and 10000 files over all -f, 10000 YAML documents per file.
`;

export async function main(argv: string[], io: Partial<Io> & Pick<Io, 'stdout' | 'stderr'>): Promise<number> {
  const full: Io = {
    now: () => Date.now(),
    readStdin: (limit) => readStdinBounded(limit),
    monotonic: () => performance.now(),
    ...io,
  };
  const [command, ...rest] = argv;
  try {
    switch (command) {
      case 'explain':
        return await (await import('./explain-command.js')).runExplain(rest, full, 'explain');
      case 'validate':
        return await (await import('./explain-command.js')).runExplain(rest, full, 'validate');
      case 'render':
        return await (await import('./render-command.js')).runRender(rest, full);
      case 'simulate':
        return await (await import('./simulate-command.js')).runSimulate(rest, full);
      case 'status':
        return await (
          await import('./status-command.js')
        ).runStatus(rest, full, {
          stopSignal: processStopSignal(),
          sleep: (ms) => new Promise((r) => setTimeout(r, ms)),
        });
      case 'function':
        return await (
          await import('./function-command.js')
        ).runFunctionCommand(rest, full, {
          tlsServerCertsDir: process.env.TLS_SERVER_CERTS_DIR,
          stopSignal: processStopSignal(),
        });
      case 'controller':
        return await runController(rest, { stderr: full.stderr, env: process.env, stopSignal: processStopSignal() });
      case undefined:
      case 'help':
      case '--help':
      case '-h':
        full.stdout.write(USAGE);
        return command === undefined ? EXIT_INVALID : 0;
      default:
        throw new UsageError(`unknown command "${command}"`);
    }
  } catch (err) {
    if (
      err instanceof UsageError ||
      err instanceof ControllerUsageError ||
      (err as { code?: string }).code?.startsWith('ERR_PARSE_ARGS')
    ) {
      full.stderr.write(`noderotation: ${(err as Error).message}\n\n${USAGE}`);
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
