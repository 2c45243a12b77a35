import { describe, expect, it } from 'vitest';
import type { RecurringFreeze, RotationPolicySpec } from '../generated/api-types.js';
import { setPath } from '../util/set-path.js';
import type { Finding } from './findings.js';
import { policyParams } from './params.js';
import { freezeImpact, recurringFreezeFindings } from './recurring-freezes.js';
import { throughputFindings } from './throughput.js';
import { windowFigures } from '../schedule/windows.js';

const NOW = Date.parse('2027-01-04T00:00:00Z'); // a Monday
const H = 3600;
const DAY = 24 * H;
const WED = { timezone: 'UTC', days: ['Wed'], start: '02:00', end: '06:00' };

/** Terms under auto: P = 7 days (one window a week), E = 30 days, t_rot = 1h, so D = K·P. */
function run(recurringFreezes: RecurringFreeze[], K = 2, A?: number): Finding[] {
  const p = policyParams({
    maintenanceWindows: [WED],
    minRotationChances: K,
    recurringFreezes,
  } as unknown as RotationPolicySpec);
  const E = 30 * DAY;
  const P = 7 * DAY;
  const tRot = H;
  const age = A ?? E - K * P - tRot;
  const G = Math.floor((E - age - tRot) / P);
  return recurringFreezeFindings(p, { E, A: age, G, K, P, tRot, auto: A === undefined }, NOW);
}

/** The freeze list with a fix to it applied (paths under spec.recurringFreezes). */
function applied(freezes: RecurringFreeze[], f: Finding): RecurringFreeze[] {
  const doc = setPath({ spec: { recurringFreezes: freezes } }, f.fix?.path ?? '', f.fix?.value ?? '');
  return doc.spec.recurringFreezes;
}

