// Crash safety: the controller is killed with SIGKILL right after each step's first write of one rotation
// (anchor, claim state, freeze, cordon, placeholder, surge claim, draining, delete) — a failpoint makes the
// moment exact — and restarted each time. The rotation still completes surge-first, and nothing of ours is
// left on any object.
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { A } from '../../src/engine/annotations.js';
import type { RotationPolicy } from '../../src/generated/api-types.js';
import { ON_DEMAND_AMD64, poolWithApp, useCluster } from './helpers/context.js';
import { ControllerProcess } from './helpers/controller-process.js';
import { podRunningReady, waitFor } from './helpers/k8s.js';
import {
  createRotationPolicy,
  deleteRotationPolicy,
  installNoderotation,
  serviceAccountKubeconfig,
} from './helpers/noderotation-api.js';

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
  const { kube, res } = useCluster();
  const cleanups: (() => Promise<void> | void)[] = [];
  beforeAll(() => installNoderotation());
  afterEach(async () => {
    for (const c of cleanups.splice(0).reverse()) await c();
  });

  it('kill -9 after each step of a rotation: each restart resumes it; it completes with nothing left', async () => {
    const { ns, pool, claim } = await poolWithApp(kube, res, 'e2e-crash', ON_DEMAND_AMD64);
    const policy: RotationPolicy = {
      apiVersion: 'noderotation.io/v1alpha1',
      kind: 'RotationPolicy',
      metadata: { name: `${pool}-policy` },
      spec: {
        nodePools: [pool],
        maintenanceWindows: [
          { timezone: 'UTC', days: ['Mon', 'Tue', 'Wed', 'Thu', 'Fri', 'Sat', 'Sun'], start: '00:00', end: '00:00' },
        ],
        ageThreshold: '1s',
        surge: { readyTimeout: '5m', cooldownAfter: '30m' },
      },
    };
    await createRotationPolicy(kube, policy);
    cleanups.push(() => deleteRotationPolicy(kube, policy.metadata.name));
    const identity = serviceAccountKubeconfig(ns);
    cleanups.push(identity.cleanup);

    const crashed: string[] = [];
    for (const step of STEPS) {
      const c = new ControllerProcess(ns, [], identity.kubeconfig, { NODEROTATION_FAILPOINT: step });
      cleanups.push(() => c.kill());
      await c.start();
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
    const last = new ControllerProcess(ns, [], identity.kubeconfig);
    cleanups.push(() => last.kill());
    await last.start();
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
