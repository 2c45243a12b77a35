// `simulate`: one Scenario per file, every other document an error naming it; sizes it cannot finish refused
// with the numbers; progress on stderr for long runs only; stdout the same with or without progress.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { Scenario } from '../src/generated/api-types.js';
import { SimulationLimitError } from '../src/simulate/limits.js';
import { simulate } from '../src/simulate/simulate.js';
import { main } from './main.js';

const ROOT = join(import.meta.dirname, '..');
const WORKED = readFileSync(join(ROOT, 'examples', 'scenarios', 'worked-example.yaml'), 'utf8');

async function sim(stdin: string, args: string[] = [], monotonic?: () => number) {
  let out = '';
  let err = '';
  const code = await main(['simulate', '-f', '-', ...args], {
    stdout: { write: (t: string) => (out += t) },
    stderr: { write: (t: string) => (err += t) },
    readStdin: () => stdin,
    ...(monotonic ? { monotonic } : {}),
  });
  return { code, out, err };
}

/** The worked example with its spec lines replaced (each key once at two-space indent). */
function scenario(changes: Record<string, string>): string {
  let text = WORKED;
  for (const [key, value] of Object.entries(changes)) {
    const re = new RegExp(`^  ${key}:.*$`, 'm');
    text = re.test(text) ? text.replace(re, `  ${key}: ${value}`) : `${text}  ${key}: ${value}\n`;
  }
  return text;
}

describe('simulate: inputs refused with exit 2, naming the document and the field', () => {
  const cases: { reason: string; input: () => string; err: string }[] = [
    {
      reason: 'a later document that does not parse',
      input: () => `${WORKED}---\nspec: [unclosed\n`,
      err: '(stdin), document 2: (document): found YAML that does not parse (line',
    },
    {
      reason: 'a second Scenario',
      input: () => `${WORKED}---\n${WORKED}`,
      err: '(stdin), document 2: found a second document; allowed: one Scenario per file',
    },
    {
      reason: 'a NodePool instead of a Scenario',
      input: () => 'apiVersion: karpenter.sh/v1\nkind: NodePool\nmetadata: {name: a}\n',
      err:
        '(stdin), document 1: apiVersion/kind: found karpenter.sh/v1 NodePool; ' +
        'allowed: noderotation.io/v1alpha1 Scenario',
    },
    {
      reason: 'a Scenario of another version',
      input: () => WORKED.replace('noderotation.io/v1alpha1', 'noderotation.io/v1beta1'),
      err: 'found noderotation.io/v1beta1 Scenario; allowed: noderotation.io/v1alpha1 Scenario',
    },
    { reason: 'no document at all', input: () => '# only a comment\n', err: '(stdin): found no document' },
    {
      reason: 'a list instead of an object',
      input: () => '- a\n- b\n',
      err: 'apiVersion/kind: found an object without apiVersion and kind',
    },
    {
      reason: 'a start date that does not exist',
      input: () => scenario({ start: '"2026-02-30T00:00:00Z"' }),
      err: '(stdin), document 1: spec.start: found "2026-02-30T00:00:00Z"',
    },
    {
      reason: 'more nodes than the simulator takes, with the numbers',
      input: () => scenario({ fleet: '[{count: 60000}, {count: 60000}]' }),
      err: 'spec.fleet: found 120,000 nodes in all; allowed: at most 100,000 nodes over all groups',
    },
    {
      reason: 'too many node-hours, with the numbers and a duration that fits',
      input: () => scenario({ fleet: '[{count: 100000}]', duration: '1000h' }),
      err:
        'spec.duration: found 1000h for 100,000 nodes: 100,000,000 node-hours; ' +
        'allowed: at most 20,000,000 node-hours (nodes × duration), e.g. 200h for 100,000 nodes',
    },
    {
      reason: 'too many node lifetimes (short expireAfter over a long run)',
      input: () =>
        scenario({ fleet: '[{count: 1000}]', duration: '2000h', nodePool: '{name: general, expireAfter: 1h}' }),
      err:
        "spec.duration: found 2000h: about 2,000,000 node lifetimes end in it (each node's age + duration over its " +
        'expireAfter); allowed: at most 100,000',
    },
    {
      reason: 'too much work: many nodes, each expiring in the run',
      input: () => scenario({ fleet: '[{count: 20000, age: 300h}]', duration: '100h' }),
      err:
        'spec.duration: found 100h: 20,000 nodes × about 20,000 lifetimes ending = 400,000,000; ' +
        'allowed: at most 30,000,000 (nodes × lifetimes ending)',
    },
    {
      reason: 'an expireAfter of zero: replaced forever at one instant',
      input: () => scenario({ nodePool: '{name: general, expireAfter: 0s}' }),
      err: 'spec.nodePool.expireAfter: found "0s"; allowed: a lifetime longer than zero, or Never',
    },
    {
      reason: 'an age that puts the creation before 1970',
      input: () => scenario({ fleet: '[{count: 1, age: 99999999999h}]' }),
      err: 'spec.fleet[0].age: found "99999999999h"; allowed: an age that puts the nodes\' creation after 1970-01-01',
    },
    {
      reason: "a fleet group's expireAfter of zero",
      input: () => scenario({ fleet: '[{count: 1, expireAfter: 0h}]' }),
      err: 'spec.fleet[0].expireAfter: found "0h"; allowed: a lifetime longer than zero, or Never',
    },
  ];
  for (const c of cases)
    it(c.reason, async () => {
      const r = await sim(c.input());
      expect(r.code, r.err).toBe(2);
      expect(r.out).toBe('');
      expect(r.err).toContain(c.err);
    });
});

