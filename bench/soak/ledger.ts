// The soak's ledger and criteria, pure: computed from what the cluster recorded — the apiserver's audit log of
// the controllers' writes (Request level: bodies and the apiserver's own timestamps), the NodeClaims as polled
// (creation, Ready, deletion, disappearance), Karpenter's log and metrics — and from the chaos the run injected,
// never from the controller's own account of itself (its logs and metrics are not read here).
import { A } from '../../src/engine/annotations.js';
import { medianMax } from '../controller/measure.js';
import type { AuditEvent } from '../../test/support/parity.js';
import type { ChaosKind, PoolPlan, PoolRole } from './plan.js';

/** A NodeClaim as the poller saw it over the run. Times in ms since the epoch. */
export interface ClaimRecord {
  name: string;
  pool: string;
  createdAt: number;
  /** creationTimestamp + expireAfter: when Karpenter expires it. */
  deadline: number;
  /** Its Ready condition's lastTransitionTime, once True. */
  readyAt?: number;
  /** metadata.deletionTimestamp, once set. */
  deletedAt?: number;
  /** The first poll that no longer found it. */
  goneAt?: number;
}

/** A marker an operator (the chaos) set and took back: the controller must not take it away meanwhile. */
export interface OperatorMarker {
  object: { resource: 'nodes' | 'nodeclaims' | 'pods' | 'nodepools'; name: string; namespace?: string };
  /** An annotation key, or "cordon" (spec.unschedulable). */
  key: string;
  from: number;
  until: number;
}

/** One chaos event as executed: its start and end as they happened. */
export interface ChaosRecord {
  kind: ChaosKind;
  start: number;
  end: number;
  detail: string;
  /** When the controller was back to steady state after it (a leader, every running replica ready, no leak). */
  steadyAt?: number;
}

/** A leak seen by the poller: something of ours with no rotation in flight to explain it. */
export interface LeakSample {
  at: number;
  what: string;
}

/** A poll of a pool's workload: how many of its Pods were Ready against the Deployment's replicas. */
export interface LoadSample {
  at: number;
  pool: string;
  ready: number;
  desired: number;
}

/** The derived figures of a pool (explain's), which the criteria judge the run by. */
export interface PoolFigures {
  name: string;
  role: PoolRole;
  periodS: number;
  rotationBoundS: number;
  leadTimeS: number;
  ageThresholdS: number;
  chances: number;
}

export interface SoakRecords {
  t0: number;
  tEnd: number;
  pools: PoolFigures[];
  /** Open intervals of each pool's windows over [t0, tEnd] (always-open pools: one interval). */
  windows: Record<string, { start: number; end: number }[]>;
  claims: ClaimRecord[];
  /** The controllers' write requests (every replica's ServiceAccount), in the run. */
  audit: AuditEvent[];
  /** Replica ServiceAccount user name → the Lease holder identities it wrote. */
  replicas: string[];
  /** NodeClaims Karpenter's log says it deleted as expired. */
  expiredByLog: { claim: string; at: number }[];
  /** karpenter_nodeclaims_disrupted_total increments over the run, by pool and reason. */
  disrupted: { pool: string; reason: string; count: number }[];
  chaos: ChaosRecord[];
  markers: OperatorMarker[];
  leaks: LeakSample[];
  load: LoadSample[];
  /** Seconds the controller may take to be back to steady state after a fault. */
  steadyBoundS: number;
}

export type Outcome = 'completed' | 'rolled back' | 'in flight';

export interface Rotation {
  pool: string;
  claim: string;
  mode: 'surge' | 'forceful-fallback';
  outcome: Outcome;
  start: number;
  ageAtStartS: number;
  surgeClaim?: string;
  /** start → the surge claim Ready. */
  surgeWaitS?: number;
  /** The controller's DELETE of the claim → the claim gone. */
  drainS?: number;
  /** start → the anchor cleared. */
  totalS?: number;
  /** deadline − the claim gone (or − the anchor cleared when it stays). */
  marginS?: number;
}

export interface Criterion {
  id: string;
  title: string;
  pass: boolean;
  observed: string;
}

