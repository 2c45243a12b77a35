// The check every simulation test shares: each run keeps every invariant, or the failure names the runs, their
// replay commands and the first one's trace.
import { expect } from 'vitest';
import type { SimRun } from './seeds.js';
import { runSeed } from './sim.js';

/** Makes the runs and fails with their replay commands if any breaks an invariant. */
export async function expectRunsHold(runs: readonly SimRun[]): Promise<void> {
  const failed: string[] = [];
  let firstTrace = '';
  for (const run of runs) {
    const r = await runSeed(run);
    if (r.ok) continue;
    failed.push(
      `seed ${run.seed}: ${r.violations.map((v) => `${v.invariant} ${v.message}`).join('; ')}\n  ${r.replay}`,
    );
    if (!firstTrace) firstTrace = r.trace.join('\n');
  }
  expect(failed, `${failed.join('\n')}\n\nthe first failure's trace:\n${firstTrace}`).toEqual([]);
}
