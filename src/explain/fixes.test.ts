// Every fix a finding suggests is accepted verbatim (issue 21): for generated policies and NodePools, each finding
// that carries a fix prints its value as it is, the input with that one value set is still valid input (the same
// reading and checks as the CLI's -f), and explaining it again no longer reports that finding at that field.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { readDocuments } from '../api/documents.js';
import type { Fix } from '../derivation/findings.js';
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

const caseArb = fc.record({
  windows: fc.array(windowArb, { minLength: 1, maxLength: 2 }),
  minRotationChances: fc.integer({ min: 1, max: 3 }),
  ageThreshold: fc.oneof(fc.constant(undefined), hours(1, 600)),
  surge: surgeArb,
  nodePoolName: fc.constantFrom('general', 'genral'),
  expireAfter: fc.oneof(hours(24, 800), fc.constant('Never')),
  terminationGracePeriod: fc.oneof(fc.constant(undefined), minutes(10, 2880)),
});

type Case = typeof caseArb extends fc.Arbitrary<infer T> ? T : never;
type Obj = Record<string, unknown>;

function objectsOf(c: Case): { policy: Obj; pool: Obj } {
  const policy = {
    apiVersion: 'noderotation.io/v1alpha1',
    kind: 'RotationPolicy',
    metadata: { name: 'p' },
    spec: {
      nodePools: [c.nodePoolName],
      maintenanceWindows: c.windows.filter((w) => w.start !== w.end),
      minRotationChances: c.minRotationChances,
      ...(c.ageThreshold !== undefined ? { ageThreshold: c.ageThreshold } : {}),
      ...(Object.keys(c.surge).length > 0 ? { surge: c.surge } : {}),
    },
  };
  const pool = {
    apiVersion: 'karpenter.sh/v1',
    kind: 'NodePool',
    metadata: { name: 'general' },
    spec: {
      template: {
        spec: {
          expireAfter: c.expireAfter,
          ...(c.terminationGracePeriod !== undefined ? { terminationGracePeriod: c.terminationGracePeriod } : {}),
          nodeClassRef: { group: 'karpenter.kwok.sh', kind: 'KWOKNodeClass', name: 'default' },
          requirements: [],
        },
      },
    },
  };
  return { policy, pool };
}

/** `obj` with the field at `path` (dots and [i]) set to `value`; the path's parents exist or are created. */
function setPath(obj: Obj, path: string, value: unknown): Obj {
  const copy = structuredClone(obj);
  const keys = path.split('.').flatMap((k) => k.split(/\[(\d+)\]/).filter(Boolean));
  let at: Record<string, unknown> = copy;
  for (const k of keys.slice(0, -1)) at = (at[k] ??= {}) as Record<string, unknown>;
  at[keys.at(-1) as string] = value;
  return copy;
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
          const value = f.fix.value;
          if (!Array.isArray(value)) expect(f.message, f.reason).toContain(String(value));
          const target = f.fix.object === 'NodePool' ? 'pool' : 'policy';
          const fixed = { ...objects, [target]: setPath(objects[target], f.fix.path, value) };
          const after = findingsOf(fixed);
          expect(after.errors, `${f.reason}: ${f.message}`).toEqual([]);
          // The same finding: its reason, at the field its fix sets (a second window's zone is another finding).
          const key = (g: Seen): string => `${g.reason} ${g.fix?.path ?? g.field}`;
          const still = after.findings.filter((g) => key(g) === key(f));
          expect(
            still.map((g) => g.message),
            `fix ${JSON.stringify(f.fix)} of: ${f.message}`,
          ).toEqual([]);
          applied.set(f.reason, (applied.get(f.reason) ?? 0) + 1);
        }
      }),
      { numRuns: 400, seed: 21 },
    );
    // The generator reaches every finding that carries a fix (a fix no case exercises is not tested).
    expect([...applied.keys()].sort()).toEqual(
      [
        'DrainEstimateAboveTGP',
        'HardCapExceeded',
        'MisleadingTimezone',
        'NonPositiveAgeThreshold',
        'OverrideRejected',
        'ProvisioningEstimateAboveReadyTimeout',
        'RetryFasterThanAttempt',
        'SingleRotationChance',
        'UnboundedDrain',
        'UnknownNodePool',
        'WeakenedChances',
      ].sort(),
    );
  });
});
