// The status view from objects alone: the window in its own zone, candidates now and at the next opening, the
// rotation in flight as the annotations record it, and the controller's view from the policy status.
import { describe, expect, it } from 'vitest';
import { claim, DAY, IN_WINDOW, nodePool, OLD, OUT_OF_WINDOW, policy, snapshot } from '../../test/support/fixtures.js';
import { A, rfc3339 } from '../engine/annotations.js';
import { apply } from '../engine/apply.js';
import { decide } from '../engine/decide.js';
import type { RotationPolicy } from '../generated/api-types.js';
import { fleetStatus } from './fleet-status.js';
import { renderStatus } from './status-table.js';

describe('noderotation status', () => {
  it('outside the window: the next opening, candidates now and then, nothing in flight', () => {
    // One claim old enough now; one that becomes a candidate before the next opening (Sat 02:00 Tokyo).
    const s = snapshot({
      claims: [claim('old', { createdAt: OLD }), claim('almost', { createdAt: OUT_OF_WINDOW - 4 * DAY })],
    });
    const [p] = fleetStatus(s, OUT_OF_WINDOW);
    expect(p).toMatchObject({
      nodePool: 'general',
      windowZone: 'Asia/Tokyo',
      windowOpen: false,
      windowOpensAt: '2027-01-08T17:00:00Z',
      candidates: 1,
      candidatesNextWindow: 2,
      rotation: null,
      controller: null,
    });
    const table = renderStatus([p!], { now: OUT_OF_WINDOW, userZone: 'UTC', wide: true });
    expect(table).toContain('opens Sat 2027-01-09 02:00 Asia/Tokyo (in 62h)');
    expect(table).toContain('1 now, 2 next');
    expect(table).toContain('Fri 2027-01-08 17:00 UTC');
  });

  it('the forecast summed up: the next planned rotations, the smallest margin, the claims at risk', () => {
    // Both are planned into Sat 02:00 Tokyo (Fri 17:00Z), one after the other (t_rot_est 15m + cooldown 10m);
    // 'old' has the smaller margin: deadline Sat 18:00Z − (17:00Z + t_rot 1h17m) = 23h43m. 'late' was created
    // so that its deadline (Thu 12:00Z) comes before any opening: at risk, not planned.
    const s = snapshot({
      claims: [
        claim('old', { createdAt: OLD }),
        claim('almost', { createdAt: OUT_OF_WINDOW - 4 * DAY }),
        claim('late', { createdAt: OUT_OF_WINDOW + 9 * 3_600_000 - 14 * DAY }),
      ],
    });
    const [p] = fleetStatus(s, OUT_OF_WINDOW);
    expect(p?.forecast).toEqual({
      next: [
        { nodeClaim: 'old', plannedStart: '2027-01-08T17:00:00Z' },
        { nodeClaim: 'almost', plannedStart: '2027-01-08T17:25:00Z' },
      ],
      atRisk: 1,
      minMarginSeconds: 23 * 3600 + 43 * 60,
    });
    const wide = renderStatus([p!], { now: OUT_OF_WINDOW, userZone: 'UTC', wide: true });
    expect(wide).toContain('FORECAST');
    expect(wide).toContain('next old Sat 2027-01-09 02:00 Asia/Tokyo, min margin 23h43m, 1 at risk');
    expect(renderStatus([p!], { now: OUT_OF_WINDOW, userZone: 'UTC', wide: false })).not.toContain('FORECAST');
  });

  it('a rotation in flight: claim, phase, since, from the annotations; the controller’s view joined', () => {
    const s0 = snapshot({ claims: [claim('old', { createdAt: OLD })] });
    const s = apply(s0, decide(s0, IN_WINDOW).actions, IN_WINDOW);
    const withStatus: RotationPolicy = {
      ...s.policies[0]!,
      status: {
        conditions: [
          {
            type: 'Ready',
            status: 'True',
            reason: 'Accepted',
            message: 'Governs 1 NodePool.',
            lastTransitionTime: rfc3339(IN_WINDOW),
          },
        ],
        nodePools: [
          { name: 'general', windowOpen: true, candidates: 0, waiting: 'the placeholder is not running yet' },
        ],
      },
    };
    const [p] = fleetStatus({ ...s, policies: [withStatus] }, IN_WINDOW + 5 * 60_000);
    expect(p?.rotation).toEqual({
      nodeClaim: 'old',
      mode: 'surge',
      phase: 'pending',
      since: rfc3339(IN_WINDOW),
      surgeNodeClaim: null,
      surgeNode: null,
    });
    expect(p?.windowClosesAt).toBe('2027-01-05T21:00:00Z');
    expect(p?.controller).toEqual({
      ready: { status: 'True', reason: 'Accepted', message: 'Governs 1 NodePool.' },
      waiting: 'the placeholder is not running yet',
    });
    expect(renderStatus([p!], { now: IN_WINDOW + 5 * 60_000, userZone: 'UTC', wide: false })).toMatch(
      /general +general +open until Wed 2027-01-06 06:00 Asia\/Tokyo +0 now, 0 next +old pending for 5m/,
    );
  });

  it('a conflict and an ungoverned pool: named as such, no window', () => {
    const pool = nodePool({ [A.freeze]: rfc3339(IN_WINDOW + DAY) });
    const twin = { ...policy(), metadata: { name: 'twin' } };
    const [p] = fleetStatus(snapshot({ pool, policies: [policy(), twin] }), IN_WINDOW);
    expect(p).toMatchObject({ policy: null, governance: 'conflict', windowOpen: false, candidatesNextWindow: null });
    const row = renderStatus([p!], { now: IN_WINDOW, userZone: 'UTC', wide: false });
    expect(row).toMatch(/general +\(conflict\) +- +- +- +- +- +conflict: /);
  });
});
