// What the e2e tests deleted and did not wait for (TestResources.cleanup): the NodePools and namespaces, one JSON
// line each in the cluster's run directory, shared by every file and process of a suite run. Karpenter removes
// them while the next test runs (its pool's claims drain in 1–15 s: most of what a file used to spend waiting).
// `awaitGraveyard` (k8s.ts) waits until every one is gone — a Node that outlives its NodeClaim is named and
// removed — and empties the graveyard: the suite's last phase (leftovers.test.ts) and any test that needs a
// cluster without them (a MaintenancePlan that governs every NodePool) call it.
import { appendFileSync, existsSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { runDir } from './cluster.js';

const file = (): string => join(runDir(), 'e2e-graveyard.jsonl');

export interface Buried {
  pools: string[];
  namespaces: string[];
}

export function bury(b: Buried): void {
  if (b.pools.length + b.namespaces.length > 0) appendFileSync(file(), `${JSON.stringify(b)}\n`);
}

export function graveyard(): Buried {
  const out: Buried = { pools: [], namespaces: [] };
  if (!existsSync(file())) return out;
  for (const line of readFileSync(file(), 'utf8').split('\n').filter(Boolean)) {
    const b = JSON.parse(line) as Buried;
    out.pools.push(...b.pools);
    out.namespaces.push(...b.namespaces);
  }
  return out;
}

/** Forgets everything buried (once awaitGraveyard has seen it gone). */
export function clearGraveyard(): void {
  rmSync(file(), { force: true });
}
