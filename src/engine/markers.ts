// Our markers on Nodes (design §3.4): do-not-disrupt with an ownership marker, surge-for, and our cordon.
// An operator's own do-not-disrupt or cordon (no marker of ours) is never adopted and never removed.
import type { Node } from '../kube/types.js';
import { A } from './annotations.js';
import { annotate, cordonNode, nodeRef, uncordonNode } from './actions.js';
import type { Action } from './types.js';

/** Protect a node of this rotation from consolidation and drift: do-not-disrupt (owned) and surge-for. */
export function freeze(node: Node, claim: string, why: string): Action[] {
  const ann = node.metadata.annotations ?? {};
  const set: Record<string, string> = { [A.surgeFor]: claim };
  const operatorOwned = ann[A.doNotDisrupt] === 'true' && ann[A.doNotDisruptOwned] !== 'true';
  // Only the exact "true" is protection (karpenter.md); any other value is overwritten, and then it is ours.
  if (!operatorOwned) Object.assign(set, { [A.doNotDisrupt]: 'true', [A.doNotDisruptOwned]: 'true' });
  return [annotate(nodeRef(node.metadata.name), set, [], why)];
}

/** Cordon the candidate so no new Pod lands while the surge is prepared; never adopt an operator's cordon. */
export function cordon(node: Node, why: string): Action[] {
  const ours = node.metadata.annotations?.[A.cordoned] === 'true';
  if (node.spec.unschedulable === true && !ours) return [];
  return [cordonNode(node.metadata.name, why)];
}

/** Undo exactly what we did to a node: our do-not-disrupt, our cordon, the surge-for marker. */
export function unfreeze(node: Node, why: string): Action[] {
  const ann = node.metadata.annotations ?? {};
  const out: Action[] = [];
  const remove = [A.surgeFor as string];
  if (ann[A.doNotDisruptOwned] === 'true') remove.push(A.doNotDisrupt, A.doNotDisruptOwned);
  if (remove.some((k) => ann[k] !== undefined)) out.push(annotate(nodeRef(node.metadata.name), {}, remove, why));
  if (ann[A.cordoned] === 'true') out.push(uncordonNode(node.metadata.name, why));
  return out;
}
