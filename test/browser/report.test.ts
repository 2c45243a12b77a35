// The simulator's HTML report and the soak's looked at in a real browser: headless Chromium (@sparticuz/chromium,
// driven by puppeteer-core) renders the reports of a 20-node scenario, a 10,000-node scenario, a before/after and
// an hour's soak, takes
// full-page screenshots (test/browser/output/, gitignored) and measures the page as laid out: the charts fit the
// viewport, every day of the run has its column, no two labels overlap. Run: npm run test:browser.
import chromium from '@sparticuz/chromium';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import puppeteer, { type Browser, type Page } from 'puppeteer-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import type { Scenario } from '../../src/generated/api-types.js';
import { renderHtml, renderWhatIfHtml } from '../../src/simulate/html.js';
import { simulate, type SimulationResult } from '../../src/simulate/simulate.js';
import { whatIfRuns } from '../../src/simulate/what-if.js';
import { fleetScenario, newYorkScenario, whatIfFleet } from './fleets.js';
import { syntheticHour } from '../../bench/soak/fixtures.js';
import { criteria, rotations } from '../../bench/soak/ledger.js';
import { renderReport } from '../../bench/soak/report.js';

const OUTPUT = path.join(import.meta.dirname, 'output');

/** What the page looks like once laid out, measured in the browser (CSS pixels). */
interface Layout {
  viewport: number;
  scrollWidth: number;
  svgs: { cls: string; left: number; right: number; width: number }[];
  /** Per day chart: its day columns and how many have a box of their own (width > 0). */
  dayCharts: { days: string[]; laidOut: number }[];
  /** Pairs of text boxes that overlap by more than half a pixel, as "a / b" labels. */
  overlaps: string[];
  texts: number;
  /** The smallest SVG font as drawn, in CSS pixels (its size in the drawing times the SVG's scale). */
  smallestFont: number;
  expiredBars: number;
}

// Runs in the page (the project's type-check has no DOM, so it goes as source). Text boxes are compared within
// one SVG and also across the page's HTML text.
const MEASURE = `(() => {
  const box = (e) => e.getBoundingClientRect();
  const overlaps = [];
  let texts = 0;
  let smallestFont = Infinity;
  for (const svg of document.querySelectorAll('svg')) {
    const t = [...svg.querySelectorAll('text')].map((e) => ({ label: e.textContent, r: box(e) }));
    texts += t.length;
    const scale = box(svg).width / svg.viewBox.baseVal.width;
    for (const e of svg.querySelectorAll('text'))
      smallestFont = Math.min(smallestFont, Number(e.getAttribute('font-size')) * scale);
    for (let i = 0; i < t.length; i++)
      for (let j = i + 1; j < t.length; j++) {
        const a = t[i].r, b = t[j].r;
        const w = Math.min(a.right, b.right) - Math.max(a.left, b.left);
        const h = Math.min(a.bottom, b.bottom) - Math.max(a.top, b.top);
        if (w > 0.5 && h > 0.5) overlaps.push(t[i].label + ' / ' + t[j].label);
      }
  }
  return {
    viewport: window.innerWidth,
    scrollWidth: document.documentElement.scrollWidth,
    svgs: [...document.querySelectorAll('svg')].map((s) => ({
      cls: s.getAttribute('class'), left: box(s).left, right: box(s).right, width: box(s).width,
    })),
    dayCharts: [...document.querySelectorAll('svg.days')].map((s) => {
      const days = [...s.querySelectorAll('g.day')];
      return { days: days.map((g) => g.dataset.day), laidOut: days.filter((g) => box(g).width > 0).length };
    }),
    overlaps,
    texts,
    smallestFont,
    expiredBars: [...document.querySelectorAll('rect.expired')].filter((r) => box(r).height > 0).length,
  };
})()`;

/** The run's days as the report labels them, from its start. */
const daysOf = (start: string, n: number): string[] =>
  Array.from({ length: n }, (_, i) => new Date(Date.parse(start) + i * 86_400_000).toISOString().slice(0, 10));

