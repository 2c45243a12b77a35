// One self-contained HTML page (inline SVG and CSS, no scripts, no external assets) that stays readable from 20
// nodes to a fleet of 10,000: the run summed per day against the maintenance windows (rotations, fallbacks,
// forceful expirations, nodes at risk), then node-by-node rows for a deterministic sample only. The page's size
// grows with the days of the run and the sample, not with the nodes. The same inputs give byte-identical HTML.
import { dailySeries, DAY_MS, dayCount, sampleLives, type DayCounts } from './aggregate.js';
import type { NodeLife, SimulationResult } from './simulate.js';
import type { PoolRuns, SideSummary } from './what-if.js';
import { esc, legend, line, page, rect, svgOpen as svgOf, text } from '../util/html.js';

const svgOpen = (height: number, label: string, cls: string): string => svgOf(WIDTH, height, label, cls);

const COLORS = {
  life: '#9fb7d9',
  rotated: '#2e8b57',
  fallback: '#e08a1e',
  expired: '#c0392b',
  reaped: '#888',
  running: '#9fb7d9',
  window: '#f3e9a6',
  deadline: '#c0392b',
  before: '#777',
  after: '#c0392b',
};

const n1 = (v: number): string => v.toFixed(1);
/** At most n characters, the end cut off (…). */
const fit = (s: string, n: number): string => (s.length <= n ? s : `${s.slice(0, n - 1)}…`);
/** At most n characters, the start cut off: a node's name ends in what tells it from its neighbours. */
const fitEnd = (s: string, n: number): string => (s.length <= n ? s : `…${s.slice(-(n - 1))}`);

const DAY_LEGEND = [
  [COLORS.window, 'maintenance window'],
  [COLORS.rotated, 'graceful rotations'],
  [COLORS.fallback, 'forceful fallbacks'],
  [COLORS.expired, 'forceful expirations'],
] as const;

const ROW_LEGEND = [
  [COLORS.window, 'maintenance window'],
  [COLORS.life, 'node alive'],
  [COLORS.rotated, 'graceful rotation'],
  [COLORS.fallback, 'forceful fallback'],
  [COLORS.expired, 'forceful expiration'],
  [COLORS.deadline, 'deadline'],
] as const;

/** The drawing's width in SVG units; the page scales it down to the viewport (max-width:100%). */
const WIDTH = 1000;
/** Room on the left for the panel and row labels. */
const LEFT = 150;
const PLOT = WIDTH - LEFT - 10;
/** The fewest SVG units between two day labels, so that they never touch. */
const LABEL_GAP = 48;
/** Characters of a panel label's line that fit left of the scale's numbers (11-unit font). */
const LABEL_CHARS = 16;
/** Characters of a row's node name that fit in LEFT (10-unit font). */
const NAME_CHARS = 24;
/** Per-node rows drawn by default: a deterministic sample of the lives (sampleLives). */
export const DEFAULT_SAMPLE = 100;

/** The run's time axis: instants to x, the day columns, and how often a day is labelled. */
class Axis {
  readonly days: number;
  readonly dayWidth: number;
  readonly labelEvery: number;
  constructor(
    readonly t0: number,
    readonly t1: number,
  ) {
    this.days = dayCount(t0, t1);
    this.dayWidth = (DAY_MS / (t1 - t0)) * PLOT;
    this.labelEvery = Math.max(1, Math.ceil(LABEL_GAP / this.dayWidth));
  }
  x(t: number): number {
    return LEFT + ((Math.min(Math.max(t, this.t0), this.t1) - this.t0) / (this.t1 - this.t0)) * PLOT;
  }
  /** Tick lines over [top, bottom] and the day labels under them, every labelEvery days. */
  ticks(top: number, bottom: number): string[] {
    const out: string[] = [];
    for (let i = 0; i < this.days; i += this.labelEvery) {
      const t = this.t0 + i * DAY_MS;
      const xt = n1(this.x(t));
      out.push(line({ x1: xt, y1: top, x2: xt, y2: bottom, stroke: '#ddd', 'stroke-width': 0.5 }));
      const day = new Date(t).toISOString().slice(5, 10);
      out.push(text({ x: xt, y: bottom + 13, 'font-size': 11, 'text-anchor': 'middle', class: 'day-label' }, day));
    }
    return out;
  }
}

