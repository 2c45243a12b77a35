// Per-file wiring for e2e tests: a client, resources cleaned up after each test, and the tails of every
// component's log printed when a test fails (the cluster's own logs are the only way to see why Karpenter
// or the scheduler did not act).
import type * as k8s from '@kubernetes/client-node';
import { afterEach, beforeEach } from 'vitest';
import { NODEPOOL_LABEL } from '../../../src/karpenter/types.js';
import { logTails } from './cluster.js';
import { Kube, TestResources } from './k8s.js';

export function useCluster(): { kube: Kube; res: TestResources } {
  const kube = new Kube();
  const res = new TestResources(kube);
  beforeEach(({ onTestFailed }) => {
    onTestFailed(() => {
      console.error(`\n----- component logs (${kube.env.runDir}/logs) -----\n${logTails(40)}`);
    });
  });
  afterEach(async () => {
    try {
      await res.cleanup();
    } catch (err) {
      console.error(`\n----- cleanup failed; component logs -----\n${logTails(40)}`);
      throw err;
    }
  });
  return { kube, res };
}

/** A container that KWOK "runs": the image is never pulled, only the requests matter. */
export function fakeContainer(cpu: string, memory = '64Mi'): k8s.V1Container {
  return { name: 'app', image: 'registry.k8s.io/pause:3.10', resources: { requests: { cpu, memory } } };
}

/** Pins pods to one test's NodePool (a label Karpenter allows in a nodeSelector). */
export function onPool(pool: string): Record<string, string> {
  return { [NODEPOOL_LABEL]: pool };
}

export function deployment(opts: {
  name: string;
  pool: string;
  replicas: number;
  cpu: string;
  terminationGracePeriodSeconds?: number;
}): k8s.V1Deployment {
  const labels = { app: opts.name };
  return {
    metadata: { name: opts.name, labels },
    spec: {
      replicas: opts.replicas,
      selector: { matchLabels: labels },
      template: {
        metadata: { labels },
        spec: {
          nodeSelector: onPool(opts.pool),
          terminationGracePeriodSeconds: opts.terminationGracePeriodSeconds ?? 5,
          containers: [fakeContainer(opts.cpu)],
        },
      },
    },
  };
}
