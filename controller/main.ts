// `noderotation controller`: flags (the reference controller's names and defaults), kubeconfig, the HTTP
// endpoints, leader election, and an orderly stop on SIGTERM (the write in flight finishes, the Lease is
// released, the process exits).
import { hostname } from 'node:os';
import { randomUUID } from 'node:crypto';
import type http from 'node:http';
import { parseArgs } from 'node:util';
import { close, listen, metricsHandler, parseBindAddress, probeHandler } from './http.js';
import { KubeClient } from '../runtime/kube/client.js';
import { KubeconfigError, resolveKubeconfig, type KubeAuth } from '../runtime/kube/kubeconfig.js';
import { jsonLogger, type Level } from './log.js';
import { ControllerMetrics } from './metrics.js';
import { realClock } from '../runtime/queue/clock.js';
import { replica } from './replica.js';
import { describeValue } from '../src/util/describe.js';

export const CONTROLLER_USAGE = `  noderotation controller [--kubeconfig FILE] [--namespace node-rotation-system]
      [--leader-elect] [--metrics-bind-address :8080] [--health-probe-bind-address :8081] [--placeholder-image IMAGE]
      [--priority-class noderotation-placeholder] [--concurrency 4] [--log-level info]
      Run the in-cluster controller (docs/controller.md).`;

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

const LEVELS: readonly Level[] = ['debug', 'info', 'warn', 'error'];
const DNS_LABEL = /^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/;

export function parseControllerFlags(args: string[]): ControllerFlags {
  const { values } = parseArgs({
    args,
    options: {
      kubeconfig: { type: 'string' },
      namespace: { type: 'string', default: 'node-rotation-system' },
      'metrics-bind-address': { type: 'string', default: ':8080' },
      'health-probe-bind-address': { type: 'string', default: ':8081' },
      'leader-elect': { type: 'boolean', default: false },
      'placeholder-image': { type: 'string', default: 'registry.k8s.io/pause:3.10' },
      'priority-class': { type: 'string', default: 'noderotation-placeholder' },
      concurrency: { type: 'string', default: '4' },
      'log-level': { type: 'string', default: 'info' },
      'resync-period': { type: 'string', default: '600' },
    },
    strict: true,
    allowPositionals: false,
  });
  const bad = (flag: string, found: string, allowed: string): never => {
    throw new ControllerUsageError(`--${flag}: found ${describeValue(found)}; allowed: ${allowed}`);
  };
  const namespace = values.namespace;
  if (!DNS_LABEL.test(namespace)) bad('namespace', namespace, 'a namespace name (DNS label)');
  const concurrency = Number(values.concurrency);
  if (!Number.isInteger(concurrency) || concurrency < 1 || concurrency > 64)
    bad('concurrency', String(values.concurrency), 'an integer from 1 to 64');
  const level = values['log-level'] as Level;
  if (!LEVELS.includes(level)) bad('log-level', level, LEVELS.join(', '));
  const resync = Number(values['resync-period']);
  if (!Number.isInteger(resync) || resync < 10 || resync > 86400)
    bad('resync-period', String(values['resync-period']), 'seconds, an integer from 10 to 86400');
  const bind = (flag: 'metrics-bind-address' | 'health-probe-bind-address'): { host: string; port: number } | null => {
    try {
      return parseBindAddress(flag, values[flag]);
    } catch (e) {
      throw new ControllerUsageError((e as Error).message);
    }
  };
  return {
    kubeconfig: values.kubeconfig,
    namespace,
    metrics: bind('metrics-bind-address'),
    health: bind('health-probe-bind-address'),
    leaderElect: values['leader-elect'] === true,
    placeholderImage: values['placeholder-image'],
    priorityClass: values['priority-class'],
    concurrency,
    logLevel: level,
    resyncMs: resync * 1000,
  };
}

/**
 * The kubeconfig as a controller looks for it (controller-runtime's order: --kubeconfig, else KUBECONFIG, else
 * in-cluster, else ~/.kube/config); a failure names what was tried.
 */
export function loadKubeConfig(file: string | undefined, env: NodeJS.ProcessEnv = process.env): KubeAuth {
  try {
    return resolveKubeconfig({ kubeconfig: file }, env, 'controller').auth;
  } catch (e) {
    if (e instanceof KubeconfigError) throw new ControllerUsageError(e.message);
    throw e;
  }
}

export interface ControllerIo {
  stderr: { write(text: string): unknown };
  env: NodeJS.ProcessEnv;
  /** Resolves with the signal's name when the process should stop. */
  stopSignal: Promise<string>;
}

/** Runs until stopped. Returns the exit status: 0 after an orderly stop, 1 when leadership was lost. */
export async function runController(args: string[], io: ControllerIo): Promise<number> {
  const flags = parseControllerFlags(args);
  const log = jsonLogger(flags.logLevel, (l) => io.stderr.write(l));
  const identity = `${hostname()}_${randomUUID()}`;
  const metrics = new ControllerMetrics();
  const kc = loadKubeConfig(flags.kubeconfig, io.env);
  const client = new KubeClient(kc, (method, path, status) => metrics.request(method, resourceOf(path), status));
  let leaderLost: (why: string) => void = () => undefined;
  const lostLeadership = new Promise<string>((resolve) => (leaderLost = resolve));
  const replicaOfProcess = replica({
    client,
    leaderElect: flags.leaderElect,
    onLostLeadership: (why) => leaderLost(why),
    clock: realClock,
    log,
    metrics,
    namespace: flags.namespace,
    identity,
    placeholderImage: flags.placeholderImage,
    priorityClass: flags.priorityClass,
    concurrency: flags.concurrency,
    resyncMs: flags.resyncMs,
  });

  const servers: http.Server[] = [];
  try {
    if (flags.metrics) servers.push((await listen(flags.metrics, metricsHandler(metrics))).server);
    if (flags.health) {
      const probe = {
        healthy: () => ({ ok: true, detail: 'ok' }),
        ready: () => {
          const h = replicaOfProcess.controller.health();
          const waiting = h.filter((x) => !x.synced).map((x) => x.name);
          return waiting.length === 0
            ? { ok: true, detail: 'ok' }
            : { ok: false, detail: `waiting for the caches of ${waiting.join(', ')}` };
        },
      };
      servers.push((await listen(flags.health, probeHandler(probe))).server);
    }
  } catch (e) {
    for (const s of servers) await close(s);
    throw new ControllerUsageError(`cannot listen: ${(e as Error).message}`);
  }

  let lost: string | null = null;
  const stopped = new Promise<string>((resolve) => {
    void io.stopSignal.then(resolve);
  });

  log.info('starting', { identity, namespace: flags.namespace, leaderElect: flags.leaderElect });
  replicaOfProcess.start();

  const reason = await Promise.race([stopped, lostLeadership.then((w) => (lost = w))]);
  log.info('stopping', { reason });
  await replicaOfProcess.stop(lost !== null);
  for (const s of servers) await close(s);
  client.close();
  log.info('stopped', {});
  return lost === null ? 0 : 1;
}

/** The resource of an API path, for the request counter: "/apis/karpenter.sh/v1/nodeclaims/x" → "nodeclaims". */
export function resourceOf(path: string): string {
  const parts = path.split('?')[0]?.split('/').filter(Boolean) ?? [];
  const i = parts[0] === 'api' ? 2 : 3; // /api/v1/<r> or /apis/<g>/<v>/<r>
  if (parts[i] === 'namespaces' && parts.length > i + 2) return parts[i + 2] ?? 'namespaces';
  return parts[i] ?? 'unknown';
}
