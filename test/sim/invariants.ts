// The safety invariants, read from the apiserver's write log after every step. The checker replays the log
// into a shadow of the server's state, so each write is judged against the state at the instant it was
// applied (the server applies writes one at a time):
//  S1  per NodePool at most one rotation in flight: at most one NodeClaim in state pending or draining; and
//      the controller never deletes a NodeClaim of a pool while another claim of that pool that it deleted
//      still exists (its drain unfinished);
//  S2  every NodeClaim DELETE by the controller hits the pool's anchored candidate in state draining
//      (`active-rotation` names it), or that rotation's surge claim linked both ways (the candidate's
//      `surge-claim` names it and its own `surge-for` names the candidate); it is preconditioned on the claim's
//      UID and resourceVersion (as the apiserver received it: what keeps it from hitting a claim changed since
//      its judgement); and a surge rotation's candidate is deleted only while its surge holds the room — its
//      placeholder Running, not terminating, on a Ready Node other than the candidate's;
//  S3  nothing an operator set is taken away by the controller: an annotation the operator wrote keeps its
//      value through every controller write, and so does a cordon (spec.unschedulable) the operator set.
//  S4  fenced by leadership (when the run elects a leader): every write of a controller replica other than to
//      the Lease itself is applied only while the Lease names that replica as its holder — judged at the
//      moment the write reached the apiserver, so a write sent before a pause and applied after another
//      replica took over breaks it.
// Liveness (faults off, at the end): no anchor, no rotation state in flight, no placeholder, no marker of ours
// on a Node, and every claim due at the start replaced or rolled back.
import { surgeForLabelValue } from '../../src/engine/identity.js';
import type { Obj, Write } from './apiserver.js';

const P = 'noderotation.io/';
export const K = {
  active: `${P}active-rotation`,
  state: `${P}state`,
  surgeClaim: `${P}surge-claim`,
  surgeFor: `${P}surge-for`,
  startedAt: `${P}started-at`,
  owned: `${P}do-not-disrupt-owned`,
  cordoned: `${P}cordoned`,
  mode: `${P}rotation-mode`,
  pool: 'karpenter.sh/nodepool',
} as const;

const CLAIMS = 'karpenter.sh/v1/nodeclaims';
const POOLS = 'karpenter.sh/v1/nodepools';
const LEASES = 'coordination.k8s.io/v1/leases';
const PODS = '/v1/pods';
const NODES = '/v1/nodes';
const DO_NOT_DISRUPT = 'karpenter.sh/do-not-disrupt';
/** The cordon, tracked like an annotation. */
const CORDON = 'spec.unschedulable';

export interface Violation {
  invariant: 'S1' | 'S2' | 'S3' | 'S4' | 'liveness';
  /** The write that broke it (its place in the write log). */
  seq?: number;
  message: string;
}

const key = (w: Pick<Write, 'resource' | 'namespace' | 'name'>): string =>
  `${w.resource}|${w.namespace ?? ''}/${w.name}`;
const ann = (o: Obj | undefined): Record<string, string> => o?.metadata.annotations ?? {};
const unschedulable = (o: Obj | undefined): boolean => (o?.spec as { unschedulable?: boolean })?.unschedulable === true;

export class Invariants {
  private readonly state = new Map<string, Obj>();
  private cursor = 0;
  /** Per pool, the claims the controller deleted. */
  private readonly deleted = new Map<string, Set<string>>();
  /** Per pool, the NodeClaims that exist now (their state keys): S1's count reads only these. */
  private readonly claimsOf = new Map<string, Set<string>>();
  /** Per object, what the operator set: annotation key (or CORDON) → value. */
  private readonly operator = new Map<string, Map<string, string>>();
  readonly violations: Violation[] = [];

  constructor(
    private readonly isController: (actor: string) => boolean,
    private readonly isOperator: (actor: string) => boolean = (a) => a === 'operator',
    /** The Lease the replicas elect their leader on (S4 is checked only then); each replica's identity is its actor. */
    private readonly lease?: { namespace: string; name: string },
  ) {}

  /** Judges the writes not seen yet; returns the violations they added. */
  check(writes: readonly Write[]): Violation[] {
    const found: Violation[] = [];
    for (; this.cursor < writes.length; this.cursor++) {
      const w = writes[this.cursor] as Write;
      found.push(...this.judge(w));
      this.apply(w);
      found.push(...this.afterwards(w));
    }
    this.violations.push(...found);
    return found;
  }

  private obj(resource: string, name: string, namespace?: string): Obj | undefined {
    return this.state.get(key({ resource, name, ...(namespace ? { namespace } : {}) }));
  }

