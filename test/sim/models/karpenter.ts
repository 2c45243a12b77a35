// The cluster around the controller, level-triggered like the real controllers it stands for, and woken by
// every committed write (after a seeded delay):
//  - Karpenter: a Pending Pod that fits no node of its NodePool gets a NodeClaim (after a launch delay a Node
//    registers, later it and the claim become Ready); a deleted NodeClaim is drained — its Node tainted, its Pods
//    evicted one PDB-permitted Pod at a time, `karpenter.sh/do-not-disrupt` Pods left until the claim's
//    terminationGracePeriod, then everything forcibly — and removed; a claim past creation + expireAfter is
//    deleted (forceful expiration);
//  - kube-scheduler: binds a Pending Pod to a Ready, schedulable, untainted Node of its NodePool with room
//    (cpu requests), honouring required node affinity;
//  - the kubelet (KWOK-like): a bound Pod becomes Running; a terminating Pod goes away a little later; Pods of a
//    Node that is gone are collected;
//  - ReplicaSets: each app keeps its replica count, with a PDB of maxUnavailable 1.
import type { ApiServer, Obj } from '../apiserver.js';
import type { Rng, Scheduler, Task } from '../scheduler.js';

export const NODEPOOL_LABEL = 'karpenter.sh/nodepool';
export const DO_NOT_DISRUPT = 'karpenter.sh/do-not-disrupt';
const TERMINATION_FINALIZER = 'karpenter.sh/termination';
const DISRUPTED_TAINT = { key: 'karpenter.sh/disrupted', effect: 'NoSchedule' };
const NODE_CPU = 4;
export const CLAIMS = '/apis/karpenter.sh/v1/nodeclaims';
export const NODES = '/api/v1/nodes';
export const POOLS = '/apis/karpenter.sh/v1/nodepools';
const podsOf = (ns: string): string => `/api/v1/namespaces/${ns}/pods`;

export interface App {
  name: string;
  namespace: string;
  pool: string;
  replicas: number;
  cpu: number;
  /** On each of its Pods (karpenter.sh/do-not-disrupt, say). */
  annotations?: Record<string, string>;
}

export interface KarpenterTiming {
  /** Claim created → Node registered (ms). */
  launch: [number, number];
  /** Node registered → Ready (ms). */
  ready: [number, number];
  /** A write → the models' next look (ms). */
  react: [number, number];
}

/** Karpenter's provisioner batches Pending Pods: it launches once none came for a second (BATCH_IDLE_DURATION). */
const BATCH_IDLE_MS = 1_000;

export const TIMING: KarpenterTiming = { launch: [10_000, 60_000], ready: [5_000, 30_000], react: [200, 3_000] };

type Pod = Obj & {
  spec: {
    nodeName?: string;
    nodeSelector?: Record<string, string>;
    containers?: { resources?: { requests?: Record<string, string> } }[];
    affinity?: { nodeAffinity?: { requiredDuringSchedulingIgnoredDuringExecution?: { nodeSelectorTerms?: Term[] } } };
    tolerations?: { key?: string; operator?: string; value?: string; effect?: string }[];
  };
  status?: { phase?: string };
};
type Term = { matchExpressions?: { key: string; operator: string; values?: string[] }[] };
type Node = Obj & {
  spec: { unschedulable?: boolean; taints?: { key: string; value?: string; effect: string }[] };
  status?: { conditions?: { type: string; status: string }[] };
};
type Claim = Obj & {
  spec: { expireAfter?: string; terminationGracePeriod?: string };
  status?: { nodeName?: string; conditions?: { type: string; status: string }[] };
};

/** What the models read: a write to anything else (a Lease renewal, an Event, a policy's status) wakes none of them. */
const WATCHED = new Set(['karpenter.sh/v1/nodepools', 'karpenter.sh/v1/nodeclaims', '/v1/nodes', '/v1/pods']);

export class World {
  private wake: Task | null = null;
  private wakeAt = Infinity;
  private claims = 0;
  /** When each Pending Pod that fits nowhere was first seen so (ms), by uid. */
  private unplacedSince = new Map<string, number>();
  readonly apps: App[] = [];