describe('recurring freezes against the figures', () => {
  it.each([
    {
      reason: 'a yearly freeze of 20 days outlasts D = 14 days: the fix keeps 13 days (25h each)',
      freezes: [{ name: 'peak', timezone: 'Europe/Berlin', yearly: { from: '11-10', to: '11-29' } }],
      path: 'spec.recurringFreezes[0].yearly.to',
      value: '11-22',
    },
    {
      reason: 'over the end of February one day less (02-29)',
      freezes: [{ name: 'feb', timezone: 'UTC', yearly: { from: '02-20', to: '03-20' } }],
      path: 'spec.recurringFreezes[0].yearly.to',
      value: '03-03',
    },
    {
      reason: 'a monthly freeze from the end: the fix counts back from the month end',
      freezes: [{ name: 'close', timezone: 'UTC', monthly: { from: -20, to: -1 } }],
      path: 'spec.recurringFreezes[0].monthly.to',
      value: -8,
    },
    {
      reason: 'an RRULE occurrence of 400h: the fix sets the duration to D',
      freezes: [
        { name: 'r', timezone: 'UTC', rrule: 'FREQ=YEARLY;BYMONTH=6', start: '2026-06-01T00:00', duration: '400h' },
      ],
      path: 'spec.recurringFreezes[0].duration',
      value: '336h',
    },
  ])('FreezeOutlastsNodes: $reason', ({ freezes, path, value }) => {
    const out = run(freezes as RecurringFreeze[]).filter((f) => f.reason === 'FreezeOutlastsNodes');
    expect(out.map((f) => [f.field, f.fix?.path, f.fix?.value])).toEqual([['spec.recurringFreezes[0]', path, value]]);
    expect(out[0]?.message).toContain(`"${freezes[0]?.name}"`);
    const fixed = run(applied(freezes, out[0]!));
    expect(fixed.filter((f) => f.reason === 'FreezeOutlastsNodes')).toEqual([]);
  });

  it('FreezeCutsChances: ten frozen days a month can leave a fortnight without a Wednesday (no A > 0 helps)', () => {
    const freezes = [{ name: 'close', timezone: 'UTC', monthly: { from: 1, to: 10 } }] as RecurringFreeze[];
    const out = run(freezes).filter((f) => f.reason === 'FreezeCutsChances');
    expect(out).toHaveLength(1);
    expect(out[0]?.field).toBe('spec.recurringFreezes[0]');
    expect(out[0]?.message).toMatch(
      /\("close"\), in its occurrence .* 0 window\(s\) outside freezes in the 336h .*\(2\)/,
    );
    // D = 14 days of E = 30: no age threshold above zero leaves a fortnight around a 10-day freeze two Wednesdays.
    expect(out[0]?.fix).toBeUndefined();
    expect(out[0]?.message).toMatch(/Shorten the freeze/);
  });

  it('a freeze that covers no window removes no chance, and one shorter than D outlasts nothing', () => {
    const freezes = [
      { name: 'nights', timezone: 'UTC', rrule: 'FREQ=DAILY', start: '2026-01-01T20:00', duration: '4h' },
    ];
    expect(run(freezes as RecurringFreeze[])).toEqual([]);
  });

  it('K = 1: a frozen Wednesday leaves the node that became a candidate after the window before none', () => {
    const freezes = [{ name: 'wk', timezone: 'UTC', yearly: { from: '03-01', to: '03-05' } }] as RecurringFreeze[];
    const out = run(freezes, 1).filter((f) => f.reason === 'FreezeCutsChances');
    expect(out.map((f) => f.message)).toEqual([expect.stringMatching(/candidate at 2027-02-24T06:00:00Z 0 window/)]);
    const A = Number(/^(\d+)h$/.exec(String(out[0]?.fix?.value))?.[1]) * H;
    expect(run(freezes, 1, A).filter((f) => f.reason === 'FreezeCutsChances')).toEqual([]);
  });

  it('a freeze between the windows (Thursday to Friday) removes no chance', () => {
    const freezes = [{ name: 'tf', timezone: 'UTC', yearly: { from: '03-04', to: '03-05' } }] as RecurringFreeze[];
    expect(run(freezes, 1)).toEqual([]);
    expect(run(freezes, 2)).toEqual([]);
  });

  // Wednesdays only; a span short of windows because of one freeze used to be blamed on every freeze it
  // overlapped, a Friday freeze that covers no window included.
  const CLOSE = { name: 'close', timezone: 'UTC', monthly: { from: 1, to: 10 } };
  const FRIDAYS = {
    name: 'fridays',
    timezone: 'UTC',
    rrule: 'FREQ=WEEKLY;BYDAY=FR',
    start: '2026-01-02T00:00',
    duration: '24h',
  };
  it.each([
    { reason: 'alone, a Friday freeze cuts no window: nothing', freezes: [FRIDAYS], blamed: [] },
    { reason: 'beside one that does, it is still not blamed', freezes: [CLOSE, FRIDAYS], blamed: ['"close"'] },
    { reason: 'whatever the order', freezes: [FRIDAYS, CLOSE], blamed: ['"close"'] },
  ])('FreezeCutsChances names only the freezes that take window time: $reason', ({ freezes, blamed }) => {
    const out = run(freezes as RecurringFreeze[]).filter((f) => f.reason === 'FreezeCutsChances');
    expect(out.map((f) => /\(("\w+")\)/.exec(f.message)?.[1])).toEqual(blamed);
  });

  it('layer 2 counts only the windows outside freezes: the share frozen and the fewest chances a batch keeps', () => {
    const freezes = [{ name: 'close', timezone: 'UTC', monthly: { from: 1, to: 10 } }] as RecurringFreeze[];
    const p = policyParams({
      maintenanceWindows: [WED],
      minRotationChances: 2,
      recurringFreezes: freezes,
    } as unknown as RotationPolicySpec);
    const terms = { E: 30 * DAY, A: 16 * DAY - H, G: 2, K: 2, P: 7 * DAY, tRot: H, auto: true };
    const impact = freezeImpact(p, terms, NOW, 16 * DAY - H);
    // A span of 16 days from a window holds 3 Wednesdays; up to 2 of them fall in the 1st–10th (e.g. Feb 3, 10).
    expect(impact).toEqual({ frozenShare: 2 / 3, fewestChances: 0 });
    const w = windowFigures(p.windows, NOW);
    const t = { A: 16 * DAY - H, G: 2, C: 5, N: 6, tRotEst: 30 * 60 };
    expect(throughputFindings(p, w, t).map((f) => f.reason)).toEqual([]);
    const cut = throughputFindings(p, w, { ...t, ...impact }).map((f) => [f.reason, f.message]);
    expect(cut.map(([r]) => r)).toEqual(['ThroughputShortfall', 'ThroughputBurstShortfall']);
    expect(cut[0]?.[1]).toMatch(/recurring freezes take up to 67% of the windows/);
    expect(cut[1]?.[1]).toMatch(/1 window outside recurring freezes × 5/);
    const none = freezeImpact(
      policyParams({ maintenanceWindows: [WED] } as unknown as RotationPolicySpec),
      terms,
      NOW,
      DAY,
    );
    expect(none).toEqual({ frozenShare: 0, fewestChances: null });
  });
});
