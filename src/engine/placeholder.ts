// The placeholder Pod (design §3.3, §3.7): a bare, negative-priority, never-preempting Pod sized like the
// candidate's reschedulable workload, pinned to the NodePool, that makes Karpenter provision a surge node
// (or lands on spare capacity). Pure: sizing and the Pod's manifest from the snapshot.
import type { NodeClaim, NodePool, NodeSelectorRequirement } from '../karpenter/types.js';
import { NODEPOOL_LABEL, UNREGISTERED_TAINT } from '../karpenter/types.js';
import { isReady, type Node, type NodeSelectorTerm, type Pod } from '../kube/types.js';
import { finding, type Finding } from '../derivation/findings.js';
import type { PolicyParams } from '../derivation/params.js';
import type { RotationPolicy } from '../generated/api-types.js';
import { parseQuantity } from '../util/quantity.js';
import { A, COMPONENT_LABEL, MANAGED_BY, MANAGED_BY_LABEL, PLACEHOLDER_COMPONENT } from './annotations.js';
import type { ClusterIndex } from './cluster-index.js';
import type { Snapshot } from './types.js';
import { isPlaceholder, placeholderName, SURGE_FOR_LABEL, surgeForLabelValue } from './identity.js';

export const HOSTNAME = 'kubernetes.io/hostname';
/** A clamp shortfall above this share of the limit is worth a warning (§3.3 "band-exceeded"). */
export const CLAMP_BAND = 0.05;
export const DEFAULT_PRIORITY_CLASS = 'noderotation-placeholder';
export const DEFAULT_IMAGE = 'registry.k8s.io/pause:3.10';

export type Resources = Record<string, number>;

export { placeholderName };

const isDaemonSetPod = (p: Pod): boolean => p.metadata.ownerReferences?.some((o) => o.kind === 'DaemonSet') ?? false;
const isMirrorPod = (p: Pod): boolean => p.metadata.annotations?.['kubernetes.io/config.mirror'] !== undefined;
const isCompleted = (p: Pod): boolean => p.status?.phase === 'Succeeded' || p.status?.phase === 'Failed';
const isNodePinned = (p: Pod): boolean =>
  p.spec.nodeSelector?.[HOSTNAME] !== undefined ||
  (p.spec.affinity?.nodeAffinity?.requiredDuringSchedulingIgnoredDuringExecution?.nodeSelectorTerms ?? []).some((t) =>
    (t.matchExpressions ?? []).some((e) => e.key === HOSTNAME),
  );

/** Effective requests of a Pod: max(sum of containers, largest init container) + overhead, per resource. */
export function podRequests(pod: Pod): Resources {
  const sum: Resources = {};
  for (const c of pod.spec.containers)
    for (const [k, v] of Object.entries(c.resources?.requests ?? {})) sum[k] = (sum[k] ?? 0) + parseQuantity(v);
  for (const c of pod.spec.initContainers ?? [])
    for (const [k, v] of Object.entries(c.resources?.requests ?? {})) sum[k] = Math.max(sum[k] ?? 0, parseQuantity(v));
  for (const [k, v] of Object.entries(pod.spec.overhead ?? {})) sum[k] = (sum[k] ?? 0) + parseQuantity(v);
  return sum;
}

const add = (a: Resources, b: Resources): Resources => {
  const out = { ...a };
  for (const [k, v] of Object.entries(b)) out[k] = (out[k] ?? 0) + v;
  return out;
};

export type Sizing =
  | { kind: 'fits'; requests: Resources; reschedulable: Resources; excluded: Record<string, number> }
  | {
      kind: 'clamped';
      requests: Resources;
      reschedulable: Resources;
      shortfall: Resources;
      bandExceeded: string[];
      excluded: Record<string, number>;
    }
  /**
   * DaemonSet overhead exhausts allocatable: keep the full request; the placeholder stays unschedulable and the attempt
   * rolls back.
   */
  | {
      kind: 'refused';
      requests: Resources;
      reschedulable: Resources;
      exhausted: string[];
      excluded: Record<string, number>;
    };

/**
 * requests = min(reschedulable sum, NodeClaim.status.allocatable − DaemonSet overhead) per resource (§3.3,
 * issue #224 of the reference). Excluded from the sum: DaemonSet Pods (Karpenter adds that overhead to every
 * new node), mirror Pods, completed Pods, Pods pinned to this node by hostname, and our own placeholders.
 * With wholeNodeReservation, cpu and memory are the whole limit.
 */