  constructor(
    private readonly server: ApiServer,
    private readonly sched: Scheduler,
    private readonly rng: Rng,
    private readonly timing: KarpenterTiming = TIMING,
  ) {
    server.onCommit((w) => {
      if (w.actor !== 'world' && WATCHED.has(w.resource)) this.poke(this.rng.int(...this.timing.react));
    });
  }

  /** Looks again after `delayMs` (the earliest of the looks asked for wins). */
  poke(delayMs: number): void {
    const at = this.sched.now + delayMs;
    if (this.wake && this.wakeAt <= at) return;
    // The later look is dropped, not run as an empty step.
    if (this.wake) this.wake.live = false;
    this.wakeAt = at;
    this.wake = this.sched.add('world', 'world: reconcile', delayMs, () => {
      this.wake = null;
      this.wakeAt = Infinity;
      this.reconcile();
    });
  }

  private call(method: string, path: string, body?: unknown, contentType?: string): unknown {
    const res = this.server.handle('world', {
      method,
      path,
      ...(body !== undefined ? { body } : {}),
      ...(contentType ? { contentType } : {}),
    });
    if (res.code === 404 || res.code === 409) return undefined; // gone meanwhile, or already there
    if (res.code >= 300) throw new Error(`world: ${method} ${path}: ${JSON.stringify(res.body)}`);
    return res.body;
  }

  private merge(path: string, body: unknown): void {
    this.call('PATCH', path, body, 'application/merge-patch+json');
  }

  /** One look at everything; asks for another while anything is in progress. */
  reconcile(): void {
    const now = this.sched.now;
    let busy = false;
    const claims = this.server.view('karpenter.sh/v1/nodeclaims') as Claim[];
    const pools = this.server.view('karpenter.sh/v1/nodepools');
    // Forceful expiration.
    let nextExpiry = Infinity;
    for (const c of claims) {
      if (c.metadata.deletionTimestamp) continue;
      const at = Date.parse(c.metadata.creationTimestamp ?? '') + duration(c.spec.expireAfter ?? 'Never');
      if (at <= now) this.call('DELETE', `${CLAIMS}/${c.metadata.name}`, {});
      else nextExpiry = Math.min(nextExpiry, at);
    }
    busy = this.terminate() || busy;
    busy = this.kubelet() || busy;
    busy = this.replicaSets() || busy;
    const unplaced = this.schedule();
    busy = this.provision(unplaced, pools) || busy || unplaced.length > 0;
    if (busy) this.poke(this.rng.int(2_000, 8_000));
    else if (nextExpiry < Infinity) this.poke(nextExpiry - now);
  }

  /** Drains deleted claims; true while any is draining. */
  private terminate(): boolean {
    const now = this.sched.now;
    let busy = false;
    const pods = this.server.view('/v1/pods') as Pod[];
    /** Pods evicted in this look (the view above does not show it). */
    const evicted = new Set<Pod>();
    for (const c of this.server.view('karpenter.sh/v1/nodeclaims') as Claim[]) {
      if (!c.metadata.deletionTimestamp) continue;
      busy = true;
      const deadline = Date.parse(c.metadata.deletionTimestamp) + duration(c.spec.terminationGracePeriod ?? 'Never');
      const nodeName = c.status?.nodeName;
      const node = nodeName ? (this.server.peek('/v1/nodes', nodeName) as Node | undefined) : undefined;
      if (node) {
        const taints = node.spec.taints ?? [];
        if (!taints.some((t) => t.key === DISRUPTED_TAINT.key))
          this.merge(`${NODES}/${node.metadata.name}`, { spec: { taints: [...taints, DISRUPTED_TAINT] } });
        const on = pods.filter((p) => p.spec.nodeName === node.metadata.name && !evicted.has(p));
        const forced = now >= deadline;
        for (const p of on) {
          if ((p.metadata.deletionTimestamp || evicted.has(p)) && !forced) continue;
          const path = `${podsOf(p.metadata.namespace ?? '')}/${p.metadata.name}`;
          if (forced) this.call('DELETE', path, { gracePeriodSeconds: 0 });
          else if (p.metadata.annotations?.[DO_NOT_DISRUPT] === 'true') continue;
          else if (this.evictionAllowed(p, pods, evicted)) {
            this.call('DELETE', path, {});
            evicted.add(p);
          }
        }
        if (on.length > 0) continue;
        this.call('DELETE', `${NODES}/${node.metadata.name}`, {});
      }
      this.merge(`${CLAIMS}/${c.metadata.name}`, { metadata: { finalizers: null } });
    }
    return busy;
  }

