// What the controller keeps of each object it watches: exactly the fields the engine reads (the types in
// src/kube/types.ts and src/karpenter/types.ts), nothing else. A Node's images list, a Pod's volumes and env,
// every object's managedFields never reach memory past the watch decoder, which is what keeps the
// controller's footprint flat as the fleet grows.

/** true: keep the value whole; an object: keep those keys, recursively; [shape]: a list of that shape. */
export type Shape = true | { readonly [key: string]: Shape } | readonly [Shape];

export function pick(value: unknown, shape: Shape): unknown {
  if (shape === true || value === null || value === undefined) return value;
  if (Array.isArray(shape)) {
    if (!Array.isArray(value)) return undefined;
    return value.map((v) => pick(v, shape[0] as Shape));
  }
  if (typeof value !== 'object' || Array.isArray(value)) return undefined;
  const out: Record<string, unknown> = {};
  const src = value as Record<string, unknown>;
  for (const [k, sub] of Object.entries(shape as Record<string, Shape>)) {
    const v = pick(src[k], sub);
    if (v !== undefined) out[k] = v;
  }
  return out;
}

const META: Shape = {
  name: true,
  namespace: true,
  uid: true,
  labels: true,
  annotations: true,
  creationTimestamp: true,
  deletionTimestamp: true,
  resourceVersion: true,
  generation: true,
  ownerReferences: [{ apiVersion: true, kind: true, name: true, uid: true, controller: true }],
};

const REQUIREMENTS: Shape = [{ key: true, operator: true, values: true, minValues: true }];
const TAINTS: Shape = [{ key: true, value: true, effect: true }];
const CONDITIONS: Shape = [{ type: true, status: true, reason: true, lastTransitionTime: true }];

export const NODEPOOL: Shape = {
  apiVersion: true,
  kind: true,
  metadata: META,
  spec: {
    template: {
      metadata: { labels: true, annotations: true },
      spec: {
        requirements: REQUIREMENTS,
        taints: TAINTS,
        startupTaints: TAINTS,
        expireAfter: true,
        terminationGracePeriod: true,
        nodeClassRef: true,
      },
    },
    limits: true,
    disruption: true,
    weight: true,
  },
  status: { nodes: true, resources: true },
};

export const NODECLAIM: Shape = {
  apiVersion: true,
  kind: true,
  metadata: META,
  spec: {
    expireAfter: true,
    terminationGracePeriod: true,
    requirements: REQUIREMENTS,
    taints: TAINTS,
    nodeClassRef: true,
  },
  status: { nodeName: true, providerID: true, capacity: true, allocatable: true, conditions: CONDITIONS },
};

export const NODE: Shape = {
  apiVersion: true,
  kind: true,
  metadata: META,
  spec: { providerID: true, unschedulable: true, taints: TAINTS },
  // Only type and status of a Node's conditions: their heartbeat times change every few seconds and would make
  // every status update look like a change.
  status: { conditions: [{ type: true, status: true }], allocatable: true },
};

const CONTAINER: Shape = { name: true, image: true, resources: { requests: true, limits: true } };
const TERM: Shape = { matchExpressions: [{ key: true, operator: true, values: true }] };

export const POD: Shape = {
  apiVersion: true,
  kind: true,
  metadata: META,
  spec: {
    nodeName: true,
    containers: [CONTAINER],
    initContainers: [CONTAINER],
    overhead: true,
    nodeSelector: true,
    affinity: {
      nodeAffinity: {
        requiredDuringSchedulingIgnoredDuringExecution: { nodeSelectorTerms: [TERM] },
        preferredDuringSchedulingIgnoredDuringExecution: [{ weight: true, preference: TERM }],
      },
    },
    tolerations: true,
    priorityClassName: true,
    preemptionPolicy: true,
    terminationGracePeriodSeconds: true,
  },
  status: { phase: true, conditions: [{ type: true, status: true, reason: true }], startTime: true },
};

export const ROTATIONPOLICY: Shape = {
  apiVersion: true,
  kind: true,
  metadata: META,
  spec: true,
  // All of it: the controller writes the status only when it differs from this copy, so a field left out here
  // would look changed on every pass and be written again each time.
  status: true,
};

/** Only whether a PriorityClass exists matters (the placeholder names one). */
export const PRIORITYCLASS: Shape = { metadata: { name: true, resourceVersion: true } };
