// The controller's shell in its simplest form, for e2e tests of the engine: read a snapshot with kubectl
// (raw JSON, timestamps as strings, the form the engine reads), decide, carry each action out with kubectl.
import { A } from '../../../src/engine/annotations.js';
import { decide } from '../../../src/engine/decide.js';
import type { Action, Decision, Snapshot } from '../../../src/engine/types.js';
import type { RotationPolicy, Surge } from '../../../src/generated/api-types.js';
import type { ObjectMeta } from '../../../src/karpenter/types.js';
import { kubectl } from './kubectl.js';

const items = <T>(args: string[]): T[] => (JSON.parse(kubectl([...args, '-o', 'json'])) as { items: T[] }).items;

/** Raw JSON from the API (timestamps as strings), the form the engine reads. */
export function snapshot(pool: string, namespace: string, policy: RotationPolicy): Snapshot {
  return {
    policies: [policy],
    nodePools: items(['get', 'nodepools', '--field-selector', `metadata.name=${pool}`]),
    nodeClaims: items(['get', 'nodeclaims', '-l', `karpenter.sh/nodepool=${pool}`]),
    nodes: items(['get', 'nodes', '-l', `karpenter.sh/nodepool=${pool}`]),
    pods: items(['get', 'pods', '-n', namespace]),
    namespace,
  };
}

const resource = (kind: string): string =>
  ({ NodePool: 'nodepool', NodeClaim: 'nodeclaim', Node: 'node', Pod: 'pod' })[kind] as string;

/** The shell: carry one action out through the API. */
export function execute(a: Action, namespace: string): void {
  switch (a.type) {
    case 'annotate': {
      const target = [
        resource(a.target.kind),
        a.target.name,
        ...(a.target.namespace ? ['-n', a.target.namespace] : []),
      ];
      if (a.onlyIfAbsent) {
        const current = JSON.parse(kubectl(['get', ...target, '-o', 'json'])) as { metadata: ObjectMeta };
        if (current.metadata.annotations?.[a.onlyIfAbsent] !== undefined) return;
      }
      const args = [...Object.entries(a.set).map(([k, v]) => `${k}=${v}`), ...a.remove.map((k) => `${k}-`)];
      if (args.length > 0) kubectl(['annotate', ...target, '--overwrite', ...args]);
      return;
    }
    case 'cordon':
      kubectl([
        'patch',
        'node',
        a.node,
        '-p',
        JSON.stringify({ spec: { unschedulable: true }, metadata: { annotations: { [A.cordoned]: 'true' } } }),
      ]);
      return;
    case 'uncordon':
      kubectl([
        'patch',
        'node',
        a.node,
        '-p',
        JSON.stringify({ spec: { unschedulable: false }, metadata: { annotations: { [A.cordoned]: null } } }),
      ]);
      return;
    case 'createPod':
      kubectl(['create', '-n', namespace, '-f', '-'], JSON.stringify(a.pod));
      return;
    case 'deletePod':
      kubectl(['delete', 'pod', '-n', a.namespace, a.name, '--wait=false', '--ignore-not-found']);
      return;
    case 'deleteNodeClaim':
      kubectl(['delete', 'nodeclaim', a.name, '--wait=false', '--ignore-not-found']);
      return;
    case 'event':
    case 'observe':
      return;
  }
}

/** One pass: snapshot, decide, execute every action in order. Returns the decision and the snapshot it saw. */
export function reconcileOnce(
  pool: string,
  namespace: string,
  policy: RotationPolicy,
): { decision: Decision; seen: Snapshot } {
  const seen = snapshot(pool, namespace, policy);
  const decision = decide(seen, Date.now());
  for (const a of decision.actions) execute(a, namespace);
  return { decision, seen };
}

/**
 * A policy for a test: the window always open and every node old enough at once (ageThreshold 1s), so a
 * rotation starts on the first pass; the test's surge settings decide what happens next.
 */
export function anytimePolicy(pool: string, surge: Surge): RotationPolicy {
  return {
    apiVersion: 'noderotation.io/v1alpha1',
    kind: 'RotationPolicy',
    metadata: { name: 'e2e' },
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
