// The soak's chaos, executed: each planned event (plan.ts) against the real processes and the real apiserver,
// exactly as an incident would do it — SIGKILL and SIGSTOP of the leader, a component of the cluster restarted
// by its recorded PID (cluster.sh restart), a slow apiserver (the proxy), and an operator's edits as admin.
import { spawn } from 'node:child_process';
import { PatchStrategy, setHeaderOptions } from '@kubernetes/client-node';
import { clusterScript } from '../../test/e2e/helpers/cluster.js';
import { leaseHolder } from '../../test/e2e/helpers/controller-observe.js';
import { isNotFound, type Kube } from '../../test/e2e/helpers/k8s.js';
import { createRotationPolicy, deleteRotationPolicy } from '../../test/e2e/helpers/noderotation-api.js';
import { A } from '../../src/engine/annotations.js';
import { Rng } from '../../test/sim/scheduler.js';
import type { ChaosRecord, OperatorMarker } from './ledger.js';
import { policyOf, type ChaosEvent, type SoakPlan } from './plan.js';
import type { DelayingProxy } from './proxy.js';
import type { Replicas } from './replicas.js';

export interface ChaosContext {
  kube: Kube;
  plan: SoakPlan;
  replicas: Replicas;
  proxy: DelayingProxy;
  /** The controllers' namespace (their Lease) and the workload's. */
  namespace: string;
  apps: string;
  markers: OperatorMarker[];
  log: (msg: string) => void;
}

const MERGE = setHeaderOptions('Content-Type', PatchStrategy.MergePatch);
const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** Runs one event; resolves with what happened, once the fault is over (its marker taken back, the process back). */
export async function runChaos(ev: ChaosEvent, ctx: ChaosContext): Promise<ChaosRecord> {
  const start = Date.now();
  const rng = Rng.of(ev.pick);
  const detail = await execute(ev, ctx, rng);
  const end = Date.now();
  ctx.log(`chaos ${ev.kind}: ${detail} (${((end - start) / 1000).toFixed(1)} s)`);
  return { kind: ev.kind, start, end, detail };
}

async function execute(ev: ChaosEvent, ctx: ChaosContext, rng: Rng): Promise<string> {
  const { kube, replicas } = ctx;
  const tight = ctx.plan.pools.filter((p) => p.role === 'tight');
  const pool = tight[ev.pool % tight.length] ?? ctx.plan.pools[0];
  if (!pool) return 'no pool';
  switch (ev.kind) {
    case 'kill-leader':
    case 'pause-leader': {
      const holder = await leaseHolder(kube, ctx.namespace).catch(() => undefined);
      const slot = replicas.slotOf(holder);
      if (!slot?.proc)
        return `no leader to ${ev.kind === 'kill-leader' ? 'kill' : 'pause'} (holder ${holder ?? 'none'})`;
      const proc = slot.proc;
      if (ev.kind === 'kill-leader') {
        await proc.kill();
        return `SIGKILL to replica ${slot.name} (pid ${proc.pid}, the Lease holder)`;
      }
      slot.paused = true;
      proc.pause();
      await sleep(ev.forS * 1000);
      proc.resume();
      slot.paused = false;
      return `SIGSTOP to replica ${slot.name} (pid ${proc.pid}, the Lease holder) for ${ev.forS} s, then SIGCONT`;
    }
    case 'restart-karpenter':
    case 'restart-apiserver':
    case 'restart-kwok': {
      const component = {
        'restart-karpenter': 'karpenter-kwok',
        'restart-apiserver': 'kube-apiserver',
        'restart-kwok': 'kwok',
      }[ev.kind];
      const code = await run('bash', [clusterScript, 'restart', component, String(ev.forS)]);
      return `${component} stopped, down ${ev.forS} s, started again (cluster.sh restart: exit ${code})`;
    }
    case 'slow-apiserver': {
      const ms = rng.int(200, 1500);
      ctx.proxy.delayMs = ms;
      await sleep(ev.forS * 1000);
      ctx.proxy.delayMs = 0;
      return `every byte to and from the apiserver held ${ms} ms for ${ev.forS} s`;
    }
    case 'cordon': {
      const nodes = await kube.nodes(pool.name);
      const node = nodes.length ? nodes[rng.int(0, nodes.length - 1)] : undefined;
      const name = node?.metadata?.name;
      if (!name) return `no node in ${pool.name} to cordon`;
      return hold(ctx, { resource: 'nodes', name }, 'cordon', ev.forS, `cordoned node ${name} of ${pool.name}`);
    }
    case 'do-not-disrupt': {
      const which = rng.pick(['nodes', 'nodeclaims', 'pods'] as const);
      const names =
        which === 'nodes'
          ? (await kube.nodes(pool.name)).map((n) => n.metadata?.name ?? '')
          : which === 'nodeclaims'
            ? (await kube.nodeClaims(pool.name)).map((c) => c.metadata.name)
            : (await kube.pods(ctx.apps, `app=${pool.name}`)).map((p) => p.metadata?.name ?? '');
      const name = names.filter(Boolean).sort()[rng.int(0, Math.max(0, names.length - 1))];
      if (!name) return `no ${which} in ${pool.name}`;
      const object = { resource: which, name, ...(which === 'pods' ? { namespace: ctx.apps } : {}) };
      return hold(ctx, object, A.doNotDisrupt, ev.forS, `do-not-disrupt on ${which}/${name} of ${pool.name}`);
    }
    case 'freeze':
    case 'freeze-malformed': {
      const value = ev.kind === 'freeze' ? new Date(Date.now() + ev.forS * 1000).toISOString() : 'after the release';
      return hold(
        ctx,
        { resource: 'nodepools', name: pool.name },
        A.freeze,
        ev.forS,
        `${pool.name} frozen (${A.freeze}: ${value})`,
        value,
      );
    }
    case 'edit-policy': {
      const name = policyOf(pool).metadata.name;
      await patchPolicy(kube, name, { spec: { surge: { cooldownAfter: '15s' } } });
      await sleep(ev.forS * 1000);
      await patchPolicy(kube, name, { spec: { surge: { cooldownAfter: '10s' } } });
      return `policy ${name}: surge.cooldownAfter 10s → 15s for ${ev.forS} s, and back`;
    }
    case 'delete-policy': {
      const p = policyOf(pool);
      await deleteRotationPolicy(kube, p.metadata.name);
      await sleep(ev.forS * 1000);
      await createRotationPolicy(kube, p);
      return `policy ${p.metadata.name} of ${pool.name} deleted for ${ev.forS} s, then created again`;
    }
  }
}