export function sizePlaceholder(claim: NodeClaim, pods: readonly Pod[], wholeNode: boolean): Sizing {
  const excluded = { daemonSet: 0, mirror: 0, completed: 0, nodePinned: 0 };
  let reschedulable: Resources = {};
  let daemonSets: Resources = {};
  for (const p of pods) {
    if (isPlaceholder(p)) continue;
    if (isDaemonSetPod(p)) {
      excluded.daemonSet++;
      if (!isCompleted(p)) daemonSets = add(daemonSets, podRequests(p));
    } else if (isMirrorPod(p)) excluded.mirror++;
    else if (isCompleted(p)) excluded.completed++;
    else if (isNodePinned(p)) excluded.nodePinned++;
    else reschedulable = add(reschedulable, podRequests(p));
  }
  const allocatable = claim.status?.allocatable;
  // No allocatable, no clamp.
  if (!allocatable) return { kind: 'fits', requests: reschedulable, reschedulable, excluded };
  const limit: Resources = {};
  for (const [k, v] of Object.entries(allocatable)) limit[k] = Math.max(0, parseQuantity(v) - (daemonSets[k] ?? 0));
  const wanted: Resources = { ...reschedulable };
  if (wholeNode)
    for (const k of ['cpu', 'memory']) {
      const cap = limit[k];
      if (cap !== undefined) wanted[k] = cap;
    }
  const exhausted = Object.keys(wanted)
    .filter((k) => {
      const cap = limit[k];
      return cap !== undefined && cap <= 0 && (wanted[k] ?? 0) > 0;
    })
    .sort();
  if (exhausted.length > 0) return { kind: 'refused', requests: wanted, reschedulable, exhausted, excluded };
  const requests: Resources = {};
  const shortfall: Resources = {};
  for (const [k, v] of Object.entries(wanted)) {
    const cap = limit[k];
    requests[k] = cap === undefined ? v : Math.min(v, cap);
    if (cap !== undefined && v > cap) shortfall[k] = v - cap;
  }
  if (Object.keys(shortfall).length === 0) return { kind: 'fits', requests, reschedulable, excluded };
  const bandExceeded = Object.keys(shortfall)
    .filter((k) => (shortfall[k] as number) > CLAMP_BAND * (limit[k] as number))
    .sort();
  return { kind: 'clamped', requests, reschedulable, shortfall, bandExceeded, excluded };
}

/** Quantities as the API writes them: integers plain, cpu in millicores, anything else rounded up. */
function quantity(resource: string, v: number): string {
  if (resource === 'cpu') return Number.isInteger(v) ? String(v) : `${Math.ceil(v * 1000)}m`;
  return String(Math.ceil(v));
}

const NUMERIC = new Set(['Gt', 'Lt', 'Gte', 'Lte']);

/**
 * §3.7: each key's requirement for the surge node. The candidate Node's label is authoritative (where it
 * actually runs); for keys not surfaced as labels, the NodeClaim's In requirement is used, and numeric
 * operators are copied as they are, never weakened. Values the NodePool no longer allows are dropped, so the
 * placeholder stays schedulable within the pool; a key with no source is skipped.
 */
export function resolveRequirement(
  key: string,
  node: Node | undefined,
  claim: NodeClaim,
  pool: NodePool,
): NodeSelectorRequirement | null {
  const poolReqs = (pool.spec.template.spec.requirements ?? []).filter((r) => r.key === key);
  const allowed = (v: string): boolean =>
    poolReqs.every((r) => {
      switch (r.operator) {
        case 'In':
          return (r.values ?? []).includes(v);
        case 'NotIn':
          return !(r.values ?? []).includes(v);
        case 'DoesNotExist':
          return false;
        case 'Gt':
          return Number(v) > Number(r.values?.[0]);
        case 'Lt':
          return Number(v) < Number(r.values?.[0]);
        case 'Gte':
          return Number(v) >= Number(r.values?.[0]);
        case 'Lte':
          return Number(v) <= Number(r.values?.[0]);
        default:
          return true;
      }
    });
  const label = node?.metadata.labels?.[key];
  if (label !== undefined) return allowed(label) ? { key, operator: 'In', values: [label] } : null;
  const fromClaim = (claim.spec.requirements ?? []).find((r) => r.key === key);
  if (!fromClaim) return null;
  if (NUMERIC.has(fromClaim.operator))
    return { key, operator: fromClaim.operator, values: [...(fromClaim.values ?? [])] };
  if (fromClaim.operator !== 'In') return null;
  const values = (fromClaim.values ?? []).filter(allowed).sort();
  return values.length > 0 ? { key, operator: 'In', values } : null;
}

