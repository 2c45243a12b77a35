// The start-up sweep (design §5.3): before the first decision, remove our markers that no anchor refers to,
// left behind by a crash between writes. Anchored rotations are not stale: the decision resumes them.
import { annotate, claimRef, deletePod, event, poolRef } from './actions.js';
import { A, ANCHOR_SET, rfc3339, STATE } from './annotations.js';
import { placeholderKey, surgeForLabelValue } from './identity.js';
import { unfreeze } from './markers.js';
import type { Action, Snapshot } from './types.js';

export function sweep(s: Snapshot): Action[] {
  const anchored = new Set(
    s.nodePools.map((p) => p.metadata.annotations?.[A.activeRotation]).filter((x): x is string => !!x),
  );
  const anchoredKeys = new Set([...anchored].map(surgeForLabelValue));
  const out: Action[] = [];
  // Placeholders are found by their surge-for label (ours and the reference's alike).
  for (const pod of s.pods) {
    const key = placeholderKey(pod);
    if (key !== undefined && pod.metadata.namespace === s.namespace && !anchoredKeys.has(key))
      out.push(deletePod(pod, `stale placeholder: no rotation of ${key} is anchored`));
  }
  for (const node of [...s.nodes].sort((a, b) => a.metadata.name.localeCompare(b.metadata.name))) {
    const ann = node.metadata.annotations ?? {};
    const owner = ann[A.surgeFor];
    const ours = owner !== undefined || ann[A.doNotDisruptOwned] === 'true' || ann[A.cordoned] === 'true';
    if (ours && (!owner || !anchored.has(owner)))
      out.push(...unfreeze(node, `stale markers on ${node.metadata.name}: no anchored rotation`));
  }
  for (const claim of s.nodeClaims) {
    const linkedTo = claim.metadata.annotations?.[A.surgeFor];
    if (linkedTo !== undefined && !anchored.has(linkedTo))
      out.push(
        annotate(
          claimRef(claim.metadata.name),
          {},
          [A.surgeFor],
          `stale surge link: no rotation of ${linkedTo} is anchored`,
        ),
      );
    const state = claim.metadata.annotations?.[A.state];
    if ((state === STATE.pending || state === STATE.draining) && !anchored.has(claim.metadata.name)) {
      const why = `NodeClaim ${claim.metadata.name} is ${state} with no anchor (a crash between writes)`;
      // failed-at at the epoch: the sweep has no clock, and a retry is due at once (no attempt really failed).
      const failed = { [A.state]: STATE.failed, [A.failedAt]: rfc3339(0) };
      out.push(annotate(claimRef(claim.metadata.name), failed, [A.startedAt, A.surgeClaim], why));
      out.push(event(claimRef(claim.metadata.name), 'OrphanedRotationState', why));
    }
  }
  for (const pool of s.nodePools) {
    const ann = pool.metadata.annotations ?? {};
    const orphans = ANCHOR_SET.filter((k) => k !== A.activeRotation && ann[k] !== undefined);
    if (!ann[A.activeRotation] && orphans.length > 0) {
      out.push(annotate(poolRef(pool.metadata.name), {}, orphans, 'rotation annotations without an anchor'));
    }
  }
  return out;
}
