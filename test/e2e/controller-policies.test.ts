// A policy that cannot work, an equal-specificity tie and a placeholder PriorityClass that does not exist,
// next to a healthy pool, under one controller: the first three are Stalled with a message naming the field or
// the policies and their pools are never touched, while the healthy pool is rotated as usual (and its status
// summary says so); creating the missing PriorityClass releases its pool.
import { describe, expect, it } from 'vitest';
import { A } from '../../src/engine/annotations.js';
import type { NodePoolRotationStatus, RotationPolicySpec } from '../../src/generated/api-types.js';
import { ON_DEMAND_AMD64, poolWithApp } from './helpers/context.js';
import { ALWAYS_OPEN, useController } from './helpers/controller-context.js';
import { ignoreNotFound, uniqueName, waitFor } from './helpers/k8s.js';
import { getRotationPolicy } from './helpers/noderotation-api.js';

interface Status {
  matchedNodePools?: number;
  nodePools?: NodePoolRotationStatus[];
  conditions?: { type: string; status: string; reason: string; message: string }[];
}

describe('policies that cannot act', () => {
  const ctx = useController();
  const { kube, res } = ctx;
  const policy = async (name: string, spec: RotationPolicySpec): Promise<void> => {
    await ctx.policy(name, spec);
  };

  const status = async (name: string) => (await getRotationPolicy(kube, name))?.status as Status | undefined;
  const condition = async (name: string, type: string) =>
    (await status(name))?.conditions?.find((c) => c.type === type);

  it('an infeasible policy and a tie are Stalled, naming the field or policies; their pools untouched', async () => {
    // Three pools, each with one node running an app, every window open.
    const fatal = await poolWithApp(kube, res, 'e2e-pol-fatal', { ...ON_DEMAND_AMD64, expireAfter: '15m' });
    const tie = await poolWithApp(kube, res, 'e2e-pol-tie', ON_DEMAND_AMD64);
    const ok = await poolWithApp(kube, res, 'e2e-pol-ok', ON_DEMAND_AMD64);
    const noClass = await poolWithApp(kube, res, 'e2e-pol-pc', ON_DEMAND_AMD64);
    const cooldown = { readyTimeout: '5m', cooldownAfter: '30m' };
    const missingClass = uniqueName('e2e-missing-pc');
    // expireAfter 15m is shorter than the lead time K·P + t_rot = 2 × 1m + (15m + 2m + 2m): no node can be
    // guaranteed its windows (A < 0), so the policy must not act at all.
    await policy(`${fatal.pool}-p`, {
      nodePools: [fatal.pool],
      maintenanceWindows: ALWAYS_OPEN,
      surge: { readyTimeout: '15m', cooldownAfter: '30m' },
    });
    // Rotated at once, one rotation per pool: every node is past its threshold, the window always open.
    const rotateNow = (pool: string, surge: RotationPolicySpec['surge'] = cooldown): RotationPolicySpec => ({
      nodePools: [pool],
      maintenanceWindows: ALWAYS_OPEN,
      ageThreshold: '1s',
      surge,
    });
    // Two policies naming the same pool are equally specific.
    await policy(`${tie.pool}-a`, rotateNow(tie.pool));
    await policy(`${tie.pool}-b`, rotateNow(tie.pool));
    await policy(`${ok.pool}-p`, rotateNow(ok.pool));
    await policy(
      `${noClass.pool}-p`,
      rotateNow(noClass.pool, { ...cooldown, placeholder: { priorityClassName: missingClass } }),
    );

    const controller = await ctx.controller(fatal.ns);

    /** Waits until the pool's original node is replaced and the rotation recorded. */
    const rotated = (p: typeof ok, what: string) =>
      waitFor(
        what,
        async () => {
          const claims = await kube.nodeClaims(p.pool);
          const ann = (await kube.getNodePool(p.pool))?.metadata.annotations ?? {};
          return !claims.some((c) => c.metadata.name === p.claim.metadata.name) && A.lastRotationAt in ann;
        },
        { timeoutMs: 300_000, intervalMs: 1000, describe: () => controller.tail(20) },
      );
    await rotated(ok, 'the healthy pool rotated');

    const stalledFatal = await waitFor('the infeasible policy Stalled', async () => {
      const c = await condition(`${fatal.pool}-p`, 'Stalled');
      return c?.status === 'True' ? c : undefined;
    });
    expect(stalledFatal.reason).toBe('Invalid');
    expect(stalledFatal.message).toMatch(
      /NodePool e2e-pol-fatal-\w+: NodePool field spec.template.spec.expireAfter: .*\(NonPositiveAgeThreshold\)/,
    );
    expect(await condition(`${fatal.pool}-p`, 'Ready')).toMatchObject({ status: 'False', reason: 'Invalid' });

    for (const name of [`${tie.pool}-a`, `${tie.pool}-b`]) {
      const c = await waitFor(`${name} Stalled by the tie`, async () => {
        const s = await condition(name, 'Stalled');
        return s?.status === 'True' ? s : undefined;
      });
      expect(c.reason).toBe('Conflict');
      expect(c.message).toContain(`RotationPolicies ${tie.pool}-a, ${tie.pool}-b match NodePool ${tie.pool} equally`);
    }
    expect(await condition(`${ok.pool}-p`, 'Ready')).toMatchObject({ status: 'True', reason: 'Accepted' });
    // The healthy pool's summary: its last success, no rotation in flight, the figures as the function writes them.
    const summary = await waitFor('the healthy pool summarised after its rotation', async () => {
      const s = (await status(`${ok.pool}-p`))?.nodePools?.find((p) => p.name === ok.pool);
      return s?.lastRotationAt && !s.activeRotation ? s : undefined;
    });
    expect(summary).toMatchObject({ windowOpen: true, figures: { ageThreshold: '1s' } });
    expect(summary.windowOpensAt).toBeUndefined(); // always open: no next opening
    expect(Date.parse(summary.lastRotationAt!)).toBeGreaterThan(Date.parse(ok.claim.metadata.creationTimestamp!));

    // The missing PriorityClass: Stalled, naming the field and the class, the pool untouched.
    const stalledClass = await waitFor('the policy with a missing PriorityClass Stalled', async () => {
      const c = await condition(`${noClass.pool}-p`, 'Stalled');
      return c?.status === 'True' ? c : undefined;
    });
    expect(stalledClass.message).toMatch(
      new RegExp(
        `NodePool ${noClass.pool}: spec.surge.placeholder.priorityClassName: PriorityClass "${missingClass}" ` +
          'does not exist.*\\(PlaceholderPriorityClassNotFound\\)',
      ),
    );
    expect((await status(`${noClass.pool}-p`))?.nodePools?.[0]?.waiting).toBe(
      'the policy cannot work here: PlaceholderPriorityClassNotFound',
    );

    // Nothing of ours on the blocked pools, their nodes or claims; their original nodes are still there.
    for (const blocked of [fatal, tie, noClass]) {
      const ann = (await kube.getNodePool(blocked.pool))?.metadata.annotations ?? {};
      expect(Object.keys(ann).filter((k) => k.startsWith('noderotation.io/'))).toEqual([]);
      const claims = await kube.nodeClaims(blocked.pool);
      expect(claims.map((c) => c.metadata.name)).toEqual([blocked.claim.metadata.name]);
      expect(
        Object.keys(claims[0]?.metadata.annotations ?? {}).filter((k) => k.startsWith('noderotation.io/')),
      ).toEqual([]);
    }
    expect(
      controller.logs
        .filter((l) => [fatal.pool, tie.pool, noClass.pool].includes(l.nodepool as string))
        .map((l) => l.action),
    ).toEqual(expect.not.arrayContaining(['annotate', 'cordon', 'createPod', 'deleteNodeClaim']));

    // Creating the class releases the pool (the controller watches PriorityClasses): its node is rotated.
    await kube.scheduling.createPriorityClass({
      body: { metadata: { name: missingClass }, value: -10, preemptionPolicy: 'Never', globalDefault: false },
    });
    ctx.onCleanup(async () => {
      await ignoreNotFound(kube.scheduling.deletePriorityClass({ name: missingClass }));
    });
    await rotated(noClass, 'the released pool rotated');
    expect(await condition(`${noClass.pool}-p`, 'Ready')).toMatchObject({ status: 'True', reason: 'Accepted' });
  });
});
