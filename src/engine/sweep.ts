// The start-up sweep (design §5.3): before the first decision, remove our markers that no anchor refers to,
// left behind by a crash between writes. Anchored rotations are not stale: the decision resumes them.
import { A, ANCHOR_SET, STATE } from './annotations.js';
import { isPlaceholder } from './cluster-index.js';
import { unfreeze } from './markers.js';
import type { Action, Snapshot } from './types.js';

export function sweep(s: Snapshot): Action[] {
  const anchored = new Set(
    s.nodePools.map((p) => p.metadata.annotations?.[A.activeRotation]).filter((x): x is string => !!x),
  );
  const out: Action[] = [];
  for (const pod of s.pods) {
    const owner = pod.metadata.annotations?.[A.surgeFor];
    if (isPlaceholder(pod) && pod.metadata.namespace === s.namespace && (!owner || !anchored.has(owner))) {
      out.push({
        type: 'deletePod',
        namespace: pod.metadata.namespace as string,
        name: pod.metadata.name,
        reason: `stale placeholder: no rotation of ${owner ?? '?'} is anchored`,
      });
    }
  }
  for (const node of [...s.nodes].sort((a, b) => a.metadata.name.localeCompare(b.metadata.name))) {
    const ann = node.metadata.annotations ?? {};
    const owner = ann[A.surgeFor];
    const ours = owner !== undefined || ann[A.doNotDisruptOwned] === 'true' || ann[A.cordoned] === 'true';
    if (ours && (!owner || !anchored.has(owner)))
      out.push(...unfreeze(node, `stale markers on ${node.metadata.name}: no anchored rotation`));
  }
  for (const claim of s.nodeClaims) {
    const state = claim.metadata.annotations?.[A.state];
    if ((state === STATE.pending || state === STATE.draining) && !anchored.has(claim.metadata.name)) {
      const why = `NodeClaim ${claim.metadata.name} is ${state} with no anchor (a crash between writes)`;
      out.push({
        type: 'annotate',
        target: { kind: 'NodeClaim', name: claim.metadata.name },
        set: { [A.state]: STATE.failed, [A.failedAt]: new Date(0).toISOString() },
        remove: [A.startedAt, A.surgeClaim],
        reason: why,
      });
      out.push({
        type: 'event',
        target: { kind: 'NodeClaim', name: claim.metadata.name },
        eventType: 'Warning',
        eventReason: 'OrphanedRotationState',
        message: why,
        reason: why,
      });
    }
  }
  for (const pool of s.nodePools) {
    const ann = pool.metadata.annotations ?? {};
    const orphans = ANCHOR_SET.filter((k) => k !== A.activeRotation && ann[k] !== undefined);
    if (!ann[A.activeRotation] && orphans.length > 0) {
      out.push({
        type: 'annotate',
        target: { kind: 'NodePool', name: pool.metadata.name },
        set: {},
        remove: orphans,
        reason: 'rotation annotations without an anchor',
      });
    }
  }
  return out;
}
