// The simulation summed per day, for the picture of a fleet too large to draw node by node: how many rotations,
// fallbacks and forceful expirations each day held, how much of it a window covered, and how many nodes were at
// risk (their deadline before their next chance in a window). A day is a calendar day of a time zone, the
// policy's: midnight to midnight, 23 or 25 hours across a DST change, the first and last cut at the run's start
// and end. Pure: everything comes from the result.
import { instantToWall, wallToInstant } from '../schedule/zone.js';
import type { NodeLife, SimulationResult } from './simulate.js';

export const DAY_MS = 86_400_000;

export interface DayCounts {
  /** The day's first instant (its midnight in the zone, or the run's start for the first day), RFC 3339. */
  start: string;
  /** The calendar date in the zone, YYYY-MM-DD. */
  date: string;
  /** Graceful rotations whose old node started draining this day. */
  graceful: number;
  /** Forceful fallbacks (surge-less, in a window) started this day. */
  fallback: number;
  /** Forceful expirations: Karpenter reached the node's deadline this day. */
  expired: number;
  /** Seconds of the day inside a maintenance window. */
  windowSeconds: number;
  /** Nodes at risk at the day's first instant (nodesAtRisk). */
  atRisk: number;
}

export interface DailySeries {
  days: DayCounts[];
  /**
   * Lives still being removed when the run ended (a drain started, or the deadline reached, but the node not
   * gone): the timeline reports them `running`, so they are in no day's counts. A fallback or expiration
   * among them is in the simulation's totals all the same (those count the start, not the end).
   */
  removingAtEnd: number;
}

/** The instant a life's ending is counted at, and its kind; null for a life that is not one of the three. */
export function endingOf(
  l: NodeLife,
  runStart: number,
): { kind: 'graceful' | 'fallback' | 'expired'; at: number } | null {
  if (l.end === 'rotated' && l.drainStartedAt !== null) return { kind: 'graceful', at: Date.parse(l.drainStartedAt) };
  if (l.end === 'fallback' && l.drainStartedAt !== null) return { kind: 'fallback', at: Date.parse(l.drainStartedAt) };
  // Karpenter's expiry fires at the deadline, or at the start for a node already past it when the run began.
  if (l.end === 'expired' && l.deadline !== null)
    return { kind: 'expired', at: Math.max(Date.parse(l.deadline), runStart) };
  return null;
}

/** The index of the day holding `at` (starts ascending); the run's very end falls in its last day. */
function dayOf(at: number, starts: readonly number[]): number {
  let lo = 0;
  let hi = starts.length - 1;
  while (lo < hi) {
    const mid = (lo + hi + 1) >> 1;
    if ((starts[mid] as number) <= at) lo = mid;
    else hi = mid - 1;
  }
  return lo;
}

/** A day of the run: its first instant and its calendar date in the zone. */
export interface LocalDay {
  start: number;
  date: string;
}

/**
 * The calendar days of `zone` that [start, end) touches, at least one: the first begins at `start`, each
 * other at its midnight in the zone (instants, so a day across a DST change is 23 or 25 hours long; a
 * midnight that a spring-forward skips is the first instant after the gap).
 */
export function localDays(start: number, end: number, zone: string): LocalDay[] {
  const local = instantToWall(zone, start);
  const [y, m, d] = [local.getUTCFullYear(), local.getUTCMonth() + 1, local.getUTCDate()];
  const dateOf = (i: number): string => new Date(Date.UTC(y, m - 1, d + i)).toISOString().slice(0, 10);
  const days: LocalDay[] = [{ start, date: dateOf(0) }];
  for (let i = 1; ; i++) {
    const midnight = wallToInstant(zone, y, m, d + i, 0);
    if (midnight >= end) return days;
    days.push({ start: midnight, date: dateOf(i) });
  }
}

interface Span {
  start: number;
  end: number;
}

/** A life's instants in milliseconds (null: never), parsed once for the per-day passes. */
interface Instants {
  createdAt: number;
  deadline: number | null;
  endedAt: number | null;
  /** The first of rotationStartedAt and drainStartedAt: from then on the controller has it in hand. */
  handledAt: number | null;
}

const ms = (iso: string | null): number | null => (iso === null ? null : Date.parse(iso));

function instantsOf(l: NodeLife): Instants {
  const handled = [ms(l.rotationStartedAt), ms(l.drainStartedAt)].filter((t): t is number => t !== null);
  return {
    createdAt: Date.parse(l.createdAt),
    deadline: ms(l.deadline),
    endedAt: ms(l.endedAt),
    handledAt: handled.length > 0 ? Math.min(...handled) : null,
  };
}

