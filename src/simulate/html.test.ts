// The HTML report: self-contained, one bar group per day of the run, rows for a sample only, byte-identical for
// the same inputs; and the before/after of a what-if, both sides on one day axis with the difference visible.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { cli } from '../../test/support/cli-harness.js';
import { fleetScenario, newYorkScenario, whatIfFleet } from '../../test/browser/fleets.js';
import { EXPLAIN_LEGEND, FIGURE_LEGEND } from '../explain/table.js';
import type { RotationPolicy, Scenario } from '../generated/api-types.js';
import { formatDuration } from '../util/duration.js';
import { dailySeries } from './aggregate.js';
import { renderHtml, renderWhatIfHtml } from './html.js';
import { simulate } from './simulate.js';
import { whatIfRuns, type Side } from './what-if.js';

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
    // The first change as the clocks of the windows' zone (UTC here) read it.
    const first = p0?.firstChange as string;
    expect(html).toContain(`first change ${first.slice(0, 10)} ${first.slice(11, 19).replace(/:00$/, '')} UTC`);
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

/** The page's text as a reader sees it, tooltips included: no stylesheet, no tags. */
const textOf = (html: string): string =>
  html
    .replace(/<style>[\s\S]*?<\/style>/, '')
    .replace(/<[^>]+>/g, ' ')
    .replace(/&[a-z]+;/g, ' ');

/** Every figure in the text that reads as a number of seconds too large for a minute: 86400s, 3600 seconds. */
const rawSeconds = (html: string): string[] =>
  [...textOf(html).matchAll(/(\d+(?:\.\d+)?)\s*(s|sec|secs|seconds?)\b/g)]
    .filter((m) => Number(m[1]) > 59 || m[2] !== 's')
    .map((m) => m[0]);

/** The rows of the table whose opening tag is `open`, as [header, cells…] texts. */
function tableRows(html: string, open: string): string[][] {
  const start = html.indexOf(open);
  expect(start).toBeGreaterThanOrEqual(0);
  const table = html.slice(start, html.indexOf('</table>', start));
  return [...table.matchAll(/<tr>([\s\S]*?)<\/tr>/g)].map((r) =>
    [...(r[1] as string).matchAll(/<t[hd][^>]*>([\s\S]*?)<\/t[hd]>/g)].map((c) => textOf(c[1] as string).trim()),
  );
}

describe('words a person knows: every figure named and explained, durations in h/m/s', () => {
  const r = simulate(worked);
  const html = renderHtml(r);

  it('shows each derived figure under its explain column, its value, and the meaning explain --legend gives', () => {
    const [header, ...rows] = tableRows(html, '<table class="figures">');
    expect(header).toEqual(['figure', 'value', 'what it means']);
    // One row per derived column of explain's table, in its order, nothing else.
    expect(rows.map((row) => row[0])).toEqual(FIGURE_LEGEND.map((e) => e.column));
    expect(FIGURE_LEGEND.map((e) => e.column)).toEqual(
      expect.arrayContaining(['PERIOD(P)', 't_rot', 'AGE-THRESHOLD(A)', 'CHANCES(G)', 'CAPACITY(C)']),
    );
    for (const [column, value, meaning] of rows) {
      const entry = EXPLAIN_LEGEND.find((e) => e.column === column);
      expect(meaning).toBe(entry?.meaning);
      const v = r.figures[entry?.figure as keyof typeof r.figures];
      expect(v).not.toBeNull();
      expect(value).toBe(entry?.figure?.endsWith('Seconds') ? formatDuration(v as number) : String(v));
    }
    // The old shorthand line, symbols without their meaning, is gone.
    expect(textOf(html)).not.toMatch(/P \/ t_rot \/ A/);
  });

  it('every abbreviation of a figure in the page’s text has its legend row', () => {
    const text = textOf(html);
    const symbols = FIGURE_LEGEND.flatMap((e) => [e.column, ...(/\(([A-Z])\)/.exec(e.column)?.slice(1) ?? [])]);
    for (const symbol of symbols.filter((x) => x.length > 1 && text.includes(x))) {
      const entry = FIGURE_LEGEND.find((e) => e.column === symbol || e.column.endsWith(`(${symbol})`));
      expect(html).toContain(`<td>${entry?.meaning.replace(/&/g, '&amp;')}</td>`);
    }
  });

  it('no raw seconds in the page: the run, the windows per day and the figures in h/m/s', () => {
    expect(rawSeconds(html)).toEqual([]);
    expect(rawSeconds(renderHtml(simulate(fleetScenario(300, 14))))).toEqual([]);
    // The run's length as the CLI prints durations, and the window time of a day's tooltip.
    expect(html).toContain('(1440h)');
    expect(html).toMatch(/<title>controller 2027-01-0\d: [^<]*; 4h in a window; /);
    // The test itself catches what the page used to print.
    expect(rawSeconds('<p>P / t_rot: 86400s / 4620s, 2.5h</p><p>3600 seconds</p><p>1m30s</p>')).toEqual([
      '86400s',
      '4620s',
      '3600 seconds',
    ]);
  });

  it('counts with their noun in the right number', () => {
    expect(html).toContain('20 nodes at start');
    const one = { ...worked, spec: { ...worked.spec, fleet: [{ count: 1, age: '0h' }] } } as Scenario;
    expect(renderHtml(simulate(one))).toContain('1 node at start');
  });
});

