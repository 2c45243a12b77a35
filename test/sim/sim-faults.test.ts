// Part 1 of CI's plan with swarm faults (test/sim/seeds.ts), and the seeds kept for what they show. Each part is a
// file of its own so that vitest runs them side by side.
import { describe, expect, it } from 'vitest';
import { expectRunsHold } from './hold.js';
import { ciPart, KEPT, partTitle } from './seeds.js';
import { runSeed } from './sim.js';

describe('the controller under simulation, with swarm faults (part 1)', () => {
  it(partTitle(1), { timeout: 30 * 60_000 }, async () => {
    await expectRunsHold(ciPart(1));
  });
});

describe('seeds kept for what they show', () => {
  it.each(KEPT)('seed $seed with $faults: $shows', async ({ seed, faults, faultMinutes, needs }) => {
    const r = await runSeed({ seed, faults, ...(faultMinutes ? { faultMinutes } : {}) });
    expect(r.violations).toEqual([]);
    for (const [stat, least] of Object.entries(needs))
      expect(
        r.stats[stat as keyof typeof needs],
        `the seed no longer shows ${stat}: pick another`,
      ).toBeGreaterThanOrEqual(least);
  });
});
