// The fleet simulator: the real engine (decide + the actions it returns) against a discrete-event model of
// Karpenter — surge provisioning delay, surge failures, preemption, drains bounded by terminationGracePeriod,
// Forceful Expiration at each deadline, and fresh NodeClaims replacing removed ones.
import type { Scenario } from '../generated/api-types.js';
import { rfc3339 } from '../engine/annotations.js';
import type { Figures } from '../derivation/derive.js';
import { occurrences, type Interval } from '../schedule/windows.js';
import { handle } from './events.js';
import { SimulationLimitError, SIM_LIMITS } from './limits.js';
import { SimModel, type SimEvent } from './model.js';
import { react } from './react.js';

export { SIM_NAMESPACE } from './model.js';

const count = (n: number): string => n.toLocaleString('en-US');

type EndReason = 'rotated' | 'fallback' | 'expired' | 'reaped' | 'running';

export interface NodeLife {
  node: string;
  origin: 'initial' | 'surge' | 'replacement';
  createdAt: string;
  deadline: string | null;
  /** When the engine first started rotating it (pending or fallback), if it did. */
  rotationStartedAt: string | null;
  drainStartedAt: string | null;
  attempts: number;
  endedAt: string | null;
  end: EndReason;
}

export interface SimulationResult {
  scenario: string;
  mode: 'controller' | 'baseline';
  start: string;
  end: string;
  nodes: number;
  rotations: { graceful: number; forcefulFallback: number; failedAttempts: number };
  forcefulExpirations: number;
  /** Those of them at an instant inside one of the policy's scheduled freezes (when nothing of ours may start). */
  forcefulExpirationsInFreeze: number;
  startsOutsideWindow: number;
  maxConcurrentRotations: number;
  figures: Figures;
  windows: { start: string; end: string }[];
  /** The policy's scheduled freezes that overlap the run, merged. */
  freezes: { start: string; end: string }[];
  /** The zones of the policy's maintenance windows, each once, sorted (the HTML report's time axis). */
  timezones: string[];
  timeline: NodeLife[];
}

export interface SimulateOptions {
  /** Called every `progressEvery` events, for a progress line on long runs. */
  progress?: (p: { at: number; events: number }) => void;
  /** Default SIM_LIMITS.progressEvery. */
  progressEvery?: number;
  /** The most events a run may process (default SIM_LIMITS.events); past it SimulationLimitError. */
  maxEvents?: number;
  /** The most decisions × NodeClaims (default SIM_LIMITS.decisionWork); past it SimulationLimitError. */
  maxDecisionWork?: number;
  /** Filled in as the run goes: what the limits count (for bench/simulate-limits.ts). */
  stats?: { events: number; decisionWork: number };
}

/** Runs the scenario: the engine against the model of Karpenter from start to start + duration. */
export function simulate(scenario: Scenario, options: SimulateOptions = {}): SimulationResult {
  const m = new SimModel(scenario);
  m.addFleet(scenario.spec.fleet);
  m.scheduleDecide(m.config.start);
  const maxEvents = options.maxEvents ?? SIM_LIMITS.events;
  const every = options.progressEvery ?? SIM_LIMITS.progressEvery;
  const maxWork = options.maxDecisionWork ?? SIM_LIMITS.decisionWork;
  let events = 0;
  let work = 0;
  const { queue } = m;
  while (queue.size > 0 && (queue.peek() as SimEvent).at <= m.config.end) {
    const ev = queue.pop() as SimEvent;
    if (++events > maxEvents) throw new SimulationLimitError(`${count(maxEvents)} events`, ev.at, m.config);
    if (options.progress && events % every === 0) options.progress({ at: ev.at, events });
    const relevant = handle(m, ev);
    if (options.stats) options.stats.events = events;
    m.syncPoolStatus();
    if (m.config.mode === 'controller' && relevant) {
      work += m.s.nodeClaims.length;
      if (options.stats) options.stats.decisionWork = work;
      if (work > maxWork) throw new SimulationLimitError(`${count(maxWork)} NodeClaims decided on`, ev.at, m.config);
      // The controller reacts to every change it watches, and otherwise wakes when the engine asked to.
      const requeue = m.runEngine(ev.at, react);
      if (requeue !== null) m.scheduleDecide(requeue);
    }
  }
  return finish(m);
}

/** The windows of the run and each node's life, sorted by name, as the result reports them. */
function finish(m: SimModel): SimulationResult {
  const { result, config } = m;
  result.windows = occurrences(m.policy.spec.maintenanceWindows, config.start, config.end).map((iv: Interval) => ({
    start: rfc3339(iv.start),
    end: rfc3339(iv.end),
  }));
  result.freezes = m.freezesBetween(config.start, config.end).map((iv) => ({
    start: rfc3339(iv.start),
    end: rfc3339(iv.end),
  }));
  result.timezones = [...new Set(m.policy.spec.maintenanceWindows.map((w) => w.timezone))].sort();
  result.timeline = [...m.lives.entries()]
    .sort(([a], [b2]) => a.localeCompare(b2))
    .map(([node, l]) => ({
      node,
      origin: l.origin,
      createdAt: rfc3339(l.createdAt),
      deadline: l.deadline === null ? null : rfc3339(l.deadline),
      rotationStartedAt: l.rotationStartedAt === null ? null : rfc3339(l.rotationStartedAt),
      drainStartedAt: l.drainStartedAt === null ? null : rfc3339(l.drainStartedAt),
      attempts: l.attempts,
      endedAt: l.endedAt === null ? null : rfc3339(l.endedAt),
      end: l.endedAt === null ? 'running' : l.end,
    }));
  return result;
}
