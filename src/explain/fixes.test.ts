// Every fix a finding suggests is accepted verbatim (issue 21): for generated policies, or MaintenancePlans, and
// NodePools, each finding that carries a fix prints its value as it is, the input with that one value set is still
// valid input (the same reading and checks as the CLI's -f), and explaining it again no longer reports that finding
// at that field. A fix set in a plan reaches every NodePool whose settings come from the same place, so it must
// also leave every other NodePool of the plan without a new fatal finding.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { readDocuments } from '../api/documents.js';
import type { Fix } from '../derivation/findings.js';
import { utcTime } from '../derivation/freezes.js';
import { setPath } from '../util/set-path.js';
import { explain } from './explain.js';

const NOW = Date.parse('2027-01-04T00:00:00Z');
const DAYS = ['Mon', 'Tue', 'Wed', 'Thu', 'Fri', 'Sat', 'Sun'] as const;
const ZONES = ['UTC', 'Asia/Tokyo', 'Europe/Berlin', 'America/New_York', 'EST', 'CET', 'Etc/GMT+9', 'Etc/GMT-2'];

const hours = (lo: number, hi: number): fc.Arbitrary<string> => fc.integer({ min: lo, max: hi }).map((h) => `${h}h`);
const minutes = (lo: number, hi: number): fc.Arbitrary<string> => fc.integer({ min: lo, max: hi }).map((m) => `${m}m`);
const hhmm = fc.integer({ min: 0, max: 23 }).map((h) => `${String(h).padStart(2, '0')}:00`);

const windowArb = fc.record({
  timezone: fc.constantFrom(...ZONES),
  days: fc.subarray([...DAYS], { minLength: 1 }),
  start: hhmm,
  end: hhmm,
});

const surgeArb = fc.record(
  {
    readyTimeout: minutes(5, 120),
    retryBackoff: minutes(1, 180),
    provisioningEstimate: minutes(1, 180),
    drainEstimate: minutes(1, 180),
  },
  { requiredKeys: [] },
);

/** Scheduled freezes around NOW: some over, some under way, some to come; from an hour to a month long. */
const freezesArb = fc
  .array(fc.record({ from: fc.integer({ min: -400, max: 400 }), hours: fc.integer({ min: 1, max: 720 }) }), {
    maxLength: 2,
  })
  .map((fs) =>
    fs.map(({ from, hours }) => ({
      start: utcTime(NOW + from * 3_600_000),
      end: utcTime(NOW + (from + hours) * 3_600_000),
    })),
  );

const md = (m: number, d: number): string => `${String(m).padStart(2, '0')}-${String(d).padStart(2, '0')}`;
/** Recurring freezes of each kind, a day to a few weeks long, some of them soon after NOW. */
const recurringArb = fc
  .array(
    fc.oneof(
      fc
        .record({
          m: fc.integer({ min: 1, max: 12 }),
          d: fc.integer({ min: 1, max: 28 }),
          days: fc.integer({ min: 0, max: 30 }),
        })
        .map(({ m, d, days }) => {
          const to = new Date(Date.UTC(2027, m - 1, d + days));
          return { yearly: { from: md(m, d), to: md(to.getUTCMonth() + 1, to.getUTCDate()) } };
        }),
      fc
        .record({
          from: fc.integer({ min: -10, max: 28 }).filter((d) => d !== 0),
          days: fc.integer({ min: 0, max: 12 }),
        })
        .map(({ from, days }) => ({
          monthly: { from, to: from > 0 ? Math.min(31, from + days) : Math.min(-1, from + days) },
        })),
      fc
        .record({
          rule: fc.constantFrom('FREQ=WEEKLY;BYDAY=MO', 'FREQ=MONTHLY;BYDAY=1FR', 'FREQ=YEARLY;BYMONTH=1;BYDAY=2WE'),
          hours: fc.integer({ min: 1, max: 400 }),
        })
        .map(({ rule, hours }) => ({ rrule: rule, start: '2026-01-05T00:00', duration: `${hours}h` })),
    ),
    { maxLength: 1 },
  )
  .map((fs) => fs.map((f, i) => ({ name: `f${i}`, timezone: 'Europe/Berlin', ...f })));