export interface PlaceholderInput {
  pool: NodePool;
  claim: NodeClaim;
  node: Node | undefined;
  params: PolicyParams;
  sizing: Sizing;
  /** Nodes the surge should avoid: the candidate's and those of other near-deadline claims. */
  avoidNodes: string[];
  namespace: string;
  priorityClassName: string;
  image: string;
}

export function placeholderPod(i: PlaceholderInput): Pod {
  const req = (keys: readonly string[]): NodeSelectorRequirement[] =>
    keys
      .map((k) => resolveRequirement(k, i.node, i.claim, i.pool))
      .filter((r): r is NodeSelectorRequirement => r !== null);
  const required = req(i.params.requiredKeys).filter((r) => r.key !== HOSTNAME && r.key !== NODEPOOL_LABEL);
  const preferred = req(i.params.preferredKeys);
  const toTerm = (rs: NodeSelectorRequirement[]): NodeSelectorTerm => ({
    matchExpressions: rs.map((r) => ({ key: r.key, operator: r.operator, values: r.values ?? [] })),
  });
  const preferences: { weight: number; preference: NodeSelectorTerm }[] = [];
  // Soft only: Karpenter ignores pods with a *required* hostname affinity (restricted label, §3.3).
  if (i.avoidNodes.length > 0)
    preferences.push({
      weight: 100,
      preference: {
        matchExpressions: [{ key: HOSTNAME, operator: 'NotIn', values: [...new Set(i.avoidNodes)].sort() }],
      },
    });
  if (preferred.length > 0) preferences.push({ weight: 50, preference: toTerm(preferred) });
  const requests = Object.fromEntries(
    Object.keys(i.sizing.requests)
      .sort()
      .map((k) => [k, quantity(k, i.sizing.requests[k] as number)]),
  );
  const affinity: NonNullable<Pod['spec']['affinity']> = { nodeAffinity: {} };
  if (required.length > 0)
    affinity.nodeAffinity!.requiredDuringSchedulingIgnoredDuringExecution = { nodeSelectorTerms: [toTerm(required)] };
  if (preferences.length > 0) affinity.nodeAffinity!.preferredDuringSchedulingIgnoredDuringExecution = preferences;
  const claim = i.claim.metadata.name;
  const key = surgeForLabelValue(claim);
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      name: placeholderName(claim),
      namespace: i.namespace,
      labels: {
        [MANAGED_BY_LABEL]: MANAGED_BY,
        [COMPONENT_LABEL]: PLACEHOLDER_COMPONENT,
        [SURGE_FOR_LABEL]: key,
        [NODEPOOL_LABEL]: i.pool.metadata.name,
      },
      // Pod-level do-not-disrupt: Karpenter does not consolidate or drift the node this Pod runs on, which
      // covers the surge node between the bind and our node-level freeze. The full claim name is kept only
      // when the label had to be shortened.
      annotations: { [A.doNotDisrupt]: 'true', ...(key !== claim ? { [A.surgeFor]: claim } : {}) },
    },
    spec: {
      priorityClassName: i.priorityClassName,
      preemptionPolicy: 'Never',
      nodeSelector: { [NODEPOOL_LABEL]: i.pool.metadata.name },
      ...(affinity.nodeAffinity && Object.keys(affinity.nodeAffinity).length > 0 ? { affinity } : {}),
      tolerations: [
        ...(i.pool.spec.template.spec.taints ?? []).map((t) => ({
          key: t.key,
          operator: t.value === undefined ? ('Exists' as const) : ('Equal' as const),
          ...(t.value !== undefined ? { value: t.value } : {}),
          effect: t.effect,
        })),
        // The scheduler binds a Pod to a new node as soon as Karpenter lifts this taint, while the taint-eviction
        // controller may still see it in its cache and delete the Pod at once (kubernetes/kubernetes#139992): the
        // placeholder would vanish the moment its surge is ready. Tolerated, it survives that race; surgeReady
        // still waits for the taint to be gone before any drain.
        { key: UNREGISTERED_TAINT, operator: 'Exists' as const, effect: 'NoExecute' as const },
      ],
      // Pod Security `restricted` (the controller's namespace enforces it): no privilege escalation, no
      // capabilities, the runtime's default seccomp profile, non-root.
      containers: [
        {
          name: 'pause',
          image: i.image,
          resources: { requests },
          securityContext: {
            allowPrivilegeEscalation: false,
            readOnlyRootFilesystem: true,
            capabilities: { drop: ['ALL'] },
          },
        },
      ],
      terminationGracePeriodSeconds: 0,
      automountServiceAccountToken: false,
      securityContext: { runAsNonRoot: true, runAsUser: 65535, seccompProfile: { type: 'RuntimeDefault' } },
    },
  };
}