/**
 * Sets a marker (an annotation, or a cordon) as admin, holds it `forS`, and takes it back; recorded for the
 * criterion that no controller removed it meanwhile.
 */
async function hold(
  ctx: ChaosContext,
  object: OperatorMarker['object'],
  key: string,
  forS: number,
  what: string,
  value = 'true',
): Promise<string> {
  const set = key === 'cordon' ? { spec: { unschedulable: true } } : { metadata: { annotations: { [key]: value } } };
  const unset = key === 'cordon' ? { spec: { unschedulable: false } } : { metadata: { annotations: { [key]: null } } };
  if (!(await patchObject(ctx.kube, object, set))) return `${what}: gone before it could be marked`;
  const from = Date.now();
  await sleep(forS * 1000);
  const until = Date.now();
  ctx.markers.push({ object, key, from, until });
  const stillThere = await patchObject(ctx.kube, object, unset);
  return `${what} for ${forS} s${stillThere ? ', then taken back' : ' (gone meanwhile)'}`;
}

/** A merge patch as admin; false when the object is gone. */
async function patchObject(kube: Kube, o: OperatorMarker['object'], body: object): Promise<boolean> {
  try {
    if (o.resource === 'nodes') await kube.core.patchNode({ name: o.name, body }, MERGE);
    else if (o.resource === 'pods')
      await kube.core.patchNamespacedPod({ name: o.name, namespace: o.namespace ?? '', body }, MERGE);
    else
      await kube.custom.patchClusterCustomObject(
        { group: 'karpenter.sh', version: 'v1', plural: o.resource, name: o.name, body },
        MERGE,
      );
    return true;
  } catch (e) {
    if (isNotFound(e)) return false;
    throw e;
  }
}

async function patchPolicy(kube: Kube, name: string, body: object): Promise<void> {
  await kube.custom.patchClusterCustomObject(
    { group: 'noderotation.io', version: 'v1alpha1', plural: 'rotationpolicies', name, body },
    MERGE,
  );
}

/** A child process, awaited without blocking the event loop (the proxy and the poller run meanwhile). */
function run(cmd: string, args: string[]): Promise<number | null> {
  return new Promise((resolve) => {
    const child = spawn(cmd, args, { stdio: 'ignore' });
    child.on('exit', (code) => resolve(code));
    child.on('error', () => resolve(null));
  });
}