let browser: Browser;
let page: Page;
let small: SimulationResult;
let large: SimulationResult;

beforeAll(async () => {
  mkdirSync(OUTPUT, { recursive: true });
  // Simulated once for both widths: the 10,000-node run takes seconds.
  const scenario = parse(
    readFileSync(path.join(import.meta.dirname, '../../examples/scenarios/worked-example.yaml'), 'utf8'),
  ) as Scenario;
  small = simulate(scenario);
  large = simulate(fleetScenario(10_000, 14));
  browser = await puppeteer.launch({
    executablePath: await chromium.executablePath(),
    args: chromium.args,
    headless: true,
  });
  page = await browser.newPage();
});

afterAll(async () => {
  await browser?.close();
});

/** Opens the page at a viewport width, saves a full-page screenshot, and measures the layout. */
async function look(html: string, name: string, width: number): Promise<Layout> {
  writeFileSync(path.join(OUTPUT, `${name}.html`), html);
  await page.setViewport({ width, height: 900 });
  await page.setContent(html, { waitUntil: 'load' });
  await page.screenshot({ path: path.join(OUTPUT, `${name}-${width}.png`), fullPage: true });
  return (await page.evaluate(MEASURE)) as Layout;
}

/** What every report must show at any width: nothing wider than the viewport, no label over another. */
function readable(l: Layout): void {
  expect(l.scrollWidth).toBeLessThanOrEqual(l.viewport);
  expect(l.svgs.length).toBeGreaterThan(0);
  for (const s of l.svgs) {
    expect(s.left).toBeGreaterThanOrEqual(0);
    expect(s.right).toBeLessThanOrEqual(l.viewport);
    // Scaled to the page, not collapsed: at least half the viewport wide.
    expect(s.width).toBeGreaterThan(l.viewport / 2);
  }
  expect(l.texts).toBeGreaterThan(0);
  expect(l.overlaps).toEqual([]);
  // 7 px is about the smallest text one still reads without zooming; the SVG scales down with the page.
  expect(l.smallestFont).toBeGreaterThanOrEqual(7);
}

