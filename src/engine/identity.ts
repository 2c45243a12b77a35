// The placeholder Pod's identity, as the reference implementation's state model defines it (its spec §5.3 and
// the create_placeholder step of §5.2), so that a placeholder left in flight by one controller is recognised
// by the other: the label noderotation.io/surge-for = <old NodeClaim> pairs it with its rotation, the label
// karpenter.sh/nodepool = <pool> with its NodePool (a label-selected watch maps a placeholder to both
// without a lookup), and the name is noderotation-surge-<old NodeClaim>.
import { createHash } from 'node:crypto';
import type { Pod } from '../kube/types.js';
import { A } from './annotations.js';

/** Label (and, for shortened values, annotation) key pairing a placeholder with its rotation. */
export const SURGE_FOR_LABEL = A.surgeFor;
const NAME_PREFIX = 'noderotation-surge-';
/** Label values, and Pod names used as hostnames, are at most 63 characters. */
const MAX = 63;
const HASH_CHARS = 10;
const LABEL_VALUE = /^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$/;

/** `value` cut to fit `max` with a stable hash of the whole value appended; ends alphanumeric. */
function hashed(value: string, max: number): string {
  const hash = createHash('sha256').update(value).digest('hex').slice(0, HASH_CHARS);
  const head = value.slice(0, max - HASH_CHARS - 1).replace(/[^A-Za-z0-9]+$/, '');
  return head === '' ? hash : `${head}-${hash}`;
}

/**
 * `noderotation-surge-<claim>` while that fits 63 characters (every NodeClaim Karpenter names: generateName
 * keeps names ≤ 63, so up to a 44-character claim name); past it, the claim name is cut and a hash of the
 * whole name appended: stable, distinct for claims sharing a long prefix, ≤ 63.
 */
export function placeholderName(claim: string): string {
  const name = `${NAME_PREFIX}${claim}`;
  return name.length <= MAX ? name : `${NAME_PREFIX}${hashed(claim, MAX - NAME_PREFIX.length)}`;
}

/**
 * The surge-for label's value for a claim: the claim's name, as the reference writes it, whenever that is a
 * valid label value (always, for the names Karpenter generates); past 63 characters the same cut-and-hash as
 * the Pod name. The reference specifies no rule for longer names (it writes the name as it is, which the API
 * refuses past 63); ours keeps such a claim rotatable, and the full name then rides in the annotation.
 */
export function surgeForLabelValue(claim: string): string {
  return claim.length <= MAX && LABEL_VALUE.test(claim) ? claim : hashed(claim, MAX);
}

/** A placeholder is any Pod labelled surge-for (ours or the reference's); its value names the rotation. */
export const placeholderKey = (pod: Pod): string | undefined => pod.metadata.labels?.[SURGE_FOR_LABEL];

export const isPlaceholder = (pod: Pod): boolean => placeholderKey(pod) !== undefined;