  /** A PDB of maxUnavailable 1 per app: an eviction is allowed while every other replica is Running. */
  private evictionAllowed(p: Pod, pods: readonly Pod[], evicted: Set<Pod>): boolean {
    const app = p.metadata.labels?.app;
    const def = this.apps.find((a) => a.name === app && a.namespace === p.metadata.namespace);
    if (!def) return true;
    const healthy = pods.filter(
      (x) =>
        x.metadata.labels?.app === app &&
        x.metadata.namespace === p.metadata.namespace &&
        !x.metadata.deletionTimestamp &&
        !evicted.has(x) &&
        x.status?.phase === 'Running',
    );
    return healthy.length - (healthy.includes(p) ? 1 : 0) >= def.replicas - 1 && healthy.includes(p);
  }

  /** Bound Pods start; terminating Pods end; Pods of vanished Nodes are collected. True while any terminates. */
  private kubelet(): boolean {
    const now = this.sched.now;
    let busy = false;
    const nodes = new Set(this.server.view('/v1/nodes').map((n) => n.metadata.name));
    for (const p of this.server.view('/v1/pods') as Pod[]) {
      const path = `${podsOf(p.metadata.namespace ?? '')}/${p.metadata.name}`;
      const node = p.spec.nodeName;
      if (node && !nodes.has(node)) {
        this.call('DELETE', path, { gracePeriodSeconds: 0 });
        continue;
      }
      if (p.metadata.deletionTimestamp) {
        busy = true;
        const grace = (p.metadata.deletionGracePeriodSeconds ?? 0) * 1000;
        const since = Date.parse(p.metadata.deletionTimestamp) - grace;
        if (now - since >= Math.min(grace, 2_000)) this.call('DELETE', path, { gracePeriodSeconds: 0 });
        continue;
      }
      if (node && p.status?.phase === 'Pending')
        this.call('PATCH', `${path}/status`, { status: { phase: 'Running' } }, 'application/merge-patch+json');
    }
    return busy;
  }

  /** True when it created a Pod. */
  private replicaSets(): boolean {
    let created = false;
    const pods = this.server.view('/v1/pods') as Pod[];
    for (const a of this.apps) {
      const live = pods.filter(
        (p) =>
          p.metadata.namespace === a.namespace && p.metadata.labels?.app === a.name && !p.metadata.deletionTimestamp,
      );
      for (let i = live.length; i < a.replicas; i++) {
        this.call('POST', podsOf(a.namespace), appPod(a));
        created = true;
      }
    }
    return created;
  }

  /** Binds what fits; returns the Pending Pods that fit nowhere. */
  private schedule(): Pod[] {
    const nodes = (this.server.view('/v1/nodes') as Node[]).filter(
      (n) =>
        !n.metadata.deletionTimestamp &&
        !n.spec.unschedulable &&
        (n.status?.conditions ?? []).some((c) => c.type === 'Ready' && c.status === 'True'),
    );
    const pods = this.server.view('/v1/pods') as Pod[];
    const used = new Map<string, number>();
    for (const p of pods) if (p.spec.nodeName) used.set(p.spec.nodeName, (used.get(p.spec.nodeName) ?? 0) + cpuOf(p));
    const unplaced: Pod[] = [];
    for (const p of pods) {
      if (p.spec.nodeName || p.metadata.deletionTimestamp) continue;
      const fits = nodes.filter(
        (n) => (used.get(n.metadata.name) ?? 0) + cpuOf(p) <= NODE_CPU && selects(p, n) && tolerates(p, n),
      );
      if (fits.length === 0) {
        unplaced.push(p);
        continue;
      }
      const n = this.rng.pick(fits);
      used.set(n.metadata.name, (used.get(n.metadata.name) ?? 0) + cpuOf(p));
      this.merge(`${podsOf(p.metadata.namespace ?? '')}/${p.metadata.name}`, { spec: { nodeName: n.metadata.name } });
    }
    return unplaced;
  }