interface Span {
  start: string;
  end: string;
}

/** The windows shaded over [top, top + height]. */
function windowBands(axis: Axis, windows: readonly Span[], top: number, height: number): string[] {
  return windows.map((w) => {
    const x0 = axis.x(Date.parse(w.start));
    const x1 = axis.x(Date.parse(w.end));
    const box = { x: n1(x0), y: top, width: n1(Math.max(1, x1 - x0)), height, fill: COLORS.window };
    return rect(box, `window ${esc(w.start)} – ${esc(w.end)}`);
  });
}

/** One panel of day bars: rotations, fallbacks and expirations stacked, one group per day of the run. */
interface DayPanel {
  label: string;
  days: readonly DayCounts[];
  windows: readonly Span[];
}

const PANEL_HEIGHT = 110;

/**
 * A panel's name in the left margin: "side: detail" on two lines, each cut to LABEL_CHARS so that it never
 * runs into the scale's numbers; the whole name is the tooltip.
 */
function panelLabel(top: number, label: string): string[] {
  const [first, ...rest] = label.split(': ');
  const lines = [first ?? '', rest.join(': ')].filter((l) => l !== '');
  return lines.map((l, i) =>
    text(
      { x: 4, y: top + 13 + i * 15, 'font-size': 11, class: 'panel-label' },
      `${esc(fit(l, LABEL_CHARS))}<title>${esc(label)}</title>`,
    ),
  );
}

/** The scale's numbers at the top and the bottom of a panel (and its middle, for the difference). */
function scaleLabels(top: number, labels: readonly [string, number][]): string[] {
  return labels.map(([v, dy]) =>
    text({ x: LEFT - 6, y: top + dy, 'font-size': 10, 'text-anchor': 'end', class: 'scale' }, v),
  );
}
const PANEL_GAP = 22;

/** A day's tooltip; the window hours only where the panel has windows (a sum over pools has none). */
const dayTitle = (d: DayCounts, label: string, windows: boolean): string =>
  esc(
    `${label} ${d.start.slice(0, 10)}: ${d.graceful} graceful, ${d.fallback} fallback, ${d.expired} expired; ` +
      (windows ? `${Math.round(d.windowSeconds / 360) / 10}h in a window; ` : '') +
      `${d.atRisk} at risk at the day's start`,
  );

/** Stacked day bars on a shared scale (yMax), so that two panels compare by eye. */
function dayPanel(axis: Axis, p: DayPanel, top: number, yMax: number): string[] {
  const out = windowBands(axis, p.windows, top, PANEL_HEIGHT);
  const bottom = top + PANEL_HEIGHT;
  out.push(line({ x1: LEFT, y1: bottom, x2: LEFT + PLOT, y2: bottom, stroke: '#999', 'stroke-width': 0.5 }));
  out.push(...panelLabel(top, p.label));
  out.push(
    ...scaleLabels(top, [
      [String(yMax), 10],
      ['0', PANEL_HEIGHT],
    ]),
  );
  const scale = PANEL_HEIGHT / Math.max(1, yMax);
  const barWidth = Math.max(0.6, axis.dayWidth * 0.7);
  p.days.forEach((d, i) => {
    const x0 = axis.x(axis.t0 + i * DAY_MS);
    const parts = [
      rect(
        {
          x: n1(x0),
          y: top,
          width: n1(Math.max(0.5, Math.min(axis.dayWidth, LEFT + PLOT - x0))),
          height: PANEL_HEIGHT,
          fill: 'transparent',
        },
        dayTitle(d, p.label, p.windows.length > 0),
      ),
    ];
    let y = bottom;
    for (const [count, kind] of [
      [d.graceful, 'rotated'],
      [d.fallback, 'fallback'],
      [d.expired, 'expired'],
    ] as const) {
      if (count === 0) continue;
      const h = count * scale;
      y -= h;
      const bar = { x: n1(x0 + (axis.dayWidth - barWidth) / 2), y: n1(y), width: n1(barWidth), height: n1(h) };
      parts.push(rect({ ...bar, fill: COLORS[kind], class: kind, 'data-count': count }));
    }
    out.push(`<g class="day" data-day="${d.start.slice(0, 10)}">${parts.join('')}</g>`);
  });
  return [`<g class="panel" data-panel="${esc(p.label)}">`, ...out, '</g>'];
}

