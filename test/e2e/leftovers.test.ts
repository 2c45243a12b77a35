// The suite's last phase (test/e2e/run.sh): everything the tests created and deleted without waiting
// (TestResources.cleanup, helpers/graveyard.ts) is gone — NodeClaims, Nodes, NodePools, namespaces — and no
// NodePool, Node or namespace of the suite's (labelled noderotation.test/e2e) is left on the cluster.
import { describe, expect, it } from 'vitest';
import { awaitGraveyard, Kube } from './helpers/k8s.js';

const E2E = 'noderotation.test/e2e=true';

describe('nothing left behind', () => {
  const kube = new Kube();

  it('every NodePool and namespace the tests deleted is gone, with its NodeClaims and Nodes', async () => {
    const dead = await awaitGraveyard(kube);
    console.error(`leftovers: ${dead.pools.length} NodePools and ${dead.namespaces.length} namespaces gone`);
    const nodes = (await kube.core.listNode({ labelSelector: E2E })).items.map((n) => n.metadata?.name);
    const namespaces = (await kube.core.listNamespace({ labelSelector: E2E })).items
      .filter((n) => n.status?.phase !== 'Terminating')
      .map((n) => n.metadata?.name);
    expect({ nodes, namespaces }).toEqual({ nodes: [], namespaces: [] });
  });
});
