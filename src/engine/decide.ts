// decide(snapshot, now) → actions with reasons. Per NodePool: drive the rotation in flight, or start one.
// Within one call the engine applies its own actions in memory and decides again until nothing changes,
// so one decision carries a transition through to the next wait (and deciding again after applying the
// actions yields nothing new).
import type { RotationPolicy } from '../generated/api-types.js';
import { nodePoolOf, NODEPOOL_LABEL, type NodeClaim, type NodePool } from '../karpenter/types.js';
import type { Node, Pod } from '../kube/types.js';
import { derive } from '../derivation/derive.js';
import { finding, type Finding } from '../derivation/findings.js';
import { policyErrors } from '../policy/validity.js';
import { policyParams, type PolicyParams } from '../derivation/params.js';
import { shortLeadClaims } from '../derivation/short-lead.js';
import { governingPolicy } from '../policy/resolve.js';
import { occurrences, union, type Interval, type WindowFigures } from '../schedule/windows.js';
import { figuresCache } from '../schedule/figures-cache.js';
import { isValidTimezone } from '../schedule/zone.js';
import { boundedCache } from '../util/bounded-cache.js';
import { canonicalJson } from '../util/canonical.js';
import { A, DRAINING, parseTime } from './annotations.js';
import { eligibleFrom, retryAt, retryCount } from './candidates.js';
import { readFreezes } from './freezes.js';
import { indexSnapshot } from './cluster-index.js';
import { isPlaceholder, placeholderKey, surgeForLabelValue } from './identity.js';
import { missingPriorityClass, placeholderPriorityClass } from './placeholder.js';
import type { PoolContext } from './context.js';
import { advance } from './rotation.js';
import { candidates, start } from './start.js';
import { apply, changes } from './apply.js';
import type { Action, Decision, Mode, PoolDecision, PoolReport, Snapshot } from './types.js';

const DAY = 86_400_000;

/** Window figures per (windows, calendar day): taken over the coming year from the start of the UTC day. */
const figuresMemo = figuresCache(4096);
function figuresFor(p: PolicyParams, now: number): WindowFigures | null {
  if (p.windows.some((w) => !isValidTimezone(w.timezone))) return null;
  return figuresMemo.at(Math.floor(now / DAY) * DAY)(p.windows);
}

type Checked = { params: PolicyParams | null; invalid: Finding | null };
const paramsMemo = new WeakMap<RotationPolicy, Checked>();
/** A valid policy's numbers, per spec object (a policy whose status moved keeps its spec: policy/validity.ts). */
const numbersMemo = new WeakMap<object, Checked>();
/**
 * The policy's numbers, or null with an InvalidPolicy finding when the policy fails its own schema (and its CEL
 * rules' offline equivalents) or cannot be turned into numbers. Such a policy governs its NodePools (nothing else
 * may) but never rotates them, and a rotation it governs in flight is rolled back (issue 17: a policy that an
 * older CRD admitted, say, is not obeyed as if valid). Objects are never mutated, so one check per object.
 */
function paramsOf(policy: RotationPolicy): Checked {
  let hit = paramsMemo.get(policy);
  if (hit) return hit;
  const errors = policyErrors(policy);
  const first = errors[0];
  if (first) {
    const more = errors.length > 1 ? ` (and ${errors.length - 1} more)` : '';
    hit = {
      params: null,
      invalid: finding(
        'InvalidPolicy',
        first.path,
        `found ${first.found}; allowed: ${first.allowed}${more}. The policy rotates nothing until it is fixed.`,
      ),
    };
  } else {
    hit = numbersMemo.get(policy.spec);
    if (!hit) numbersMemo.set(policy.spec, (hit = numbers(policy)));
  }
  paramsMemo.set(policy, hit);
  return hit;
}

function numbers(policy: RotationPolicy): Checked {
  try {
    return { params: policyParams(policy.spec), invalid: null };
  } catch (e) {
    const message = `${(e as Error).message}. The policy rotates nothing until it is fixed.`;
    return { params: null, invalid: finding('InvalidPolicy', 'spec', message) };
  }
}

interface Freeze {
  /** Active freeze end: the freeze annotation, or a scheduled freeze of the policy covering now. */
  until: number | null;
  /** Every readable freeze, merged. */
  spans: Interval[];
  /** A freeze that cannot be read: it freezes (fail closed) until someone fixes it, and says why. */
  unreadable: string | null;
}

