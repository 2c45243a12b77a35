// The simulator's parity with the real cluster (issue 18 item 6): each scenario of test/support/parity.ts runs on
// this cluster — real kube-apiserver, scheduler, Karpenter (kwok provider) and the controller as its own process —
// and in the simulator (test/sim/sim.ts) under several seeds, and the controller's writes must be the same
// sequence. The real ones are read from the apiserver's audit log (cluster.sh records the ServiceAccounts' writes
// at Request level), not from the controller; the simulated ones from its apiserver's audit log of the same shape;
// one function normalises both. The scenarios run side by side, each on its own NodePool and namespace, under one
// controller (two would both lead, each in its own namespace, and act on every governed pool).
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { runSeed } from '../sim/sim.js';
import {
  cut,
  normalise,
  parseAuditLog,
  PARITY_SCENARIOS,
  statusWrites,
  type AuditEvent,
  type Cast,
  type ParityScenario,
} from '../support/parity.js';
import { oneZone, poolWithApp } from './helpers/context.js';
import { useController } from './helpers/controller-context.js';
import { conditionTrue, podRunningReady, waitFor, type Kube } from './helpers/k8s.js';
import { kubectl } from './helpers/kubectl.js';

/** Seeds each scenario runs under in the simulator here (test/sim/parity.test.ts runs more). */
const SEEDS = [1, 2, 3];
const PLACEHOLDER_PREFIX = 'noderotation-surge-';
/** 3900m allocatable: the simulator's nodes have 4 cpu, all in one zone (as oneZone pins them). */
const INSTANCE_TYPE = 'c-4x-amd64-linux';

/** A scenario on the cluster: its pool, policy, and every claim and node of the pool seen while it ran. */
interface Staged {
  s: ParityScenario;
  ns: string;
  pool: string;
  policy: string;
  claims: Set<string>;
  nodes: Map<string, string>;
}

async function stage(ctx: ReturnType<typeof useController>, s: ParityScenario): Promise<Staged> {
  const { kube, res } = ctx;
  const template = { ...oneZone(INSTANCE_TYPE, s.pool.terminationGracePeriod), expireAfter: s.pool.expireAfter };
  const { ns, pool, claim } = await poolWithApp(kube, res, `e2e-par-${s.name}`, template, undefined, s.app);
  // One Pod per node, as the simulator places them, with nothing that outlives the staging (an anti-affinity
  // would keep an evicted Pod off the other node, where the simulator puts it): each further Pod comes while the
  // nodes so far are cordoned, so Karpenter launches a node for it; the cordons are lifted at the end.
  const hosts = [claim.status?.nodeName as string];
  for (let k = 2; k <= s.nodes; k++) {
    for (const h of hosts) kubectl(['cordon', h]);
    kubectl(['scale', 'deployment/app', '-n', ns, `--replicas=${k}`]);
    const running = await waitFor(
      `${s.name}: ${k} Ready NodeClaims, the app running on each`,
      async () => {
        const claims = (await kube.nodeClaims(pool)).filter((c) => conditionTrue(c, 'Ready'));
        const pods = (await kube.pods(ns, 'app=app')).filter(podRunningReady);
        const on = new Set(pods.map((p) => p.spec?.nodeName ?? ''));
        return claims.length === k && pods.length === k && on.size === k ? [...on] : undefined;
      },
      { timeoutMs: 180_000 },
    );
    hosts.splice(0, hosts.length, ...running);
  }
  if (s.nodes > 1) for (const h of hosts) kubectl(['uncordon', h]);
  const policy = `${pool}-parity`;
  await ctx.policy(policy, { nodePools: [pool], ...s.policy });
  return { s, ns, pool, policy, claims: new Set(), nodes: new Map() };
}

/** Records every claim of the staged pools and the claim of every node, until stopped. */
function castWatch(kube: Kube, staged: readonly Staged[]): () => Promise<void> {
  let running = true;
  const look = async (): Promise<void> => {
    for (const st of staged) {
      for (const c of await kube.nodeClaims(st.pool)) st.claims.add(c.metadata.name);
      for (const n of await kube.nodes(st.pool)) {
        const owner = n.metadata?.ownerReferences?.find((o) => o.kind === 'NodeClaim')?.name;
        if (owner && n.metadata?.name) st.nodes.set(n.metadata.name, owner);
      }
    }
  };
  const loop = (async () => {
    while (running) {
      await look().catch(() => undefined);
      await new Promise((r) => setTimeout(r, 500));
    }
  })();
  return async () => {
    running = false;
    await loop;
    await look();
  };
}