/**
 * surge_ready (§3.3): the placeholder is Running and not terminating, on a Ready node other than the
 * candidate's, and that node belongs to the pool. Returns the host, or why not.
 */
export function surgeReady(
  placeholder: Pod | undefined,
  candidateNode: string | undefined,
  pool: string,
  idx: ClusterIndex,
): { host: Node } | { notReady: string } {
  if (!placeholder) return { notReady: 'no placeholder' };
  if (placeholder.metadata.deletionTimestamp) return { notReady: 'the placeholder is being removed (preempted)' };
  if (placeholder.status?.phase !== 'Running' || !placeholder.spec.nodeName)
    return { notReady: 'the placeholder is not running yet' };
  const host = idx.node(placeholder.spec.nodeName);
  if (!host) return { notReady: "the placeholder's node is not visible yet" };
  if (host.metadata.name === candidateNode) return { notReady: 'the placeholder runs on the candidate itself' };
  // A surge being removed (a reap of an earlier attempt, an operator's delete) holds no room, and its drain
  // would run beside the candidate's: it is never the surge a drain begins on.
  if (host.metadata.deletionTimestamp || idx.claimOfNode(host)?.metadata.deletionTimestamp)
    return { notReady: 'the surge node is being removed' };
  if (!isReady(host)) return { notReady: 'the surge node is not Ready' };
  if ((host.spec?.taints ?? []).some((t) => t.key === UNREGISTERED_TAINT))
    return { notReady: 'the surge node is not registered with Karpenter yet' };
  if (host.metadata.labels?.[NODEPOOL_LABEL] !== pool)
    return { notReady: 'the placeholder landed outside the NodePool' };
  return { host };
}

/** The clamped footprint must fit the NodePool's remaining spec.limits budget (§4.1 surge_headroom). */
export function headroomShortfall(pool: NodePool, requests: Resources): string[] {
  const limits = pool.spec.limits ?? {};
  const used = pool.status?.resources ?? {};
  const short: string[] = [];
  for (const key of Object.keys(limits).sort()) {
    const limit = parseQuantity(limits[key] as string | number);
    if (key === 'nodes') {
      const nodes = pool.status?.nodes ?? (used.nodes !== undefined ? parseQuantity(used.nodes) : 0);
      if (nodes + 1 > limit) short.push('nodes');
    } else if (parseQuantity(used[key] ?? 0) + (requests[key] ?? 0) > limit) {
      short.push(key);
    }
  }
  return short;
}

/** The PriorityClass a policy's placeholders use: the policy's, else the default (the controller fills its flag). */
export const placeholderPriorityClass = (policy: RotationPolicy): string =>
  policy.spec.surge?.placeholder?.priorityClassName ?? DEFAULT_PRIORITY_CLASS;

/**
 * The policy's placeholder PriorityClass when the snapshot says it does not exist (the API would refuse every
 * placeholder), as a fatal finding; null when it exists or the snapshot does not know.
 */
export function missingPriorityClass(s: Snapshot, policy: RotationPolicy): Finding | null {
  const name = placeholderPriorityClass(policy);
  if (!s.priorityClasses || s.priorityClasses.includes(name)) return null;
  return finding(
    'PlaceholderPriorityClassNotFound',
    'spec.surge.placeholder.priorityClassName',
    `PriorityClass "${name}" does not exist, so the API refuses the surge placeholder and no rotation can start. ` +
      'Create it (deploy/placeholder-priorityclass.yaml) or name an existing one here; when unset, the ' +
      "controller's --priority-class is used.",
  );
}