function freezeOf(pool: NodePool, policy: RotationPolicy | null, now: number, wakeups: number[]): Freeze {
  const { spans, unreadable } = readFreezes(
    pool.metadata.annotations?.[A.freeze],
    policy && {
      name: policy.metadata.name,
      freezes: policy.spec.freezes ?? [],
      recurringFreezes: policy.spec.recurringFreezes ?? [],
    },
    now,
  );
  let until: number | null = null;
  for (const f of spans) {
    if (f.start > now) wakeups.push(f.start);
    if (f.start <= now && now < f.end) until = Math.max(until ?? 0, f.end);
  }
  if (until !== null) wakeups.push(until);
  return { until, unreadable, spans: union(spans) };
}

/**
 * Each NodePool's world: its claims, their nodes, nodes labelled with it or marked for its claims, the pods
 * on those nodes and its placeholders. Built for all pools in one pass, so a decision stays linear in size.
 */
function poolSlices(s: Snapshot): Map<string, Snapshot> {
  const out = new Map<string, Snapshot>();
  // One pool: the snapshot is already that pool's world.
  if (s.nodePools.length === 1) return new Map([[(s.nodePools[0] as NodePool).metadata.name, s]]);
  const claimsOf = new Map<string, NodeClaim[]>();
  const poolOfClaim = new Map<string, string>();
  const poolOfNodeName = new Map<string, string>();
  const poolOfProvider = new Map<string, string>();
  for (const c of s.nodeClaims) {
    const pool = nodePoolOf(c);
    if (!pool) continue;
    push(claimsOf, pool, c);
    poolOfClaim.set(c.metadata.name, pool);
    if (c.status?.nodeName) poolOfNodeName.set(c.status.nodeName, pool);
    if (c.status?.providerID) poolOfProvider.set(c.status.providerID, pool);
  }
  const nodesOf = new Map<string, Node[]>();
  const poolOfNode = new Map<string, string>();
  for (const n of s.nodes) {
    const pool =
      poolOfNodeName.get(n.metadata.name) ??
      (n.spec.providerID ? poolOfProvider.get(n.spec.providerID) : undefined) ??
      n.metadata.labels?.[NODEPOOL_LABEL] ??
      poolOfClaim.get(n.metadata.annotations?.[A.surgeFor] ?? '');
    if (!pool) continue;
    push(nodesOf, pool, n);
    poolOfNode.set(n.metadata.name, pool);
  }
  const pools = new Set(s.nodePools.map((p) => p.metadata.name));
  const poolOfKey = new Map([...poolOfClaim].map(([claim, pool]) => [surgeForLabelValue(claim), pool]));
  // A placeholder names its pool in a label; failing that, its rotation's claim does.
  const placeholderPool = (p: Pod): string | undefined => {
    const labelled = p.metadata.labels?.[NODEPOOL_LABEL];
    return labelled !== undefined && pools.has(labelled) ? labelled : poolOfKey.get(placeholderKey(p) ?? '');
  };
  const podsOf = new Map<string, Pod[]>();
  for (const p of s.pods) {
    const onNode = p.spec.nodeName ? poolOfNode.get(p.spec.nodeName) : undefined;
    // A placeholder belongs to its rotation's pool wherever it landed (surge_ready then rejects a foreign host).
    const pool = isPlaceholder(p) ? (placeholderPool(p) ?? onNode) : onNode;
    if (pool) push(podsOf, pool, p);
  }
  for (const pool of s.nodePools) {
    const name = pool.metadata.name;
    out.set(name, {
      ...s,
      nodePools: [pool],
      nodeClaims: claimsOf.get(name) ?? [],
      nodes: nodesOf.get(name) ?? [],
      pods: podsOf.get(name) ?? [],
    });
  }
  return out;
}

function push<V>(map: Map<string, V[]>, key: string, value: V): void {
  const list = map.get(key);
  if (list) list.push(value);
  else map.set(key, [value]);
}

type Static = Omit<PoolContext, 'snapshot' | 'idx' | 'pool' | 'wakeups'> & {
  wakeups: number[];
  report: Omit<PoolReport, 'candidates' | 'inProgress' | 'activeRotation' | 'mode' | 'phase' | 'drainStuck' | 'idle'>;
};

/**
 * What does not change while one decision runs: governance, the policy's numbers, window figures and
 * membership, the findings, the freeze (the engine never writes it) and the ShortLead census.
 */