  private judge(w: Write): Violation[] {
    const out: Violation[] = [];
    if (!this.isController(w.actor)) return out;
    const v = (invariant: Violation['invariant'], message: string): void =>
      void out.push({ invariant, seq: w.seq, message: `${message} (write #${w.seq} by ${w.actor})` });
    if (this.lease && w.resource !== LEASES) {
      const spec = this.obj(LEASES, this.lease.name, this.lease.namespace)?.spec as
        { holderIdentity?: string } | undefined;
      const holder = spec?.holderIdentity ?? '';
      if (holder !== w.actor)
        v(
          'S4',
          `${w.verb} of ${w.resource}${w.subresource ? `/${w.subresource}` : ''} ${w.name} applied while the ` +
            `Lease's holder is ${holder === '' ? 'nobody' : holder}`,
        );
    }
    if (w.resource === CLAIMS && w.verb === 'delete') {
      const claim = w.before;
      const pool = claim?.metadata.labels?.[K.pool] ?? '';
      const anchored = ann(this.obj(POOLS, pool))[K.active];
      const candidate = anchored ? this.obj(CLAIMS, anchored) : undefined;
      const ok =
        anchored !== undefined &&
        ((w.name === anchored && ann(claim)[K.state] === 'draining') ||
          (w.name !== anchored && this.isSurgeOf(claim, candidate, anchored)));
      if (!ok)
        v(
          'S2',
          `NodeClaim ${w.name} of pool ${pool} deleted while the pool anchors ${anchored ?? 'nothing'} ` +
            `(claim state ${ann(claim)[K.state] ?? 'none'})`,
        );
      if (!w.preconditions?.uid || !w.preconditions.resourceVersion)
        v('S2', `NodeClaim ${w.name} deleted without preconditions on its UID and resourceVersion`);
      const room = ok && w.name === anchored && ann(this.obj(POOLS, pool))[K.mode] !== 'forceful-fallback';
      const short = room ? this.surgeShort(claim) : null;
      if (short) v('S2', `NodeClaim ${w.name} deleted while its surge does not hold the room: ${short}`);
      const earlier = [...(this.deleted.get(pool) ?? [])].filter((c) => c !== w.name && this.obj(CLAIMS, c));
      if (earlier.length > 0)
        v(
          'S1',
          `NodeClaim ${w.name} of pool ${pool} deleted while ${earlier.join(', ')}, deleted earlier, still drains`,
        );
    }
    const owned = this.operator.get(key(w));
    if (owned && w.after) {
      for (const [k, value] of owned) {
        const now = k === CORDON ? String(unschedulable(w.after)) : ann(w.after)[k];
        if (now !== value)
          v('S3', `${w.resource} ${w.name}: the operator's ${k}=${value} became ${now ?? '(removed)'}`);
      }
    }
    return out;
  }

  /**
   * Whether `claim` is the surge of the anchored rotation by what was persisted (docs/safety.md, S2): the
   * candidate's `surge-claim` names it AND its own `surge-for` names the candidate. Never inferred: a claim
   * that merely looks like a surge (created after the start, an empty node) is not ours to delete.
   */
  private isSurgeOf(claim: Obj | undefined, candidate: Obj | undefined, anchored: string): boolean {
    if (!claim || !candidate) return false;
    return ann(candidate)[K.surgeClaim] === claim.metadata.name && ann(claim)[K.surgeFor] === anchored;
  }

  /**
   * Why the surge of `candidate`'s rotation does not hold the room now, or null: its placeholder (the Pod
   * labelled `surge-for` with the candidate's key) must be Running, not terminating, on a Ready Node other
   * than the candidate's.
   */
  private surgeShort(candidate: Obj | undefined): string | null {
    if (!candidate) return 'no candidate';
    const label = surgeForLabelValue(candidate.metadata.name);
    const own = (candidate.status as { nodeName?: string } | undefined)?.nodeName;
    const placeholders = [...this.state.entries()]
      .filter(([k, o]) => k.startsWith(`${PODS}|`) && o.metadata.labels?.[K.surgeFor] === label)
      .map(([, o]) => o);
    if (placeholders.length === 0) return 'no placeholder';
    for (const p of placeholders) {
      const host = (p.spec as { nodeName?: string } | undefined)?.nodeName;
      const node = host ? this.obj(NODES, host) : undefined;
      const ready = (
        (node?.status as { conditions?: { type: string; status: string }[] } | undefined)?.conditions ?? []
      ).some((c) => c.type === 'Ready' && c.status === 'True');
      const running = (p.status as { phase?: string } | undefined)?.phase === 'Running';
      if (host && host !== own && ready && running && !p.metadata.deletionTimestamp) return null;
    }
    return `placeholder ${placeholders.map((p) => p.metadata.name).join(', ')} not Running on another Ready Node`;
  }

