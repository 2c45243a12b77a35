// The soak's short variant in CI (issue 20 item 5): seven minutes of the compressed Scenario P with chaos on and a
// fixed seed, on a cluster of its own (its own run directory and ports), so that it runs beside the suite's
// serial phase (test/e2e/run.sh) without its controllers meeting the other files' pools. A criterion that fails
// fails the build; its summary and the soak's log tail are printed.
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import type { Criterion } from '../../bench/soak/ledger.js';
import { clusterScript, repoRoot } from './helpers/cluster.js';

// Seed 18's seven minutes: a policy deleted and restored, the leader paused past its Lease, a malformed freeze,
// KWOK and the apiserver restarted; each tight pool rotates both its nodes (the first are due at 4 min).
const SEED = 18;
const MINUTES = 7;
const env = {
  ...process.env,
  NODEROTATION_RUN_DIR: path.join(tmpdir(), 'noderotation-soak-cluster'),
  NODEROTATION_PORT_BASE: '26000',
};

function run(args: string[]): Promise<{ code: number | null; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ['--import', 'tsx', ...args], { cwd: repoRoot, env });
    let stderr = '';
    child.stderr.on('data', (b: Buffer) => (stderr += b.toString()));
    child.stdout.resume();
    child.on('exit', (code) => resolve({ code, stderr }));
  });
}

describe('the soak, short (CI)', () => {
  it(`${MINUTES} minutes with chaos, seed ${SEED}, on a cluster of its own: every criterion passes`, async () => {
    const up = spawnSync('bash', [clusterScript, 'up'], { env, encoding: 'utf8' });
    expect(up.status, up.stderr.slice(-3000)).toBe(0);
    try {
      const out = mkdtempSync(path.join(tmpdir(), 'noderotation-soak-'));
      const r = await run(['bench/soak/main.ts', '--minutes', String(MINUTES), '--seed', String(SEED), '--out', out]);
      const summary = existsSync(path.join(out, 'summary.txt'))
        ? readFileSync(path.join(out, 'summary.txt'), 'utf8')
        : '';
      const why = `${summary}\n--- soak log ---\n${r.stderr.slice(-4000)}`;
      expect(r.code, why).toBe(0);
      const verdicts = JSON.parse(readFileSync(path.join(out, 'criteria.json'), 'utf8')) as Criterion[];
      expect(verdicts.length, why).toBe(13);
      expect(
        verdicts.filter((v) => !v.pass),
        why,
      ).toEqual([]);
    } finally {
      spawnSync('bash', [clusterScript, 'down'], { env, encoding: 'utf8' });
    }
  }, 900_000);
});
