// A person at kubectl, at seeded random instants until `until`: cordons and uncordons Nodes, sets and clears
// `karpenter.sh/do-not-disrupt` on Nodes, NodeClaims and Pods, sets a freeze on a NodePool (valid, for a few
// minutes, or malformed) and clears it, edits the policy (a readyTimeout change) — each a merge patch, as
// `kubectl annotate`/`cordon` send them — and deletes the policy and creates it again some minutes later. It
// also reacts: a quarter of the controller's writes to a Node, NodeClaim or NodePool draw an edit of the same object
// (or the claim's Node) — within half a second, as another controller off its watch, or within 15 s, as a person
// answering the rotation's cordon — which is when an edit races the controller's next write to that object. The
// invariants protect what this actor sets (S3).
import type { ApiServer, Obj } from '../apiserver.js';
import type { Rng, Scheduler } from '../scheduler.js';
import { CLAIMS, DO_NOT_DISRUPT, NODES, POOLS } from './karpenter.js';

const MERGE = 'application/merge-patch+json';
/** The controller's writes the operator answers: to Nodes, NodeClaims and NodePools. */
const REACTS_TO = new Set(['/v1/nodes', 'karpenter.sh/v1/nodeclaims', 'karpenter.sh/v1/nodepools']);
const POLICIES = '/apis/noderotation.io/v1alpha1/rotationpolicies';

export class Operator {
  constructor(
    private readonly server: ApiServer,
    private readonly sched: Scheduler,
    private readonly rng: Rng,
    private readonly namespace: string,
  ) {}

  /** Acts every 20 s to 5 virtual minutes until `until`, then takes back what is left of it (for liveness). */
  start(until: number): void {
    this.server.onCommit((w) => {
      if (!w.actor.startsWith('controller#') || !w.after || !REACTS_TO.has(w.resource)) return;
      if (!this.rng.chance(0.25)) return;
      // Half answer as another controller would, off its watch within milliseconds; half as a person.
      const delay = this.rng.chance(0.5) ? this.rng.int(5, 500) : this.rng.int(500, 15_000);
      if (this.sched.now + delay >= until) return;
      const target = { resource: w.resource, name: w.name };
      this.sched.add('world', `operator: answers a write to ${w.name}`, delay, () => this.answer(target));
    });
    const next = (): void => {
      const delay = this.rng.int(20_000, 300_000);
      if (this.sched.now + delay >= until) {
        this.sched.add('world', 'operator: cleans up', until - this.sched.now, () => this.cleanUp());
        return;
      }
      this.sched.add('world', 'operator: acts', delay, () => {
        this.act();
        next();
      });
    };
    next();
  }

  private patch(path: string, body: unknown): void {
    this.server.handle('operator', { method: 'PATCH', path, body, contentType: MERGE });
  }

  /** The policy it deleted, to create again (a rollout that replaces it): rotations in flight lose governance. */
  private deleted: Obj | null = null;

  private deletePolicy(): void {
    const policy = this.server.get('noderotation.io/v1alpha1/rotationpolicies', 'all');
    if (!policy) return;
    this.server.handle('operator', { method: 'DELETE', path: `${POLICIES}/all`, body: {} });
    this.deleted = policy;
    this.sched.add('world', 'operator: creates the policy again', this.rng.int(30_000, 600_000), () =>
      this.restorePolicy(),
    );
  }

  private restorePolicy(): void {
    if (!this.deleted) return;
    const { metadata, spec } = this.deleted;
    this.server.handle('operator', {
      method: 'POST',
      path: POLICIES,
      body: { apiVersion: 'noderotation.io/v1alpha1', kind: 'RotationPolicy', metadata: { name: metadata.name }, spec },
    });
    this.deleted = null;
  }

  /** Uncordons every Node, removes every do-not-disrupt and freeze it set that is still there. */
  private cleanUp(): void {
    this.restorePolicy();
    for (const w of this.server.writes) {
      if (w.actor !== 'operator' || !w.after) continue;
      const now = this.server.peek(w.resource, w.name, w.namespace);
      if (!now) continue;
      const path = pathOf(w.resource, w.name, w.namespace);
      const a = now.metadata.annotations ?? {};
      const remove: Record<string, null> = {};
      // Not the controller's own: its do-not-disrupt is marked owned, its cordon `cordoned`.
      if (a[DO_NOT_DISRUPT] !== undefined && a['noderotation.io/do-not-disrupt-owned'] === undefined)
        remove[DO_NOT_DISRUPT] = null;
      if (a['noderotation.io/freeze'] !== undefined) remove['noderotation.io/freeze'] = null;
      if (Object.keys(remove).length > 0) this.patch(path, { metadata: { annotations: remove } });
      const cordoned = (now.spec as { unschedulable?: boolean } | undefined)?.unschedulable === true;
      if (w.resource === '/v1/nodes' && cordoned && a['noderotation.io/cordoned'] === undefined)
        this.patch(path, { spec: { unschedulable: null } });
    }
  }