/** A swatch's colour in a legend, by its label. */
const swatch = (html: string, label: string): string | undefined =>
  new RegExp(`<i class="sw[^"]*" style="[^"]*?(?:background:|solid |dashed )(#[0-9a-f]+)[^"]*"></i>${label}<`).exec(
    html,
  )?.[1];

/** WCAG's contrast ratio of two #rgb/#rrggbb colours: by lightness alone, which no colour-vision deficiency hides. */
function contrast(a: string, b: string): number {
  const luminance = (hex: string): number => {
    const h = hex.length === 4 ? [...hex.slice(1)].map((c) => c + c).join('') : hex.slice(1);
    const [r, g, b2] = [0, 2, 4].map((i) => {
      const c = parseInt(h.slice(i, i + 2), 16) / 255;
      return c <= 0.03928 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4;
    }) as [number, number, number];
    return 0.2126 * r + 0.7152 * g + 0.0722 * b2;
  };
  const [hi, lo] = [luminance(a), luminance(b)].sort((x, y) => y - x) as [number, number];
  return (hi + 0.05) / (lo + 0.05);
}

describe('the deadline and the forceful expiration are told apart', () => {
  const fleet = whatIfFleet(2, 20);
  const runs = whatIfRuns(fleet.before, fleet.after, fleet.now, 30 * 86400);
  const html = renderWhatIfHtml(
    { now: '2027-01-04T00:00:00Z', duration: '720h', durationSeconds: 30 * 86400, nodePools: runs },
    { pool: 'pool-00' },
  );
  const rows = html.slice(html.indexOf('class="rows"'));

  it('the marks drawn are the colours of their legend swatches, and the two differ', () => {
    const deadline = swatch(html, "deadline: Karpenter's forced expiry");
    const expired = swatch(html, 'forceful expiration');
    expect(deadline).toBeDefined();
    expect(expired).toBeDefined();
    expect(deadline).not.toBe(expired);
    const strokes = new Set(
      [...rows.matchAll(/stroke="([^"]+)" stroke-width="1.5" class="deadline"/g)].map((m) => m[1]),
    );
    const fills = new Set([...rows.matchAll(/fill="([^"]+)" class="expired"/g)].map((m) => m[1]));
    expect([...strokes]).toEqual([deadline]);
    expect([...fills]).toEqual([expired]);
    // The legend draws the deadline as the thin tick it is, the expiration as a filled box.
    expect(html).toContain(`<i class="sw tick" style="background:${deadline};width:2px;`);
    expect(html).toContain(`<i class="sw" style="background:${expired}"></i>forceful expiration<`);
  });

  it('apart by lightness too, so that a reader who cannot tell red from green still can', () => {
    const deadline = swatch(html, "deadline: Karpenter's forced expiry") as string;
    const expired = swatch(html, 'forceful expiration') as string;
    expect(contrast(deadline, expired)).toBeGreaterThanOrEqual(3);
    // The check measures what it should: the old pair, red and red, fails it.
    expect(contrast('#c0392b', '#c0392b')).toBe(1);
  });
});

const labels = (svg: string): [string, number][] =>
  [...svg.matchAll(/<text x="([^"]+)"[^>]*class="day-label">([^<]+)<\/text>/g)].map((m) => [
    m[2] as string,
    Number(m[1]),
  ]);

