// The CI range of seeds with the CI faults (a file of its own, so that vitest can run it beside sim.test.ts).
import { describe, it } from 'vitest';
import { CI_FAULTS, CI_SEEDS, expectSeedsHold } from './seeds.js';

describe('the controller under simulation, with the CI faults', () => {
  it(`keeps S1–S3 and liveness for seeds 200001…${200000 + CI_SEEDS}`, { timeout: 30 * 60_000 }, async () => {
    await expectSeedsHold(200_001, CI_SEEDS, CI_FAULTS);
  });
});
