// What `simulate` refuses before it starts, and the guard while it runs. The numbers come from measurements
// (docs/benchmarks.md#simulate-limits): the simulator's cost grows with the nodes alive and with the node
// lifetimes it plays through, so both are capped; the event cap stops any run the estimate misjudged.
import type { Scenario } from '../generated/api-types.js';
import type { FieldError } from '../api/validate.js';
import { rfc3339 } from '../engine/annotations.js';
import { DurationError, formatDuration, parseDuration } from '../util/duration.js';

export const SIM_LIMITS = {
  /** Nodes at start, over all fleet groups (the schema's own maximum of one group). */
  nodes: 100_000,
  /** Nodes × simulated hours. */
  nodeHours: 20_000_000,
  /** Node lifetimes that end in the run (each one a timeline row, and events). */
  lifetimes: 100_000,
  /** Nodes × lifetimes ending: the model's work per event grows with the nodes alive. */
  work: 30_000_000,
  /** Events processed in one run (the year of docs/benchmarks.md takes about 90,000). */
  events: 1_000_000,
  /** Engine decisions × the NodeClaims each one looks at (the year of docs/benchmarks.md: about 20 million). */
  decisionWork: 60_000_000,
  /** A progress callback every this many events (it only reads a clock; cheap). */
  progressEvery: 500,
} as const;

const count = (n: number): string => Math.round(n).toLocaleString('en-US');

/** Seconds of an expireAfter, Infinity for Never. */
function lifetimeSeconds(expireAfter: string): number {
  return expireAfter === 'Never' ? Infinity : parseDuration(expireAfter);
}

/**
 * Why the scenario is too large to simulate, as field errors with the numbers; empty when it is not. Called
 * after schema validation, so every duration parses.
 */
export function scenarioSizeErrors(scenario: Scenario): FieldError[] {
  const spec = scenario.spec;
  const errors: FieldError[] = [];
  const hours = parseDuration(spec.duration) / 3600;
  const nodes = spec.fleet.reduce((n, g) => n + g.count, 0);
  if (lifetimeSeconds(spec.nodePool.expireAfter) === 0)
    errors.push({
      path: 'spec.nodePool.expireAfter',
      found: JSON.stringify(spec.nodePool.expireAfter),
      allowed: 'a lifetime longer than zero, or Never: a node that expires as it is created never stops being replaced',
    });
  spec.fleet.forEach((g, i) => {
    if (g.expireAfter !== undefined && lifetimeSeconds(g.expireAfter) === 0)
      errors.push({
        path: `spec.fleet[${i}].expireAfter`,
        found: JSON.stringify(g.expireAfter),
        allowed: 'a lifetime longer than zero, or Never',
      });
  });
  const start = Date.parse(spec.start);
  spec.fleet.forEach((g, i) => {
    // An age past Go's duration range (about 292 years) is certainly before 1970 too.
    let age = Infinity;
    try {
      age = parseDuration(g.age ?? '0h');
    } catch (e) {
      if (!(e instanceof DurationError)) throw e;
    }
    if (!(start - age * 1000 >= 0))
      errors.push({
        path: `spec.fleet[${i}].age`,
        found: JSON.stringify(g.age),
        allowed: `an age that puts the nodes' creation after 1970-01-01 (at most ${Math.floor(start / 3_600_000)}h)`,
      });
  });
  if (errors.length > 0) return errors;
  if (nodes > SIM_LIMITS.nodes)
    errors.push({
      path: 'spec.fleet',
      found: `${count(nodes)} nodes in all`,
      allowed: `at most ${count(SIM_LIMITS.nodes)} nodes over all groups`,
    });
  else if (nodes * hours > SIM_LIMITS.nodeHours)
    errors.push({
      path: 'spec.duration',
      found: `${spec.duration} for ${count(nodes)} nodes: ${count(nodes * hours)} node-hours`,
      allowed:
        `at most ${count(SIM_LIMITS.nodeHours)} node-hours (nodes × duration), ` +
        `e.g. ${count(Math.floor(SIM_LIMITS.nodeHours / nodes))}h for ${count(nodes)} nodes`,
    });
  if (errors.length > 0) return errors;
  const lifetimes = lifetimesEnding(scenario);
  if (lifetimes > SIM_LIMITS.lifetimes)
    errors.push({
      path: 'spec.duration',
      found:
        `${spec.duration}: about ${count(lifetimes)} node lifetimes end in it ` +
        "(each node's age + duration over its expireAfter)",
      allowed: `at most ${count(SIM_LIMITS.lifetimes)}; shorten the duration, use fewer nodes or a longer expireAfter`,
    });
  else if (nodes * lifetimes > SIM_LIMITS.work)
    errors.push({
      path: 'spec.duration',
      found:
        `${spec.duration}: ${count(nodes)} nodes × about ${count(lifetimes)} lifetimes ending = ` +
        count(nodes * lifetimes),
      allowed: `at most ${count(SIM_LIMITS.work)} (nodes × lifetimes ending); shorten the duration or use fewer nodes`,
    });
  return errors;
}

/**
 * How many node lifetimes end within the run if no node were rotated early: per fleet group, the deadlines
 * that fall before the end, counting each node's age at start (its replacements inherit the NodePool's).
 */
function lifetimesEnding(scenario: Scenario): number {
  const spec = scenario.spec;
  const duration = parseDuration(spec.duration);
  const poolLife = lifetimeSeconds(spec.nodePool.expireAfter);
  return spec.fleet.reduce((n, g) => {
    const life = lifetimeSeconds(g.expireAfter ?? spec.nodePool.expireAfter);
    if (life === Infinity) return n;
    const age = parseDuration(g.age ?? '0h');
    const firstEnd = Math.max(0, life - age); // seconds from start to the first deadline
    if (firstEnd > duration) return n;
    const later = poolLife === Infinity ? 0 : Math.floor((duration - firstEnd) / poolLife);
    return n + g.count * (1 + later);
  }, 0);
}

/** A run that went past the event cap: stopped, with where it got to. */
export class SimulationLimitError extends Error {
  constructor(what: string, at: number, config: { start: number; end: number }) {
    super(
      `the simulation passed ${what} at ${rfc3339(at)} ` +
        `(${formatDuration((at - config.start) / 1000)} of ${formatDuration((config.end - config.start) / 1000)} ` +
        'simulated) and was stopped; shorten spec.duration or use fewer nodes',
    );
  }
}