const ts = (e: AuditEvent): number => Date.parse(e.stageTimestamp ?? '');
const annotationsOf = (body: unknown): Record<string, string | null> =>
  (body as { metadata?: { annotations?: Record<string, string | null> } } | undefined)?.metadata?.annotations ?? {};
const ok = (e: AuditEvent): boolean => (e.responseStatus?.code ?? 0) < 300;
const is = (e: AuditEvent, resource: string, verb?: string): boolean =>
  e.objectRef?.resource === resource && e.objectRef.subresource === undefined && (!verb || e.verb === verb);

/** The rotations, one per anchor the controllers set on a NodePool, from their audited patches. */
export function rotations(r: SoakRecords): Rotation[] {
  const claims = new Map(r.claims.map((c) => [c.name, c]));
  const writes = r.audit.filter(ok).sort((a, b) => ts(a) - ts(b));
  const open = new Map<string, Rotation>();
  const out: Rotation[] = [];
  const surgeOf = new Map<string, string>();
  const deletedAt = new Map<string, number>();
  for (const e of writes) {
    const name = e.objectRef?.name ?? '';
    if (is(e, 'nodeclaims', 'patch')) {
      const surgeFor = annotationsOf(e.requestObject)[A.surgeFor];
      if (typeof surgeFor === 'string' && !surgeOf.has(surgeFor)) surgeOf.set(surgeFor, name);
    }
    if (is(e, 'nodeclaims', 'delete') && !deletedAt.has(name)) deletedAt.set(name, ts(e));
    if (!is(e, 'nodepools', 'patch')) continue;
    const ann = annotationsOf(e.requestObject);
    const current = open.get(name);
    const anchor = ann[A.activeRotation];
    if (current && (anchor === null || (typeof anchor === 'string' && anchor !== current.claim))) {
      const done = ann[A.lastRotationAt] !== undefined && ann[A.lastRotationAt] !== null;
      close(current, ts(e), done ? 'completed' : 'rolled back');
      open.delete(name);
    }
    const now = open.get(name);
    if (typeof anchor === 'string' && !now) {
      const c = claims.get(anchor);
      const rot: Rotation = {
        pool: name,
        claim: anchor,
        mode: 'surge',
        outcome: 'in flight',
        start: ts(e),
        ageAtStartS: c ? (ts(e) - c.createdAt) / 1000 : NaN,
      };
      open.set(name, rot);
      out.push(rot);
    }
    const mode = ann[A.rotationMode];
    const target = open.get(name);
    if (target && mode === 'forceful-fallback') target.mode = 'forceful-fallback';
  }
  for (const rot of out) {
    const c = claims.get(rot.claim);
    const surge = surgeOf.get(rot.claim);
    if (surge) {
      rot.surgeClaim = surge;
      const ready = claims.get(surge)?.readyAt;
      if (ready !== undefined) rot.surgeWaitS = (ready - rot.start) / 1000;
    }
    // The drain is the completed rotation's own (a rolled-back attempt deleted nothing).
    const del = deletedAt.get(rot.claim);
    if (rot.outcome === 'completed' && del !== undefined && del >= rot.start && c?.goneAt !== undefined)
      rot.drainS = (c.goneAt - del) / 1000;
    const end = c?.goneAt ?? (rot.totalS !== undefined ? rot.start + rot.totalS * 1000 : undefined);
    if (c && end !== undefined && rot.outcome === 'completed') rot.marginS = (c.deadline - end) / 1000;
  }
  return out;

  function close(rot: Rotation, at: number, outcome: Outcome): void {
    rot.totalS = (at - rot.start) / 1000;
    rot.outcome = outcome;
  }
}

/** Whether `at` lies in one of `pool`'s open windows (a write lands a pass's latency after its decision). */
function inWindow(r: SoakRecords, pool: string, at: number, slackMs: number): boolean {
  return (r.windows[pool] ?? []).some((w) => w.start <= at && at <= w.end + slackMs);
}