/** The events of one scenario: its pool, policy, claims, their nodes and placeholders. */
function ofScenario(st: Staged, e: AuditEvent): boolean {
  const name = e.objectRef?.name ?? (e.requestObject as { metadata?: { name?: string } } | undefined)?.metadata?.name;
  if (!name) return false;
  switch (e.objectRef?.resource) {
    case 'nodepools':
      return name === st.pool;
    case 'rotationpolicies':
      return name === st.policy;
    case 'nodeclaims':
      return st.claims.has(name);
    case 'nodes':
      return st.claims.has(st.nodes.get(name) ?? '');
    case 'pods':
      return name.startsWith(PLACEHOLDER_PREFIX) && st.claims.has(name.slice(PLACEHOLDER_PREFIX.length));
    default:
      return false;
  }
}

describe("the simulator's parity with the real cluster", () => {
  const ctx = useController();
  const { kube, res } = ctx;

  it('each scenario gives the controller the same sequence of writes in both', async () => {
    // The simulator first (a second or two): a scenario whose sequence varies with the seed is a finding already.
    const simulated = new Map<string, string[]>();
    for (const s of PARITY_SCENARIOS) {
      // One after the other: a run seeds Math.random for its own duration.
      const runs = [];
      for (const seed of SEEDS) runs.push(await runSeed({ seed, scenario: s }));
      for (const r of runs) expect(r.violations, `${s.name} seed ${r.seed}`).toEqual([]);
      const seqs = runs.map((r) => r.parity?.sequence ?? []);
      for (const q of seqs.slice(1)) expect(q, `${s.name}: every seed the same`).toEqual(seqs[0]);
      simulated.set(s.name, seqs[0] as string[]);
    }

    const controllerNs = await res.namespace('e2e-par');
    const staged = await Promise.all(PARITY_SCENARIOS.map((s) => stage(ctx, s)));
    const stopCast = castWatch(kube, staged);
    ctx.onCleanup(async () => void (await stopCast().catch(() => undefined)));
    const auditLog = path.join(kube.env.runDir, 'logs', 'audit.log');
    const user = `system:serviceaccount:${controllerNs}:`;
    const ours = (): AuditEvent[] =>
      parseAuditLog(readFileSync(auditLog, 'utf8')).filter((e) => e.user.username.startsWith(user));
    const castOf = (st: Staged): Cast => ({ pool: st.pool, policy: st.policy, claimOfNode: (n) => st.nodes.get(n) });
    const sequenceOf = (st: Staged, events: readonly AuditEvent[]): string[] =>
      normalise(
        events.filter((e) => ofScenario(st, e)),
        castOf(st),
      );

    const controller = await ctx.controller(controllerNs);
    await waitFor(
      'every scenario at its end (its rotations complete; a full pass of a pool that expects none)',
      async () => {
        const events = ours();
        const metrics = await controller.metrics();
        return staged.every((st) =>
          st.s.rotations === 0
            ? metrics.includes(`noderotation_in_progress{nodepool="${st.pool}"} 0`)
            : cut(sequenceOf(st, events), st.s) !== undefined,
        );
      },
      {
        timeoutMs: 240_000,
        intervalMs: 1000,
        describe: () =>
          staged.map((st) => `${st.s.name}:\n  ${sequenceOf(st, ours()).join('\n  ')}`).join('\n') +
          `\n${controller.tail(20)}`,
      },
    );
    expect(await controller.stop()).toBe(0);
    await stopCast();

    const events = ours();
    const real = new Map(staged.map((st) => [st.s.name, sequenceOf(st, events)]));
    for (const st of staged) {
      const mine = events.filter((e) => ofScenario(st, e));
      const refused = mine
        .filter((e) => (e.responseStatus?.code ?? 0) >= 300)
        .map((e) => `${e.verb} ${e.objectRef?.resource} ${e.responseStatus?.code}`);
      console.log(
        `${st.s.name}: ${real.get(st.s.name)?.length} writes on the cluster, ${statusWrites(mine)} status writes, ` +
          `refused: ${refused.join(', ') || 'none'}\n  ${(real.get(st.s.name) ?? []).join('\n  ')}`,
      );
    }
    for (const st of staged) {
      const seq = real.get(st.s.name) ?? [];
      expect(cut(seq, st.s), `${st.s.name} on the cluster`).toEqual(simulated.get(st.s.name));
    }
    expect(controller.errors()).toEqual([]);
  });
});
