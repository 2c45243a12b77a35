// The soak's ledger and criteria on records made by hand: a clean run passes every criterion, and each way a
// run can go wrong fails exactly the criterion about it (a criterion that cannot fail counts for nothing).
import { describe, expect, it } from 'vitest';
import { A } from '../../src/engine/annotations.js';
import type { AuditEvent } from '../../test/support/parity.js';
import { ann, audit, clean, lease, S, surgeRotation, T0, USER_A, USER_B } from './fixtures.js';
import { criteria, rotations, type SoakRecords } from './ledger.js';

const failing = (r: SoakRecords): string[] =>
  criteria(r)
    .filter((c) => !c.pass)
    .map((c) => c.id);

describe('the soak ledger', () => {
  it('a clean run: one rotation, measured from the records, every criterion passes', () => {
    const r = clean();
    expect(rotations(r)).toEqual([
      {
        pool: 'soak-tight1',
        claim: 'old1',
        mode: 'surge',
        outcome: 'completed',
        start: T0 + 10 * S,
        ageAtStartS: 260,
        surgeClaim: 'surge1',
        surgeWaitS: 5,
        drainS: 24,
        totalS: 60,
        marginS: 295,
      },
    ]);
    expect(failing(r)).toEqual([]);
  });

  it.each<{ reason: string; breaks: (r: SoakRecords) => void; fails: string[] }>([
    {
      reason: 'Karpenter expired a claim nobody held: savable, so a failure',
      breaks: (r) => {
        r.expiredByLog.push({ claim: 'old1', at: T0 + 350 * S });
        r.disrupted.push({ pool: 'soak-tight1', reason: 'expired', count: 1 });
      },
      fails: ['no-expiry'],
    },
    {
      reason: 'the metric counts an expiry the log does not name',
      breaks: (r) => void r.disrupted.push({ pool: 'soak-tight1', reason: 'expired', count: 1 }),
      fails: ['no-expiry'],
    },
    {
      reason: 'too few rotations for the hours run (one in two hours)',
      breaks: (r) => void (r.tEnd = T0 + 7200 * S),
      fails: ['rate'],
    },
    {
      reason: 'the rotation started outside the pool’s window',
      breaks: (r) => void (r.windows['soak-tight1'] = [{ start: T0 + 100 * S, end: T0 + 200 * S }]),
      fails: ['in-window'],
    },
    {
      reason: 'the old claim went after its deadline',
      breaks: (r) => void ((r.claims[0] as { deadline: number }).deadline = T0 + 50 * S),
      fails: ['margin'],
    },
    {
      reason: 'a forceful fallback in a tight pool',
      breaks: (r) => {
        const e = r.audit.find((x) => x.objectRef?.resource === 'nodepools') as AuditEvent;
        e.requestObject = ann({ [A.activeRotation]: 'old1', [A.rotationMode]: 'forceful-fallback' });
      },
      fails: ['margin', 'fallback'],
    },
    {
      reason: 'a second rotation started in the pool before the first ended',
      breaks: (r) => {
        r.audit.push(...surgeRotation('soak-tight1', 'old2', 'surge2', 30).slice(3, 4));
        r.claims.push({
          name: 'old2',
          pool: 'soak-tight1',
          createdAt: T0 - 250 * S,
          deadline: T0 + 350 * S,
          goneAt: T0 + 70 * S,
        });
      },
      fails: ['serial'],
    },
    {
      reason: 'a write by the replica the Lease no longer names',
      breaks: (r) => {
        r.audit.push(lease(40, 'id-b', USER_B));
        r.audit.push(audit(50, 'patch', 'nodes', 'n1', { spec: { unschedulable: true } }, USER_A));
        r.audit.push(lease(190, 'id-a', USER_A));
      },
      fails: ['fenced'],
    },
    {
      reason: 'the controller uncordoned a node an operator had cordoned',
      breaks: (r) => {
        r.markers.push({
          object: { resource: 'nodes', name: 'n1' },
          key: 'cordon',
          from: T0 + 20 * S,
          until: T0 + 90 * S,
        });
        r.audit.push(audit(45, 'patch', 'nodes', 'n1', { spec: { unschedulable: null } }));
      },
      fails: ['operator-markers'],
    },
    {
      reason: 'the controller removed an operator’s do-not-disrupt',
      breaks: (r) => {
        r.markers.push({
          object: { resource: 'nodeclaims', name: 'surge1' },
          key: A.doNotDisrupt,
          from: T0 + 20 * S,
          until: T0 + 90 * S,
        });
        r.audit.push(audit(45, 'patch', 'nodeclaims', 'surge1', ann({ [A.doNotDisrupt]: null })));
      },
      fails: ['operator-markers'],
    },
    {
      reason: 'a placeholder outlived its rotation',
      breaks: (r) =>
        void r.leaks.push({ at: T0 + 300 * S, what: 'placeholder noderotation-surge-old1 of soak-tight1' }),
      fails: ['no-leaks'],
    },
    {
      reason: 'no leader for two minutes after a fault',
      breaks: (r) => void ((r.chaos[0] as { steadyAt?: number }).steadyAt = T0 + 250 * S),
      fails: ['steady'],
    },
    {
      reason: 'two Pods of an app down at once (its PDB broken)',
      breaks: (r) => void r.load.push({ at: T0 + 40 * S, pool: 'soak-tight1', ready: 0, desired: 2 }),
      fails: ['load'],
    },
    {
      reason: 'Karpenter consolidated a busy node',
      breaks: (r) => void r.disrupted.push({ pool: 'soak-tight1', reason: 'underutilized', count: 1 }),
      fails: ['no-other-disruption'],
    },
    {
      reason: 'a rotation in a pool that is not the soak’s',
      breaks: (r) => void r.audit.push(audit(300, 'patch', 'nodepools', 'default', ann({ [A.activeRotation]: 'x' }))),
      fails: ['in-window', 'pools'],
    },
  ])('$reason', ({ breaks, fails }) => {
    const r = clean();
    breaks(r);
    expect(failing(r)).toEqual(fails);
  });

  it('an expiry is excused when an operator held the claim for longer than its chances', () => {
    const r = clean();
    r.expiredByLog.push({ claim: 'old1', at: T0 + 350 * S });
    r.disrupted.push({ pool: 'soak-tight1', reason: 'expired', count: 1 });
    // Lead time from age 240 s (T0 − 10 s) to deadline − t_rot (T0 + 110 s): held 120 s = K · P.
    r.markers.push({
      object: { resource: 'nodeclaims', name: 'old1' },
      key: A.doNotDisrupt,
      from: T0 - 10 * S,
      until: T0 + 110 * S,
    });
    expect(failing(r)).toEqual([]);
  });
});
