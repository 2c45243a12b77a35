// The runs CI makes (test/sim/sim*.test.ts) and the swarm that picks each seed's faults; `npm run sim -- --swarm`
// draws the same. SIM_SEEDS scales CI's plan (a long run here: SIM_SEEDS=20000 npx vitest run test/sim).
import { FAULTS, type Fault } from './sim.js';
import { Rng } from './scheduler.js';

/** One run: a seed and the faults it runs under. */
export interface SimRun {
  seed: number;
  faults: readonly Fault[];
  /** How long the faults last (virtual minutes; runSeed's default, 30, when absent). */
  faultMinutes?: number;
}

/**
 * The faults CI draws from: every one. `operators` joined once the S3 check left out what the API cannot tell
 * apart (an operator's cordon or do-not-disrupt set again while our marker for it stands: docs/safety.md, S3),
 * which it had been finding in about one seed in fifteen.
 */
export const CI_FAULTS: readonly Fault[] = FAULTS;

/**
 * Swarm testing (Groce et al., ISSTA 2012): each seed runs under its own subset of `from`, each fault in it with
 * probability ½ (at least one), for its own length of time (3–10 virtual minutes), both drawn from the seed.
 * Faults that mask each other stay apart in some runs — `delays` hands the Lease round so often that a replica
 * seldom leads long enough to be paused mid-rotation, for one. The length: the seeds' rotations start in their
 * first minutes (the windows are open) and are over within about ten; past that, faults meet an idle controller
 * and cost steps linearly (0.67 CPU-s a seed for 30 minutes, 0.23 for 10, the same rotations started and
 * completed over 30 seeds). 3–10 rather than 5–15 took a fifth of the swarm's steps and 15 % of its CPU time
 * (150 seeds), which the plan needed to stay within CI's three minutes; the faults still meet every rotation's
 * start, and a long run names its own length (`npm run sim -- --fault-minutes 30`).
 */
export function swarm(seed: number, from: readonly Fault[] = CI_FAULTS): SimRun {
  const rng = Rng.of(seed ^ 0x5eed5);
  const picked = from.filter(() => rng.chance(0.5));
  return { seed, faults: picked.length > 0 ? picked : [rng.pick(from)], faultMinutes: rng.int(3, 10) };
}

/** Seeds in CI's plan (`SIM_SEEDS`, default 2,000): a quarter without faults, the rest with swarm faults. */
export const CI_SEEDS = Number(process.env.SIM_SEEDS ?? 2000);

/**
 * The parts CI runs as files of their own, so that vitest spreads them over the cores: six rather than four, so
 * that the two cores finish nearer together (the swarm's parts take about 50 s each, the plain one 65 s).
 */
export const CI_PARTS = 6;

/**
 * Part `k` (0 … CI_PARTS − 1) of CI's plan: part 0 is seeds 1 … N/4 without faults; parts 1 … CI_PARTS − 1 share
 * seeds 200001 … 200000 + 3N/4, each with its swarm of CI_FAULTS.
 */
export function ciPart(k: number): SimRun[] {
  const quarter = Math.ceil(CI_SEEDS / 4);
  if (k === 0) return Array.from({ length: quarter }, (_, i) => ({ seed: 1 + i, faults: [] }));
  const faulted = CI_SEEDS - quarter;
  const per = Math.ceil(faulted / (CI_PARTS - 1));
  const from = 200_001 + (k - 1) * per;
  const count = Math.max(0, Math.min(per, faulted - (k - 1) * per));
  return Array.from({ length: count }, (_, i) => swarm(from + i));
}

/** A part's title: its seed range and what faults it runs under. */
export function partTitle(k: number): string {
  const runs = ciPart(k);
  const range = `seeds ${runs[0]?.seed ?? '-'}…${runs.at(-1)?.seed ?? '-'}`;
  return `keeps S1–S4 and liveness for ${range} (${k === 0 ? 'no faults' : 'swarm faults'})`;
}

/**
 * Single seeds kept for what they once showed. Seeds move when the controller or the models change: when one no
 * longer shows it (the test says so), find another with `npm run sim` and the stats it prints.
 */
export const KEPT: readonly (SimRun & {
  shows: string;
  /** What the run must still show, as a least count of its stats (else the seed no longer shows it). */
  needs: Partial<Record<'takeovers' | 'fenced' | 'catchUps', number>>;
})[] = [
  {
    seed: 900007,
    faults: ['replicas', 'pauses'],
    shows:
      'a leader paused mid-pass past the Lease resumes after the other replica took over, and the fence refuses ' +
      'its writes (with the fence disabled, S4 fails on this seed)',
    needs: { takeovers: 1, fenced: 1 },
  },
  {
    seed: 961354,
    faults: ['errors', 'lost', 'cuts', 'gone', 'stalls', 'operators', 'hung', 'clockjumps', 'pauses', 'replicas'],
    faultMinutes: 5,
    shows:
      'a new leader whose Node watch stalled 45 s must not act before its caches show its Lease write: acting at ' +
      'once, it completed a rotation without seeing the surge node its predecessor had marked, and those marks ' +
      'stayed for good (liveness fails on this seed without the wait)',
    needs: { takeovers: 1, catchUps: 1 },
  },
  {
    seed: 421759,
    faults: ['errors', 'conflicts', 'lost', 'restarts', 'operators', 'invalid', 'foreign'],
    faultMinutes: 9,
    shows:
      'a rollback reaped the surge claim but conflicts kept its placeholder; a new leader must not take the reaped ' +
      'node for a Ready surge (S1 fails on this seed without the check: the old claim drained beside the reap)',
    needs: { takeovers: 1 },
  },
];