  /**
   * Launches claims for the Pods that fit nowhere, beyond what claims still launching will hold — once they have
   * waited out Karpenter's batching window (BATCH_IDLE_MS), so a claim is never created within a second of the Pod
   * it is for (the parity test found claims created in the second of the placeholder, which Karpenter never does).
   */
  private provision(unplaced: Pod[], pools: readonly Obj[]): boolean {
    let busy = false;
    const now = this.sched.now;
    const claims = this.server.view('karpenter.sh/v1/nodeclaims') as Claim[];
    const waiting = new Map<string, number>();
    for (const p of unplaced) {
      const uid = p.metadata.uid ?? p.metadata.name;
      waiting.set(uid, this.unplacedSince.get(uid) ?? now);
    }
    this.unplacedSince = waiting;
    const batched = unplaced.filter(
      (p) => now - (waiting.get(p.metadata.uid ?? p.metadata.name) ?? now) >= BATCH_IDLE_MS,
    );
    for (const pool of pools) {
      const name = pool.metadata.name;
      const demand = batched
        .filter((p) => p.spec.nodeSelector?.[NODEPOOL_LABEL] === name)
        .reduce((s, p) => s + cpuOf(p), 0);
      const launching = claims.filter(
        (c) =>
          c.metadata.labels?.[NODEPOOL_LABEL] === name &&
          !c.metadata.deletionTimestamp &&
          !(c.status?.conditions ?? []).some((x) => x.type === 'Ready' && x.status === 'True'),
      );
      if (launching.length > 0) busy = true;
      if (demand > launching.length * NODE_CPU) {
        this.launch(pool);
        busy = true;
      }
    }
    return busy;
  }

  /** A NodeClaim now; its Node after the launch delay; both Ready after the ready delay. */
  launch(pool: Obj): void {
    const poolName = pool.metadata.name;
    const name = `${poolName}-${(++this.claims).toString(36)}${this.rng.int(100, 999)}`;
    const tmpl = (pool.spec as { template?: { spec?: Record<string, unknown> } }).template?.spec ?? {};
    this.call('POST', CLAIMS, {
      metadata: { name, labels: { [NODEPOOL_LABEL]: poolName }, finalizers: [TERMINATION_FINALIZER] },
      spec: {
        expireAfter: tmpl.expireAfter ?? '720h',
        terminationGracePeriod: tmpl.terminationGracePeriod ?? '1h',
        requirements: tmpl.requirements ?? [],
        nodeClassRef: { group: 'karpenter.k8s.aws', kind: 'EC2NodeClass', name: 'default' },
      },
    });
    this.sched.add('world', `karpenter: ${name} registers`, this.rng.int(...this.timing.launch), () => {
      if (!this.server.peek('karpenter.sh/v1/nodeclaims', name)) return;
      this.register(name, poolName, false);
      this.sched.add('world', `karpenter: ${name} Ready`, this.rng.int(...this.timing.ready), () => {
        if (!this.server.peek('karpenter.sh/v1/nodeclaims', name)) return;
        this.ready(name);
      });
    });
  }

  /** A Pod of the app, already bound to `node` and Running (the initial cluster). */
  bind(a: App, name: string, node: string): void {
    const pod = appPod(a);
    pod.metadata.name = name;
    delete pod.metadata.generateName;
    (pod.spec as Pod['spec']).nodeName = node;
    this.call('POST', podsOf(a.namespace), { ...pod, status: { phase: 'Running' } });
  }

  /** The claim's Node and its status (used by the launch and by the initial cluster). */
  register(claim: string, pool: string, ready: boolean): void {
    const node = `node-${claim}`;
    const cond = (status: boolean) => [{ type: 'Ready', status: status ? 'True' : 'False' }];
    this.call('POST', NODES, {
      metadata: { name: node, labels: nodeLabels(pool, node), ownerReferences: [ownerRef(claim)] },
      spec: { providerID: `kwok://${node}` },
    });
    this.call(
      'PATCH',
      `${NODES}/${node}/status`,
      { status: { conditions: cond(ready), allocatable: ALLOCATABLE, capacity: ALLOCATABLE } },
      'application/merge-patch+json',
    );
    this.call(
      'PATCH',
      `${CLAIMS}/${claim}/status`,
      {
        status: {
          nodeName: node,
          providerID: `kwok://${node}`,
          capacity: ALLOCATABLE,
          allocatable: ALLOCATABLE,
          conditions: [{ type: 'Launched', status: 'True' }, { type: 'Registered', status: 'True' }, ...cond(ready)],
        },
      },
      'application/merge-patch+json',
    );
  }

