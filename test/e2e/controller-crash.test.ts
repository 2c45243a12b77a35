// Crash safety: the controller is killed with SIGKILL right after each step's first write of one rotation
// (anchor, claim state, freeze, cordon, placeholder, surge claim, draining, delete) — a failpoint makes the
// moment exact — and restarted each time. The rotation still completes surge-first, and nothing of ours is
// left on any object.
import { describe, expect, it } from 'vitest';
import { A } from '../../src/engine/annotations.js';
import { ON_DEMAND_AMD64, poolWithApp } from './helpers/context.js';
import { ALWAYS_OPEN, useController } from './helpers/controller-context.js';
import { podRunningReady, waitFor } from './helpers/k8s.js';

/** The writes of one surge rotation, in order (controller/execute/failpoint.ts names them). */
const STEPS = [
  `annotate:NodePool:${A.activeRotation}`,
  `annotate:NodeClaim:${A.startedAt}`,
  `annotate:Node:${A.doNotDisrupt}`,
  'cordon',
  'createPod',
  `annotate:NodeClaim:${A.surgeClaim}`,
  `annotate:NodePool:${A.activeRotationState}`,
  'deleteNodeClaim',
];

describe('crash safety', () => {
  const ctx = useController();
  const { kube, res } = ctx;

  it('kill -9 after each step of a rotation: each restart resumes it; it completes with nothing left', async () => {
    const { ns, pool, claim } = await poolWithApp(kube, res, 'e2e-crash', ON_DEMAND_AMD64);
    await ctx.policy(`${pool}-policy`, {
      nodePools: [pool],
      maintenanceWindows: ALWAYS_OPEN,
      ageThreshold: '1s',
      surge: { readyTimeout: '5m', cooldownAfter: '30m' },
    });

    const crashed: string[] = [];
    for (const step of STEPS) {
      const c = await ctx.controller(ns, [], { NODEROTATION_FAILPOINT: step });
      // The step may need the cluster first (the surge node to come up before the surge-claim write).
      const signal = await Promise.race([
        c.ended(),
        new Promise<'alive'>((r) => setTimeout(() => r('alive'), 240_000)),
      ]);
      expect(signal, `no crash at ${step}:\n${c.tail(20)}`).toBe('SIGKILL');
      crashed.push(step);
    }
    expect(crashed).toEqual(STEPS);

    // A last, clean controller finishes whatever is left.
    const last = await ctx.controller(ns);
    await waitFor(
      'the rotation complete',
      async () => {
        const ann = (await kube.getNodePool(pool))?.metadata.annotations ?? {};
        const claims = await kube.nodeClaims(pool);
        return !claims.some((c) => c.metadata.name === claim.metadata.name) && !(A.activeRotation in ann);
      },
      { timeoutMs: 240_000, intervalMs: 1000, describe: () => last.tail(20) },
    );
    await waitFor('the app running on the new node', async () =>
      (await kube.pods(ns, 'app=app')).some(podRunningReady),
    );
    const poolAnn = (await kube.getNodePool(pool))?.metadata.annotations ?? {};
    expect(Object.keys(poolAnn).filter((k) => k.startsWith('noderotation.io/'))).toEqual([A.lastRotationAt]);
    for (const n of await kube.nodes(pool)) {
      const ann = Object.keys(n.metadata?.annotations ?? {});
      expect(ann.filter((k) => k.startsWith('noderotation.io/') || k === A.doNotDisrupt)).toEqual([]);
      expect(n.spec?.unschedulable ?? false).toBe(false);
    }
    for (const c of await kube.nodeClaims(pool))
      expect(Object.keys(c.metadata.annotations ?? {}).filter((k) => k.startsWith('noderotation.io/'))).toEqual([]);
    await waitFor('no placeholder left', async () => (await kube.pods(ns, A.surgeFor)).length === 0);
    expect(await last.stop()).toBe(0);
  });
});
