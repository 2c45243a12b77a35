// What the controller keeps of each object it watches: exactly the fields the engine reads (the types in
// src/kube/types.ts and src/karpenter/types.ts), nothing else. A Node's images list, a Pod's volumes and env,
// every object's managedFields never reach memory past the watch decoder, which is what keeps the
// controller's footprint flat as the fleet grows. And what thousands of objects repeat — label maps, a pool's
// requirements, quantities, condition types and reasons, the same second's timestamps — is kept once
// (`shared`): the JSON decoder makes a new copy of each in every object, which was most of a cached
// NodeClaim's bytes.

import { NODEPOOL_LABEL } from '../../src/karpenter/types.js';
import { boundedCache, type BoundedCache } from '../../src/util/bounded-cache.js';

/** A part kept as `inner` says and then made canonical (Canon): equal values in every cache are one value. */
export class Shared {
  constructor(readonly inner: Shape) {}
}

/** The part kept as `inner` says (whole by default), canonical. */
export const shared = (inner: Shape = true): Shared => new Shared(inner);

/** A map of any keys, each member kept as `inner` says; the map itself is the object's own (Each). */
export class Each {
  constructor(readonly inner: Shape) {}
}

/**
 * Every member of a map as `inner` says: for a map one object alone has (a Node's labels carry its hostname), whose
 * members repeat across objects — canonical members without a canonical copy of a map no other object shares.
 */
export const each = (inner: Shape): Each => new Each(inner);

/**
 * true: keep the value whole; shared(…): keep it as its inner shape says, canonical; each(…): every member of
 * a map so; an object: keep those keys, recursively; [shape]: a list of that shape.
 */
export type Shape = true | Shared | Each | { readonly [key: string]: Shape } | readonly [Shape];

/**
 * Canonical JSON values: equal strings are one string, equal objects and lists one frozen object or list (so
 * nothing can change a value many objects hold). A value's parts are made canonical before it, so a list that
 * differs in one member shares the others, and two values are equal when their members are the same in the same
 * order. Objects and lists are found by a hash of their text, which is not kept (a Node's unique label map would
 * cost its text again), in the code base's bounded cache (least recently used out first), so values no object
 * holds any more (a deleted claim's timestamps) do not pile up; eviction only costs sharing, never an equal value.
 * Strings are V8's own canonical copies (`intern`), which need no table of ours. Long strings are copied but not
 * made canonical: they are seldom repeated.
 */
export class Canon {
  private readonly values: BoundedCache<number, object>;

  constructor(
    limits: { values?: number } = {},
    private readonly maxText = 256,
  ) {
    this.values = boundedCache(limits.values ?? 8_192);
  }

  /** `value`'s canonical equal; never `value` itself when it is an object or a list (it may be frozen). */
  of(value: unknown): unknown {
    if (typeof value === 'string') {
      return value.length > this.maxText ? value : intern(value);
    }
    if (value === null || typeof value !== 'object') return value;
    let copy: object;
    if (Array.isArray(value)) copy = value.map((v) => this.of(v));
    else copy = copyMembers(value, (v) => this.of(v));
    Object.freeze(copy);
    const had = this.values.get(fnv1a(JSON.stringify(copy)), () => copy);
    // Another value under the same hash: this one stays a copy of its own.
    return had === copy || sameMembers(had, copy) ? had : copy;
  }

  get size(): { values: number } {
    return { values: this.values.size };
  }
}

/**
 * The holder of `intern`'s one key at a time: an object without a prototype, which V8 keeps as a dictionary from
 * the start, so it never gains a hidden class per key.
 */
const internKeys: Record<string, 0> = Object.create(null) as Record<string, 0>;

/**
 * `s` as V8's canonical copy of it. V8 keeps one copy of every string used as a property key, in a table it holds
 * weakly (a string no one refers to any more is collected), and a key read back from an object is that copy: so
 * thousands of cached objects naming the same claim, NodePool or zone hold one string between them, without a table
 * of ours (a bounded one cost 1 MiB at 5,000 Nodes and still dropped most names). Equal strings stay equal either
 * way: only memory depends on this.
 */
export function intern(s: string): string {
  internKeys[s] = 0;
  const kept = Object.keys(internKeys)[0] ?? s;
  delete internKeys[s];
  return kept;
}

/**
 * A plain object with `value`'s own members, each as `f` makes it (left out where that is undefined). A key
 * "__proto__" (valid JSON) stays a key rather than setting the copy's prototype.
 */
function copyMembers(value: object, f: (member: unknown) => unknown): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value)) {
    const kept = f(v);
    if (kept === undefined) continue;
    if (k === '__proto__') Object.defineProperty(out, k, { value: kept, enumerable: true, writable: true });
    else out[k] = kept;
  }
  return out;
}

