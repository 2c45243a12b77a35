// The one boundary between the Kubernetes client and the engine (docs/engine-contract.md). The engine reads
// objects as the API serves them in JSON: timestamps are RFC 3339 strings. @kubernetes/client-node 1.4.x
// deserialises them into `Date` (creationTimestamp, deletionTimestamp, lastTransitionTime, …), so every object
// passes through here once: Dates become strings, the result is a plain, deeply frozen object (the engine's
// caches are keyed by object identity, so an object must never change once the engine has seen it), and the
// same input object always gives the same output object, so those caches stay warm from one pass to the next.
import type { RotationPolicy } from '../generated/api-types.js';
import type { NodeClaim, NodePool } from '../karpenter/types.js';
import type { Node, Pod } from '../kube/types.js';
import type { Snapshot } from './types.js';
import { describeValue } from '../util/describe.js';

/** What the controller has: objects as its client returned them (class instances, Dates), read-only. */
export interface ClientSnapshot {
  policies: readonly object[];
  nodePools: readonly object[];
  nodeClaims: readonly object[];
  nodes: readonly object[];
  pods: readonly object[];
  namespace: string;
  podsOfNodes?: readonly string[];
  priorityClasses?: readonly string[];
}

/** An input the engine cannot read; the message names the path, the value found and what is expected. */
export class SnapshotError extends Error {
  override name = 'SnapshotError';
}

const converted = new WeakMap<object, unknown>();
/** Objects declared JSON as served (`served`): the engine reads them as they are. */
const asServed = new WeakSet<object>();

/**
 * Declares `value` JSON data as the API served it — decoded from JSON, so no Date, function or class instance
 * in it — and never to change again: deep-frozen here, it then reaches the engine as it is, where anything
 * else is copied. The controller's watch caches hold their objects this way, so the engine's snapshot of a
 * cached NodeClaim or Node is the cached object itself, not a second copy of it kept for as long as it lives.
 */
export function served<T extends object>(value: T): T {
  asServed.add(deepFreeze(value));
  return value;
}

/** Kubernetes writes metav1.Time with second precision; keep sub-second digits only when there are some. */
export function timestamp(d: Date, path: string): string {
  const ms = d.getTime();
  if (Number.isNaN(ms)) throw new SnapshotError(`${path}: an invalid Date; expected a valid timestamp`);
  return ms % 1000 === 0 ? d.toISOString().replace('.000Z', 'Z') : d.toISOString();
}

/**
 * The conversion itself, without paths (building a path string per member was most of its cost): a value it
 * cannot convert throws NOT_JSON, and `explain` then walks the input again to name the path.
 */
class NotJson extends Error {}
/** Thrown as a signal, caught in `plain`: made once (a throw of it captures no stack). */
const NOT_JSON = new NotJson('not JSON data');

function convert(value: unknown): unknown {
  if (typeof value !== 'object' || value === null) {
    if (typeof value === 'function' || typeof value === 'symbol' || typeof value === 'bigint') throw NOT_JSON;
    return value;
  }
  if (asServed.has(value)) return value;
  const hit = converted.get(value);
  if (hit !== undefined) return hit;
  let out: unknown;
  if (value instanceof Date) {
    if (Number.isNaN(value.getTime())) throw NOT_JSON;
    return timestamp(value, '');
  } else if (Array.isArray(value)) out = Object.freeze(value.map(convert));
  else {
    const obj: Record<string, unknown> = {};
    // Own enumerable keys only; undefined members are dropped, as JSON would.
    for (const k of Object.keys(value)) {
      const v = (value as Record<string, unknown>)[k];
      if (v !== undefined) obj[k] = convert(v);
    }
    out = Object.freeze(obj);
  }
  converted.set(value, out);
  return out;
}

/** The first value under `value` that is not JSON data, as a SnapshotError naming its path. */
function explain(value: unknown, path: string): SnapshotError | null {
  if (value instanceof Date) {
    return Number.isNaN(value.getTime())
      ? new SnapshotError(`${path}: an invalid Date; expected a valid timestamp`)
      : null;
  }
  if (typeof value === 'function' || typeof value === 'symbol' || typeof value === 'bigint')
    return new SnapshotError(`${path}: a ${typeof value} (${describeValue(value)}); expected JSON data`);
  if (typeof value !== 'object' || value === null) return null;
  const entries: [string, unknown][] = Array.isArray(value)
    ? value.map((v, i): [string, unknown] => [`[${i}]`, v])
    : Object.entries(value).map(([k, v]): [string, unknown] => [`.${k}`, v]);
  for (const [k, v] of entries) {
    const bad = explain(v, `${path}${k}`);
    if (bad) return bad;
  }
  return null;
}

function plain(value: unknown, path: string): unknown {
  try {
    return convert(value);
  } catch (e) {
    if (e !== NOT_JSON) throw e;
    throw explain(value, path) ?? new SnapshotError(`${path}: not JSON data`);
  }
}

function named(list: readonly object[], field: string): unknown[] {
  return list.map((o, i) => {
    const name = (o as { metadata?: { name?: unknown } }).metadata?.name;
    if (typeof name !== 'string' || name === '')
      throw new SnapshotError(`${field}[${i}].metadata.name: ${describeValue(name)}; expected a non-empty string`);
    return plain(o, `${field}[${i}]`);
  });
}

/**
 * The engine's snapshot from the client's objects: Dates → RFC 3339 strings, plain and deeply frozen,
 * identity-stable per input object. Throws SnapshotError (naming the path) for what the engine cannot read.
 */
export function toEngineSnapshot(input: ClientSnapshot): Snapshot {
  if (typeof input.namespace !== 'string' || input.namespace === '')
    throw new SnapshotError(`namespace: ${describeValue(input.namespace)}; expected the controller's namespace`);
  return {
    policies: named(input.policies, 'policies') as RotationPolicy[],
    nodePools: named(input.nodePools, 'nodePools') as NodePool[],
    nodeClaims: named(input.nodeClaims, 'nodeClaims') as NodeClaim[],
    nodes: named(input.nodes, 'nodes') as Node[],
    pods: named(input.pods, 'pods') as Pod[],
    namespace: input.namespace,
    ...(input.podsOfNodes ? { podsOfNodes: Object.freeze([...input.podsOfNodes].sort()) } : {}),
    ...(input.priorityClasses ? { priorityClasses: Object.freeze([...input.priorityClasses].sort()) } : {}),
  };
}

/** Recursively freezes a value (tests use it to prove the engine never writes into its input). */
export function deepFreeze<T>(value: T): T {
  if (typeof value === 'object' && value !== null && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const v of Object.values(value)) deepFreeze(v);
  }
  return value;
}