const caseArb = fc.record({
  windows: fc.array(windowArb, { minLength: 1, maxLength: 2 }),
  freezes: freezesArb,
  recurringFreezes: recurringArb,
  minRotationChances: fc.integer({ min: 1, max: 3 }),
  ageThreshold: fc.oneof(fc.constant(undefined), hours(1, 600)),
  surge: surgeArb,
  // By name or by label, now and then misspelt (the pool is general, labelled tier: general).
  target: fc.oneof(
    fc.constantFrom('general', 'genral').map((n) => ({ nodePools: [n] })),
    fc.constantFrom('general', 'genral', 'gpu').map((tier) => ({ nodePoolSelector: { matchLabels: { tier } } })),
  ),
  expireAfter: fc.oneof(hours(24, 800), fc.constant('Never')),
  terminationGracePeriod: fc.oneof(fc.constant(undefined), minutes(10, 2880)),
});

type Case = typeof caseArb extends fc.Arbitrary<infer T> ? T : never;
type Obj = Record<string, unknown>;

/** A NodePool manifest with the template fields the derivation reads. */
function nodePoolObject(p: {
  name: string;
  labels?: Record<string, string>;
  expireAfter: string;
  terminationGracePeriod: string | undefined;
}): Obj {
  return {
    apiVersion: 'karpenter.sh/v1',
    kind: 'NodePool',
    metadata: { name: p.name, ...(p.labels ? { labels: p.labels } : {}) },
    spec: {
      template: {
        spec: {
          expireAfter: p.expireAfter,
          ...(p.terminationGracePeriod !== undefined ? { terminationGracePeriod: p.terminationGracePeriod } : {}),
          nodeClassRef: { group: 'karpenter.kwok.sh', kind: 'KWOKNodeClass', name: 'default' },
          requirements: [],
        },
      },
    },
  };
}

function objectsOf(c: Case): { policy: Obj; pool: Obj } {
  const policy = {
    apiVersion: 'noderotation.io/v1alpha1',
    kind: 'RotationPolicy',
    metadata: { name: 'p' },
    spec: {
      ...c.target,
      maintenanceWindows: c.windows.filter((w) => w.start !== w.end),
      minRotationChances: c.minRotationChances,
      ...(c.ageThreshold !== undefined ? { ageThreshold: c.ageThreshold } : {}),
      ...(Object.keys(c.surge).length > 0 ? { surge: c.surge } : {}),
      ...(c.freezes.length > 0 ? { freezes: c.freezes } : {}),
      ...(c.recurringFreezes.length > 0 ? { recurringFreezes: c.recurringFreezes } : {}),
    },
  };
  const pool = nodePoolObject({ name: 'general', labels: { tier: 'general' }, ...c });
  return { policy, pool };
}

interface Seen {
  reason: string;
  field: string;
  message: string;
  fix?: Fix;
}

/** Every finding of a run with its field: per NodePool, and about the input objects. */
function findingsOf(objects: { policy: Obj; pool: Obj }): { errors: string[]; findings: Seen[] } {
  const inputs = readDocuments([], [{ name: 'generated', values: [objects.policy, objects.pool] }]);
  if (inputs.errors.length > 0) return { errors: inputs.errors.map((e) => `${e.path}: ${e.found}`), findings: [] };
  const r = explain(inputs, NOW);
  const pools = r.report.nodePools.flatMap((p) =>
    p.findings.map((f) => ({ ...f, field: `${p.nodePool}: ${f.reason}` })),
  );
  return { errors: r.planErrors.map((e) => e.path), findings: [...r.inputFindings, ...pools] };
}

/** The message prints the fix's value as it is (a list is too long to print: it names the item to remove). */
function expectPrinted(f: Seen): void {
  const value = f.fix?.value;
  if (value !== undefined && !Array.isArray(value)) expect(f.message, f.reason).toContain(String(value));
}

/** The findings about the NodePool's lifetime against the windows and EKS Auto Mode's cap. */
const LIFETIME = new Set(['NonPositiveAgeThreshold', 'AggressiveAgeThreshold', 'HardCapExceeded']);

