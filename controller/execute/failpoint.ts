// A failpoint for crash tests: with NODEROTATION_FAILPOINT set, the process kills itself with SIGKILL right
// after the first successful write whose key matches, so the e2e suite can crash the controller at an exact
// step of a rotation (after the anchor, after the cordon, …) and prove that a restart resumes from the objects.
// Unset (always, outside tests) it does nothing.
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