/** Judges the run: every criterion, each with what was observed. */
export function criteria(r: SoakRecords, rots: Rotation[] = rotations(r)): Criterion[] {
  const out: Criterion[] = [];
  const add = (id: string, title: string, pass: boolean, observed: string): void =>
    void out.push({ id, title, pass, observed });
  const figures = new Map(r.pools.map((p) => [p.name, p]));
  const roleOf = (pool: string): PoolRole | undefined => figures.get(pool)?.role;
  const claims = new Map(r.claims.map((c) => [c.name, c]));

  // 1. Karpenter force-expires no node the math says can be saved.
  const expired = new Set<string>(r.expiredByLog.map((x) => x.claim));
  const metricExpired = r.disrupted.filter((d) => d.reason === 'expired').reduce((n, d) => n + d.count, 0);
  const unsaved = [...expired].filter((name) => savable(r, claims.get(name)));
  add(
    'no-expiry',
    'Karpenter force-expires no node that could be saved',
    // The metric counts what the log names; more counted than named is an expiry nobody can place: a failure.
    unsaved.length === 0 && metricExpired <= expired.size,
    `expired by Karpenter's log: ${expired.size} (${unsaved.length} savable${
      unsaved.length ? `: ${unsaved.join(', ')}` : ''
    }); karpenter_nodeclaims_disrupted_total{reason="expired"}: ${metricExpired}`,
  );

  // 2. Enough rotations: at least 5 an hour in every tight pool.
  const hours = (r.tEnd - r.t0) / 3_600_000;
  const tight = r.pools.filter((p) => p.role === 'tight');
  const rates = tight.map((p) => {
    const n = rots.filter((x) => x.pool === p.name && x.outcome === 'completed').length;
    return { pool: p.name, n, rate: n / hours };
  });
  add(
    'rate',
    'at least 5 completed rotations an hour in every tight pool',
    rates.length > 0 && rates.every((x) => x.rate >= 5),
    rates.map((x) => `${x.pool} ${x.n} (${x.rate.toFixed(1)}/h)`).join(', '),
  );

  // 3. Every rotation starts inside its pool's window.
  const outside = rots.filter((x) => !inWindow(r, x.pool, x.start, 5_000));
  add(
    'in-window',
    'every rotation starts inside a maintenance window',
    outside.length === 0,
    `${rots.length - outside.length}/${rots.length} inside` +
      (outside.length ? `; outside: ${outside.map(label).join(', ')}` : ''),
  );

  // 4. Every completed graceful rotation ends before its deadline.
  const graceful = rots.filter((x) => x.mode === 'surge' && x.outcome === 'completed');
  const margins = graceful.map((x) => x.marginS).filter((m): m is number => m !== undefined);
  const late = graceful.filter((x) => x.marginS === undefined || x.marginS <= 0);
  add(
    'margin',
    'deadline margin > 0 for every completed graceful rotation',
    graceful.length > 0 && late.length === 0,
    `${graceful.length} graceful; min ${fmt(Math.min(...margins))} s, median ${fmt(medianMax(margins).median)} s${
      late.length ? `; late or unmeasured: ${late.map(label).join(', ')}` : ''
    }`,
  );

  // 5. The fallback fires only where it must: in the fallback pool, in its last chance, in-window; and it fires.
  const fallbacks = rots.filter((x) => x.mode === 'forceful-fallback');
  const misplaced = fallbacks.filter((x) => {
    const f = figures.get(x.pool);
    const c = claims.get(x.claim);
    if (!f || f.role !== 'fallback' || !c) return true;
    // Its last chance: no window start left before deadline − t_rot after this one (tick P, 10 s of latency).
    return c.deadline - x.start > (f.rotationBoundS + f.periodS + 10) * 1000;
  });
  const fallbackPools = r.pools.filter((p) => p.role === 'fallback').map((p) => p.name);
  const fired = fallbacks.filter((x) => fallbackPools.includes(x.pool) && x.outcome === 'completed').length;
  add(
    'fallback',
    'forceful fallback only in the fallback pool, only in its last chance, and it fires there',
    misplaced.length === 0 && (fallbackPools.length === 0 || fired > 0),
    `${fallbacks.length} fallbacks (${fired} completed in ${fallbackPools.join(', ') || 'no fallback pool'})${
      misplaced.length ? `; misplaced: ${misplaced.map(label).join(', ')}` : ''
    }`,
  );

  // 6. Never two rotations of a pool at once; never a controller delete while another of the pool still drains.
  const overlaps: string[] = [];
  for (const p of r.pools) {
    const mine = rots.filter((x) => x.pool === p.name).sort((a, b) => a.start - b.start);
    for (let i = 1; i < mine.length; i++) {
      const prev = mine[i - 1] as Rotation;
      const end = prev.totalS === undefined ? Infinity : prev.start + prev.totalS * 1000;
      if ((mine[i] as Rotation).start < end) overlaps.push(`${label(prev)} & ${label(mine[i] as Rotation)}`);
    }
  }
  const deletes = r.audit.filter((e) => ok(e) && is(e, 'nodeclaims', 'delete')).sort((a, b) => ts(a) - ts(b));
  for (const [i, d] of deletes.entries()) {
    const pool = claims.get(d.objectRef?.name ?? '')?.pool;
    for (const earlier of deletes.slice(0, i)) {
      const c = claims.get(earlier.objectRef?.name ?? '');
      if (c && c.pool === pool && c.name !== d.objectRef?.name && (c.goneAt ?? Infinity) > ts(d))
        overlaps.push(`delete of ${d.objectRef?.name} while ${c.name} still drained`);
    }
  }
  add('serial', 'never two rotations in a pool at once', overlaps.length === 0, overlaps.join('; ') || 'none');

  // 7. Every write of a replica lands while the Lease names it (the apiserver's own order of the Lease writes).
  const nonLeader = writesByNonLeader(r);
  add(
    'fenced',
    'never a write by a replica that is not the Lease holder',
    nonLeader.length === 0,
    `${r.audit.filter((e) => ok(e) && e.objectRef?.resource !== 'leases').length} writes checked${
      nonLeader.length ? `; by a non-leader: ${nonLeader.slice(0, 5).join('; ')}` : ''
    }`,
  );

  // 8. No operator marker taken away by a controller.
  const removed = markersRemoved(r);
  add(
    'operator-markers',
    "no operator's marker (cordon, do-not-disrupt, freeze) removed by the controller",
    removed.length === 0,
    `${r.markers.length} markers set${removed.length ? `; removed: ${removed.join('; ')}` : ''}`,
  );

  // 9. Nothing of ours left behind: at the end, and past the settling bound after every fault.
  add(
    'no-leaks',
    'no placeholder or marker of ours without a rotation, after every fault and at the end',
    r.leaks.length === 0,
    r.leaks.length === 0
      ? 'none'
      : r.leaks
          .slice(0, 5)
          .map((l) => `${iso(l.at)} ${l.what}`)
          .join('; '),
  );

  // 10. Back to steady state within the bound after every fault.
  const slow = r.chaos.filter((c) => c.steadyAt === undefined || c.steadyAt - c.end > r.steadyBoundS * 1000);
  const recover = r.chaos.filter((c) => c.steadyAt !== undefined).map((c) => ((c.steadyAt as number) - c.end) / 1000);
  add(
    'steady',
    `back to steady state within ${r.steadyBoundS} s after every fault`,
    slow.length === 0,
    `${r.chaos.length} faults; recovery max ${fmt(Math.max(0, ...recover))} s${
      slow.length ? `; not back: ${slow.map((c) => `${c.kind} at ${iso(c.start)}`).join(', ')}` : ''
    }`,
  );

  // 11. The workload stays up: never more than one Pod of an app down (its PDB) at any poll.
  const short = r.load.filter((l) => l.ready < l.desired - 1);
  add(
    'load',
    'the workload present at every poll (Ready ≥ replicas − 1, the PDB)',
    r.load.length > 0 && short.length === 0,
    `${r.load.length} polls${
      short.length
        ? `; short: ${short
            .slice(0, 5)
            .map((l) => `${l.pool} ${l.ready}/${l.desired} at ${iso(l.at)}`)
            .join(', ')}`
        : ''
    }`,
  );

  // 12. Karpenter disrupts nothing else of ours: no drift, no underutilised consolidation.
  const other = r.disrupted.filter((d) => d.reason !== 'expired' && d.reason !== 'empty' && d.count > 0);
  add(
    'no-other-disruption',
    'no Karpenter disruption but of empty nodes (no drift, no consolidation of busy ones)',
    other.length === 0,
    other.map((d) => `${d.pool} ${d.reason} ${d.count}`).join(', ') || 'none',
  );

  // 13. The controllers rotated only the soak's pools (the cluster's others are not theirs to touch).
  const stray = rots.filter((x) => roleOf(x.pool) === undefined);
  add('pools', 'rotations only in the soak pools', stray.length === 0, stray.map(label).join(', ') || 'none');
  return out;
}