  private ready(claim: string): void {
    const c = this.server.peek('karpenter.sh/v1/nodeclaims', claim) as Claim | undefined;
    const node = c?.status?.nodeName;
    if (!node) return;
    const ready = [{ type: 'Ready', status: 'True' }];
    this.call('PATCH', `${NODES}/${node}/status`, { status: { conditions: ready } }, 'application/merge-patch+json');
    this.call(
      'PATCH',
      `${CLAIMS}/${claim}/status`,
      {
        status: {
          conditions: [{ type: 'Launched', status: 'True' }, { type: 'Registered', status: 'True' }, ...ready],
        },
      },
      'application/merge-patch+json',
    );
    this.poke(0);
  }
}

const ALLOCATABLE = { cpu: String(NODE_CPU), memory: '16Gi', pods: '110' };

function nodeLabels(pool: string, node: string): Record<string, string> {
  return {
    [NODEPOOL_LABEL]: pool,
    'kubernetes.io/hostname': node,
    'kubernetes.io/arch': 'amd64',
    'kubernetes.io/os': 'linux',
    'karpenter.sh/capacity-type': 'on-demand',
    'topology.kubernetes.io/zone': 'zone-a',
    'node.kubernetes.io/instance-type': 'm5.xlarge',
  };
}

const ownerRef = (claim: string) => ({ apiVersion: 'karpenter.sh/v1', kind: 'NodeClaim', name: claim, uid: '' });

function appPod(a: App): Obj {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      name: '',
      generateName: `${a.name}-`,
      namespace: a.namespace,
      labels: { app: a.name },
      ...(a.annotations ? { annotations: { ...a.annotations } } : {}),
    },
    spec: {
      nodeSelector: { [NODEPOOL_LABEL]: a.pool },
      containers: [{ name: 'app', image: 'app', resources: { requests: { cpu: String(a.cpu) } } }],
    },
  };
}

function cpuOf(p: Pod): number {
  let s = 0;
  for (const c of p.spec.containers ?? []) s += quantity(c.resources?.requests?.cpu ?? '0');
  return s;
}

function quantity(q: string): number {
  return q.endsWith('m') ? Number(q.slice(0, -1)) / 1000 : Number(q);
}

function selects(p: Pod, n: Node): boolean {
  const labels = n.metadata.labels ?? {};
  for (const [k, v] of Object.entries(p.spec.nodeSelector ?? {})) if (labels[k] !== v) return false;
  const terms = p.spec.affinity?.nodeAffinity?.requiredDuringSchedulingIgnoredDuringExecution?.nodeSelectorTerms;
  if (!terms || terms.length === 0) return true;
  return terms.some((t) =>
    (t.matchExpressions ?? []).every((e) => {
      const v = labels[e.key];
      switch (e.operator) {
        case 'In':
          return v !== undefined && (e.values ?? []).includes(v);
        case 'NotIn':
          return v === undefined || !(e.values ?? []).includes(v);
        case 'Exists':
          return v !== undefined;
        case 'DoesNotExist':
          return v === undefined;
        case 'Gt':
          return v !== undefined && Number(v) > Number(e.values?.[0]);
        case 'Lt':
          return v !== undefined && Number(v) < Number(e.values?.[0]);
        default:
          return false;
      }
    }),
  );
}

function tolerates(p: Pod, n: Node): boolean {
  return (n.spec.taints ?? [])
    .filter((t) => t.effect === 'NoSchedule' || t.effect === 'NoExecute')
    .every((t) =>
      (p.spec.tolerations ?? []).some(
        (x) =>
          (x.operator === 'Exists' && (x.key === undefined || x.key === t.key)) ||
          (x.key === t.key && (x.value ?? '') === (t.value ?? '')),
      ),
    );
}

/** A Go duration ("336h", "1h30m", "90s") or "Never" (Infinity). */
export function duration(d: string): number {
  if (d === 'Never') return Infinity;
  const unit: Record<string, number> = { h: 3_600_000, m: 60_000, s: 1_000, ms: 1 };
  let total = 0;
  for (const m of d.matchAll(/(\d+(?:\.\d+)?)(ms|h|m|s)/g)) total += Number(m[1]) * (unit[m[2] as string] as number);
  return total;
}
