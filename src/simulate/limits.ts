// What `simulate` refuses before it starts, and the guard while it runs. The numbers come from measurements
// (docs/benchmarks.md#simulate-limits): the simulator's cost grows with the nodes alive and with the node
// lifetimes it plays through, so both are capped; the event cap stops any run the estimate misjudged.
import type { Scenario } from '../generated/api-types.js';
import type { FieldError } from '../api/validate.js';
import { rfc3339 } from '../engine/annotations.js';
import { formatHuman, parseDuration } from '../util/duration.js';

export const SIM_LIMITS = {
  /** Nodes at start, over all fleet groups (the schema's own maximum of one group). */
  nodes: 100_000,
  /** Nodes × simulated hours. */
  nodeHours: 20_000_000,
  /** Node lifetimes played through: nodes × (1 + duration / expireAfter), per fleet group. */
  lifetimes: 100_000,
  /** Events processed in one run. */
  events: 5_000_000,
  /** A progress callback every this many events. */
  progressEvery: 20_000,
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
  const lifetimes = spec.fleet.reduce((n, g) => {
    const life = lifetimeSeconds(g.expireAfter ?? spec.nodePool.expireAfter);
    return n + g.count * (1 + (life === Infinity ? 0 : (hours * 3600) / life));
  }, 0);
  if (errors.length === 0 && lifetimes > SIM_LIMITS.lifetimes)
    errors.push({
      path: 'spec.duration',
      found: `${spec.duration}: about ${count(lifetimes)} node lifetimes (nodes × (1 + duration / expireAfter))`,
      allowed: `at most ${count(SIM_LIMITS.lifetimes)} node lifetimes; shorten the duration or use fewer nodes`,
    });
  return errors;
}

/** A run that went past the event cap: stopped, with where it got to. */
export class SimulationLimitError extends Error {
  constructor(maxEvents: number, at: number, config: { start: number; end: number }) {
    super(
      `the simulation passed ${count(maxEvents)} events at ${rfc3339(at)} ` +
        `(${formatHuman((at - config.start) / 1000)} of ${formatHuman((config.end - config.start) / 1000)} ` +
        'simulated) and was stopped; shorten spec.duration or use fewer nodes',
    );
  }
}
