// The engine's decisions executed against the real thing: a governed NodePool's node is rotated surge-first
// by real Karpenter (kwok provider) and the real scheduler. The test plays the controller's shell in its
// simplest form — read a snapshot, decide, carry the actions out with kubectl, repeat — so what it proves
// is the engine: its placeholder is one Karpenter provisions for, surge_ready holds on a real node, the old
// NodeClaim drains through the voluntary path, and every marker is gone at the end.
import { describe, expect, it } from 'vitest';
import { A } from '../../src/engine/annotations.js';
import { surgeReady } from '../../src/engine/placeholder.js';
import { indexSnapshot } from '../../src/engine/cluster-index.js';
import { ON_DEMAND_AMD64, poolWithApp, useCluster } from './helpers/context.js';
import { anytimePolicy, reconcileOnce } from './helpers/engine-shell.js';
import { podRunningReady, waitFor } from './helpers/k8s.js';

describe('a surge rotation driven by the engine', () => {
  const { kube, res } = useCluster();

  it('replaces the node surge-first: placeholder, surge node Ready, old NodeClaim drained, markers gone', async () => {
    const priorityClass = await res.priorityClass('e2e-ph', -10, 'Never');
    const { ns, pool, claim: oldClaim } = await poolWithApp(kube, res, 'e2e-rot', ON_DEMAND_AMD64, 'rot');
    const oldName = oldClaim.metadata.name;

    // Gate A (cooldownAfter) keeps the test to one rotation.
    const policy = anytimePolicy(pool, {
      readyTimeout: '5m',
      cooldownAfter: '30m',
      placeholder: { priorityClassName: priorityClass },
    });

    const seen: string[] = [];
    let deletedWhileSurgeReady: boolean | null = null;
    await waitFor(
      'the rotation to complete',
      () => {
        const { decision, seen: snap } = reconcileOnce(pool, ns, policy);
        for (const a of decision.actions) {
          if (a.type === 'event') seen.push(a.eventReason);
          if (a.type === 'deleteNodeClaim' && a.name === oldName) {
            const idx = indexSnapshot(snap);
            const claim = idx.claim(oldName)!;
            deletedWhileSurgeReady =
              'host' in surgeReady(idx.placeholderFor(oldName), idx.nodeOfClaim(claim)?.metadata.name, pool, idx);
          }
        }
        return seen.includes('RotationCompleted');
      },
      { timeoutMs: 300_000, intervalMs: 1000, describe: () => `events so far: ${seen.join(', ')}` },
    );

    expect(seen).toEqual(['RotationStarted', 'DrainStarted', 'RotationCompleted']);
    expect(deletedWhileSurgeReady).toBe(true);
    // The old NodeClaim is gone; the surge node carries the workload; nothing of ours is left behind.
    const claims = await kube.nodeClaims(pool);
    expect(claims.map((c) => c.metadata.name)).not.toContain(oldName);
    expect(claims).toHaveLength(1);
    const surgeNode = claims[0]!.status?.nodeName as string;
    await waitFor(
      'the app running on the surge node',
      async () => (await kube.pods(ns, 'app=app')).some((p) => podRunningReady(p) && p.spec?.nodeName === surgeNode),
      { timeoutMs: 120_000 },
    );
    const node = await kube.getNode(surgeNode);
    expect(
      Object.keys(node?.metadata?.annotations ?? {}).filter(
        (k) => k.startsWith('noderotation.io/') || k === A.doNotDisrupt,
      ),
    ).toEqual([]);
    const poolAnn = (await kube.getNodePool(pool))?.metadata.annotations ?? {};
    expect(Object.keys(poolAnn).filter((k) => k.startsWith('noderotation.io/'))).toEqual([A.lastRotationAt]);
    expect((await kube.pods(ns)).filter((p) => p.metadata?.name?.startsWith('noderotation-surge-'))).toEqual([]);
  });
});