  /** An edit of the object the controller just wrote, or of the Node of the claim it wrote. */
  private answer(target: { resource: string; name: string }): void {
    const dnd = (v: string | null) => ({ metadata: { annotations: { [DO_NOT_DISRUPT]: v } } });
    let node = target.resource === '/v1/nodes' ? target.name : undefined;
    if (target.resource === 'karpenter.sh/v1/nodeclaims') {
      const claim = this.server.peek(target.resource, target.name);
      if (!claim) return;
      if (this.rng.chance(0.5)) {
        this.patch(`${CLAIMS}/${target.name}`, dnd(this.rng.chance(0.7) ? 'true' : null));
        return;
      }
      node = (claim.status as { nodeName?: string } | undefined)?.nodeName;
    }
    if (target.resource === 'karpenter.sh/v1/nodepools') {
      const until = new Date(this.sched.now + this.rng.int(1, 10) * 60_000).toISOString().replace(/\.\d+Z$/, 'Z');
      this.patch(`${POOLS}/${target.name}`, { metadata: { annotations: { 'noderotation.io/freeze': until } } });
      return;
    }
    if (!node || !this.server.peek('/v1/nodes', node)) return;
    const path = `${NODES}/${node}`;
    switch (this.rng.int(0, 3)) {
      case 0:
        this.patch(path, { spec: { unschedulable: true } });
        break;
      case 1:
        this.patch(path, { spec: { unschedulable: null } });
        break;
      default:
        this.patch(path, dnd(this.rng.chance(0.7) ? 'true' : null));
    }
  }

  private act(): void {
    const nodes = this.server.list('/v1/nodes');
    const claims = this.server.list('karpenter.sh/v1/nodeclaims');
    const pools = this.server.list('karpenter.sh/v1/nodepools');
    const pods = this.server.list('/v1/pods').filter((p) => p.metadata.namespace !== this.namespace);
    const some = (xs: Obj[]): Obj | undefined => (xs.length > 0 ? this.rng.pick(xs) : undefined);
    const choice = this.rng.int(0, 8);
    const node = some(nodes);
    const claim = some(claims);
    const pool = some(pools);
    const pod = some(pods);
    const dnd = (v: string | null) => ({ metadata: { annotations: { [DO_NOT_DISRUPT]: v } } });
    switch (choice) {
      case 0:
        if (node) this.patch(`${NODES}/${node.metadata.name}`, { spec: { unschedulable: true } });
        break;
      case 1:
        if (node) this.patch(`${NODES}/${node.metadata.name}`, { spec: { unschedulable: null } });
        break;
      case 2:
        if (node) this.patch(`${NODES}/${node.metadata.name}`, dnd(this.rng.chance(0.5) ? 'true' : null));
        break;
      case 3:
        if (claim) this.patch(`${CLAIMS}/${claim.metadata.name}`, dnd(this.rng.chance(0.5) ? 'true' : null));
        break;
      case 4:
        if (pod)
          this.patch(
            `/api/v1/namespaces/${pod.metadata.namespace ?? ''}/pods/${pod.metadata.name}`,
            dnd(this.rng.chance(0.5) ? 'true' : null),
          );
        break;
      case 5: {
        if (!pool) break;
        const until = new Date(this.sched.now + this.rng.int(1, 20) * 60_000).toISOString().replace(/\.\d+Z$/, 'Z');
        const value = this.rng.chance(0.3) ? 'next tuesday' : until;
        this.patch(`${POOLS}/${pool.metadata.name}`, {
          metadata: { annotations: { 'noderotation.io/freeze': value } },
        });
        break;
      }
      case 6:
        if (pool)
          this.patch(`${POOLS}/${pool.metadata.name}`, {
            metadata: { annotations: { 'noderotation.io/freeze': null } },
          });
        break;
      case 7:
        this.patch(`${POLICIES}/all`, { spec: { surge: { readyTimeout: this.rng.pick(['5m', '10m', '15m']) } } });
        break;
      default:
        this.deletePolicy();
    }
  }
}

function pathOf(resource: string, name: string, namespace?: string): string {
  const [group, version, plural] = resource.split('/') as [string, string, string];
  const base = group === '' ? `/api/${version}` : `/apis/${group}/${version}`;
  return `${base}${namespace ? `/namespaces/${namespace}` : ''}/${plural}/${name}`;
}