describe('the time axis in the zone of the policy’s windows', () => {
  const r = simulate(newYorkScenario());
  const html = renderHtml(r);
  const days = html.slice(html.indexOf('class="days"'), html.indexOf('</svg>'));

  it('names the zone, labels local dates at local midnights, and the day of the spring-forward is 23 hours', () => {
    expect(r.timezones).toEqual(['America/New_York']);
    expect(days).toContain('class="axis-zone">times in America/New_York</text>');
    // The run starts at 19:00 on the 9th there: a short first day, unlabelled, then one label per local day.
    expect([...days.matchAll(/data-day="([^"]+)"/g)].map((m) => m[1])).toEqual(
      Array.from({ length: 11 }, (_, i) => `2027-03-${String(9 + i).padStart(2, '0')}`),
    );
    const l = labels(days);
    expect(l.map(([t]) => t)).toEqual(Array.from({ length: 10 }, (_, i) => `03-${String(10 + i).padStart(2, '0')}`));
    const x = Object.fromEntries(l);
    const day = (x['03-14'] as number) - (x['03-13'] as number);
    expect((x['03-15'] as number) - (x['03-14'] as number)).toBeCloseTo((day * 23) / 24, 0);
    expect((x['03-16'] as number) - (x['03-15'] as number)).toBeCloseTo(day, 0);
    // The rows share the axis and its zone.
    expect(count(html, /class="axis-zone">times in America\/New_York</g)).toBe(2);
  });

  it('every time on the page is local, with its offset: before and after the change', () => {
    expect(html).toContain('<title>window 2027-03-13 01:00 UTC-05:00 – 2027-03-13 04:00 UTC-05:00</title>');
    // 01:00 EST to 04:00 EDT: two hours of real time.
    expect(html).toContain('<title>window 2027-03-14 01:00 UTC-05:00 – 2027-03-14 04:00 UTC-04:00</title>');
    expect(html).toContain('<title>window 2027-03-15 01:00 UTC-04:00 – 2027-03-15 04:00 UTC-04:00</title>');
    expect(html).toContain('2027-03-09 19:00 UTC-05:00 → 2027-03-19 20:00 UTC-04:00 (240h)');
    expect(textOf(html)).not.toMatch(/\d{4}-\d\d-\d\dT\d\d:\d\d/);
  });

  it('the bars are the local days’ endings, and still add up to the run', () => {
    expect(panelSum(html, 'controller', 'rotated')).toBe(r.rotations.graceful);
    const local = dailySeries(r, 'America/New_York').days;
    const day = (date: string) => local.find((d) => d.date === date)?.graceful;
    const bars = (date: string) =>
      [...days.matchAll(new RegExp(`data-day="${date}">.*?class="rotated" data-count="(\\d+)"`, 'g'))].map((m) =>
        Number(m[1]),
      );
    for (const d of local) expect(bars(d.date)).toEqual(d.graceful > 0 ? [day(d.date)] : []);
  });

  it('UTC for windows in UTC, and for pools whose windows are in different zones, saying so', () => {
    expect(renderHtml(simulate(worked))).toContain('class="axis-zone">times in UTC</text>');
    const fleet = whatIfFleet(2, 10);
    const inZone = (side: Side, zones: readonly string[]): Side => ({
      ...side,
      policies: side.policies.map((p, i) => ({
        ...p,
        spec: {
          ...p.spec,
          maintenanceWindows: p.spec.maintenanceWindows.map((w) => ({
            ...w,
            timezone: zones[i] as string,
          })) as RotationPolicy['spec']['maintenanceWindows'],
        },
      })),
    });
    const page = (zones: readonly string[]) => {
      const runs = whatIfRuns(inZone(fleet.before, zones), inZone(fleet.after, zones), fleet.now, 14 * 86400);
      return renderWhatIfHtml({
        now: '2027-01-04T00:00:00Z',
        duration: '336h',
        durationSeconds: 14 * 86400,
        nodePools: runs,
      });
    };
    const berlin = page(['Europe/Berlin', 'Europe/Berlin']);
    expect(berlin).toContain('class="axis-zone">times in Europe/Berlin</text>');
    expect(berlin).toContain('From 2027-01-04 01:00 UTC+01:00 over 336h');
    const mixed = page(['Europe/Berlin', 'Asia/Tokyo']);
    expect(mixed).toContain('class="axis-zone">times in UTC (the windows are in several zones)</text>');
    expect(mixed).toContain('From 2027-01-04 00:00 UTC over 336h');
  });
});

