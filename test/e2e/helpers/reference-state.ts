// A rotation left in flight by the reference controller, written in its exact form (its specification §5.3 and
// §5.2 create_placeholder): the anchor on the NodePool, the pending claim, the frozen and cordoned old node, and
// the placeholder Pod with its labels and Pod-level do-not-disrupt. A takeover test writes this and lets our
// engine or controller carry on; the safety tests write the markers alone, or start from this state and edit it
// as an operator would.
import { A, rfc3339 } from '../../../src/engine/annotations.js';
import { NODEPOOL_LABEL, UNREGISTERED_TAINT } from '../../../src/karpenter/types.js';
import { onPool } from './context.js';
import { kubectl } from './kubectl.js';
import type { Kube } from './k8s.js';

export interface ReferenceRotation {
  pool: string;
  namespace: string;
  claim: string;
  node: string;
  priorityClass: string;
  /** cpu request of the placeholder, e.g. '1' */
  cpu: string;
}

/**
 * The markers of a pending rotation, without its placeholder: the anchor, the claim `pending` since `startedAt`
 * (default now), the old node cordoned and frozen with our ownership markers.
 */
export function writeReferenceMarkers(
  r: Pick<ReferenceRotation, 'pool' | 'claim' | 'node'>,
  startedAt: number = Date.now(),
): void {
  kubectl(['annotate', 'nodepool', r.pool, `${A.activeRotation}=${r.claim}`]);
  kubectl(['annotate', 'nodeclaim', r.claim, `${A.state}=pending`, `${A.startedAt}=${rfc3339(startedAt)}`]);
  kubectl(['cordon', r.node]);
  kubectl([
    'annotate',
    'node',
    r.node,
    `${A.doNotDisrupt}=true`,
    `${A.doNotDisruptOwned}=true`,
    `${A.surgeFor}=${r.claim}`,
    `${A.cordoned}=true`,
  ]);
}

/** Writes the reference's mid-surge state; returns the placeholder's name. */
export async function writeReferenceRotation(kube: Kube, r: ReferenceRotation): Promise<string> {
  writeReferenceMarkers(r);
  const name = `noderotation-surge-${r.claim}`;
  await kube.core.createNamespacedPod({
    namespace: r.namespace,
    body: {
      metadata: {
        name,
        labels: { [A.surgeFor]: r.claim, [NODEPOOL_LABEL]: r.pool },
        annotations: { [A.doNotDisrupt]: 'true' },
      },
      spec: {
        priorityClassName: r.priorityClass,
        preemptionPolicy: 'Never',
        nodeSelector: onPool(r.pool),
        automountServiceAccountToken: false,
        terminationGracePeriodSeconds: 0,
        // Not in the reference's form, and nothing the takeover reads: it keeps the staged placeholder from being
        // deleted by the taint-eviction race on the node Karpenter registers for it (kubernetes/kubernetes#139992),
        // which once left the staging waiting for a placeholder that was gone.
        tolerations: [{ key: UNREGISTERED_TAINT, operator: 'Exists', effect: 'NoExecute' }],
        containers: [{ name: 'pause', image: 'registry.k8s.io/pause:3.10', resources: { requests: { cpu: r.cpu } } }],
      },
    },
  });
  return name;
}