/** The nodes at risk at each day's start, one step line per side, on the panel's own scale. */
function riskPanel(
  axis: Axis,
  sides: readonly { label: string; days: readonly DayCounts[]; color: string }[],
  top: number,
) {
  const yMax = Math.max(1, ...sides.flatMap((s) => s.days.map((d) => d.atRisk)));
  const bottom = top + PANEL_HEIGHT;
  const out = [
    line({ x1: LEFT, y1: bottom, x2: LEFT + PLOT, y2: bottom, stroke: '#999', 'stroke-width': 0.5 }),
    ...panelLabel(top, 'nodes at risk'),
    ...scaleLabels(top, [
      [String(yMax), 10],
      ['0', PANEL_HEIGHT],
    ]),
  ];
  sides.forEach((s, k) => {
    const points = s.days.flatMap((d, i) => {
      const y = n1(bottom - (d.atRisk / yMax) * PANEL_HEIGHT);
      return [`${n1(axis.x(axis.t0 + i * DAY_MS))},${y}`, `${n1(axis.x(axis.t0 + (i + 1) * DAY_MS))},${y}`];
    });
    const dash = k === 0 && sides.length > 1 ? ' stroke-dasharray="4 3"' : '';
    out.push(
      `<polyline class="risk" points="${points.join(' ')}" fill="none" stroke="${s.color}" stroke-width="1.5"${dash}>` +
        `<title>${esc(s.label)}: nodes at risk at each day's start</title></polyline>`,
    );
  });
  return out;
}

/**
 * The difference itself: forceful expirations after minus before, per day, up from the middle line where the
 * change adds expirations (red) and down where it spares them (green), on the panel's own scale.
 */
function deltaPanel(axis: Axis, before: readonly DayCounts[], after: readonly DayCounts[], top: number): string[] {
  const deltas = after.map((d, i) => d.expired - (before[i]?.expired ?? 0));
  const yMax = Math.max(1, ...deltas.map(Math.abs));
  const mid = top + PANEL_HEIGHT / 2;
  const scale = PANEL_HEIGHT / 2 / yMax;
  const barWidth = Math.max(0.6, axis.dayWidth * 0.7);
  const out = [
    '<g class="panel" data-panel="expirations after − before">',
    line({ x1: LEFT, y1: mid, x2: LEFT + PLOT, y2: mid, stroke: '#999', 'stroke-width': 0.5 }),
    ...panelLabel(top, 'expirations: after − before'),
    ...scaleLabels(top, [
      [`+${yMax}`, 10],
      ['0', PANEL_HEIGHT / 2 + 3],
      [`−${yMax}`, PANEL_HEIGHT],
    ]),
  ];
  deltas.forEach((delta, i) => {
    if (delta === 0) return;
    const x0 = axis.x(axis.t0 + i * DAY_MS) + (axis.dayWidth - barWidth) / 2;
    const h = Math.abs(delta) * scale;
    const day = (after[i] as DayCounts).start.slice(0, 10);
    out.push(
      rect(
        {
          x: n1(x0),
          y: n1(delta > 0 ? mid - h : mid),
          width: n1(barWidth),
          height: n1(h),
          fill: delta > 0 ? COLORS.expired : COLORS.rotated,
          class: 'delta',
          'data-delta': delta,
        },
        `${day}: ${delta > 0 ? '+' : ''}${delta} forceful expirations after the change`,
      ),
    );
  });
  out.push('</g>');
  return out;
}