  private apply(w: Write): void {
    const k = key(w);
    if (w.after) this.state.set(k, w.after);
    else this.state.delete(k);
    if (w.resource === CLAIMS) {
      const pool = (w.after ?? w.before)?.metadata.labels?.[K.pool] ?? '';
      let claims = this.claimsOf.get(pool);
      if (!claims) this.claimsOf.set(pool, (claims = new Set()));
      if (w.after) claims.add(k);
      else claims.delete(k);
    }
    if (!w.after) {
      this.operator.delete(k);
      return;
    }
    if (w.resource === CLAIMS && w.verb === 'delete' && this.isController(w.actor)) {
      const pool = w.before?.metadata.labels?.[K.pool] ?? '';
      let s = this.deleted.get(pool);
      if (!s) this.deleted.set(pool, (s = new Set()));
      s.add(w.name);
    }
    if (this.isController(w.actor)) return;
    // Who set each annotation and the cordon last: the operator's become protected, anyone else's are not.
    const before: Record<string, string> = { ...ann(w.before), [CORDON]: String(unschedulable(w.before)) };
    const after: Record<string, string> = { ...ann(w.after), [CORDON]: String(unschedulable(w.after)) };
    let owned = this.operator.get(k);
    for (const name of new Set([...Object.keys(before), ...Object.keys(after)])) {
      if (before[name] === after[name]) continue;
      const value = after[name];
      // A value set while our marker for it stands is one the API cannot tell from ours (docs/safety.md, S3:
      // "What the API cannot tell apart"): our clean-up lifts it, by design, so it is not protected.
      const marker = name === CORDON ? K.cordoned : name === DO_NOT_DISRUPT ? K.owned : null;
      const ours = marker !== null && ann(w.after)[marker] !== undefined;
      if (this.isOperator(w.actor) && value !== undefined && !(name === CORDON && value === 'false') && !ours) {
        if (!owned) this.operator.set(k, (owned = new Map<string, string>()));
        owned.set(name, value);
      } else owned?.delete(name);
    }
  }

  private afterwards(w: Write): Violation[] {
    if (w.resource !== CLAIMS) return [];
    const pool = (w.after ?? w.before)?.metadata.labels?.[K.pool];
    if (!pool) return [];
    // A claim whose pool label changed stays in its old pool's set; its label tells.
    const inFlight = [...(this.claimsOf.get(pool) ?? [])]
      .map((k) => this.state.get(k))
      .filter((o): o is Obj => o !== undefined && o.metadata.labels?.[K.pool] === pool)
      .filter((o) => ['pending', 'draining'].includes(ann(o)[K.state] ?? ''));
    if (inFlight.length <= 1) return [];
    return [
      {
        invariant: 'S1',
        seq: w.seq,
        message:
          `pool ${pool} has ${inFlight.length} rotations in flight: ` +
          `${inFlight.map((o) => `${o.metadata.name}=${ann(o)[K.state]}`).join(', ')} (write #${w.seq} by ${w.actor})`,
      },
    ];
  }
}

export interface EndState {
  pools: readonly Obj[];
  claims: readonly Obj[];
  nodes: readonly Obj[];
  /** Pods in the controller's namespace. */
  pods: readonly Obj[];
  /** Claims that were due for rotation at the start (and not protected by an operator). */
  due: string[];
}

/** With faults off and the run long enough: everything due was rotated or rolled back, and nothing of ours is left. */
export function liveness(s: EndState): Violation[] {
  const out: Violation[] = [];
  const v = (message: string): void => void out.push({ invariant: 'liveness', message });
  for (const p of s.pools)
    for (const k of Object.keys(ann(p)))
      if (k.startsWith(`${P}active-rotation`) || k === `${P}draining-at` || k === `${P}surge-wait`)
        v(`NodePool ${p.metadata.name} still carries ${k}=${ann(p)[k]}`);
  for (const c of s.claims)
    if (['pending', 'draining'].includes(ann(c)[K.state] ?? ''))
      v(`NodeClaim ${c.metadata.name} is still ${ann(c)[K.state]}`);
  for (const p of s.pods)
    if (p.metadata.labels?.[K.surgeFor] !== undefined) v(`placeholder ${p.metadata.name} is left`);
  for (const n of s.nodes)
    for (const k of [K.surgeFor, K.owned, K.cordoned])
      if (ann(n)[k] !== undefined) v(`Node ${n.metadata.name} still carries ${k}`);
  const claims = new Map(s.claims.map((c) => [c.metadata.name, c]));
  for (const name of s.due) {
    const c = claims.get(name);
    if (c && ann(c)[K.state] !== 'failed' && ann(c)[K.state] !== 'expired')
      v(`NodeClaim ${name} was due at the start and is neither replaced nor rolled back`);
  }
  return out;
}
