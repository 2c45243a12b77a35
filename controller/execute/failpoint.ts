// A failpoint for crash tests: with NODEROTATION_FAILPOINT set, the process kills itself with SIGKILL right
// after the first successful write whose key matches, so the e2e suite can crash the controller at an exact
// step of a rotation (after the anchor, after the cordon, …) and prove that a restart resumes from the objects.
// Unset (always, outside tests) it does nothing. Its sibling, the pausepoint, holds a write instead, so a race
// test can change the cluster between a decision and its write.
import { existsSync, writeFileSync } from 'node:fs';
import type { Action } from '../../src/engine/types.js';

/** "annotate:NodePool:<set keys, sorted, comma-separated>", "cordon", "createPod", "deleteNodeClaim", … */
export function actionKey(a: Action): string {
  if (a.type !== 'annotate') return a.type;
  const keys = Object.keys(a.set).sort();
  return `annotate:${a.target.kind}:${(keys.length > 0 ? keys : a.remove).join(',')}`;
}

/** Whether `key` is the one the failpoint names: the same, or the same kind with more keys after it. */
export function matchesFailpoint(failpoint: string, key: string): boolean {
  return key === failpoint || key.startsWith(`${failpoint},`);
}

export function failpoint(env: NodeJS.ProcessEnv): (a: Action) => void {
  const fp = env.NODEROTATION_FAILPOINT;
  if (!fp) return () => undefined;
  return (a) => {
    if (matchesFailpoint(fp, actionKey(a))) process.kill(process.pid, 'SIGKILL');
  };
}

/**
 * A pause for race tests: with NODEROTATION_PAUSEPOINT=<key> and NODEROTATION_PAUSEPOINT_FILE=<path>, the first
 * write whose key matches is held, after its decision and before it is sent, until <path> exists; <path>.paused
 * is created when it starts to wait. The test meanwhile writes what an operator writes during a pass (a freeze),
 * then creates <path>. Unset (always, outside tests) it does nothing.
 */
export function pausepoint(env: NodeJS.ProcessEnv, pollMs = 100): (a: Action) => Promise<void> {
  const key = env.NODEROTATION_PAUSEPOINT;
  const file = env.NODEROTATION_PAUSEPOINT_FILE;
  if (!key || !file) return () => Promise.resolve();
  let held = false;
  return async (a) => {
    if (held || !matchesFailpoint(key, actionKey(a))) return;
    held = true;
    writeFileSync(`${file}.paused`, '');
    while (!existsSync(file)) await new Promise((r) => setTimeout(r, pollMs));
  };
}
