import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse as parseYaml } from 'yaml';
import { cli } from '../test/support/cli-harness.js';

const ROOT = join(import.meta.dirname, '..');
const ex = (f: string): string => join(ROOT, 'examples', f);

interface Row {
  nodePool: string;
  policy: string | null;
  windowPeriodSeconds: number | null;
  rotationBoundSeconds: number | null;
  ageThresholdSeconds: number | null;
  capacityPerOccurrence: number | null;
  guaranteedChances: number | null;
  findings: { severity: string; reason: string; message: string }[];
}
/** The JSON report, typed for the assertions. */
const report = (out: string): { nodePools: Row[] } => JSON.parse(out) as { nodePools: Row[] };
const row = (out: string, name: string): Row => {
  const found = report(out).nodePools.find((p) => p.nodePool === name);
  if (!found) throw new Error(`no row for ${name}`);
  return found;
};

const NODEPOOL = (name: string, expireAfter: string, extra = '') => `
apiVersion: karpenter.sh/v1
kind: NodePool
metadata: {name: ${name}, labels: {pool: ${name}}}
spec: {template: {spec: {expireAfter: ${expireAfter}, terminationGracePeriod: 1h${extra}}}}
---`;

/** A NodePool, a policy naming it with a typo (a near name) and a plan's rule naming one that is near nothing. */
const TYPOS = `${NODEPOOL('batch', '336h')}
apiVersion: noderotation.io/v1alpha1
kind: RotationPolicy
metadata: {name: typo}
spec: {nodePools: [batchh], maintenanceWindows: [{timezone: UTC, days: [Wed, Sat], start: "02:00", end: "06:00"}]}
---
apiVersion: noderotation.io/v1alpha1
kind: MaintenancePlan
metadata: {name: plan}
spec:
  defaults: {maintenanceWindows: [{timezone: UTC, days: [Wed, Sat], start: "02:00", end: "06:00"}]}
  rules: [{name: gpu, nodePools: [gpus], exclude: true}]
`;

