// `noderotation controller`: kubeconfig, the HTTP endpoints, leader election, and an orderly stop on SIGTERM (the
// write in flight finishes, the Lease is released, the process exits). Its flags: flags.ts.
import { hostname } from 'node:os';
import { randomUUID } from 'node:crypto';
import type http from 'node:http';
import { close, listen, metricsHandler, probeHandler } from './http.js';
import { ControllerUsageError, type ControllerFlags } from './flags.js';
import { KubeClient } from '../runtime/kube/client.js';
import { KubeconfigError, resolveKubeconfig, type KubeAuth } from '../runtime/kube/kubeconfig.js';
import { jsonLogger } from './log.js';
import { ControllerMetrics } from './metrics.js';
import { exposedGc, startHeapCompaction } from '../runtime/heap/compaction.js';
import { realClock } from '../runtime/queue/clock.js';
import { replica } from './replica.js';
import { programVersion } from '../runtime/version/version.js';

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

// Full collections when idle (runtime/heap/compaction.ts): the first once the start-up lists and passes are over.
const COMPACTION_FIRST_MS = 20_000;
const COMPACTION_EVERY_MS = 60_000;

/** Runs until stopped. Returns the exit status: 0 after an orderly stop, 1 when leadership was lost. */
export async function runController(flags: ControllerFlags, io: ControllerIo): Promise<number> {
  const log = jsonLogger(flags.logLevel, (l) => io.stderr.write(l));
  const identity = `${hostname()}_${randomUUID()}`;
  // The first line: which build runs, before anything that can fail.
  const { namespace, leaderElect } = flags;
  const gc = exposedGc();
  log.info('starting', { version: programVersion(), identity, namespace, leaderElect, heapCompaction: !!gc });
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
    if (flags.metrics) {
      const calendar = (): string | null => replicaOfProcess.controller.calendar(realClock.now());
      servers.push((await listen(flags.metrics, metricsHandler(metrics, calendar))).server);
    }
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

  replicaOfProcess.start();
  const compaction = startHeapCompaction({
    clock: realClock,
    gc,
    busy: () => replicaOfProcess.controller.working(),
    firstMs: COMPACTION_FIRST_MS,
    everyMs: COMPACTION_EVERY_MS,
  });

  const reason = await Promise.race([stopped, lostLeadership.then((w) => (lost = w))]);
  log.info('stopping', { reason });
  compaction.stop();
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
