// The HTML report: self-contained, one bar group per day of the run, rows for a sample only, byte-identical for
// the same inputs; and the before/after of a what-if, both sides on one day axis with the difference visible.
import { describe, expect, it } from 'vitest';
import { cli } from '../../test/support/cli-harness.js';
import { fleetScenario, whatIfFleet } from '../../test/browser/fleets.js';
import type { Scenario } from '../generated/api-types.js';
import { dailySeries } from './aggregate.js';
import { renderHtml, renderWhatIfHtml } from './html.js';
import { simulate } from './simulate.js';
import { whatIfRuns } from './what-if.js';

const worked: Scenario = {
  ...fleetScenario(20, 60),
  spec: {
    ...fleetScenario(20, 60).spec,
    nodePool: { name: 'general', expireAfter: '336h', terminationGracePeriod: '1h' },
    fleet: [{ count: 20, age: '0h' }] as Scenario['spec']['fleet'],
  },
};

const count = (html: string, re: RegExp): number => html.match(re)?.length ?? 0;

/** The bars of one panel (by its label): the sum of their data-count per kind. */
function panelSum(html: string, label: string, kind: string): number {
  const start = html.indexOf(`<g class="panel" data-panel="${label}">`);
  expect(start).toBeGreaterThanOrEqual(0);
  const body = html.slice(start, html.indexOf('\n</g>', start));
  return [...body.matchAll(new RegExp(`class="${kind}" data-count="(\\d+)"`, 'g'))].reduce(
    (n, m) => n + Number(m[1]),
    0,
  );
}