describe('noderotation explain', () => {
  it('prints exactly the documented JSON keys, figures in seconds, and exits 0 without fatal findings', async () => {
    const r = await cli([
      'explain',
      '-o',
      'json',
      '-f',
      ex('rotationpolicy-worked-example.yaml'),
      '-f',
      ex('nodepools.yaml'),
    ]);
    expect(r.code).toBe(0);
    const json = report(r.out);
    expect(Object.keys(json)).toEqual(['nodePools', 'findings']);
    const general = row(r.out, 'general');
    expect(Object.keys(general)).toEqual([
      'nodePool',
      'policy',
      'windowPeriodSeconds',
      'rotationBoundSeconds',
      'leadTimeSeconds',
      'ageThresholdSeconds',
      'guaranteedChances',
      'expectedRotationSeconds',
      'capacityPerOccurrence',
      'findings',
    ]);
    expect(general).toMatchObject({
      policy: 'worked-example',
      windowPeriodSeconds: 345600,
      rotationBoundSeconds: 4620,
      ageThresholdSeconds: 513780,
      capacityPerOccurrence: 10,
      guaranteedChances: 2,
    });
    expect(json.nodePools.map((p) => p.nodePool)).toEqual(['api', 'batch', 'general', 'gpu']);
  });

  it('exits 1 on the weekly fatal example and shows the finding with its fix in the table', async () => {
    const r = await cli(['explain', '-f', ex('rotationpolicy-weekly-fatal.yaml'), '-f', ex('nodepools.yaml')]);
    expect(r.code).toBe(1);
    expect(r.out).toMatch(/^NODEPOOL\s+POLICY\s+PERIOD\(P\)/);
    expect(r.out).toMatch(/general\s+weekly-only\s+168h\s+1h17m\s+337h17m\s+-1h17m/);
    expect(r.out).toContain('FATAL   NonPositiveAgeThreshold: expireAfter 336h is not longer than the lead time');
  });

  it('exits 2 on invalid input and names file, document, field, found and allowed; nothing on stdout', async () => {
    const bad = `${NODEPOOL('a', '336h')}
apiVersion: noderotation.io/v1alpha1
kind: RotationPolicy
metadata: {name: p}
spec:
  nodePools: [a]
  maintenanceWindows: [{timezone: Europe/Berlin, days: [Mon], start: "9:00", end: "10:00"}]
`;
    const r = await cli(['explain', '-f', '-'], bad);
    expect(r.code).toBe(2);
    expect(r.out).toBe('');
    expect(r.err).toContain(
      '(stdin), document 2 (RotationPolicy/p): spec.maintenanceWindows[0].start: found "9:00"; ' +
        'allowed: a 24-hour time "HH:MM"',
    );
  });

  it('names an unknown time zone with its reason, and exits 2', async () => {
    const input = `${NODEPOOL('a', '336h')}
apiVersion: noderotation.io/v1alpha1
kind: RotationPolicy
metadata: {name: p}
spec:
  nodePools: [a]
  maintenanceWindows: [{timezone: Europe/Atlantis, days: [Mon], start: "09:00", end: "10:00"}]
`;
    const r = await cli(['explain', '-f', '-'], input);
    expect(r.code).toBe(2);
    expect(r.err).toContain(
      'spec.maintenanceWindows[0].timezone: found "Europe/Atlantis"; ' +
        'allowed: an IANA time zone name such as Asia/Tokyo, Europe/Berlin or UTC (InvalidTimezone)',
    );
  });

  it('handles several entries, other zones, midnight crossing, unset tGP, Never and K = 1 in one run', async () => {
    const input = `${NODEPOOL('x', '336h')}
apiVersion: karpenter.sh/v1
kind: NodePool
metadata: {name: y, labels: {pool: y}}
spec: {template: {spec: {expireAfter: 504h}}}
---
${NODEPOOL('z', 'Never')}
apiVersion: noderotation.io/v1alpha1
kind: RotationPolicy
metadata: {name: multi}
spec:
  nodePools: [x, y, z]
  minRotationChances: 1
  maintenanceWindows:
    - {timezone: Asia/Kolkata, days: [Tue, Fri], start: "23:30", end: "01:30"}
    - {timezone: UTC, days: [Tue], start: "18:00", end: "21:00"}
`;
    const r = await cli(['explain', '-o', 'json', '-f', '-'], input);
    expect(r.code).toBe(0);
    const [x, y, z] = ['x', 'y', 'z'].map((name) => row(r.out, name)) as [Row, Row, Row];
    // Kolkata Tue 23:30 = Tue 18:00Z, merged with UTC Tue 18:00–21:00 → Tue 18:00Z–21:00Z; Fri 18:00Z–20:00Z.
    // Starts Tue 18:00Z and Fri 18:00Z: gaps 3d and 4d → P = 4d.
    expect(x.windowPeriodSeconds).toBe(4 * 86400);
    expect(x.ageThresholdSeconds).toBe(336 * 3600 - (4 * 86400 + 4620));
    expect(x.capacityPerOccurrence).toBe(Math.ceil(7200 / 1500)); // shortest occurrence is Fri's 2h
    expect(x.findings.map((f: { reason: string }) => f.reason)).toEqual(['SingleRotationChance']);
    expect(y.rotationBoundSeconds).toBe(900 + 3600 + 120);
    expect(y.findings.map((f: { reason: string }) => f.reason).sort()).toEqual([
      'HardCapExceeded',
      'SingleRotationChance',
      'UnboundedDrain',
    ]);
    expect(z).toMatchObject({ ageThresholdSeconds: null, guaranteedChances: null });
  });

  it('explains a MaintenancePlan through the same expansion the function uses', async () => {
    const r = await cli(['explain', '-o', 'json', '-f', ex('maintenanceplan.yaml'), '-f', ex('nodepools.yaml')]);
    expect(r.code).toBe(0);
    const byPool = Object.fromEntries(report(r.out).nodePools.map((p) => [p.nodePool, p.policy]));
    expect(byPool).toEqual({ api: 'platform-api', batch: 'platform-batch', general: 'platform-general', gpu: null });
    const table = await cli(['explain', '-f', ex('maintenanceplan.yaml'), '-f', ex('nodepools.yaml')]);
    expect(table.out).toMatch(/^gpu\s+\(none\)(\s+-){7}\s+excluded by platform\/no-gpu$/m);
  });

  const PLAN = (spec: string) => `
apiVersion: noderotation.io/v1alpha1
kind: MaintenancePlan
metadata: {name: empty}
spec:
${spec}
  defaults: {maintenanceWindows: [{timezone: UTC, days: [Sat], start: "02:00", end: "06:00"}]}
`;
  it.each([
    {
      reason: 'a misspelt value: the value meant, and the fix that sets it',
      spec: '  nodePoolSelector: {matchLabels: {pool: alpah}}',
      line:
        "spec.nodePoolSelector.matchLabels.pool: the plan's spec.nodePoolSelector selects none of the 2 NodePools " +
        'given: no NodePool has pool=alpah (did you mean "alpha"?); a plan that rotates nothing is a mistake. Set ' +
        'spec.nodePoolSelector.matchLabels.pool to alpha.',
    },
    {
      reason: 'a label no NodePool has, near one they have: the key meant, no fix (a key is not a value to set)',
      spec: '  nodePoolSelector: {matchLabels: {pol: alpha}}',
      line:
        "spec.nodePoolSelector.matchLabels.pol: the plan's spec.nodePoolSelector selects none of the 2 NodePools " +
        'given: no NodePool has the label "pol" (did you mean "pool"?); a plan that rotates nothing is a mistake. ' +
        'Fix spec.nodePoolSelector.',
    },
    {
      reason: 'a value near nothing: no did-you-mean, no fix',
      spec: '  nodePoolSelector: {matchLabels: {pool: nothing}}',
      line:
        "spec.nodePoolSelector.matchLabels.pool: the plan's spec.nodePoolSelector selects none of the 2 NodePools " +
        'given: no NodePool has pool=nothing; a plan that rotates nothing is a mistake. Fix spec.nodePoolSelector.',
    },
    {
      reason: 'the selector selects both, and the rules exclude both: the rules named as the cause',
      spec: '  nodePoolSelector: {}\n  rules: [{name: none, nodePoolSelector: {}, exclude: true}]',
      line:
        'spec.nodePoolSelector: the plan governs none of the 2 NodePools given (2 excluded by rules); a plan that ' +
        "rotates nothing is a mistake. Check spec.nodePoolSelector and the rules' exclude.",
    },
  ])('fails loudly when a plan governs no NodePool: $reason', async ({ spec, line }) => {
    const r = await cli(['explain', '-f', '-'], `${NODEPOOL('alpha', '336h')}${NODEPOOL('beta', '336h')}${PLAN(spec)}`);
    expect(r.code).toBe(1);
    expect(r.err.split('\n')).toContain(`FATAL NoGovernedNodePools: MaintenancePlan empty: ${line}`);
  });

  it('warns, without failing, about a NodePool name that matches nothing: in a policy and in a plan rule', async () => {
    const input = TYPOS;
    const r = await cli(['validate', '-f', '-'], input);
    expect(r.code).toBe(0);
    expect(r.err.split('\n').filter((l) => l.startsWith('WARNING'))).toEqual([
      'WARNING UnknownNodePool: RotationPolicy typo: spec.nodePools[0]: the policy names NodePool ' +
        '"batchh", which is not among the 1 NodePools given, so it matches nothing. Did you mean "batch"? Fix the ' +
        'name or remove it.',
      'WARNING UnknownNodePool: MaintenancePlan plan: spec.rules[0].nodePools[0]: rule gpu names NodePool "gpus", ' +
        'which is not among the 1 NodePools given, so it matches nothing. Fix the name or remove it.',
    ]);
    expect(r.out).toContain('1 NodePool checked: 0 fatal, 2 warnings');
  });

  it.each([
    {
      reason: 'validate -o json carries them in findings, each naming its object and field',
      args: ['validate', '-o', 'json'],
    },
    { reason: 'validate -o yaml carries the same', args: ['validate', '-o', 'yaml'] },
    { reason: 'explain -o json too', args: ['explain', '-o', 'json'] },
  ])('findings about whole input objects: $reason, as many as the text counts, none on stderr', async ({ args }) => {
    const input = TYPOS;
    const text = await cli(['validate', '-f', '-'], input);
    expect(text.out).toContain('1 NodePool checked: 0 fatal, 2 warnings');
    const r = await cli([...args, '-f', '-'], input);
    expect(r.code).toBe(0);
    expect(r.err).toBe('');
    const out = (args[2] === 'yaml' ? parseYaml(r.out) : JSON.parse(r.out)) as {
      nodePools: Row[];
      findings: { object: string; field: string; reason: string; fix?: object }[];
    };
    expect(out.nodePools.flatMap((p) => p.findings)).toEqual([]);
    expect(out.findings.map((f) => [f.object, f.field, f.reason, f.fix])).toEqual([
      [
        'RotationPolicy typo',
        'spec.nodePools[0]',
        'UnknownNodePool',
        { object: 'RotationPolicy', path: 'spec.nodePools[0]', value: 'batch' },
      ],
      ['MaintenancePlan plan', 'spec.rules[0].nodePools[0]', 'UnknownNodePool', undefined],
    ]);
  });

  it('counts NodeClaims for N and reports ShortLead per claim', async () => {
    const claims = [1, 2]
      .map(
        (i) => `
apiVersion: karpenter.sh/v1
kind: NodeClaim
metadata: {name: c${i}, labels: {karpenter.sh/nodepool: general}}
spec: {expireAfter: ${i === 1 ? '100h' : '336h'}, terminationGracePeriod: 1h}
---`,
      )
      .join('');
    const r = await cli(
      ['explain', '-o', 'json', '-f', ex('rotationpolicy-worked-example.yaml'), '-f', ex('nodepools.yaml'), '-f', '-'],
      claims,
    );
    const general = row(r.out, 'general');
    expect(
      general.findings.map((f: { reason: string; message: string }) => `${f.reason}:${f.message.split(' ')[1]}`),
    ).toEqual(['ShortLead:c1']);
  });
});