/** The same members (canonical already: one value each) under the same keys in the same order. */
function sameMembers(a: object, b: object): boolean {
  if (Array.isArray(a) !== Array.isArray(b)) return false;
  const ka = Object.keys(a);
  const kb = Object.keys(b);
  if (ka.length !== kb.length) return false;
  for (let i = 0; i < ka.length; i++) {
    const k = ka[i] as string;
    if (k !== kb[i] || (a as Record<string, unknown>)[k] !== (b as Record<string, unknown>)[k]) return false;
  }
  return true;
}

/** 32-bit FNV-1a of a string's UTF-16 code units. */
function fnv1a(text: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) h = Math.imul(h ^ text.charCodeAt(i), 0x01000193);
  return h >>> 0;
}

/** The tables every cache shares. */
const canon = new Canon();

type Picker = (value: unknown) => unknown;
const whole: Picker = (v) => v;
/** Each shape turned into a function once: every watch event and listed object goes through one. */
const pickers = new WeakMap<object, Picker>();

function picker(shape: Shape): Picker {
  if (shape === true) return whole;
  let f = pickers.get(shape);
  if (f) return f;
  if (shape instanceof Shared) {
    const inner = picker(shape.inner);
    f = (v) => {
      const x = inner(v);
      return x === undefined ? x : canon.of(x);
    };
  } else if (shape instanceof Each) {
    const member = picker(shape.inner);
    f = (v) => {
      if (v === null || v === undefined) return v;
      return typeof v !== 'object' || Array.isArray(v) ? undefined : copyMembers(v, member);
    };
  } else if (Array.isArray(shape)) {
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

const S = shared();
// Shared: what many objects repeat, and the names and UIDs other objects repeat (a Node names its claim, a
// claim its Node, both the same provider ID). Kept as decoded: what each object has alone (versions, times).
const META: Shape = {
  name: S,
  namespace: S,
  uid: S,
  labels: S,
  annotations: S,
  creationTimestamp: S,
  deletionTimestamp: true,
  resourceVersion: true,
  generation: true,
  ownerReferences: shared([{ apiVersion: true, kind: true, name: true, uid: true, controller: true }]),
};

const REQUIREMENTS: Shape = shared([{ key: true, operator: true, values: true, minValues: true }]);
const TAINTS: Shape = shared([{ key: true, value: true, effect: true }]);
/** What a condition is read for: whether the object is Ready (src/kube/types.ts, isReady). */
const READY: Shape = { type: true, status: true };

export const NODEPOOL: Shape = {
  apiVersion: S,
  kind: S,
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

// A NodeClaim's labels are read for its NodePool alone (the engine places a surge by the Node's labels), and its
// conditions for whether it is Ready: kept to that, its labels and conditions (a hostname, launch times to the
// millisecond) are the same for a pool's claims, and so is its spec — each one value for them all.
export const NODECLAIM: Shape = {
  apiVersion: S,
  kind: S,
  metadata: { ...META, labels: shared({ [NODEPOOL_LABEL]: true }) },
  spec: shared({
    expireAfter: true,
    terminationGracePeriod: true,
    requirements: [{ key: true, operator: true, values: true, minValues: true }],
    taints: [{ key: true, value: true, effect: true }],
    nodeClassRef: true,
  }),
  status: { nodeName: S, providerID: S, capacity: S, allocatable: S, conditions: shared([READY]) },
};

// A Node's labels carry its hostname and its owner reference the claim's UID: each Node's own, so neither is
// made canonical (a table of values only one object holds would push out the values many share); their members
// are.
export const NODE: Shape = {
  apiVersion: S,
  kind: S,
  metadata: {
    ...META,
    labels: each(S),
    ownerReferences: [{ apiVersion: S, kind: S, name: S, uid: S, controller: true }],
  },
  spec: { providerID: S, unschedulable: true, taints: TAINTS },
  // Only type and status of a Node's conditions: their heartbeat times change every few seconds and would make
  // every status update look like a change.
  status: { conditions: shared([READY]), allocatable: S },
};

const CONTAINER: Shape = { name: true, image: true, resources: { requests: true, limits: true } };
const TERM: Shape = { matchExpressions: [{ key: true, operator: true, values: true }] };

export const POD: Shape = {
  apiVersion: S,
  kind: S,
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
  apiVersion: S,
  kind: S,
  metadata: META,
  spec: true,
  // All of it: the controller writes the status only when it differs from this copy, so a field left out here
  // would look changed on every pass and be written again each time.
  status: true,
};

/** Only whether a PriorityClass exists matters (the placeholder names one). */
export const PRIORITYCLASS: Shape = { metadata: { name: true, resourceVersion: true } };