/**
 * The day chart: one bar panel per side on one scale, the nodes at risk under them, the day labels at the
 * bottom, and optionally a marker at the first instant the sides differ.
 */
function dayChart(
  axis: Axis,
  panels: readonly DayPanel[],
  risk: readonly { label: string; days: readonly DayCounts[]; color: string }[],
  marker: { at: number; label: string } | null,
): string {
  const top = 20;
  const yMax = Math.max(1, ...panels.flatMap((p) => p.days.map((d) => d.graceful + d.fallback + d.expired)));
  const parts: string[] = [];
  panels.forEach((p, i) => parts.push(...dayPanel(axis, p, top + i * (PANEL_HEIGHT + PANEL_GAP), yMax)));
  let riskTop = top + panels.length * (PANEL_HEIGHT + PANEL_GAP);
  const [before, after] = panels;
  if (before !== undefined && after !== undefined) {
    parts.push(...deltaPanel(axis, before.days, after.days, riskTop));
    riskTop += PANEL_HEIGHT + PANEL_GAP;
  }
  parts.push(...riskPanel(axis, risk, riskTop));
  const bottom = riskTop + PANEL_HEIGHT;
  parts.push(...axis.ticks(top, bottom));
  if (marker !== null) {
    const xm = n1(axis.x(marker.at));
    parts.push(line({ x1: xm, y1: top - 6, x2: xm, y2: bottom, stroke: '#333', 'stroke-dasharray': '2 2' }));
    // Its own row above the panels, where no other text is.
    const anchor = axis.x(marker.at) > LEFT + PLOT / 2 ? 'end' : 'start';
    parts.push(text({ x: xm, y: 11, 'font-size': 11, 'text-anchor': anchor }, esc(marker.label)));
  }
  const height = bottom + 20;
  return `${svgOpen(height, 'rotations per day', 'days')}\n${parts.join('\n')}\n</svg>`;
}

const ROW = 14;

/** Node-by-node rows: each life as a bar, its rotation or expiry in colour, its deadline as a tick. */
function nodeRows(axis: Axis, lives: readonly NodeLife[], windows: readonly Span[]): string {
  const top = 20;
  const height = top + lives.length * ROW + 20;
  const parts = windowBands(axis, windows, top - 4, lives.length * ROW + 4);
  parts.push(...axis.ticks(top - 4, top + lives.length * ROW));
  lives.forEach((n, i) => {
    const y = top + i * ROW;
    const title = esc(
      `${n.node} (${n.origin}) created ${n.createdAt}, deadline ${n.deadline ?? 'none'}, ` +
        `${n.end}${n.endedAt ? ` at ${n.endedAt}` : ''}, attempts ${n.attempts}`,
    );
    const xOf = (iso: string | null): number => axis.x(iso === null ? axis.t1 : Date.parse(iso));
    parts.push(
      text(
        { x: LEFT - 6, y: y + ROW - 3, 'font-size': 10, 'text-anchor': 'end', class: 'row-label' },
        esc(fitEnd(n.node, NAME_CHARS)),
      ),
    );
    /** A bar on the node's row from `from` to its end, at least `min` wide. */
    const bar = (from: string | null, min: number, fill: string): string =>
      rect(
        { x: n1(xOf(from)), y: y + 2, width: n1(Math.max(min, xOf(n.endedAt) - xOf(from))), height: ROW - 4, fill },
        title,
      );
    parts.push(bar(n.createdAt, 1, COLORS.life));
    if (n.rotationStartedAt) parts.push(bar(n.rotationStartedAt, 2, COLORS[n.end]));
    else if (n.end === 'expired') parts.push(bar(n.drainStartedAt ?? n.deadline, 2, COLORS[n.end]));
    if (n.deadline && Date.parse(n.deadline) <= axis.t1) {
      const xd = n1(xOf(n.deadline));
      parts.push(line({ x1: xd, y1: y + 1, x2: xd, y2: y + ROW - 1, stroke: COLORS.deadline, 'stroke-width': 1.5 }));
    }
  });
  return `${svgOpen(height, 'node timeline', 'rows')}\n${parts.join('\n')}\n</svg>`;
}