/** NodeClaims of the general NodePool (expireAfter 336h, terminationGracePeriod 1h), as a YAML stream. */
const nodeClaims = (list: [string, string][]): string =>
  list
    .map(
      ([n, t]) => `
apiVersion: karpenter.sh/v1
kind: NodeClaim
metadata: {name: ${n}, creationTimestamp: "${t}", labels: {karpenter.sh/nodepool: general}}
spec: {expireAfter: 336h, terminationGracePeriod: 1h}
---`,
    )
    .join('');

describe('noderotation explain: the forecast per NodeClaim', () => {
  it('plans the claims one at a time, earliest deadline first, with their margins', async () => {
    // Deadline 2027-01-08T00:00Z for both; t_rot = 15m + 1h + 120s = 4620 s; the next occurrence is Wed 02:00 JST
    // (Tue 17:00Z); t_rot_est 900 s + cooldownAfter 600 s between the two starts.
    const claims = nodeClaims([
      ['b', '2026-12-25T00:00:00Z'],
      ['a', '2026-12-25T00:00:00Z'],
    ]);
    const args = ['-f', ex('rotationpolicy-worked-example.yaml'), '-f', ex('nodepools.yaml'), '-f', '-'];
    const r = await cli(['explain', '-o', 'json', '--now', '2027-01-04T00:00:00Z', ...args], claims);
    const general = row(r.out, 'general') as unknown as { forecast: Record<string, unknown>[] };
    expect(general.forecast).toEqual([
      {
        nodeClaim: 'a',
        deadline: '2027-01-08T00:00:00Z',
        dueBy: '2027-01-08T00:00:00Z',
        eligibleAt: '2026-12-30T22:43:00Z',
        plannedWindow: { start: '2027-01-05T17:00:00Z', end: '2027-01-05T21:00:00Z' },
        plannedStart: '2027-01-05T17:00:00Z',
        rotationBoundSeconds: 4620,
        marginSeconds: 55 * 3600 - 4620,
        atRisk: false,
        deadlineInFreeze: null,
      },
      {
        nodeClaim: 'b',
        deadline: '2027-01-08T00:00:00Z',
        dueBy: '2027-01-08T00:00:00Z',
        eligibleAt: '2026-12-30T22:43:00Z',
        plannedWindow: { start: '2027-01-05T17:00:00Z', end: '2027-01-05T21:00:00Z' },
        plannedStart: '2027-01-05T17:25:00Z',
        rotationBoundSeconds: 4620,
        marginSeconds: 55 * 3600 - 1500 - 4620,
        atRisk: false,
        deadlineInFreeze: null,
      },
    ]);
    // Without NodeClaims there is nothing to forecast, and the key is absent (see the documented keys above).
    const none = await cli(['explain', '-o', 'json', ...args.slice(0, 4)]);
    expect(row(none.out, 'general')).not.toHaveProperty('forecast');
  });
});

