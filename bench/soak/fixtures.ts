// Soak records made by hand, for the ledger's tests and the report's look in the browser: the audit events a
// controller's writes leave, a clean short run, and a longer synthetic run with every kind of row.
import { A } from '../../src/engine/annotations.js';
import type { AuditEvent } from '../../test/support/parity.js';
import { CHAOS_KINDS } from './plan.js';
import type { SoakRecords } from './ledger.js';

export const T0 = Date.parse('2026-12-01T10:00:00Z');
export const S = 1000;
export const USER_A = 'system:serviceaccount:soak-system:nr-soak-a';
export const USER_B = 'system:serviceaccount:soak-system:nr-soak-b';
export const at = (s: number): string => new Date(T0 + s * S).toISOString();

export function audit(
  s: number,
  verb: string,
  resource: string,
  name: string,
  body?: unknown,
  user = USER_A,
  code = 200,
): AuditEvent {
  return {
    stageTimestamp: at(s),
    user: { username: user },
    verb,
    objectRef: { resource, name, ...(resource === 'leases' ? { namespace: 'soak-system' } : {}) },
    responseStatus: { code },
    ...(body === undefined ? {} : { requestObject: body }),
  };
}
export const ann = (a: Record<string, string | null>): unknown => ({ metadata: { annotations: a } });
export const lease = (s: number, holder: string, user = USER_A): AuditEvent =>
  audit(s, 'update', 'leases', 'node-rotation-controller.noderotation.io', { spec: { holderIdentity: holder } }, user);

/** One surge rotation of claim `old` in pool `pool`, from `s` (seconds after T0), by `user`. */
export function surgeRotation(pool: string, old: string, surge: string, s: number, user = USER_A): AuditEvent[] {
  return [
    audit(s, 'patch', 'nodepools', pool, ann({ [A.activeRotation]: old, [A.activeRotationState]: 'pending' }), user),
    audit(s + 1, 'create', 'pods', `noderotation-surge-${old}`, undefined, user),
    audit(s + 20, 'patch', 'nodeclaims', surge, ann({ [A.surgeFor]: old }), user),
    audit(s + 21, 'delete', 'nodeclaims', old, undefined, user),
    audit(s + 60, 'patch', 'nodepools', pool, ann({ [A.activeRotation]: null, [A.lastRotationAt]: at(s + 60) }), user),
  ];
}

/** A clean 10-minute run: one tight pool, one rotation that beats its deadline by minutes. */
export function clean(): SoakRecords {
  return {
    t0: T0,
    tEnd: T0 + 600 * S,
    pools: [
      {
        name: 'soak-tight1',
        role: 'tight',
        periodS: 60,
        rotationBoundS: 240,
        leadTimeS: 360,
        ageThresholdS: 240,
        chances: 2,
      },
    ],
    windows: { 'soak-tight1': [{ start: T0 - 3600 * S, end: T0 + 3600 * S }] },
    claims: [
      {
        name: 'old1',
        pool: 'soak-tight1',
        createdAt: T0 - 250 * S,
        deadline: T0 + 350 * S,
        readyAt: T0 - 245 * S,
        deletedAt: T0 + 31 * S,
        goneAt: T0 + 55 * S,
      },
      { name: 'surge1', pool: 'soak-tight1', createdAt: T0 + 5 * S, deadline: T0 + 605 * S, readyAt: T0 + 15 * S },
    ],
    audit: [
      lease(-5, 'id-a'),
      lease(-3, 'id-a'),
      ...surgeRotation('soak-tight1', 'old1', 'surge1', 10),
      lease(200, 'id-a'),
    ],
    replicas: [USER_A, USER_B],
    expiredByLog: [],
    disrupted: [{ pool: 'soak-tight1', reason: 'empty', count: 1 }],
    chaos: [{ kind: 'kill-leader', start: T0 + 100 * S, end: T0 + 101 * S, detail: 'SIGKILL', steadyAt: T0 + 120 * S }],
    markers: [],
    leaks: [],
    load: [{ at: T0 + 30 * S, pool: 'soak-tight1', ready: 1, desired: 2 }],
    steadyBoundS: 60,
  };
}

