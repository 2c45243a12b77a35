// Builders for tests: a small cluster with one governed NodePool, its NodeClaims, Nodes and Pods (the engine's),
// and bare NodePools and RotationPolicies with exactly what a test gives them (policy resolution, derivation,
// plan expansion, the CLI).
import type { RotationPolicy, RotationPolicySpec } from '../../src/generated/api-types.js';
import type { NodeClaim, NodePool } from '../../src/karpenter/types.js';
import type { Node, Pod } from '../../src/kube/types.js';
import type { Action, PoolReport, Snapshot } from '../../src/engine/types.js';
import { A } from '../../src/engine/annotations.js';

export const NS = 'noderotation-system';
export const HOUR = 3_600_000;
export const DAY = 24 * HOUR;
/** Wednesday 2027-01-06 03:00 Asia/Tokyo = 2027-01-05T18:00:00Z, inside the {Wed, Sat} 02:00–06:00 window. */
export const IN_WINDOW = Date.parse('2027-01-05T18:00:00Z');
/** Wednesday 2027-01-06 12:00 Tokyo: outside. */
export const OUT_OF_WINDOW = Date.parse('2027-01-06T03:00:00Z');

/** A maintenance window that is always open (the e2e controller tests', the simulator's parity scenarios'). */
export const ALWAYS_OPEN: RotationPolicySpec['maintenanceWindows'] = [
  { timezone: 'UTC', days: ['Mon', 'Tue', 'Wed', 'Thu', 'Fri', 'Sat', 'Sun'], start: '00:00', end: '00:00' },
];

export const iso = (ms: number): string => new Date(ms).toISOString().replace('.000Z', 'Z');

export function policy(spec: Partial<RotationPolicySpec> = {}, name = 'general'): RotationPolicy {
  return {
    apiVersion: 'noderotation.io/v1alpha1',
    kind: 'RotationPolicy',
    metadata: { name },
    spec: {
      nodePools: ['general'],
      maintenanceWindows: [{ timezone: 'Asia/Tokyo', days: ['Wed', 'Sat'], start: '02:00', end: '06:00' }],
      ...spec,
    },
  };
}

/** A RotationPolicy named `name` with exactly `spec` (no defaults: the test's own input, valid or not). */
export function rotationPolicy(name: string, spec: Partial<RotationPolicySpec>, metadata: object = {}): RotationPolicy {
  return {
    apiVersion: 'noderotation.io/v1alpha1',
    kind: 'RotationPolicy',
    metadata: { name, ...metadata },
    spec: spec as RotationPolicySpec,
  };
}

export interface PoolParts {
  labels?: Record<string, string>;
  /** The template's spec (expireAfter, terminationGracePeriod, requirements, …). */
  template?: Partial<NodePool['spec']['template']['spec']>;
  /** The rest of the pool's spec (limits, disruption, replicas, …). */
  spec?: Partial<NodePool['spec']>;
  status?: NodePool['status'];
}

/** A bare NodePool named `name`: only what the test gives it. */
export function pool(name: string, parts: PoolParts = {}): NodePool {
  return {
    apiVersion: 'karpenter.sh/v1',
    kind: 'NodePool',
    metadata: { name, ...(parts.labels ? { labels: parts.labels } : {}) },
    spec: { template: { spec: { ...parts.template } }, ...parts.spec },
    ...(parts.status ? { status: parts.status } : {}),
  };
}

export function nodePool(annotations: Record<string, string> = {}, extra: Partial<NodePool['spec']> = {}): NodePool {
  return {
    apiVersion: 'karpenter.sh/v1',
    kind: 'NodePool',
    metadata: { name: 'general', annotations },
    spec: {
      template: {
        spec: {
          expireAfter: '336h',
          terminationGracePeriod: '1h',
          requirements: [
            { key: 'topology.kubernetes.io/zone', operator: 'In', values: ['test-zone-a', 'test-zone-b'] },
          ],
          taints: [{ key: 'dedicated', value: 'general', effect: 'NoSchedule' }],
        },
      },
      ...extra,
    },
  };
}

export interface ClaimOptions {
  createdAt: number;
  expireAfter?: string;
  annotations?: Record<string, string>;
  ready?: boolean;
  deleting?: number;
  nodeAnnotations?: Record<string, string>;
  unschedulable?: boolean;
  noNode?: boolean;
  zone?: string;
}