/**
 * A claim the math says could have been saved: it was never held by an operator (do-not-disrupt on it or its
 * node, its pool frozen or its policy deleted) for as long as its chances' slack (K · P) within its lead time.
 */
export function savable(r: SoakRecords, c: ClaimRecord | undefined): boolean {
  if (!c) return false;
  const f = r.pools.find((p) => p.name === c.pool);
  if (!f) return false;
  const from = c.createdAt + f.ageThresholdS * 1000;
  const to = c.deadline - f.rotationBoundS * 1000;
  let blocked = 0;
  for (const m of r.markers) {
    const about =
      (m.object.resource === 'nodeclaims' && m.object.name === c.name) ||
      (m.object.resource === 'nodepools' && m.object.name === c.pool);
    if (!about) continue;
    blocked += Math.max(0, Math.min(m.until, to) - Math.max(m.from, from));
  }
  for (const x of r.chaos)
    if (x.kind === 'delete-policy' && x.detail.includes(c.pool))
      blocked += Math.max(0, Math.min(x.end, to) - Math.max(x.start, from));
  return blocked < f.chances * f.periodS * 1000;
}

/** Writes (not the Lease's) by a replica while the Lease, in the apiserver's order of its writes, named another. */
export function writesByNonLeader(r: SoakRecords): string[] {
  const sorted = r.audit.filter(ok).sort((a, b) => ts(a) - ts(b));
  let holderUser: string | null = null;
  const userOf = new Map<string, string>();
  const bad: string[] = [];
  for (const e of sorted) {
    const user = e.user.username;
    if (e.objectRef?.resource === 'leases') {
      const holder = (e.requestObject as { spec?: { holderIdentity?: string } } | undefined)?.spec?.holderIdentity;
      if (holder) userOf.set(holder, user);
      holderUser = holder ? (userOf.get(holder) ?? user) : null;
      continue;
    }
    if (user !== holderUser)
      bad.push(`${e.verb} ${e.objectRef?.resource}/${e.objectRef?.name} by ${user} at ${e.stageTimestamp}`);
  }
  return bad;
}

