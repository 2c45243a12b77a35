// A foreign writer: the reference implementation, uninstalled (or killed) mid-rotation just before the run
// starts. It leaves what docs/state.md says it writes, with the same keys and values as ours, so that either
// controller can take over what the other left in flight:
//  - its Lease (the same name as ours), held and renewed a moment ago: our replicas wait for it to expire;
//  - one rotation of the first NodePool, in one of two forms:
//     `pending`: the anchor, the claim `pending` with `started-at`, its node frozen (`do-not-disrupt` with the
//       `do-not-disrupt-owned` marker, `surge-for`) and cordoned by it (`cordoned`), and its placeholder in the
//       reference's form — `noderotation-surge-<claim>`, labels `surge-for` and `karpenter.sh/nodepool`, the
//       Pod-level `do-not-disrupt`, none of our app.kubernetes.io labels — still Pending (Karpenter launches a
//       node for it). Ours must adopt the placeholder (no second one), then finish or roll back;
//     `bound`: the same, but Karpenter has launched a surge claim for the placeholder since the start, its Node
//       is Ready and runs the placeholder, and the reference persisted `surge-claim` (it never writes
//       `surge-for` on the surge claim: ours only) and has not frozen the surge node yet (it does at surge_ready).
//       Ours must drain through the adopted surge, or roll back without reaping a claim it never linked;
//     `draining`: crashed between the state write and the delete — the pool's anchor set with
//       `active-rotation-state: draining`, `draining-at`, `surge-wait` and its own `surge-path`, the claim
//       `draining` and not deleted, no surge. Ours must delete it again only if the delete is justified on fresh
//       state (it is not: no placeholder holds surge room), else abandon the attempt.
// Its writes go through the apiserver as actor "reference", so the invariants see them: none is an operator's,
// and nothing of it is protected (S3) — it is state ours may take over.
import { LEASE_NAME } from '../../../runtime/leader/lease-store.js';
import { microTime } from '../../../runtime/kube/micro-time.js';
import type { ApiServer, Obj } from '../apiserver.js';
import { K } from '../invariants.js';
import type { Rng } from '../scheduler.js';
import { CLAIMS, NODES, POOLS } from './karpenter.js';

export const REFERENCE = 'reference';
const MERGE = 'application/merge-patch+json';

/** Leaves the reference's state at `now`; returns what it left, for the trace. */
export function leaveReferenceState(
  server: ApiServer,
  rng: Rng,
  o: {
    namespace: string;
    now: number;
    priorityClass: string;
    /** Karpenter registers a claim's Node (Ready): the surge the reference's placeholder was bound to. */
    register: (claim: string, pool: string) => void;
  },
): string {
  const call = (method: string, path: string, body: unknown, contentType?: string): void => {
    const res = server.handle(REFERENCE, { method, path, body, ...(contentType ? { contentType } : {}) });
    if (res.code >= 300) throw new Error(`reference: ${method} ${path}: ${JSON.stringify(res.body)}`);
  };
  const at = (ms: number): string => new Date(ms).toISOString().replace(/\.\d{3}Z$/, 'Z');
  call('POST', `/apis/coordination.k8s.io/v1/namespaces/${o.namespace}/leases`, {
    metadata: { name: LEASE_NAME },
    spec: {
      holderIdentity: 'noderotation-reference-7d9f-x2k4q',
      leaseDurationSeconds: 15,
      acquireTime: microTime(o.now - 3_600_000),
      renewTime: microTime(o.now - rng.int(0, 2_000)),
      leaseTransitions: 4,
    },
  });
  const pool = server.list('karpenter.sh/v1/nodepools')[0] as Obj;
  const poolName = pool.metadata.name;
  const claim = server.list('karpenter.sh/v1/nodeclaims').find((c) => c.metadata.labels?.[K.pool] === poolName) as Obj;
  const name = claim.metadata.name;
  const node = `node-${name}`;
  const started = o.now - rng.int(5, 60) * 1_000;
  const form = rng.pick(['pending', 'bound', 'draining'] as const);
  const annotate = (path: string, annotations: Record<string, string>, spec?: unknown): void =>
    call('PATCH', path, { metadata: { annotations }, ...(spec ? { spec } : {}) }, MERGE);
  if (form === 'draining') {
    annotate(`${POOLS}/${poolName}`, {
      [K.active]: name,
      'noderotation.io/active-rotation-state': 'draining',
      'noderotation.io/draining-at': at(o.now - 1_000),
      'noderotation.io/surge-wait': `${Math.round((o.now - 1_000 - started) / 1000)}s`,
      'noderotation.io/surge-path': 'provisioned',
    });
    annotate(`${CLAIMS}/${name}`, { [K.state]: 'draining', [K.startedAt]: at(started) });
    return `reference: ${name} of ${poolName} left draining, not deleted, no surge`;
  }
  annotate(`${POOLS}/${poolName}`, { [K.active]: name });
  // Bound: Karpenter launched a surge claim for the placeholder after the start, its Node is Ready, the
  // placeholder runs there, and the reference persisted `surge-claim` (never `surge-for` on the surge claim: ours
  // only) and has not frozen the surge node yet (it does at surge_ready).
  let surgeNode: string | undefined;
  if (form === 'bound') {
    const surge = `${poolName}-ref${rng.int(100, 999)}`;
    const tmpl = (pool.spec as { template: { spec: Record<string, unknown> } }).template.spec;
    const res = server.handle('world', {
      method: 'POST',
      path: CLAIMS,
      body: {
        metadata: { name: surge, labels: { [K.pool]: poolName }, finalizers: ['karpenter.sh/termination'] },
        spec: { expireAfter: tmpl.expireAfter, terminationGracePeriod: tmpl.terminationGracePeriod },
      },
    });
    if (res.code >= 300) throw new Error(`karpenter: POST ${surge}: ${JSON.stringify(res.body)}`);
    o.register(surge, poolName);
    surgeNode = `node-${surge}`;
    annotate(`${CLAIMS}/${name}`, { [K.state]: 'pending', [K.startedAt]: at(started), [K.surgeClaim]: surge });
  } else annotate(`${CLAIMS}/${name}`, { [K.state]: 'pending', [K.startedAt]: at(started) });
  const frozen = { [K.surgeFor]: name, 'karpenter.sh/do-not-disrupt': 'true', [K.owned]: 'true', [K.cordoned]: 'true' };
  annotate(`${NODES}/${node}`, frozen, { unschedulable: true });
  call('POST', `/api/v1/namespaces/${o.namespace}/pods`, {
    metadata: {
      name: `noderotation-surge-${name}`,
      labels: { [K.surgeFor]: name, [K.pool]: poolName },
      annotations: { 'karpenter.sh/do-not-disrupt': 'true' },
    },
    spec: {
      ...(surgeNode ? { nodeName: surgeNode } : {}),
      priorityClassName: o.priorityClass,
      preemptionPolicy: 'Never',
      nodeSelector: { [K.pool]: poolName },
      containers: [{ name: 'pause', image: 'registry.k8s.io/pause:3.10', resources: { requests: { cpu: '1' } } }],
    },
  });
  return surgeNode
    ? `reference: ${name} of ${poolName} left pending, its placeholder bound to ${surgeNode}`
    : `reference: ${name} of ${poolName} left pending, its placeholder Pending`;
}