describe('suggested fixes', () => {
  it('each is printed as it is, keeps the input valid, and clears its finding', () => {
    const applied = new Map<string, number>();
    fc.assert(
      fc.property(caseArb, (c) => {
        const objects = objectsOf(c);
        const before = findingsOf(objects);
        fc.pre(before.errors.length === 0);
        for (const f of before.findings) {
          if (f.fix === undefined) continue;
          expectPrinted(f);
          const target = f.fix.object === 'NodePool' ? 'pool' : 'policy';
          const fixed = { ...objects, [target]: setPath(objects[target], f.fix.path, f.fix.value) };
          const after = findingsOf(fixed);
          expect(after.errors, `${f.reason}: ${f.message}`).toEqual([]);
          // The same finding: its reason, at the field its fix sets (a second window's zone is another finding).
          const key = (g: Seen): string => `${g.reason} ${g.fix?.path ?? g.field}`;
          const still = after.findings.filter((g) => key(g) === key(f));
          expect(
            still.map((g) => g.message),
            `fix ${JSON.stringify(f.fix)} of: ${f.message}`,
          ).toEqual([]);
          // No dead end: a fix to the NodePool's lifetime brings none of the lifetime's other findings (raising
          // expireAfter out of NonPositiveAgeThreshold into AggressiveAgeThreshold, whose raise is HardCapExceeded).
          if (f.fix.path === 'spec.template.spec.expireAfter') {
            const had = new Set(before.findings.map((g) => g.reason));
            const gained = after.findings.map((g) => g.reason).filter((r) => LIFETIME.has(r) && !had.has(r));
            expect(gained, `fix ${JSON.stringify(f.fix)} of: ${f.message}`).toEqual([]);
          }
          applied.set(f.reason, (applied.get(f.reason) ?? 0) + 1);
          if (f.fix.path.startsWith('spec.recurringFreezes'))
            applied.set(`${f.reason} (recurring)`, (applied.get(`${f.reason} (recurring)`) ?? 0) + 1);
        }
      }),
      { numRuns: 400, seed: 21 },
    );
    // The generator reaches every finding that carries a fix (a fix no case exercises is not tested).
    expect([...applied.keys()].sort()).toEqual(
      [
        'AggressiveAgeThreshold',
        'DrainEstimateAboveTGP',
        'FreezeCutsChances',
        'FreezeOutlastsNodes',
        'FreezeOutlastsNodes (recurring)',
        'HardCapExceeded',
        'MisleadingTimezone',
        'NonPositiveAgeThreshold',
        'OverrideRejected',
        'ProvisioningEstimateAboveReadyTimeout',
        'RetryFasterThanAttempt',
        'SelectorMatchesNothing',
        'SingleRotationChance',
        'UnboundedDrain',
        'UnknownNodePool',
        'WeakenedChances',
      ].sort(),
    );
  });
});

// MaintenancePlans: defaults and 1–3 rules (by name, a name with a typo, or by label; now and then excluding),
// each with partial overrides, over 1–3 NodePools. Windows never start where they end, so the plan is valid input.
const POOLS = ['batch', 'general', 'gpu'] as const;
const planWindowArb = fc
  .record({ w: windowArb, hours: fc.integer({ min: 1, max: 23 }) })
  .map(({ w, hours }) => ({ ...w, end: `${String((Number(w.start.slice(0, 2)) + hours) % 24).padStart(2, '0')}:00` }));

const settingsArb = (required: ('maintenanceWindows' | 'minRotationChances')[]) =>
  fc.record(
    {
      maintenanceWindows: fc.array(planWindowArb, { minLength: 1, maxLength: 2 }),
      minRotationChances: fc.integer({ min: 1, max: 3 }),
      ageThreshold: hours(1, 600),
      surge: surgeArb,
      freezes: freezesArb.filter((f) => f.length > 0),
    },
    { requiredKeys: required },
  );