const stat = (label: string, ...values: (number | string)[]): string =>
  `<tr><th>${esc(label)}</th>${values.map((v) => `<td class="n">${esc(String(v))}</td>`).join('')}</tr>`;

/** The sentence under a row chart: how the rows were chosen. */
const sampleNote = (shown: number, total: number): string =>
  shown === total
    ? `Every node's life, ${total} in all.`
    : `${shown} of ${total} node lives, a deterministic sample: each kind of ending (expired, fallback, ` +
      'reaped, rotated, running) gets a share, evenly spaced in name order; the day chart above counts every one.';

export interface HtmlOptions {
  /** The most per-node rows (default DEFAULT_SAMPLE); 0 draws none. */
  sample?: number;
}

/** The report of one scenario run. */
export function renderHtml(r: SimulationResult, options: HtmlOptions = {}): string {
  const axis = new Axis(Date.parse(r.start), Date.parse(r.end));
  const series = dailySeries(r);
  const f = r.figures;
  const figures =
    `${f.windowPeriodSeconds ?? '-'}s / ${f.rotationBoundSeconds ?? '-'}s / ${f.ageThresholdSeconds ?? '-'}s / ` +
    `${f.guaranteedChances ?? '-'} / ${f.capacityPerOccurrence ?? '-'}`;
  const lives = sampleLives(r.timeline, options.sample ?? DEFAULT_SAMPLE);
  const chart = dayChart(
    axis,
    [{ label: r.mode === 'baseline' ? 'Karpenter alone' : 'controller', days: series.days, windows: r.windows }],
    [{ label: 'nodes at risk', days: series.days, color: COLORS.after }],
    null,
  );
  const body = `<h1>Simulation: ${esc(r.scenario)} (${esc(r.mode)})</h1>
<p>${esc(r.start)} → ${esc(r.end)}, ${axis.days} days, ${r.nodes} nodes at start, ${r.timeline.length} node lives.</p>
<table>
${stat('nodes at start', r.nodes)}
${stat('graceful rotations', r.rotations.graceful)}
${stat('forceful fallbacks (in-window, surge-less)', r.rotations.forcefulFallback)}
${stat('failed surge attempts', r.rotations.failedAttempts)}
${stat('forceful expirations (Karpenter reached the deadline)', r.forcefulExpirations)}
${stat('rotation starts outside a window', r.startsOutsideWindow)}
${stat('most rotations in flight at once', r.maxConcurrentRotations)}
${stat('P / t_rot / A / G / C', figures)}
</table>
<h2>Per day</h2>
${legend(DAY_LEGEND)}
<p>Each column is one day (UTC, from the run's start); the line under the bars is the nodes at risk at the day's
start: alive, not yet being rotated, with their deadline before their next window.${removing(series.removingAtEnd)}</p>
${chart}
${rowsSection(axis, lives, r.timeline.length, r.windows)}`;
  return page(`noderotation simulation: ${r.scenario}`, body);
}

const removing = (n: number): string =>
  n === 0 ? '' : ` ${n} node(s) were still being removed when the run ended and are in no day's bar.`;

function rowsSection(
  axis: Axis,
  lives: readonly NodeLife[],
  total: number,
  windows: readonly Span[],
  heading = '<h2>Node by node</h2>',
): string {
  if (lives.length === 0) return '';
  return `${heading}
${legend(ROW_LEGEND)}
<p>${esc(sampleNote(lives.length, total))}</p>
${nodeRows(axis, lives, windows)}`;
}

export interface WhatIfHtmlOptions extends HtmlOptions {
  /** The pool drawn node by node (both sides); without it no per-node rows. */
  pool?: string;
  /** The most pools charted one by one (default 10): the chosen pool, then those that change most. */
  poolCharts?: number;
}

const EMPTY_DAYS = (axis: Axis): DayCounts[] =>
  Array.from({ length: axis.days }, (_, i) => ({
    start: new Date(axis.t0 + i * DAY_MS).toISOString().replace('.000Z', 'Z'),
    graceful: 0,
    fallback: 0,
    expired: 0,
    windowSeconds: 0,
    atRisk: 0,
  }));