describe('the per-NodePool table: every column explained', () => {
  const fleet = whatIfFleet(2, 10);
  const runs = whatIfRuns(fleet.before, fleet.after, fleet.now, 14 * 86400);
  const html = renderWhatIfHtml({
    now: '2027-01-04T00:00:00Z',
    duration: '336h',
    durationSeconds: 14 * 86400,
    nodePools: runs,
  });

  it('each header has its meaning under the table, and the page has no raw seconds', () => {
    const [header] = tableRows(html, '<table>\n<tr><th>NodePool</th>');
    const terms = new Map(
      [...html.matchAll(/<dt[^>]*>([^<]+)<\/dt><dd[^>]*>([^<]+)<\/dd>/g)].map((m) => [m[1] as string, m[2] as string]),
    );
    expect(header?.slice(1)).toEqual([...terms.keys()]);
    for (const meaning of terms.values()) expect(meaning.length).toBeGreaterThan(20);
    expect(rawSeconds(html)).toEqual([]);
    expect(html).toContain('What if: 2 NodePools, 20 nodes');
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

describe('freezes in the report', () => {
  const scenario = (): Scenario =>
    ({
      ...parse(readFileSync(new URL('../../examples/scenarios/black-friday-freeze.yaml', import.meta.url), 'utf8')),
      metadata: { name: 'freeze' },
    }) as Scenario;
  it('draws each freeze as a band in the day chart and the node rows, says so in the legend, counts inside it', () => {
    const off = scenario();
    off.spec.policy.preFreezeRotation = { enabled: false };
    const r = simulate(off);
    expect(r.freezes).toEqual([{ start: '2027-11-25T05:00:00Z', end: '2027-11-30T05:00:00Z' }]);
    const html = renderHtml(r);
    // One band in the day chart, one behind the node rows; its time in the tooltip, in the windows' zone.
    expect(count(html, /class="freeze"/g)).toBe(2);
    expect(html).toContain('<title>freeze 2027-11-25 00:00 UTC-05:00 – 2027-11-30 00:00 UTC-05:00</title>');
    expect(count(html, /freeze: nothing of ours starts/g)).toBe(2);
    expect(html).toMatch(/… of them inside a freeze<\/th><td[^>]*>8</);
  });

  it('says nothing of freezes where there are none', () => {
    const html = renderHtml(simulate(worked));
    expect(html).not.toContain('freeze');
  });
});