const ruleArb = fc.record({
  target: fc.oneof(
    fc.subarray([...POOLS, 'genral'], { minLength: 1 }).map((nodePools) => ({ nodePools })),
    // 'aa' matches no NodePool: one edit from 'a', its fix when a NodePool of the plan has tier a.
    fc.constantFrom('a', 'b', 'aa').map((tier) => ({ nodePoolSelector: { matchLabels: { tier } } })),
  ),
  exclude: fc.integer({ min: 0, max: 4 }).map((n) => n === 0),
  overrides: settingsArb([]),
});

const poolArb = fc.record({
  tier: fc.constantFrom('a', 'b'),
  // Short lives often: a value set for a long-lived pool is then apt to be fatal for a short-lived one beside it.
  expireAfter: fc.oneof(hours(24, 800), hours(24, 120), fc.constant('Never')),
  terminationGracePeriod: fc.oneof(fc.constant(undefined), minutes(10, 2880)),
});

const planCaseArb = fc.record({
  defaults: settingsArb(['maintenanceWindows', 'minRotationChances']),
  rules: fc.array(ruleArb, { minLength: 1, maxLength: 3 }),
  pools: fc
    .subarray([...POOLS], { minLength: 1 })
    .chain((names) => fc.tuple(...names.map((name) => poolArb.map((p) => ({ name, ...p }))))),
});

type PlanCase = typeof planCaseArb extends fc.Arbitrary<infer T> ? T : never;
interface PlanObjects {
  plan: Obj;
  pools: Obj[];
}

function planObjectsOf(c: PlanCase): PlanObjects {
  const rules = c.rules.map((r, i) => ({
    name: `r${i}`,
    ...r.target,
    ...(r.exclude ? { exclude: true } : Object.keys(r.overrides).length > 0 ? { overrides: r.overrides } : {}),
  }));
  const plan = {
    apiVersion: 'noderotation.io/v1alpha1',
    kind: 'MaintenancePlan',
    metadata: { name: 'plan' },
    spec: { defaults: c.defaults, rules },
  };
  const pools = c.pools.map((p) => nodePoolObject({ ...p, labels: { tier: p.tier } }));
  return { plan, pools };
}

interface PlanSeen extends Seen {
  /** The NodePool the finding is about; null for a finding about the plan as a whole. */
  nodePool: string | null;
}

interface PlanRun {
  errors: string[];
  findings: PlanSeen[];
  /** Each NodePool's fatal reasons. */
  fatal: Map<string, string[]>;
}

function planRun(objects: PlanObjects): PlanRun {
  const inputs = readDocuments([], [{ name: 'generated', values: [objects.plan, ...objects.pools] }]);
  if (inputs.errors.length > 0)
    return { errors: inputs.errors.map((e) => `${e.path}: ${e.found}`), findings: [], fatal: new Map() };
  const r = explain(inputs, NOW);
  const pools = r.report.nodePools.flatMap((p) =>
    p.findings.map((f) => ({ ...f, field: `${p.nodePool}: ${f.reason}`, nodePool: p.nodePool })),
  );
  const fatal = new Map(
    r.report.nodePools.map((p) => [p.nodePool, p.findings.filter((f) => f.severity === 'fatal').map((f) => f.reason)]),
  );
  return {
    errors: r.planErrors.map((e) => `${e.path}: ${e.found}`),
    findings: [...r.inputFindings.map((f) => ({ ...f, nodePool: null })), ...pools],
    fatal,
  };
}

/** The objects with the fix applied: to the plan, or to the NodePool the finding is about. */
function applied(objects: PlanObjects, f: PlanSeen): PlanObjects {
  const fix = f.fix as Fix;
  if (fix.object === 'MaintenancePlan') return { ...objects, plan: setPath(objects.plan, fix.path, fix.value) };
  expect(fix.object, `${f.reason}: a RotationPolicy fix for a generated policy`).toBe('NodePool');
  const pools = objects.pools.map((p) =>
    (p.metadata as { name: string }).name === f.nodePool ? setPath(p, fix.path, fix.value) : p,
  );
  return { ...objects, pools };
}

