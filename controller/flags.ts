// The controller's flags (the reference controller's names and defaults), declared once: the command line
// (cli/program.ts) adds them to `noderotation controller`, which gives its --help and completion, and
// controllerFlags checks the parsed values. Light on purpose: the CLI declares every command without loading
// the controller.
import { Command, Option } from 'commander';
import { parseAlone } from '../runtime/cli/parse-alone.js';
import { describeValue } from '../src/util/describe.js';
import { parseBindAddress } from './http.js';
import type { Level } from './log.js';

export class ControllerUsageError extends Error {}

export interface ControllerFlags {
  kubeconfig: string | undefined;
  namespace: string;
  metrics: { host: string; port: number } | null;
  health: { host: string; port: number } | null;
  leaderElect: boolean;
  placeholderImage: string;
  priorityClass: string;
  concurrency: number;
  logLevel: Level;
  resyncMs: number;
}

/** The values commander parses from the flags below (its camel-case keys). */
export interface ControllerOptions {
  kubeconfig?: string;
  namespace: string;
  metricsBindAddress: string;
  healthProbeBindAddress: string;
  leaderElect: boolean;
  placeholderImage: string;
  priorityClass: string;
  concurrency: string;
  logLevel: string;
  resyncPeriod: string;
}

const LEVELS: readonly Level[] = ['debug', 'info', 'warn', 'error'];
const DNS_LABEL = /^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/;

/** Adds the controller's flags to `cmd`. */
export function controllerOptions(cmd: Command): Command {
  return cmd
    .option('--kubeconfig <file>', 'kubeconfig file (default: KUBECONFIG, else in-cluster, else ~/.kube/config)')
    .option('-n, --namespace <name>', 'namespace of the leader Lease and the placeholder Pods', 'node-rotation-system')
    .option('--leader-elect', 'elect one leader among the replicas (a Lease)', false)
    .option('--metrics-bind-address <addr>', 'HOST:PORT or :PORT of /metrics; 0 disables it', ':8080')
    .option('--health-probe-bind-address <addr>', 'HOST:PORT or :PORT of /healthz and /readyz; 0 disables', ':8081')
    .option('--placeholder-image <image>', "the placeholder Pod's image", 'registry.k8s.io/pause:3.10')
    .option('--priority-class <name>', "the placeholder Pod's PriorityClass", 'noderotation-placeholder')
    .option('--concurrency <n>', 'NodePools reconciled at once, 1 to 64', '4')
    .addOption(new Option('--log-level <level>', 'least severe log line written').choices(LEVELS).default('info'))
    .option('--resync-period <seconds>', 'every NodePool reconciled at least this often, 10 to 86400', '600');
}

/** The parsed values checked; a bad one is a ControllerUsageError naming the flag, the value and what is allowed. */
export function controllerFlags(values: ControllerOptions): ControllerFlags {
  const bad = (flag: string, found: string, allowed: string): never => {
    throw new ControllerUsageError(`--${flag}: found ${describeValue(found)}; allowed: ${allowed}`);
  };
  const namespace = values.namespace;
  if (!DNS_LABEL.test(namespace)) bad('namespace', namespace, 'a namespace name (DNS label)');
  const concurrency = Number(values.concurrency);
  if (!/^\d+$/.test(values.concurrency) || concurrency < 1 || concurrency > 64)
    bad('concurrency', values.concurrency, 'an integer from 1 to 64');
  const level = values.logLevel as Level;
  if (!LEVELS.includes(level)) bad('log-level', level, LEVELS.join(', '));
  const resync = Number(values.resyncPeriod);
  if (!/^\d+$/.test(values.resyncPeriod) || resync < 10 || resync > 86400)
    bad('resync-period', values.resyncPeriod, 'seconds, an integer from 10 to 86400');
  const bind = (flag: string, text: string): { host: string; port: number } | null => {
    try {
      return parseBindAddress(flag, text);
    } catch (e) {
      throw new ControllerUsageError((e as Error).message);
    }
  };
  return {
    kubeconfig: values.kubeconfig,
    namespace,
    metrics: bind('metrics-bind-address', values.metricsBindAddress),
    health: bind('health-probe-bind-address', values.healthProbeBindAddress),
    leaderElect: values.leaderElect,
    placeholderImage: values.placeholderImage,
    priorityClass: values.priorityClass,
    concurrency,
    logLevel: level,
    resyncMs: resync * 1000,
  };
}

/** The controller's flags parsed from `args` alone (its tests; the program parses them as a subcommand). */
export function parseControllerFlags(args: string[]): ControllerFlags {
  const cmd = controllerOptions(new Command('controller'));
  return controllerFlags(parseAlone<ControllerOptions>(cmd, args, (m) => new ControllerUsageError(m)));
}
