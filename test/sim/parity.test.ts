// The parity scenarios (test/support/parity.ts) in the simulator alone: each gives the controller one sequence of
// writes whatever the seed, so that the e2e test (test/e2e/parity.test.ts) can compare it with the real cluster's
// under a few seeds and mean all of them.
import { describe, expect, it } from 'vitest';
import { PARITY_SCENARIOS } from '../support/parity.js';
import { runSeed } from './sim.js';

const SEEDS = Array.from({ length: Number(process.env.SIM_PARITY_SEEDS ?? 20) }, (_, i) => i + 1);

describe('the parity scenarios in the simulator', () => {
  for (const s of PARITY_SCENARIOS)
    it(`${s.name}: the same sequence of the controller's writes under ${SEEDS.length} seeds`, async () => {
      const first = await runSeed({ seed: SEEDS[0] as number, scenario: s });
      expect(first.violations, first.trace.join('\n')).toEqual([]);
      const sequence = first.parity?.sequence ?? [];
      expect(sequence.filter((l) => /last-rotation-at=<time>/.test(l))).toHaveLength(s.rotations);
      for (const seed of SEEDS.slice(1)) {
        const r = await runSeed({ seed, scenario: s });
        expect(r.violations, r.replay).toEqual([]);
        expect(r.parity?.sequence, `seed ${seed} against seed ${SEEDS[0]}`).toEqual(sequence);
      }
    });

  it('refuses faults with a scenario (a scenario is compared with a cluster without them)', async () => {
    await expect(runSeed({ seed: 1, scenario: PARITY_SCENARIOS[0], faults: ['errors'] })).rejects.toThrow(
      /without faults/,
    );
  });
});
