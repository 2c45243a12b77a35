// What the controller keeps of each object it watches: exactly the fields the engine reads (the types in
// src/kube/types.ts and src/karpenter/types.ts), nothing else. A Node's images list, a Pod's volumes and env,
// every object's managedFields never reach memory past the watch decoder, which is what keeps the
// controller's footprint flat as the fleet grows.

/** true: keep the value whole; an object: keep those keys, recursively; [shape]: a list of that shape. */
export type Shape = true | { readonly [key: string]: Shape } | readonly [Shape];

type Picker = (value: unknown) => unknown;
const whole: Picker = (v) => v;
/** Each shape turned into a function once: every watch event and listed object goes through one. */
const pickers = new WeakMap<object, Picker>();

function picker(shape: Shape): Picker {
  if (shape === true) return whole;
  let f = pickers.get(shape);
  if (f) return f;
  if (Array.isArray(shape)) {
    const each = picker(shape[0] as Shape);
    f = (v) => (v === null || v === undefined ? v : Array.isArray(v) ? v.map(each) : undefined);
  } else {
    const keys = Object.keys(shape);
    const subs = keys.map((k) => picker((shape as Record<string, Shape>)[k] as Shape));
    f = (v) => {
      if (v === null || v === undefined) return v;
      if (typeof v !== 'object' || Array.isArray(v)) return undefined;
      const src = v as Record<string, unknown>;
      const out: Record<string, unknown> = {};
      for (let i = 0; i < keys.length; i++) {
        const k = keys[i] as string;
        const x = (subs[i] as Picker)(src[k]);
        if (x !== undefined) out[k] = x;
      }
      return out;
    };
  }
  pickers.set(shape, f);
  return f;
}

/** The parts of `value` that `shape` names (a value of another type than the shape expects is left out). */
export function pick(value: unknown, shape: Shape): unknown {
  return picker(shape)(value);
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
