// The engine driven one pass at a time by an e2e test, with the controller's own executor: read a snapshot
// (raw JSON, timestamps as strings, the form the engine reads), decide, and carry the actions out with
// controller/execute/executor.ts — every patch conditioned on the resourceVersion read here, every NodeClaim
// delete judged again on state read for it from the API and preconditioned on its UID and resourceVersion.
// What the controller adds around it (reflectors, queue, leadership) is not here: a test decides when a pass runs.
import { executorDeps, snapshotVersions } from '../../../controller/execute/deps.js';
import { execute as executeOn, LostRace, Refused } from '../../../controller/execute/executor.js';
import { KubeClient } from '../../../runtime/kube/client.js';
import { loadKubeconfigFile } from '../../../runtime/kube/kubeconfig.js';
import { decide } from '../../../src/engine/decide.js';
import type { Action, Decision, Snapshot } from '../../../src/engine/types.js';
import type { RotationPolicy, Surge } from '../../../src/generated/api-types.js';
import { readClusterEnv } from './cluster.js';
import { kubectl } from './kubectl.js';

const items = <T>(args: string[]): T[] => (JSON.parse(kubectl([...args, '-o', 'json'])) as { items: T[] }).items;

let client: KubeClient | undefined;
const api = (): KubeClient => (client ??= new KubeClient(loadKubeconfigFile(readClusterEnv().kubeconfig)));

/** The pool's objects and the namespace's Pods, with the policy `policy` as stored in the cluster. */
export function snapshot(pool: string, namespace: string, policy: string): Snapshot {
  return {
    policies: items<RotationPolicy>(['get', 'rotationpolicies', '--field-selector', `metadata.name=${policy}`]),
    nodePools: items(['get', 'nodepools', '--field-selector', `metadata.name=${pool}`]),
    nodeClaims: items(['get', 'nodeclaims', '-l', `karpenter.sh/nodepool=${pool}`]),
    nodes: items(['get', 'nodes', '-l', `karpenter.sh/nodepool=${pool}`]),
    pods: items(['get', 'pods', '-n', namespace]),
    namespace,
  };
}

/**
 * Carry `actions` (decided on `seen`) out in order, as the controller's pass does: a lost race (the object
 * changed since it was read) or a refused delete ends the pass, and the next pass decides again. Returns the
 * actions carried out.
 */
export async function execute(actions: readonly Action[], seen: Snapshot): Promise<Action[]> {
  const deps = executorDeps({
    client: api(),
    namespace: seen.namespace,
    versions: snapshotVersions(seen),
    now: () => Date.now(),
  });
  const done: Action[] = [];
  for (const a of actions) {
    try {
      await executeOn(a, deps);
    } catch (e) {
      if (e instanceof LostRace || e instanceof Refused) return done;
      throw e;
    }
    done.push(a);
  }
  return done;
}

/** One pass: snapshot, decide, carry the actions out. Returns the decision, the snapshot and what was carried out. */
export async function reconcileOnce(
  pool: string,
  namespace: string,
  policy: string,
): Promise<{ decision: Decision; seen: Snapshot; done: Action[] }> {
  const seen = snapshot(pool, namespace, policy);
  const decision = decide(seen, Date.now());
  return { decision, seen, done: await execute(decision.actions, seen) };
}

/**
 * A policy for a test's pool, named after it: the window always open and every node old enough at once
 * (ageThreshold 1s), so a rotation starts on the first pass; the test's surge settings decide what happens next.
 * Stored in the cluster (applyPolicy) so that the executor's fresh judgement of a delete finds the pool governed.
 */
export function anytimePolicy(pool: string, surge: Surge): RotationPolicy {
  return {
    apiVersion: 'noderotation.io/v1alpha1',
    kind: 'RotationPolicy',
    metadata: { name: `e2e-${pool}` },
    spec: {
      nodePools: [pool],
      maintenanceWindows: [
        { timezone: 'UTC', days: ['Mon', 'Tue', 'Wed', 'Thu', 'Fri', 'Sat', 'Sun'], start: '00:00', end: '00:00' },
      ],
      ageThreshold: '1s',
      surge,
    },
  };
}
