// The annotation state (design §5.3), with the reference implementation's keys and values, so that either
// controller can take over a rotation the other left in flight. Catalog: docs/state.md.

const P = 'noderotation.io/';

export const A = {
  // NodePool
  activeRotation: `${P}active-rotation`,
  activeRotationState: `${P}active-rotation-state`,
  drainingAt: `${P}draining-at`,
  surgeWait: `${P}surge-wait`,
  rotationMode: `${P}rotation-mode`,
  lastRotationAt: `${P}last-rotation-at`,
  lastFailureAt: `${P}last-failure-at`,
  freeze: `${P}freeze`,
  // NodeClaim
  state: `${P}state`,
  startedAt: `${P}started-at`,
  failedAt: `${P}failed-at`,
  retryCount: `${P}retry-count`,
  surgeClaim: `${P}surge-claim`,
  // Node (and the placeholder Pod: surge-for)
  surgeFor: `${P}surge-for`,
  doNotDisruptOwned: `${P}do-not-disrupt-owned`,
  cordoned: `${P}cordoned`,
  // Karpenter's
  doNotDisrupt: 'karpenter.sh/do-not-disrupt',
} as const;

/** Everything that describes one rotation on the NodePool; cleared together, in one update (§5.3). */
export const ANCHOR_SET = [A.activeRotation, A.activeRotationState, A.drainingAt, A.surgeWait, A.rotationMode] as const;

export const STATE = { pending: 'pending', draining: 'draining', failed: 'failed', expired: 'expired' } as const;
export type ClaimState = (typeof STATE)[keyof typeof STATE];

export const DRAINING = 'draining';
export const FORCEFUL_FALLBACK = 'forceful-fallback';

export const MANAGED_BY_LABEL = 'app.kubernetes.io/managed-by';
export const MANAGED_BY = 'noderotation';
export const COMPONENT_LABEL = 'app.kubernetes.io/component';
export const PLACEHOLDER_COMPONENT = 'surge-placeholder';

/** RFC 3339 with second precision, the form the reference writes. */
export const rfc3339 = (ms: number): string =>
  new Date(Math.floor(ms / 1000) * 1000).toISOString().replace('.000Z', 'Z');

const times = new Map<string, number | null>();

/** RFC 3339 → epoch ms (null when absent or malformed); memoised, as the same stamps are read every pass. */
export function parseTime(value: string | undefined): number | null {
  if (value === undefined || value === '') return null;
  let t = times.get(value);
  if (t === undefined) {
    const ms = Date.parse(value);
    t = Number.isNaN(ms) ? null : ms;
    if (times.size > 100_000) times.clear();
    times.set(value, t);
  }
  return t;
}