describe('suggested fixes for NodePools a MaintenancePlan governs', () => {
  it('go into the plan (or the NodePool), keep it valid, clear the finding and make no other NodePool fatal', () => {
    const reached = new Map<string, number>();
    fc.assert(
      fc.property(planCaseArb, (c) => {
        const objects = planObjectsOf(c);
        const before = planRun(objects);
        fc.pre(before.errors.length === 0);
        for (const f of before.findings) {
          if (f.fix === undefined) continue;
          expectPrinted(f);
          // A fix moved into the plan names the plan, and its message says where (the object already names the
          // plan of a finding about the plan itself).
          if (f.fix.object === 'MaintenancePlan' && f.nodePool !== null) {
            expect(f.fix.name, f.message).toBe('plan');
            expect(f.message, f.reason).toContain(`Set it in MaintenancePlan plan at ${f.fix.path}`);
          }
          const after = planRun(applied(objects, f));
          expect(after.errors, `${f.reason}: ${f.message}`).toEqual([]);
          const key = (g: PlanSeen): string => `${g.nodePool} ${g.reason} ${g.fix?.path ?? g.field}`;
          // A plan field several NodePools' findings point at gets one value, which clears them all: pasting the
          // first of them must not leave another NodePool's (a shared freeze, three different ends).
          const fix = f.fix;
          const sharing =
            fix.object === 'MaintenancePlan'
              ? before.findings.filter((g) => g.fix?.object === 'MaintenancePlan' && g.fix.path === fix.path)
              : [f];
          expect([...new Set(sharing.map((g) => JSON.stringify(g.fix?.value)))], `one value at ${fix.path}`).toEqual([
            JSON.stringify(fix.value),
          ]);
          const still = after.findings.filter((g) => sharing.some((h) => key(g) === key(h)));
          expect(
            still.map((g) => `${g.nodePool}: ${g.message}`),
            `fix ${JSON.stringify(f.fix)} of: ${f.message}`,
          ).toEqual([]);
          // A per-NodePool fix must not break the plan's other NodePools. (A plan-level fix, a misspelt name in
          // a rule, is exempt: the rule then decides the NodePool it was written for, as its author meant.)
          if (f.nodePool !== null)
            for (const [pool, fatal] of after.fatal) {
              if (pool === f.nodePool) continue;
              const was = before.fatal.get(pool) ?? [];
              expect(
                fatal.filter((r) => !was.includes(r)),
                `fix ${JSON.stringify(f.fix)} for ${f.nodePool} makes ${pool} fatal`,
              ).toEqual([]);
            }
          const where = f.fix.object !== 'MaintenancePlan' ? 'NodePool' : f.fix.path.replace(/^(spec\.\w+).*/, '$1');
          reached.set(`${f.reason} ${where}`, (reached.get(`${f.reason} ${where}`) ?? 0) + 1);
        }
      }),
      { numRuns: 120, seed: 21 },
    );
    // Every finding whose fix is a policy field is reached with its fix in the plan, in rules and in the defaults
    // alike, and every NodePool fix as it is.
    const policyFixes = [
      'AggressiveAgeThreshold',
      'DrainEstimateAboveTGP',
      'FreezeOutlastsNodes',
      'MisleadingTimezone',
      'OverrideRejected',
      'ProvisioningEstimateAboveReadyTimeout',
      'RetryFasterThanAttempt',
      'SingleRotationChance',
      'WeakenedChances',
    ];
    const poolFixes = [
      'HardCapExceeded',
      'NonPositiveAgeThreshold',
      'OverrideRejected',
      'UnboundedDrain',
      'WeakenedChances',
    ];
    const keys = [...reached.keys()];
    const inPlan = (where: string): string[] =>
      [...new Set(keys.filter((k) => k.endsWith(` ${where}`)).map((k) => k.split(' ')[0] as string))].sort();
    expect([...new Set([...inPlan('spec.rules'), ...inPlan('spec.defaults')])].sort()).toEqual(
      [...policyFixes, 'SelectorMatchesNothing', 'UnknownNodePool'].sort(),
    );
    expect(inPlan('spec.defaults').length).toBeGreaterThanOrEqual(policyFixes.length - 1);
    expect(inPlan('NodePool')).toEqual(poolFixes);
  });
});