function staticContext(s: Snapshot, pool: NodePool, policies: RotationPolicy[], now: number): Static {
  const gov = governingPolicy(pool, policies);
  const policy = gov.kind === 'governed' ? gov.policy : null;
  const checked = policy ? paramsOf(policy) : null;
  const params = checked?.params ?? null;
  const windows = params ? figuresFor(params, now) : null;
  const wakeups: number[] = [];
  const claims = s.nodeClaims;
  const derived =
    params && windows
      ? derive({
          params,
          pool,
          windows,
          nodeCount: claims.filter((x) => !x.metadata.deletionTimestamp).length,
          nodeClaims: claims,
          now,
        })
      : null;
  // A missing placeholder PriorityClass blocks every start as surely as a schedule that cannot work.
  const noClass = policy ? missingPriorityClass(s, policy) : null;
  const derivation = derived && noClass ? { ...derived, findings: [...derived.findings, noClass] } : derived;
  const calendar = params && windows ? calendarFor(params, now) : null;
  const open = calendar ? calendar.some((iv) => iv.start <= now && now < iv.end) : false;
  const next = calendar?.find((iv) => iv.end > now);
  if (next) wakeups.push(next.start > now ? next.start : next.end);
  const opensAt = calendar?.find((iv) => iv.start > now)?.start ?? null;
  const frozen = freezeOf(pool, policy, now, wakeups);
  const shortLead =
    params && windows && !windows.empty
      ? shortLeadClaims({
          claims,
          minRotationChances: params.minRotationChances,
          periodSeconds: windows.periodSeconds,
          readyTimeout: params.readyTimeout,
        }).map((x) => x.claim.metadata.name)
      : [];
  return {
    now,
    policy,
    params,
    windows,
    derivation,
    windowOpen: open,
    priorityClassMissing: noClass && policy ? placeholderPriorityClass(policy) : null,
    frozenUntil: frozen.until,
    freezeUnreadable: frozen.unreadable,
    freezeSpans: frozen.spans,
    wakeups,
    report: {
      nodePool: pool.metadata.name,
      policy: policy?.metadata.name ?? null,
      governance: gov.kind,
      conflictingPolicies: gov.kind === 'conflict' ? gov.policies : [],
      windowOpen: open,
      // An occurrence still open at the calendar's edge may close later or never (24/7): not known, so null.
      windowClosesAt: open && next && next.end < calendarEnd(now) ? next.end : null,
      windowOpensAt: opensAt,
      frozenUntil: frozen.until,
      freezeUnreadable: frozen.unreadable,
      lastRotationAt: parseTime(pool.metadata.annotations?.[A.lastRotationAt]),
      lastFailureAt: parseTime(pool.metadata.annotations?.[A.lastFailureAt]),
      shortLead,
      retryCountMax: Math.max(0, ...claims.map(retryCount)),
      figures: derivation?.figures ?? null,
      findings: checked?.invalid ? [checked.invalid] : (derivation?.findings ?? []),
    },
  };
}

/**
 * Occurrences around now (a day back, two weeks ahead), per windows and calendar day: membership and the next opening.
 */
const calendarMemo = boundedCache<string, { start: number; end: number }[]>(4096);
const calendarEnd = (now: number): number => Math.floor(now / DAY) * DAY + 16 * DAY;
function calendarFor(p: PolicyParams, now: number): { start: number; end: number }[] {
  const day = Math.floor(now / DAY) * DAY;
  return calendarMemo.get(`${day}|${canonicalJson(p.windows)}`, () =>
    occurrences(p.windows, day - DAY, calendarEnd(now)),
  );
}

interface Step {
  actions: Action[];
  report: PoolReport;
  wakeups: number[];
  /** Nodes whose Pods this step needed and did not have: its actions are withheld. */
  missingPods: string[];
}