describe('simulate: long runs', () => {
  it('stops a run past the event cap or the decision cap, saying where it got to', () => {
    const s = JSON.parse(JSON.stringify({ ...parseWorked() })) as Scenario;
    expect(() => simulate(s, { maxEvents: 50 })).toThrow(SimulationLimitError);
    expect(() => simulate(s, { maxEvents: 50 })).toThrow(
      /^the simulation passed 50 events at 2027-01-\d\dT[\d:]+Z \(.* of 1440h simulated\) and was stopped; shorten/,
    );
    expect(() => simulate(s, { maxDecisionWork: 1000 })).toThrow(
      /^the simulation passed 1,000 NodeClaims decided on at 2027-01-\d\dT[\d:]+Z \(.* of 1440h simulated\)/,
    );
  });

  it('prints progress on stderr only once a run has taken a few seconds, and stdout does not change', async () => {
    const quiet = await sim(WORKED, ['-o', 'json'], () => 0);
    expect(quiet.code).toBe(0);
    expect(quiet.err).toBe('');
    let t = 0;
    const slow = await sim(WORKED.replace('count: 20', 'count: 200'), ['-o', 'json'], () => (t += 1000));
    const fast = await sim(WORKED.replace('count: 20', 'count: 200'), ['-o', 'json'], () => 0);
    expect(slow.out).toBe(fast.out);
    expect(fast.err).toBe('');
    expect(slow.err).toMatch(/^simulate: 2027-\S+Z of 2027-03-05T00:00:00Z reached, [\d,]+ events, \d+s$/m);
  });

  it('runs the example unchanged through -f -', async () => {
    const r = await sim(WORKED);
    expect(r.code).toBe(0);
    expect(r.out).toMatch(/^graceful rotations\s+150$/m);
  });
});

function parseWorked(): Scenario {
  return {
    apiVersion: 'noderotation.io/v1alpha1',
    kind: 'Scenario',
    metadata: { name: 'worked-example' },
    spec: {
      start: '2027-01-04T00:00:00Z',
      duration: '1440h',
      nodePool: { name: 'general', expireAfter: '336h', terminationGracePeriod: '1h' },
      policy: { maintenanceWindows: [{ timezone: 'Asia/Tokyo', days: ['Wed', 'Sat'], start: '02:00', end: '06:00' }] },
      fleet: [{ count: 20, age: '0h' }],
    },
  };
}