describe('noderotation explain: deadlines inside a recurring freeze', () => {
  // Created 2027-11-14 with expireAfter 336h: deadline 2027-11-28T00:00Z, inside black-friday (27 November to
  // 1 December, New York days); created a week earlier: 2027-11-21, outside every freeze.
  const claims = nodeClaims([
    ['in-bf', '2027-11-14T00:00:00Z'],
    ['before', '2027-11-07T00:00:00Z'],
  ]);
  const args = ['--now', '2027-11-06T00:00:00Z', '-f', ex('rotationpolicy-recurring-freezes.yaml')];
  const files = [...args, '-f', ex('nodepools.yaml'), '-f', '-'];

  it('-o json and -o yaml name the freeze of each deadline inside one; the table lists those claims', async () => {
    const r = await cli(['explain', '-o', 'json', ...files], claims);
    const general = row(r.out, 'general') as unknown as { forecast: Record<string, unknown>[] };
    expect(general.forecast.map((f) => [f.nodeClaim, f.deadline, f.deadlineInFreeze])).toEqual([
      ['before', '2027-11-21T00:00:00Z', null],
      ['in-bf', '2027-11-28T00:00:00Z', 'black-friday'],
    ]);
    const y = await cli(['explain', '-o', 'yaml', ...files], claims);
    expect(y.out).toContain('deadlineInFreeze: black-friday');
    expect(y.out).toContain('deadlineInFreeze: null');
    const t = await cli(['explain', ...files], claims);
    expect(t.out).toContain('\n  1 claim with a forced deadline inside a freeze:\n');
    expect(t.out).toContain('\n    in-bf  deadline 2027-11-28T00:00:00Z  in black-friday\n');
    expect(t.out).not.toMatch(/before {2}deadline/);
  });
});

describe('noderotation validate and usage', () => {
  it("validate prints one line per finding and a count, with explain's exit status", async () => {
    const r = await cli(['validate', '-f', ex('rotationpolicy-weekly-fatal.yaml'), '-f', ex('nodepools.yaml')]);
    expect(r.code).toBe(1);
    expect(r.out).toMatch(/^FATAL general NonPositiveAgeThreshold: /m);
    expect(r.out).toMatch(/4 NodePools checked: 1 fatal, 0 warnings/);
  });

  it('rejects unknown commands, flags and output formats with exit 2', async () => {
    expect((await cli(['frobnicate'])).code).toBe(2);
    expect((await cli(['explain', '--bogus'])).code).toBe(2);
    expect((await cli(['explain', '-o', 'xml', '-f', ex('nodepools.yaml')])).code).toBe(2);
    expect((await cli(['explain'])).err).toContain('no input');
  });
});