function step(s: Snapshot, poolName: string, st: Static): Step {
  const pool = s.nodePools.find((p) => p.metadata.name === poolName) as NodePool;
  const { report, ...rest } = st;
  const c: PoolContext = { ...rest, snapshot: s, idx: indexSnapshot(s), pool, wakeups: [...st.wakeups] };
  const anchor = pool.metadata.annotations?.[A.activeRotation];
  // With a rotation in flight no candidate is picked; decidePool counts them once, on the final state.
  const eligible = anchor ? { count: 0, first: undefined, all: [] } : candidates(c);
  const base = {
    ...report,
    candidates: eligible.count,
    inProgress: false,
    activeRotation: null,
    mode: null as Mode | null,
    phase: null as PoolReport['phase'],
    drainStuck: false,
    idle: null as string | null,
  };
  const withheld = (r: PoolReport): Step | null => {
    const missing = c.idx.missingPods();
    if (missing.length === 0) return null;
    const idle = `waiting for the Pods of ${missing.join(', ')} (not in the snapshot)`;
    return { actions: [], wakeups: c.wakeups, report: { ...r, idle }, missingPods: missing };
  };
  if (anchor) {
    const progress = advance(c, anchor);
    const mode: Mode =
      pool.metadata.annotations?.[A.rotationMode] === 'forceful-fallback' ? 'forceful-fallback' : 'surge';
    const report = {
      ...base,
      inProgress: true,
      activeRotation: anchor,
      mode,
      phase:
        pool.metadata.annotations?.[A.activeRotationState] === DRAINING ? ('draining' as const) : ('pending' as const),
      drainStuck: progress.drainStuck,
      idle: progress.waiting,
    };
    return withheld(report) ?? { actions: progress.actions, wakeups: c.wakeups, report, missingPods: [] };
  }
  const started = start(c, eligible);
  const blocked = withheld({ ...base, idle: started.idle });
  if (blocked) return blocked;
  // Only when nothing but the lack of a candidate holds a start does the next claim's eligibility matter;
  // otherwise the blocking gate has already named its own wake-up (window opening, cooldown end, …).
  if (started.idle === 'no candidate' && c.params && c.windows) {
    for (const claim of c.idx.claimsOf(poolName)) {
      const from = eligibleFrom(claim, c.params, c.windows.periodSeconds);
      if (from !== null && from >= c.now) c.wakeups.push(from + 1);
      const retry = retryAt(claim, c.params);
      if (retry !== null && retry > c.now) c.wakeups.push(retry);
    }
  }
  return { actions: started.actions, wakeups: c.wakeups, report: { ...base, idle: started.idle }, missingPods: [] };
}

/** At most this many transitions in one decision (start → pending → …) before the next wait. */
const MAX_STEPS = 8;

function decidePool(slice: Snapshot, poolName: string, policies: RotationPolicy[], now: number): PoolDecision {
  let state = slice;
  const st = staticContext(state, state.nodePools[0] as NodePool, policies, now);
  const actions: Action[] = [];
  let last: Step | null = null;
  for (let i = 0; i < MAX_STEPS; i++) {
    last = step(state, poolName, st);
    // Keep the writes that change something; events and observations ride along with a real transition.
    const effective = last.actions.filter((a) => a.type === 'event' || a.type === 'observe' || changes(state, a));
    if (!effective.some((a) => a.type !== 'event' && a.type !== 'observe')) break;
    actions.push(...effective);
    state = apply(state, effective, now);
  }
  const future = (last?.wakeups ?? []).filter((t) => t > now);
  let report = (last as Step).report;
  if (report.inProgress) {
    const pool = state.nodePools[0] as NodePool;
    report = {
      ...report,
      candidates: candidates({ ...st, snapshot: state, idx: indexSnapshot(state), pool, wakeups: [] }).count,
    };
  }
  return {
    nodePool: poolName,
    actions,
    report,
    requeueAt: future.length ? Math.min(...future) : null,
    missingPods: last?.missingPods ?? [],
  };
}

/**
 * The context one NodePool's decision reads, without deciding: for judging one write on a snapshot read for it
 * (justify.ts, through the controller's executor). Null when the snapshot has no such NodePool.
 */
export function poolContext(snapshot: Snapshot, poolName: string, now: number): PoolContext | null {
  const slice = poolSlices(snapshot).get(poolName);
  const pool = slice?.nodePools[0];
  if (!slice || !pool) return null;
  const { report: _report, ...rest } = staticContext(slice, pool, snapshot.policies, now);
  return { ...rest, snapshot: slice, idx: indexSnapshot(slice), pool, wakeups: [] };
}

/** The decision for every NodePool, in name order. Pure: the snapshot and `now` are all it reads. */
export function decide(snapshot: Snapshot, now: number): Decision {
  const slices = poolSlices(snapshot);
  const pools = [...snapshot.nodePools]
    .sort((a, b) => a.metadata.name.localeCompare(b.metadata.name))
    .map((p) => decidePool(slices.get(p.metadata.name) as Snapshot, p.metadata.name, snapshot.policies, now));
  const missingPods = [...new Set(pools.flatMap((p) => p.missingPods))].sort();
  return { pools, actions: pools.flatMap((p) => p.actions), missingPods };
}