/** Day counts added up over pools (every pool of a what-if shares the run's start and end). */
function sumDays(axis: Axis, all: readonly (readonly DayCounts[])[]): DayCounts[] {
  const total = EMPTY_DAYS(axis);
  for (const days of all)
    days.forEach((d, i) => {
      const t = total[i] as DayCounts;
      t.graceful += d.graceful;
      t.fallback += d.fallback;
      t.expired += d.expired;
      t.atRisk += d.atRisk;
    });
  return total;
}

const sideLabel = (side: 'before' | 'after', s: SideSummary): string =>
  `${side}: ${s.policy ?? (s.nodes === 0 ? '(no nodes)' : 'Karpenter alone')}`;

/** How much a pool changes, for choosing which pools get their own chart: expirations first, then the rest. */
const changeOf = (p: PoolRuns): number =>
  Math.abs(p.after.forcefulExpirations - p.before.forcefulExpirations) * 1_000_000 +
  Math.abs(p.after.forcefulFallback - p.before.forcefulFallback) * 1000 +
  Math.abs(p.after.graceful - p.before.graceful);

/**
 * The before/after of `simulate --from-cluster -o html`: the fleet summed per day, before above after on one
 * scale and one day axis, the nodes at risk of both sides on one panel; then a table of every pool, and the
 * same chart for the pools that change most (and the chosen one), the chosen pool also node by node.
 */
