// Part 5 of CI's plan with swarm faults (test/sim/seeds.ts): a file of its own, so that vitest runs it beside
// the others.
import { describe, it } from 'vitest';
import { expectRunsHold } from './hold.js';
import { ciPart, partTitle } from './seeds.js';

describe('the controller under simulation, with swarm faults (part 5)', () => {
  it(partTitle(5), { timeout: 30 * 60_000 }, async () => {
    await expectRunsHold(ciPart(5));
  });
});