describe('renderHtml', () => {
  const r = simulate(worked);
  const html = renderHtml(r);

  it('is one self-contained page: no script, no stylesheet or image to fetch', () => {
    expect(html).toMatch(/^<!doctype html>/);
    expect(html).not.toMatch(/<script|<link|<img|src=|href="http|url\(/);
  });

  it('has one bar group per day of the run, and the bars add up to the run’s rotations', () => {
    expect(count(html, /<g class="day" /g)).toBe(60);
    expect(panelSum(html, 'controller', 'rotated')).toBe(r.rotations.graceful);
    // The windows are shaded in the day chart and again behind the rows.
    expect(count(html, /<title>window /g)).toBe(2 * r.windows.length);
  });

  it('draws rows for the sample only, and names how they were chosen', () => {
    const sampled = renderHtml(r, { sample: 30 });
    expect(r.timeline.length).toBeGreaterThan(30);
    expect(count(sampled, /class="row-label"/g)).toBe(30);
    expect(sampled).toContain(`30 of ${r.timeline.length} node lives, a deterministic sample`);
    const all = renderHtml(r, { sample: 1000 });
    for (const n of r.timeline) expect(all).toContain(`>${n.node}</text>`);
    expect(renderHtml(r, { sample: 0 })).not.toContain('Node by node');
  });

  it('is byte-identical for the same run, and about as large for ten times the nodes (days count, not nodes)', () => {
    expect(renderHtml(simulate(worked))).toBe(html);
    const big = simulate({ ...worked, spec: { ...worked.spec, fleet: [{ count: 200, age: '0h' }] } as never });
    expect(big.timeline.length).toBeGreaterThan(5 * r.timeline.length);
    expect(renderHtml(big).length).toBeLessThan(1.5 * html.length);
  });
});

describe('renderWhatIfHtml: before and after in one picture', () => {
  const fleet = whatIfFleet(4, 20);
  const durationSeconds = 30 * 86400;
  const runs = whatIfRuns(fleet.before, fleet.after, fleet.now, durationSeconds);
  const report = { now: '2027-01-04T00:00:00Z', duration: '30d', durationSeconds, nodePools: runs };
  const html = renderWhatIfHtml(report, { pool: 'pool-00' });

  it('the change shows: more expirations after than before, fleet-wide and in the changed pool', () => {
    const [p0] = runs;
    expect(p0?.after.forcefulExpirations).toBeGreaterThan(p0?.before.forcefulExpirations ?? Infinity);
    const fleetAfter = panelSum(html, 'after: all pools', 'expired');
    const fleetBefore = panelSum(html, 'before: all pools', 'expired');
    expect(fleetAfter).toBeGreaterThan(fleetBefore);
    // The difference drawn per day adds up to the difference of the sides (the fleet chart comes first).
    const fleetChart = html.slice(html.indexOf('<svg'), html.indexOf('</svg>'));
    const deltas = [...fleetChart.matchAll(/class="delta" data-delta="(-?\d+)"/g)].map((m) => Number(m[1]));
    expect(deltas.length).toBeGreaterThan(0);
    expect(deltas.reduce((a, b) => a + b, 0)).toBe(fleetAfter - fleetBefore);
    // Each side's bars are that side's run, day by day.
    for (const side of ['before', 'after'] as const) {
      const days = dailySeries(p0!.runs[side]!).days;
      const label = `${side}: pool-00`;
      expect(panelSum(html, label, 'expired')).toBe(days.reduce((n, d) => n + d.expired, 0));
      expect(panelSum(html, label, 'rotated')).toBe(days.reduce((n, d) => n + d.graceful, 0));
    }
    expect(html).toContain(`first change ${p0?.firstChange}`);
  });

  it('both sides on the same day axis: every chart has the same day columns at the same places', () => {
    const charts = html
      .split('<svg')
      .slice(1)
      .filter((s) => s.includes('class="days"'));
    expect(charts.length).toBe(3); // the fleet, pool-00 and pool-01 (the two that change)
    const columns = (svg: string) => [...svg.matchAll(/<g class="day" data-day="([^"]+)"><rect x="([^"]+)"/g)];
    const fleetColumns = columns(charts[0] as string);
    expect(fleetColumns).toHaveLength(2 * 30);
    for (const c of charts) expect(columns(c).map((m) => [m[1], m[2]])).toEqual(fleetColumns.map((m) => [m[1], m[2]]));
  });

  it('rows node by node for the chosen pool only, both sides', () => {
    expect(html).toContain('pool-00 before, node by node');
    expect(html).toContain('pool-00 after, node by node');
    expect(html).not.toContain('pool-01 before, node by node');
    expect(renderWhatIfHtml(report)).not.toContain('node by node</h4>');
  });

  it('byte-identical for the same snapshots', () => {
    const again = whatIfRuns(fleet.before, fleet.after, fleet.now, durationSeconds);
    expect(renderWhatIfHtml({ ...report, nodePools: again }, { pool: 'pool-00' })).toBe(html);
  });
});

describe('simulate -o html flags', () => {
  it.each([
    {
      reason: '--sample that is not a whole number names the flag and the range',
      args: ['simulate', '-f', 'examples/scenarios/worked-example.yaml', '-o', 'html', '--sample', 'ten'],
      err: '--sample ten: expected a whole number of node rows from 0 to 5000',
    },
    {
      reason: '--sample past the cap',
      args: ['simulate', '-f', 'examples/scenarios/worked-example.yaml', '-o', 'html', '--sample', '5001'],
      err: '--sample 5001: expected',
    },
    {
      reason: '--sample without HTML',
      args: ['simulate', '-f', 'examples/scenarios/worked-example.yaml', '--sample', '10'],
      err: '--sample is for -o html',
    },
    {
      reason: '--pool for a scenario, which has one pool',
      args: ['simulate', '-f', 'examples/scenarios/worked-example.yaml', '-o', 'html', '--pool', 'general'],
      err: '--pool is for simulate --from-cluster -o html',
    },
  ])('$reason', async ({ args, err }) => {
    const r = await cli(args);
    expect(r.code).toBe(2);
    expect(r.err).toContain(err);
  });

  it('--sample 5 draws five rows', async () => {
    const r = await cli(['simulate', '-f', 'examples/scenarios/worked-example.yaml', '-o', 'html', '--sample', '5']);
    expect(r.code).toBe(0);
    expect(count(r.out, /class="row-label"/g)).toBe(5);
  });
});
