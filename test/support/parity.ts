// The simulator's parity with a real cluster (issue 18 item 6): a few scenarios declared once, run both by the
// simulator (test/sim/parity.test.ts) and on the e2e cluster with real Karpenter (test/e2e/parity.test.ts), and
// the controller's writes of each, as the apiserver's audit log records them at Request level (the real one's,
// test/e2e/cluster/cluster.sh; the simulated one's, ApiServer.audit), normalised here by one function so that the
// two sequences can be compared for equality.
//
// What is compared: the write requests of the controller that the apiserver applied (2xx), in order, to the
// NodePool, NodeClaims, Nodes and Pods — each as `verb Kind role {what it sets}`, names replaced by roles
// (the pool, claims numbered in the order the controller first touches or names them, a claim's node, a claim's
// placeholder) and timestamps and durations by placeholders. Not compared: Events and the Lease (not state), writes
// refused (409 when a write raced another writer, 404 when its object was gone: their number depends on how
// Karpenter's own writes interleave), and RotationPolicy status writes (a report written whenever what a pass saw
// changed — candidates, the waiting reason — whose number depends on when passes fall between Karpenter's steps);
// `statusWrites` counts those.
import type { RotationPolicySpec } from '../../src/generated/api-types.js';
import { ALWAYS_OPEN } from './fixtures.js';

/** A kube-apiserver audit event (audit.k8s.io/v1 Event), the fields compared. */
export interface AuditEvent {
  stageTimestamp?: string;
  user: { username: string };
  verb: string;
  objectRef?: { resource?: string; apiGroup?: string; namespace?: string; name?: string; subresource?: string };
  responseStatus?: { code?: number };
  requestObject?: unknown;
}

/** One scenario, as both worlds build it. */
export interface ParityScenario {
  name: string;
  /** The NodePool's lifetime; its nodes have 4 cpu (KWOK's c-4x-amd64-linux: 3900m allocatable; the simulator's: 4). */
  pool: { expireAfter: string; terminationGracePeriod: string };
  /** The old nodes, each running one Pod of the app. */
  nodes: number;
  /** The app's Pods (one per node), their cpu request and annotations. */
  app: { cpu: string; annotations?: Record<string, string> };
  /** The RotationPolicy (its nodePools: the scenario's pool). */
  policy: Omit<RotationPolicySpec, 'nodePools'>;
  /**
   * Where the compared sequence ends: with the write that completes the n-th rotation (the NodePool patch setting
   * `last-rotation-at`). With 0, the sequence is every write while the scenario is watched (it must stay empty).
   */
  rotations: number;
}

/** The old nodes' age when the controller starts, in the simulator (seconds); on the e2e cluster, what it is. */
export const OLD_NODE_AGE_SECONDS = 60;

/** A pool whose nodes live a month: only the controller rotates them in a test. */
const MONTH = { expireAfter: '720h', terminationGracePeriod: '2m' };
/** Every node due at once (the e2e cluster's are a minute old when the controller starts), the window always open. */
const policy = (surge: NonNullable<RotationPolicySpec['surge']>): ParityScenario['policy'] => ({
  maintenanceWindows: ALWAYS_OPEN,
  ageThreshold: '1s',
  surge,
});
/** One rotation, then none for half an hour (the compared sequence ends with it anyway). */
const ONE = { readyTimeout: '5m', cooldownAfter: '30m' };

export const PARITY_SCENARIOS: readonly ParityScenario[] = [
  // Surge first: a placeholder on a surge claim Karpenter launches, the old claim drained and deleted.
  { name: 'surge', pool: MONTH, nodes: 1, app: { cpu: '1' }, policy: policy(ONE), rotations: 1 },
  // The node is in its last chance before Karpenter's expiry (210 s; t_rot = 15 s + 10 s + 2 min, one tick of an
  // always-open window is 60 s: from 5 s of age on) and forceful fallback is on: drained and deleted without a
  // surge. The smallest expireAfter with the one guaranteed chance a policy needs (G = ⌊(210 − 1 − 145) / 60⌋ = 1).
  {
    name: 'fallback',
    pool: { expireAfter: '210s', terminationGracePeriod: '10s' },
    nodes: 1,
    app: { cpu: '1' },
    policy: policy({ readyTimeout: '15s', cooldownAfter: '30m', forcefulFallback: { enabled: true } }),
    rotations: 1,
  },
  // A Pod with karpenter.sh/do-not-disrupt protects its node: no rotation starts, nothing is written.
  {
    name: 'held',
    pool: MONTH,
    nodes: 1,
    app: { cpu: '1', annotations: { 'karpenter.sh/do-not-disrupt': 'true' } },
    policy: policy(ONE),
    rotations: 0,
  },
  // Two due claims in one pool: one rotation at a time, the second anchored only once the first completed. The
  // Pods are small enough that the evicted ones and the placeholders always fit beside each other: a Pod that fits
  // nowhere would preempt the placeholder on the real cluster, which the simulator does not model.
  {
    name: 'serial',
    pool: MONTH,
    nodes: 2,
    app: { cpu: '500m' },
    policy: policy({ readyTimeout: '5m', cooldownAfter: '0s' }),
    rotations: 2,
  },
];

