// Issue 17 finding 1 on the real cluster: a freeze written while a pass is in flight is never overwritten by the
// anchor that pass decided on. The controller runs with a pausepoint (controller/execute/failpoint.ts) that holds
// its anchor write after the decision; meanwhile the operator freezes the pool, and the test makes sure the
// controller's NodePool cache has that freeze before the write goes on (see below). The write must be refused
// (409: it carries the resourceVersion the decision read), and the next pass, seeing the freeze, starts nothing.
//
// Before the fix, the anchor PATCH carried the cache's newest resourceVersion — the freeze's, here — and so
// succeeded: a rotation started under the freeze (anchor written, RotationStarted, node cordoned and frozen).
import { existsSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { A, ANCHOR_SET, rfc3339 } from '../../src/engine/annotations.js';
import { ON_DEMAND_AMD64, ourMarkers } from './helpers/context.js';
import { ALWAYS_OPEN, useController } from './helpers/controller-context.js';
import { anchorWrites, reasonsAbout } from './helpers/controller-observe.js';
import { kubectl } from './helpers/kubectl.js';
import { uniqueName, waitFor } from './helpers/k8s.js';
import { idleBecause, stagedPool } from './helpers/staged-state.js';

describe('the anchor race', () => {
  const ctx = useController();
  const { kube, res } = ctx;

  it('a freeze written between the decision and its anchor write is not overwritten', async () => {
    const s = await stagedPool(kube, res, 'e2e-race');
    // A second, empty pool: its deletion, seen in the controller's metrics, tells when the NodePool watch has
    // delivered everything written before it (one watch, in resourceVersion order) — the freeze among it.
    const marker = await res.nodePool('e2e-race-mark', ON_DEMAND_AMD64);
    const policy = `${s.pool}-policy`;
    await ctx.policy(policy, {
      nodePools: [s.pool],
      maintenanceWindows: ALWAYS_OPEN,
      ageThreshold: '1s',
      surge: { readyTimeout: '10m', cooldownAfter: '30m' },
    });
    const release = path.join(kube.env.runDir, uniqueName('pause'));
    const controller = await ctx.controller(s.ns, [], {
      NODEROTATION_PAUSEPOINT: `annotate:NodePool:${A.activeRotation}`,
      NODEROTATION_PAUSEPOINT_FILE: release,
    });
    ctx.onCleanup(() => writeFileSync(release, ''));

    await waitFor('the anchor write held at the pausepoint', () => existsSync(`${release}.paused`), {
      timeoutMs: 60_000,
      describe: () => controller.tail(15),
    });
    const series = `noderotation_in_progress{nodepool="${marker}"}`;
    await waitFor('a pass of the marker pool reported', async () => (await controller.metrics()).includes(series));

    const freeze = rfc3339(Date.now() + 3_600_000);
    kubectl(['annotate', 'nodepool', s.pool, `${A.freeze}=${freeze}`]);
    await kube.deleteNodePool(marker);
    await waitFor(
      'the controller saw the marker pool go (and so the freeze before it)',
      async () => !(await controller.metrics()).includes(series),
    );
    writeFileSync(release, '');

    await waitFor(
      'the held anchor write refused (409) and the pass decided again',
      () => controller.logs.some((l) => l.nodepool === s.pool && l.msg.startsWith('lost a race')),
      { timeoutMs: 30_000, describe: () => controller.tail(15) },
    );
    // The next pass sees the freeze and says so: the signal that it decided, and decided nothing.
    await idleBecause(kube, controller, policy, s.pool, /^frozen until /);

    expect(anchorWrites(controller, s.pool)).toHaveLength(1); // the one held, then refused
    const poolAnn = (await kube.getNodePool(s.pool))?.metadata.annotations ?? {};
    expect(ANCHOR_SET.filter((k) => k in poolAnn)).toEqual([]);
    expect(poolAnn[A.freeze]).toBe(freeze);
    expect(await reasonsAbout(kube, s.pool)).not.toContain('RotationStarted');
    const node = await kube.getNode(s.node);
    expect(node?.spec?.unschedulable ?? false).toBe(false);
    expect(ourMarkers(node?.metadata?.annotations)).toEqual([]);
    expect(ourMarkers((await kube.getNodeClaim(s.claim.metadata.name))?.metadata.annotations)).toEqual([]);
    expect(controller.errors()).toEqual([]);
  });
});