describe.each([1280, 800])('the reports in Chromium at %ipx wide', (width) => {
  it('20 nodes: every day of the 60 has its column, then the rows', async () => {
    const l = await look(renderHtml(small), `report-20-nodes`, width);
    readable(l);
    expect(l.dayCharts).toHaveLength(1);
    // The worked example's windows are in Tokyo: the run's 60 days from 09:00 there touch 61 of its dates.
    expect(l.dayCharts[0]?.days).toEqual(daysOf(small.start, 61));
    expect(l.dayCharts[0]?.laidOut).toBe(61);
    expect(l.svgs.map((s) => s.cls)).toEqual(['days', 'rows']);
  });

  it('10,000 nodes: the day columns, the expirations visible, rows for a sample, a page of bounded size', async () => {
    expect(large.nodes).toBe(10_000);
    expect(large.forcefulExpirations).toBeGreaterThan(0);
    const html = renderHtml(large);
    expect(Buffer.byteLength(html)).toBeLessThan(1_000_000);
    const l = await look(html, `report-10000-nodes`, width);
    readable(l);
    expect(l.dayCharts[0]?.days).toEqual(daysOf(large.start, 14));
    expect(l.dayCharts[0]?.laidOut).toBe(14);
    expect(l.expiredBars).toBeGreaterThan(0);
  });

  it('New York across the spring-forward: local days, the zone named, the legend’s marks as drawn', async () => {
    const html = renderHtml(simulate(newYorkScenario()));
    const l = await look(html, 'report-new-york', width);
    readable(l);
    // 19:00 on the 9th in New York to 20:00 on the 19th: eleven local days, each with a box of its own.
    const days = Array.from({ length: 11 }, (_, i) => `2027-03-${String(9 + i).padStart(2, '0')}`);
    expect(l.dayCharts[0]?.days).toEqual(days);
    expect(l.dayCharts[0]?.laidOut).toBe(11);
    const zone = (await page.evaluate(
      `[...document.querySelectorAll('svg text.axis-zone')].map((e) => e.textContent)`,
    )) as string[];
    expect(zone).toEqual(['times in America/New_York', 'times in America/New_York']);
    // Each swatch as the browser paints it: a box, a line or a tick, in the colour of the marks it stands for.
    const swatches = Object.fromEntries(
      (await page.evaluate(`[...document.querySelectorAll('.legend i.sw')].map((e) => {
        const s = getComputedStyle(e), r = e.getBoundingClientRect();
        const line = s.borderTopStyle !== 'none';
        return [e.parentElement.textContent, { color: line ? s.borderTopColor : s.backgroundColor, line,
          width: r.width, height: r.height }];
      })`)) as [string, { color: string; line: boolean; width: number; height: number }][],
    );
    // The colours of the marks themselves, each kind's distinct values.
    const painted = (selector: string, property: 'fill' | 'stroke'): string =>
      `[...new Set([...document.querySelectorAll('${selector}')].map((e) => getComputedStyle(e).${property}))]`;
    const drawn = (await page.evaluate(`({
      deadline: ${painted('svg.rows line.deadline', 'stroke')},
      rotated: ${painted('svg.rows rect.rotated', 'fill')},
      risk: ${painted('svg.days polyline.risk', 'stroke')},
    })`)) as Record<string, string[]>;
    const deadline = swatches["deadline: Karpenter's forced expiry"];
    expect(drawn.deadline).toEqual([deadline?.color]);
    expect(deadline?.width).toBeLessThan(4);
    expect(deadline?.height).toBeGreaterThan(5);
    expect(drawn.rotated).toEqual([swatches['graceful rotation']?.color]);
    expect(drawn.risk).toEqual([swatches['nodes at risk']?.color]);
    expect(swatches['nodes at risk']?.line).toBe(true);
    expect(swatches['forceful expiration']?.color).not.toBe(deadline?.color);
  });

  it('an hour’s soak: margins, anatomy, timeline, every rotation a mark, nothing over anything', async () => {
    const r = syntheticHour();
    const rots = rotations(r);
    const html = renderReport(r, rots, criteria(r, rots), { seed: 1, minutes: 60, chaos: true, machine: 'synthetic' });
    const l = await look(html, 'soak-report', width);
    readable(l);
    expect(l.svgs.map((s) => s.cls)).toEqual(['margins', 'anatomy', 'timeline']);
    // Each completed rotation a dot in the margin chart; each rotation and fault a bar in the timeline.
    const count = (selector: string): string => `document.querySelectorAll('${selector}').length`;
    const marks = (await page.evaluate(
      `${count('svg.margins circle')} + ' ' + ${count('svg.timeline rect')}`,
    )) as string;
    const completed = rots.filter((x) => x.outcome === 'completed').length;
    expect(marks).toBe(`${completed} ${rots.length + r.chaos.length}`);
  });

  it('before/after: both sides’ columns on the same days, the chosen pool node by node', async () => {
    const fleet = whatIfFleet(4, 20);
    const runs = whatIfRuns(fleet.before, fleet.after, fleet.now, 30 * 86400);
    const html = renderWhatIfHtml(
      { now: '2027-01-04T00:00:00Z', duration: '30d', durationSeconds: 30 * 86400, nodePools: runs },
      { pool: 'pool-00' },
    );
    const l = await look(html, `report-before-after`, width);
    readable(l);
    const days = daysOf('2027-01-04T00:00:00Z', 30);
    // The fleet and the two changed pools, each with a before and an after panel.
    expect(l.dayCharts).toHaveLength(3);
    for (const c of l.dayCharts) {
      expect(c.days).toEqual([...days, ...days]);
      expect(c.laidOut).toBe(60);
    }
    expect(l.expiredBars).toBeGreaterThan(0);
    expect(l.svgs.filter((s) => s.cls === 'rows')).toHaveLength(2);
  });
});