export function renderWhatIfHtml(
  report: { now: string; duration: string; durationSeconds: number; nodePools: readonly PoolRuns[] },
  options: WhatIfHtmlOptions = {},
): string {
  const t0 = Date.parse(report.now);
  const axis = new Axis(t0, t0 + report.durationSeconds * 1000);
  const series = report.nodePools.map((p) => ({
    pool: p,
    before: p.runs.before ? dailySeries(p.runs.before).days : EMPTY_DAYS(axis),
    after: p.runs.after ? dailySeries(p.runs.after).days : EMPTY_DAYS(axis),
  }));
  const fleetBefore = sumDays(
    axis,
    series.map((s) => s.before),
  );
  const fleetAfter = sumDays(
    axis,
    series.map((s) => s.after),
  );
  const nodes = report.nodePools.reduce((n, p) => n + p.after.nodes, 0);
  const firstChanges = report.nodePools.map((p) => p.firstChange).filter((c): c is string => c !== null);
  const first = firstChanges.length > 0 ? firstChanges.reduce((a, b) => (Date.parse(b) < Date.parse(a) ? b : a)) : null;
  const marker = (at: string | null) => (at === null ? null : { at: Date.parse(at), label: `first change ${at}` });
  const fleetChart = dayChart(
    axis,
    [
      { label: 'before: all pools', days: fleetBefore, windows: [] },
      { label: 'after: all pools', days: fleetAfter, windows: [] },
    ],
    [
      { label: 'before', days: fleetBefore, color: COLORS.before },
      { label: 'after', days: fleetAfter, color: COLORS.after },
    ],
    marker(first),
  );
  const total = (side: 'before' | 'after', key: keyof SideSummary): number =>
    report.nodePools.reduce((n, p) => n + Number(p[side][key] ?? 0), 0);
  const pick = [...series]
    .filter((s) => s.pool.nodePool === options.pool || changeOf(s.pool) > 0)
    .sort(
      (a, b) =>
        Number(b.pool.nodePool === options.pool) - Number(a.pool.nodePool === options.pool) ||
        changeOf(b.pool) - changeOf(a.pool) ||
        a.pool.nodePool.localeCompare(b.pool.nodePool),
    )
    .slice(0, options.poolCharts ?? 10);
  const poolSections = pick.map((s) => {
    const p = s.pool;
    const chart = dayChart(
      axis,
      [
        { label: sideLabel('before', p.before), days: s.before, windows: p.runs.before?.windows ?? [] },
        { label: sideLabel('after', p.after), days: s.after, windows: p.runs.after?.windows ?? [] },
      ],
      [
        { label: 'before', days: s.before, color: COLORS.before },
        { label: 'after', days: s.after, color: COLORS.after },
      ],
      marker(p.firstChange),
    );
    const rows =
      p.nodePool === options.pool
        ? (['before', 'after'] as const)
            .map((side) => {
              const r = p.runs[side];
              if (r === null) return '';
              const lives = sampleLives(r.timeline, options.sample ?? DEFAULT_SAMPLE);
              const heading = `<h4>${esc(p.nodePool)} ${side}, node by node</h4>`;
              return rowsSection(axis, lives, r.timeline.length, r.windows, heading);
            })
            .join('\n')
        : '';
    return `<h3 id="pool-${esc(p.nodePool)}">NodePool ${esc(p.nodePool)}</h3>\n${chart}\n${rows}`;
  });
  const charted = new Set(pick.map((s) => s.pool.nodePool));
  const poolName = (p: PoolRuns): string =>
    charted.has(p.nodePool) ? `<a href="#pool-${esc(p.nodePool)}">${esc(p.nodePool)}</a>` : esc(p.nodePool);
  const poolRow = (p: PoolRuns): string =>
    `<tr><th>${poolName(p)}</th>` +
    [
      p.after.nodes,
      `${p.before.graceful} → ${p.after.graceful}`,
      `${p.before.forcefulFallback} → ${p.after.forcefulFallback}`,
      `${p.before.forcefulExpirations} → ${p.after.forcefulExpirations}`,
      `${p.before.nodesAtRisk} → ${p.after.nodesAtRisk}`,
      p.firstChange ?? 'none',
    ]
      .map((v) => `<td class="n">${esc(String(v))}</td>`)
      .join('') +
    '</tr>';
  const body = `<h1>What if: ${report.nodePools.length} NodePools, ${nodes} nodes</h1>
<p>From ${esc(report.now)} over ${esc(report.duration)} (${axis.days} days): the fleet as it is in the cluster,
simulated under the policies as they are (before) and with the changed files (after).</p>
<table>
<tr><th></th><th>before</th><th>after</th></tr>
${stat('graceful rotations', total('before', 'graceful'), total('after', 'graceful'))}
${stat('forceful fallbacks', total('before', 'forcefulFallback'), total('after', 'forcefulFallback'))}
${stat('forceful expirations', total('before', 'forcefulExpirations'), total('after', 'forcefulExpirations'))}
${stat('nodes of today at risk in the run', total('before', 'nodesAtRisk'), total('after', 'nodesAtRisk'))}
${stat('first change', first ?? 'none', '')}
</table>
<h2>The fleet per day</h2>
${legend([...DAY_LEGEND.slice(1), [COLORS.before, 'at risk before (dashed)'], [COLORS.after, 'at risk after']])}
<p>Both sides on one scale and one day axis (UTC days from --now). Under them, the difference in forceful
expirations per day (after − before: red where the change adds them, green where it spares them), then the nodes
at risk at each day's start. Each pool's windows are shaded in its own chart below.</p>
${fleetChart}
<h2>Per NodePool</h2>
<table>
<tr><th>NodePool</th><th>nodes</th><th>graceful</th><th>fallbacks</th><th>expirations</th><th>at risk</th>
<th>first change</th></tr>
${report.nodePools.map(poolRow).join('\n')}
</table>
<p>${esc(chartNote(pick.length, report.nodePools.length, options.pool))}</p>
${legend(DAY_LEGEND)}
${poolSections.join('\n')}`;
  return page(`noderotation what-if: ${report.now}`, body);
}

function chartNote(charted: number, pools: number, chosen: string | undefined): string {
  const which =
    charted === 0
      ? 'No pool changes, so no pool has a chart of its own.'
      : `${charted} of ${pools} pools charted: ${chosen ? `${chosen} (chosen with --pool), then ` : ''}` +
        'those whose expirations, fallbacks and rotations change most.';
  return chosen ? which : `${which} Node-by-node rows: --pool NAME.`;
}
