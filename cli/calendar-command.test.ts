// `noderotation calendar`: a thin shell over the calendar builder (src/calendar/): the same bytes as the builder
// for the same objects, MaintenancePlans expanded as explain expands them, the NodePool filter and the horizon,
// and its usage errors (exit 2, one line naming the flag and what it takes).
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import ICAL from 'ical.js';
import { afterAll, describe, expect, it } from 'vitest';
import { buildCalendar } from '../src/calendar/calendar.js';
import { calendarModel } from '../src/calendar/world.js';
import { claim, DAY, nodePool, policy } from '../test/support/fixtures.js';
import { cli } from '../test/support/cli-harness.js';
import { docBlocks } from '../test/support/docs.js';

const NOW = Date.parse('2027-01-04T00:00:00Z');
const dir = mkdtempSync(join(tmpdir(), 'nr-calendar-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const ex = (p: string): string => join(import.meta.dirname, '..', 'examples', p);

const thePolicy = policy({
  maintenanceWindows: [{ timezone: 'Europe/Berlin', days: ['Sat'], start: '22:00', end: '04:00' }],
  freezes: [{ start: '2027-01-20T00:00:00Z', end: '2027-01-22T00:00:00Z', reason: 'release' }],
});
const claims = [claim('a', { createdAt: NOW - 9 * DAY }).claim, claim('b', { createdAt: NOW - 3 * DAY }).claim];
const file = (name: string, docs: object[]): string => {
  const path = join(dir, name);
  writeFileSync(path, docs.map((d) => JSON.stringify(d)).join('\n---\n'));
  return path;
};
const objects = file('objects.yaml', [thePolicy, nodePool(), ...claims]);

/** The UIDs and summaries of the events ical.js reads from the calendar. */
function summaries(ics: string): string[] {
  const cal = ICAL.Component.fromString(ics);
  return cal
    .getAllSubcomponents('vevent')
    .filter((v) => !v.hasProperty('recurrence-id'))
    .map((v) => String(v.getFirstPropertyValue('summary')));
}

describe('noderotation calendar', () => {
  it('writes the builder’s calendar for the objects of -f, byte for byte, and exits 0', async () => {
    const r = await cli(['calendar', '-f', objects]);
    expect([r.code, r.err]).toEqual([0, '']);
    const expected = buildCalendar(
      calendarModel({ policies: [thePolicy], nodePools: [nodePool()], nodeClaims: claims }, NOW, {
        horizonSeconds: 35 * 86400,
      }),
    );
    expect(r.out).toBe(expected);
    expect(summaries(r.out)).toEqual([
      'Maintenance window: NodePool general',
      'Freeze: NodePool general (RotationPolicy general: spec.freezes[0])',
      'Rotation: NodeClaim b (NodePool general)',
      // Due on Saturday 00:00 UTC, before that evening's window: Karpenter expires it.
      'AT RISK: NodeClaim a (NodePool general) is expired by Karpenter, not rotated',
    ]);
  });

  it.each([
    { reason: 'a horizon of a day leaves the forecast out', args: ['--horizon', '1d'], forecast: 0 },
    { reason: 'a horizon in hours (a Go duration) as well', args: ['--horizon', '240h'], forecast: 2 },
    { reason: '--now moves the clock: DTSTAMP follows it', args: ['--now', '2027-01-05T00:00:00Z'], forecast: 2 },
  ])('$reason', async ({ args, forecast }) => {
    const r = await cli(['calendar', '-f', objects, ...args]);
    expect(r.code).toBe(0);
    expect(summaries(r.out).filter((s) => /^(Rotation|AT RISK):/.test(s)).length).toBe(forecast);
    const stamp = args[0] === '--now' ? '20270105T000000Z' : '20270104T000000Z';
    expect(r.out).toContain(`\r\nDTSTAMP:${stamp}\r\n`);
  });

  it('expands MaintenancePlans into their policies as explain does; --nodepool keeps the NodePools named', async () => {
    const files = ['-f', ex('maintenanceplan.yaml'), '-f', ex('nodepools.yaml')];
    const all = await cli(['calendar', ...files]);
    expect(all.code).toBe(0);
    expect(all.err).toBe('note: no NodeClaims in the input: the calendar has no forecast (pass them with -f)\n');
    const windows = summaries(all.out).filter((s) => s.startsWith('Maintenance window'));
    expect(windows.length).toBeGreaterThan(1);
    const one = await cli(['calendar', ...files, '--nodepool', 'batch', '--nodepool', 'api']);
    expect(summaries(one.out).filter((s) => s.startsWith('Maintenance window'))).toEqual([
      'Maintenance window: NodePool api',
      'Maintenance window: NodePool batch',
    ]);
  });

  it.each([
    {
      reason: 'a NodePool the input does not have',
      args: ['-f', objects, '--nodepool', 'nope'],
      err:
        'noderotation calendar: --nodepool nope: no such NodePool in the input; the NodePools: general; ' +
        "see 'noderotation calendar --help'\n",
    },
    {
      reason: 'a horizon that is no duration',
      args: ['-f', objects, '--horizon', 'soon'],
      err:
        'noderotation calendar: --horizon soon: expected a positive duration of at most 366d (e.g. 35d, 720h); ' +
        "see 'noderotation calendar --help'\n",
    },
    {
      reason: 'a horizon beyond a year',
      args: ['-f', objects, '--horizon', '400d'],
      err:
        'noderotation calendar: --horizon 400d: expected a positive duration of at most 366d (e.g. 35d, 720h); ' +
        "see 'noderotation calendar --help'\n",
    },
    {
      reason: 'no policy or plan for the NodePools',
      args: ['-f', ex('nodepools.yaml')],
      err:
        'invalid input:\n  no RotationPolicy or MaintenancePlan (noderotation.io/v1alpha1) in the input: pass at ' +
        'least one with -f\n',
    },
  ])('exit 2: $reason', async ({ args, err }) => {
    const r = await cli(['calendar', ...args]);
    expect([r.code, r.out, r.err]).toEqual([2, '', err]);
  });

  it('--kubeconfig reads the cluster as --from-cluster does (it implies it)', async () => {
    const r = await cli(['calendar', '--kubeconfig', '/nonexistent/kubeconfig']);
    expect(r.code).toBe(2);
    expect(r.err).toMatch(/^noderotation calendar: --from-cluster: .*\/nonexistent\/kubeconfig/);
  });

  it('the offline examples of docs/calendar.md and the README run as written', async () => {
    const lines = [...docBlocks('docs/calendar.md', '# The calendar'), ...docBlocks('README.md', '## Using it')]
      .flatMap((b) => b.split('\n'))
      .map((l) => l.replace(/\s*>.*$/, '').trim())
      .filter((l) => l.startsWith('npx noderotation calendar') && !l.includes('--from-cluster'));
    expect(lines.length).toBe(2);
    for (const line of lines) {
      const r = await cli(line.split(/\s+/).slice(2));
      expect([line, r.code, r.out.slice(0, 17)]).toEqual([line, 0, 'BEGIN:VCALENDAR\r\n']);
    }
  });
});
