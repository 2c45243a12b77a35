// Everything one NodePool's decision needs, computed once per pass.
import type { RotationPolicy } from '../generated/api-types.js';
import type { NodePool } from '../karpenter/types.js';
import type { Derivation } from '../derivation/derive.js';
import type { PolicyParams } from '../derivation/params.js';
import type { Interval, WindowFigures } from '../schedule/windows.js';
import type { ClusterIndex } from './cluster-index.js';
import type { Snapshot } from './types.js';

export interface PoolContext {
  now: number;
  snapshot: Snapshot;
  idx: ClusterIndex;
  pool: NodePool;
  /** The governing policy; null when none or a conflict. */
  policy: RotationPolicy | null;
  params: PolicyParams | null;
  windows: WindowFigures | null;
  derivation: Derivation | null;
  windowOpen: boolean;
  /** The governing policy's placeholder PriorityClass, when the snapshot says it does not exist. */
  priorityClassMissing: string | null;
  /** Epoch ms until which a freeze (annotation or scheduled) holds; null when not frozen. */
  frozenUntil: number | null;
  /** Why a freeze that cannot be read holds everything (fail closed); null when every freeze is readable. */
  freezeUnreadable: string | null;
  /** Every readable freeze (annotation and scheduled) as sorted disjoint intervals: no rotation starts inside. */
  freezeSpans: Interval[];
  /** Upcoming instants at which the answer may change without any event (for requeueAt). */
  wakeups: number[];
}

/** Why escalation is suspended by a freeze (readable and active, or unreadable), or null. */
export function frozenBecause(c: Pick<PoolContext, 'frozenUntil' | 'freezeUnreadable'>): string | null {
  if (c.freezeUnreadable !== null) return `frozen: ${c.freezeUnreadable}`;
  if (c.frozenUntil !== null) return `frozen until ${new Date(c.frozenUntil).toISOString().replace('.000Z', 'Z')}`;
  return null;
}
