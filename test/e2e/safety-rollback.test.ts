// Issue 17 finding 4 on the real cluster: rollback reaps only a surge NodeClaim linked both ways by what the
// controller persisted. A rotation staged pending since before its readyTimeout, with no surge-claim link, and
// beside it in the pool a NodeClaim created after started-at that has not registered (its launch failing
// for now, Karpenter retrying it): the controller rolls the rotation back and leaves that claim alone.
//
// Before the fix, rollback took "the pool's only unregistered claim created after started-at" for the surge claim
// and deleted it.
import { describe, expect, it } from 'vitest';
import { A } from '../../src/engine/annotations.js';
import { ALWAYS_OPEN, useController } from './helpers/controller-context.js';
import { reasonsAbout, writes } from './helpers/controller-observe.js';
import { waitFor } from './helpers/k8s.js';
import { writeReferenceMarkers } from './helpers/reference-state.js';
import { stagedPool, unlaunchedClaim } from './helpers/staged-state.js';

describe('rollback beside an unrelated NodeClaim', () => {
  const ctx = useController();
  const { kube, res } = ctx;

  it('an unregistered claim created after started-at, never linked, is not reaped', async () => {
    const s = await stagedPool(kube, res, 'e2e-srb');
    await ctx.policy(`${s.pool}-policy`, {
      nodePools: [s.pool],
      maintenanceWindows: ALWAYS_OPEN,
      surge: { readyTimeout: '1m', failurePause: '30m', retryBackoff: '30m' },
    });
    // Pending for five minutes, readyTimeout one: the controller's first pass rolls it back.
    writeReferenceMarkers({ pool: s.pool, claim: s.claim.metadata.name, node: s.node }, Date.now() - 5 * 60_000);
    const before = await unlaunchedClaim(kube, s.pool);
    const other = before.metadata.name;
    // The claim the old guess took: in the pool, created after started-at, no node.
    expect(before.status?.nodeName).toBeUndefined();
    expect(before.status?.providerID).toBeUndefined();

    const controller = await ctx.controller(s.ns);
    await waitFor(
      'the rotation rolled back',
      async () => (await kube.getNodeClaim(s.claim.metadata.name))?.metadata.annotations?.[A.state] === 'failed',
      { timeoutMs: 60_000, intervalMs: 1000, describe: () => controller.tail(20) },
    );
    await waitFor('RotationFailed recorded', async () =>
      (await reasonsAbout(kube, s.claim.metadata.name)).includes('RotationFailed'),
    );

    // The unsafe controller deleted `other` in this very rollback.
    expect(writes(controller, s.pool).filter((l) => l.action === 'deleteNodeClaim')).toEqual([]);
    const after = await kube.getNodeClaim(other);
    expect(after?.metadata.uid).toBe(before.metadata.uid);
    expect(after?.metadata.deletionTimestamp).toBeUndefined();
    expect(Object.keys(after?.metadata.annotations ?? {}).filter((k) => k.startsWith('noderotation.io/'))).toEqual([]);
    expect(controller.errors()).toEqual([]);
  });
});