/** What a world knows of a scenario's objects, for the roles. */
export interface Cast {
  pool: string;
  policy: string;
  /** The NodeClaim a Node belongs to (its ownerReference), when known. */
  claimOfNode: (node: string) => string | undefined;
}

const KINDS: Record<string, string> = {
  nodepools: 'NodePool',
  nodeclaims: 'NodeClaim',
  nodes: 'Node',
  pods: 'Pod',
  rotationpolicies: 'RotationPolicy',
};
const PLACEHOLDER_PREFIX = 'noderotation-surge-';
const CLAIM_VALUED = new Set([
  'noderotation.io/active-rotation',
  'noderotation.io/surge-claim',
  'noderotation.io/surge-for',
]);
const DURATION_VALUED = new Set(['noderotation.io/surge-wait']);
const RFC3339 = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:\d\d)$/;

const applied = (e: AuditEvent): boolean => (e.responseStatus?.code ?? 0) >= 200 && (e.responseStatus?.code ?? 0) < 300;
const ofPolicy = (e: AuditEvent): boolean => e.objectRef?.resource === 'rotationpolicies';

/** A write the comparison counts: applied, and to state (not a RotationPolicy). */
const compared = (e: AuditEvent): boolean => applied(e) && (e.objectRef?.resource ?? '') in KINDS && !ofPolicy(e);

/** The RotationPolicy status writes among the events that were applied. */
export const statusWrites = (events: readonly AuditEvent[]): number =>
  events.filter((e) => applied(e) && ofPolicy(e) && e.objectRef?.subresource === 'status').length;

/**
 * The controller's writes of one scenario, normalised: one line per write the comparison counts (see the top of
 * this file), in order. `events` are the controller's own, of this scenario only.
 */
export function normalise(events: readonly AuditEvent[], cast: Cast): string[] {
  const claims = new Map<string, string>();
  const claimRole = (name: string): string => {
    let r = claims.get(name);
    if (!r) claims.set(name, (r = `claim${claims.size + 1}`));
    return r;
  };
  const role = (kind: string, name: string): string => {
    switch (kind) {
      case 'NodePool':
        return name === cast.pool ? 'pool' : `other-pool(${name})`;
      case 'RotationPolicy':
        return name === cast.policy ? 'policy' : `other-policy(${name})`;
      case 'NodeClaim':
        return claimRole(name);
      case 'Node': {
        const claim = cast.claimOfNode(name);
        return claim ? `node(${claimRole(claim)})` : `node(?${name})`;
      }
      case 'Pod':
        return name.startsWith(PLACEHOLDER_PREFIX)
          ? `placeholder(${claimRole(name.slice(PLACEHOLDER_PREFIX.length))})`
          : `pod(${name})`;
      default:
        return name;
    }
  };
  const value = (key: string, v: unknown): string => {
    if (v === null) return '∅';
    const s = typeof v === 'string' ? v : JSON.stringify(v);
    if (CLAIM_VALUED.has(key)) return claimRole(s);
    if (DURATION_VALUED.has(key)) return '<duration>';
    return RFC3339.test(s) ? '<time>' : s;
  };
  return events.filter(compared).map((e) => {
    const ref = e.objectRef ?? {};
    const kind = KINDS[ref.resource ?? ''] ?? ref.resource ?? '?';
    const body = (e.requestObject ?? {}) as {
      metadata?: { name?: string; generateName?: string; annotations?: Record<string, unknown> };
      spec?: { unschedulable?: unknown };
      preconditions?: Record<string, unknown>;
    };
    const name = ref.name ?? body.metadata?.name ?? body.metadata?.generateName ?? '?';
    const parts = [e.verb, kind, role(kind, name)];
    if (ref.subresource) parts.push(`/${ref.subresource}`);
    if (e.verb === 'patch' || e.verb === 'update') {
      const ann = body.metadata?.annotations ?? {};
      const set = Object.keys(ann)
        .sort()
        .map((k) => `${k.replace(/^noderotation\.io\//, '')}=${value(k, ann[k])}`);
      if (set.length > 0) parts.push(`{${set.join(' ')}}`);
      if (body.spec && 'unschedulable' in body.spec)
        parts.push(body.spec.unschedulable === true ? 'cordon' : 'uncordon');
    }
    if (e.verb === 'delete' && body.preconditions)
      parts.push(`if(${Object.keys(body.preconditions).sort().join(',')})`);
    return parts.join(' ');
  });
}

/**
 * The compared part of a normalised sequence: through the write that completes the scenario's last rotation, or
 * undefined while it has not come yet; the whole sequence for a scenario that expects none.
 */
export function cut(seq: readonly string[], s: Pick<ParityScenario, 'rotations'>): string[] | undefined {
  if (s.rotations === 0) return [...seq];
  let n = 0;
  for (let i = 0; i < seq.length; i++)
    if (/^patch NodePool pool \{.*last-rotation-at=<time>/.test(seq[i] as string) && ++n === s.rotations)
      return seq.slice(0, i + 1);
  return undefined;
}

/** The audit log's lines (JSON, one event each) as events. */
export function parseAuditLog(text: string): AuditEvent[] {
  return text
    .split('\n')
    .filter((l) => l.trim() !== '')
    .map((l) => JSON.parse(l) as AuditEvent);
}