function atRisk(lives: readonly Instants[], windows: readonly Span[], at: number, runEnd: number, baseline: boolean) {
  const next = baseline ? undefined : windows.find((w) => w.end > at);
  const chance = next === undefined ? runEnd : Math.max(at, next.start);
  let n = 0;
  for (const l of lives)
    if (
      l.deadline !== null &&
      l.deadline < chance &&
      l.createdAt <= at &&
      (l.endedAt === null || l.endedAt > at) &&
      (l.handledAt === null || l.handledAt > at)
    )
      n++;
  return n;
}

/**
 * Nodes at risk at `at`: alive (created, not yet gone), not yet being rotated, and whose deadline comes before
 * their next chance — the open window or the next one to open. Past the run's last window nothing is known of
 * later windows, so only a deadline inside the run counts. Without a controller (baseline) no window is a
 * chance: every node whose deadline falls in the run is at risk.
 */
export function nodesAtRisk(
  timeline: readonly NodeLife[],
  windows: readonly Span[],
  at: number,
  runEnd: number,
  baseline: boolean,
): number {
  return atRisk(timeline.map(instantsOf), windows, at, runEnd, baseline);
}

/** The run per day of `zone`: the counts of each day, and the lives still being removed at the end. */
export function dailySeries(r: SimulationResult, zone = 'UTC'): DailySeries {
  const start = Date.parse(r.start);
  const end = Date.parse(r.end);
  const local = localDays(start, end, zone);
  const starts = local.map((l) => l.start);
  const windows = r.windows.map((w) => ({ start: Date.parse(w.start), end: Date.parse(w.end) }));
  const lives = r.timeline.map(instantsOf);
  const days: DayCounts[] = local.map(({ start: from, date }, i) => {
    const to = local[i + 1]?.start ?? end;
    let covered = 0;
    for (const w of windows) covered += Math.max(0, Math.min(w.end, to) - Math.max(w.start, from));
    return {
      start: new Date(from).toISOString().replace('.000Z', 'Z'),
      date,
      graceful: 0,
      fallback: 0,
      expired: 0,
      windowSeconds: covered / 1000,
      atRisk: atRisk(lives, windows, from, end, r.mode === 'baseline'),
    };
  });
  let removingAtEnd = 0;
  for (const l of r.timeline) {
    const e = endingOf(l, start);
    if (e !== null) (days[dayOf(e.at, starts)] as DayCounts)[e.kind]++;
    else if (l.end === 'running' && removalStarted(l, end)) removingAtEnd++;
  }
  return { days, removingAtEnd };
}

/** A life the timeline reports running whose removal had begun: its drain started, or its deadline passed. */
const removalStarted = (l: NodeLife, end: number): boolean =>
  l.drainStartedAt !== null || (l.deadline !== null && Date.parse(l.deadline) <= end);

/** The order the sample fills its quota in: the rare, telling endings first. */
const SAMPLE_ORDER: readonly NodeLife['end'][] = ['expired', 'fallback', 'reaped', 'rotated', 'running'];

/**
 * At most `size` lives, the same ones for the same timeline: half the budget shared evenly between the kinds
 * of ending (so a handful of expirations among thousands of rotations still shows), the rest in proportion to
 * each kind's count; within a kind, evenly spaced. Returned in timeline order.
 */
export function sampleLives(timeline: readonly NodeLife[], size: number): NodeLife[] {
  if (timeline.length <= size) return [...timeline];
  const byKind = SAMPLE_ORDER.map((kind) => timeline.filter((l) => l.end === kind)).filter((g) => g.length > 0);
  const even = Math.floor(size / (2 * byKind.length));
  const quota = byKind.map((g) => Math.min(g.length, even));
  const rest = size - quota.reduce((a, b) => a + b, 0);
  const remaining = byKind.map((g, i) => g.length - (quota[i] as number));
  const remainingTotal = remaining.reduce((a, b) => a + b, 0);
  byKind.forEach((_, i) => {
    quota[i] = (quota[i] as number) + Math.floor((rest * (remaining[i] as number)) / remainingTotal);
  });
  // What rounding down left over, one each in SAMPLE_ORDER to kinds with lives to spare.
  let left = size - quota.reduce((a, b) => a + b, 0);
  for (let i = 0; left > 0; i = (i + 1) % byKind.length)
    if ((quota[i] as number) < (byKind[i] as NodeLife[]).length) {
      quota[i] = (quota[i] as number) + 1;
      left--;
    }
  const chosen = new Set<NodeLife>();
  byKind.forEach((g, i) => {
    const q = quota[i] as number;
    for (let j = 0; j < q; j++) chosen.add(g[Math.floor(((j + 0.5) * g.length) / q)] as NodeLife);
  });
  return timeline.filter((l) => chosen.has(l));
}