/**
 * A synthetic hour: three tight pools rotating every ~5 min, a fallback pool whose surge is rolled back and whose
 * fallback then fires, a chaos event every ~2.5 min of every kind in turn. For the report's layout, not its
 * figures.
 */
export function syntheticHour(): SoakRecords {
  const r = clean();
  r.tEnd = T0 + 3600 * S;
  r.pools = [
    ...[1, 2, 3].map((i) => ({
      name: `soak-tight${i}`,
      role: 'tight' as const,
      periodS: 60,
      rotationBoundS: 240,
      leadTimeS: 360,
      ageThresholdS: 240,
      chances: 2,
    })),
    {
      name: 'soak-fallback1',
      role: 'fallback',
      periodS: 60,
      rotationBoundS: 145,
      leadTimeS: 265,
      ageThresholdS: 1,
      chances: 1,
    },
  ];
  r.windows = Object.fromEntries(r.pools.map((p) => [p.name, [{ start: T0 - 3600 * S, end: T0 + 7200 * S }]]));
  r.claims = [];
  r.audit = [lease(-5, 'id-a')];
  r.load = [];
  for (let i = 1; i <= 3; i++) {
    for (let k = 0; k < 12; k++) {
      const s = 240 + k * 280 + i * 9;
      const old = `soak-tight${i}-o${k}`;
      const surge = `soak-tight${i}-s${k}`;
      r.claims.push({
        name: old,
        pool: `soak-tight${i}`,
        createdAt: T0 + (s - 245) * S,
        deadline: T0 + (s + 355) * S,
        deletedAt: T0 + (s + 21) * S,
        goneAt: T0 + (s + 30 + (k % 5) * 4) * S,
      });
      r.claims.push({
        name: surge,
        pool: `soak-tight${i}`,
        createdAt: T0 + (s + 2) * S,
        deadline: T0 + (s + 602) * S,
        readyAt: T0 + (s + 8 + (k % 7) * 2) * S,
      });
      r.audit.push(...surgeRotation(`soak-tight${i}`, old, surge, s));
    }
  }
  for (let k = 0; k < 14; k++) {
    const s = 20 + k * 250;
    const name = `soak-fallback1-f${k}`;
    r.claims.push({
      name,
      pool: 'soak-fallback1',
      createdAt: T0 + (s - 15) * S,
      deadline: T0 + (s + 235) * S,
      deletedAt: T0 + (s + 71) * S,
      goneAt: T0 + (s + 80) * S,
    });
    r.audit.push(
      audit(s, 'patch', 'nodepools', 'soak-fallback1', ann({ [A.activeRotation]: name })),
      audit(
        s + 16,
        'patch',
        'nodepools',
        'soak-fallback1',
        ann({ [A.activeRotation]: null, [A.lastFailureAt]: at(s + 16) }),
      ),
      audit(
        s + 70,
        'patch',
        'nodepools',
        'soak-fallback1',
        ann({ [A.activeRotation]: name, [A.rotationMode]: 'forceful-fallback' }),
      ),
      audit(s + 71, 'delete', 'nodeclaims', name),
      audit(
        s + 81,
        'patch',
        'nodepools',
        'soak-fallback1',
        ann({ [A.activeRotation]: null, [A.lastRotationAt]: at(s + 81) }),
      ),
    );
  }
  r.chaos = CHAOS_KINDS.flatMap((kind, i) =>
    [0, 1].map((j) => {
      const start = T0 + (60 + (i * 2 + j) * 130) * S;
      return {
        kind,
        start,
        end: start + (10 + (i % 4) * 20) * S,
        detail: `${kind} (synthetic)`,
        steadyAt: start + (15 + (i % 4) * 20) * S,
      };
    }),
  );
  for (let s = 0; s < 3600; s += 2)
    for (const p of r.pools) r.load.push({ at: T0 + s * S, pool: p.name, ready: 2, desired: 2 });
  return r;
}
