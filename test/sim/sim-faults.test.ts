// The CI range of seeds with the CI faults (a file of its own, so that vitest can run it beside sim.test.ts).
import { describe, expect, it } from 'vitest';
import { CI_FAULTS, CI_SEEDS, expectSeedsHold, KEPT } from './seeds.js';
import { runSeed } from './sim.js';

describe('the controller under simulation, with the CI faults', () => {
  it(`keeps S1–S4 and liveness for seeds 200001…${200000 + CI_SEEDS}`, { timeout: 30 * 60_000 }, async () => {
    await expectSeedsHold(200_001, CI_SEEDS, CI_FAULTS);
  });
});

describe('seeds kept for what they show', () => {
  it.each(KEPT)('seed $seed with $faults: $shows', async ({ seed, faults }) => {
    const r = await runSeed({ seed, faults });
    expect(r.violations).toEqual([]);
    expect(r.stats.takeovers, 'the seed no longer shows a takeover: pick another').toBeGreaterThan(0);
    expect(r.stats.fenced, 'the seed no longer shows a write refused by the fence: pick another').toBeGreaterThan(0);
  });
});