export function claim(name: string, o: ClaimOptions): { claim: NodeClaim; node?: Node } {
  const c: NodeClaim = {
    apiVersion: 'karpenter.sh/v1',
    kind: 'NodeClaim',
    metadata: {
      name,
      uid: `uid-${name}`,
      creationTimestamp: iso(o.createdAt),
      labels: { 'karpenter.sh/nodepool': 'general' },
      ...(o.annotations ? { annotations: o.annotations } : {}),
      ...(o.deleting !== undefined ? { deletionTimestamp: iso(o.deleting) } : {}),
    },
    spec: {
      expireAfter: o.expireAfter ?? '336h',
      terminationGracePeriod: '1h',
      requirements: [{ key: 'karpenter.sh/capacity-type', operator: 'In', values: ['on-demand'] }],
    },
    status: {
      ...(o.noNode ? {} : { nodeName: `node-${name}`, providerID: `kwok://node-${name}` }),
      allocatable: { cpu: '4', memory: '16Gi', pods: '110' },
      conditions: [{ type: 'Ready', status: o.ready === false ? 'False' : 'True' }],
    },
  };
  if (o.noNode) return { claim: c };
  const node: Node = {
    metadata: {
      name: `node-${name}`,
      labels: {
        'karpenter.sh/nodepool': 'general',
        'topology.kubernetes.io/zone': o.zone ?? 'test-zone-a',
        'kubernetes.io/arch': 'amd64',
        'kubernetes.io/hostname': `node-${name}`,
      },
      ...(o.nodeAnnotations ? { annotations: o.nodeAnnotations } : {}),
      ownerReferences: [{ apiVersion: 'karpenter.sh/v1', kind: 'NodeClaim', name }],
    },
    spec: { providerID: `kwok://node-${name}`, ...(o.unschedulable ? { unschedulable: true } : {}) },
    status: {
      conditions: [{ type: 'Ready', status: o.ready === false ? 'False' : 'True' }],
      allocatable: { cpu: '4', memory: '16Gi' },
    },
  };
  return { claim: c, node };
}

export function workload(name: string, node: string, requests: Record<string, string>, extra: Partial<Pod> = {}): Pod {
  return {
    metadata: { name, namespace: 'default', ...(extra.metadata ?? {}) },
    spec: { nodeName: node, containers: [{ name: 'app', resources: { requests } }], ...(extra.spec ?? {}) },
    status: { phase: 'Running', ...(extra.status ?? {}) },
  };
}

export function snapshot(parts: {
  policies?: RotationPolicy[];
  pool?: NodePool;
  claims?: { claim: NodeClaim; node?: Node }[];
  pods?: Pod[];
  nodes?: Node[];
}): Snapshot {
  const claims = parts.claims ?? [];
  return {
    policies: parts.policies ?? [policy()],
    nodePools: [parts.pool ?? nodePool()],
    nodeClaims: claims.map((c) => c.claim),
    nodes: [...claims.flatMap((c) => (c.node ? [c.node] : [])), ...(parts.nodes ?? [])],
    pods: parts.pods ?? [],
    namespace: NS,
  };
}

/** A node old enough to be a candidate at IN_WINDOW (age 10d of 14d). */
export const OLD = IN_WINDOW - 10 * DAY;

/** The snapshot with the NodePool's annotations extended by `ann` and its spec by `extra`. */
export const withPool = (
  s: Snapshot,
  ann: Record<string, string>,
  extra: Partial<NodePool['spec']> = {},
): Snapshot => ({
  ...s,
  nodePools: s.nodePools.map((p) => ({
    ...p,
    metadata: { ...p.metadata, annotations: { ...p.metadata.annotations, ...ann } },
    spec: { ...p.spec, ...extra },
  })),
});

/** A surge rotation of `old` marked draining on both objects (by us, or by hand), its surge bound and Ready. */
export function markedDraining(o: { startedAt?: number; drainingAt?: number } = {}): Snapshot {
  const startedAt = o.startedAt ?? IN_WINDOW;
  const old = claim('old', {
    createdAt: OLD,
    annotations: { [A.state]: 'draining', [A.startedAt]: iso(startedAt), [A.surgeClaim]: 'surge-1' },
  });
  const surge = claim('surge-1', { createdAt: startedAt + 60_000, annotations: { [A.surgeFor]: 'old' } });
  const s = snapshot({
    claims: [old, surge],
    pods: [
      {
        metadata: {
          name: 'noderotation-surge-old',
          namespace: 'noderotation-system',
          labels: { [A.surgeFor]: 'old', 'karpenter.sh/nodepool': 'general' },
        },
        spec: { nodeName: 'node-surge-1', containers: [{ name: 'pause' }] },
        status: { phase: 'Running' },
      },
    ],
  });
  return withPool(s, {
    [A.activeRotation]: 'old',
    [A.activeRotationState]: 'draining',
    [A.drainingAt]: iso(o.drainingAt ?? startedAt + 2 * 60_000),
  });
}

/** A pool's report with every field at its idle value, and `over` on top. */
export const poolReport = (over: Partial<PoolReport> = {}): PoolReport => ({
  nodePool: 'a',
  policy: 'p',
  governance: 'governed',
  conflictingPolicies: [],
  windowOpen: false,
  windowClosesAt: null,
  windowOpensAt: null,
  frozenUntil: null,
  freezeUnreadable: null,
  lastRotationAt: null,
  lastFailureAt: null,
  candidates: 0,
  inProgress: false,
  activeRotation: null,
  mode: null,
  phase: null,
  shortLead: [],
  drainStuck: false,
  retryCountMax: 0,
  figures: null,
  findings: [],
  idle: null,
  ...over,
});

/** The reasons of the Events among a decision's actions, in order. */
export const events = (actions: readonly Action[]): string[] =>
  actions.flatMap((a) => (a.type === 'event' ? [a.eventReason] : []));
