// The annotation state (design §5.3), with the reference implementation's keys and values, so that either
// controller can take over a rotation the other left in flight. Catalog: docs/state.md.

import { boundedCache } from '../util/bounded-cache.js';

const P = 'noderotation.io/';

export const A = {
  // NodePool
  activeRotation: `${P}active-rotation`,
  activeRotationState: `${P}active-rotation-state`,
  drainingAt: `${P}draining-at`,
  surgeWait: `${P}surge-wait`,
  surgePath: `${P}surge-path`,
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
export const ANCHOR_SET = [
  A.activeRotation,
  A.activeRotationState,
  A.drainingAt,
  A.surgeWait,
  A.surgePath,
  A.rotationMode,
] as const;

/** Which way the surge room was found (design §3.3), recorded with `surge-wait`: a fresh node or a spare. */
export const SURGE_PATH = { provisioned: 'provisioned', absorbed: 'absorbed' } as const;

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

/** Parsed stamps: the same few values are read for every object on every pass; a pure function, so bounded. */
const times = boundedCache<string, number | null>(100_000);

/** RFC 3339 as Kubernetes writes it (metav1.Time, MicroTime): date, `T`, time, optional fraction, `Z` or offset. */
const RFC3339 = /^(\d{4})-(\d{2})-(\d{2})[Tt](\d{2}):(\d{2}):(\d{2})(\.\d{1,9})?([Zz]|[+-](\d{2}):(\d{2}))$/;

/**
 * RFC 3339 → epoch ms; null when absent or not exactly RFC 3339. `Date.parse` alone accepts far more ("next
 * tuesday" in some engines, dates without a zone read as local time, day 32 rolled into the next month): every
 * field is range-checked here, so a value is either what it says or refused (issue 17: a freeze must never be
 * read as something it does not say).
 */
export function parseTime(value: string | undefined): number | null {
  if (value === undefined || value === '') return null;
  return times.get(value, strictRfc3339);
}

function strictRfc3339(v: string): number | null {
  const m = RFC3339.exec(v);
  if (!m) return null;
  const [y, mo, d, h, mi, s] = m.slice(1, 7).map(Number) as [number, number, number, number, number, number];
  const daysInMonth = new Date(Date.UTC(y, mo, 0)).getUTCDate();
  if (mo < 1 || mo > 12 || d < 1 || d > daysInMonth || h > 23 || mi > 59 || s > 60) return null;
  if (m[9] !== undefined && (Number(m[9]) > 23 || Number(m[10]) > 59)) return null;
  const ms = Date.parse(v.replace(/t/, 'T').replace(/z$/, 'Z'));
  return Number.isNaN(ms) ? null : ms;
}