/** Operator markers a controller's write took away while they stood. */
export function markersRemoved(r: SoakRecords): string[] {
  const bad: string[] = [];
  for (const e of r.audit.filter(ok)) {
    if (e.verb !== 'patch' && e.verb !== 'update') continue;
    const at = ts(e);
    const body = e.requestObject as {
      metadata?: { annotations?: Record<string, unknown> };
      spec?: Record<string, unknown>;
    };
    for (const m of r.markers) {
      if (at < m.from || at > m.until) continue;
      if (e.objectRef?.resource !== m.object.resource || e.objectRef.name !== m.object.name) continue;
      const removes =
        m.key === 'cordon'
          ? body?.spec !== undefined && 'unschedulable' in body.spec && body.spec.unschedulable !== true
          : body?.metadata?.annotations !== undefined &&
            m.key in body.metadata.annotations &&
            body.metadata.annotations[m.key] === null;
      if (removes) bad.push(`${m.key} on ${m.object.resource}/${m.object.name} at ${e.stageTimestamp}`);
    }
  }
  return bad;
}

const label = (x: Rotation): string => `${x.pool}/${x.claim}@${iso(x.start)}`;
const iso = (ms: number): string => new Date(ms).toISOString();
const fmt = (x: number): string => (Number.isFinite(x) ? x.toFixed(1) : '—');

export type { PoolPlan };
