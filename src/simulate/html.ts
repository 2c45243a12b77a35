// One self-contained HTML page (inline SVG and CSS, no scripts, no external assets) that stays readable from 20
// nodes to a fleet of 10,000: the run summed per day against the maintenance windows (rotations, fallbacks,
// forceful expirations, nodes at risk), then node-by-node rows for a deterministic sample only. The page's size
// grows with the days of the run and the sample, not with the nodes. The same inputs give byte-identical HTML.
// Its words are the CLI's: the figures under the names and meanings `explain --legend` gives them, durations in
// h/m/s, and every time on the page in the policy's time zone (UTC where the pools' zones differ).
import { FIGURE_LEGEND, figureText } from '../explain/table.js';
import { instantToWall, offsetMinutes } from '../schedule/zone.js';
import { formatDuration } from '../util/duration.js';
import { esc, legend, line, page, rect, svgOpen as svgOf, terms, text } from '../util/html.js';
import { count } from '../util/plural.js';
import { dailySeries, DAY_MS, localDays, sampleLives, type DayCounts, type LocalDay } from './aggregate.js';
import type { NodeLife, SimulationResult } from './simulate.js';
import type { PoolRuns, SideSummary } from './what-if.js';

const svgOpen = (height: number, label: string, cls: string): string => svgOf(WIDTH, height, label, cls);

/**
 * The endings in Okabe and Ito's colours, which readers with a red–green colour-vision deficiency tell apart
 * too; the deadline is a near-black tick, apart from the forceful expiration's vermilion by its lightness as
 * well as its hue.
 */
const COLORS = {
  life: '#9fb7d9',
  rotated: '#009e73',
  fallback: '#e69f00',
  expired: '#d55e00',
  reaped: '#888',
  running: '#9fb7d9',
  window: '#f3e9a6',
  freeze: '#cdd5df',
  deadline: '#111',
  before: '#777',
  after: '#0072b2',
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
  [COLORS.deadline, "deadline: Karpenter's forced expiry", 'tick'],
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

/** The zone the page's times are in, and whether it is UTC because the windows' zones differ. */
interface Zone {
  name: string;
  mixed: boolean;
}

/** The one zone of the windows drawn on an axis; UTC where there is none or several. */
function zoneOf(zoneLists: readonly (readonly string[])[]): Zone {
  const all = [...new Set(zoneLists.flat())];
  return all.length === 1 ? { name: all[0] as string, mixed: false } : { name: 'UTC', mixed: all.length > 1 };
}

const pad2 = (n: number): string => String(n).padStart(2, '0');

/**
 * The run's time axis: instants to x, the run's days (calendar days of the zone: each tick an instant, its
 * label the date there), how often a day is labelled, and instants as the clocks of the zone read them.
 */
class Axis {
  readonly days: readonly LocalDay[];
  readonly labelEvery: number;
  /** The first day that begins at a midnight (the first is cut when the run starts in the middle of one). */
  private readonly firstMidnight: number;
  constructor(
    readonly t0: number,
    readonly t1: number,
    readonly zone: Zone,
  ) {
    this.days = localDays(t0, t1, zone.name);
    // The shortest whole day (23 hours across a spring-forward) sets the stride, so labels never come closer.
    const whole = this.days.slice(1, -1).map((_, i) => this.end(i + 1) - this.start(i + 1));
    const shortest = ((whole.length > 0 ? Math.min(...whole) : DAY_MS) / (t1 - t0)) * PLOT;
    this.labelEvery = Math.max(1, Math.ceil(LABEL_GAP / shortest));
    this.firstMidnight = this.local(t0).endsWith('00:00:00') ? 0 : 1;
  }
  start(i: number): number {
    return (this.days[i] as LocalDay).start;
  }
  end(i: number): number {
    return this.days[i + 1]?.start ?? this.t1;
  }
  x(t: number): number {
    return LEFT + ((Math.min(Math.max(t, this.t0), this.t1) - this.t0) / (this.t1 - this.t0)) * PLOT;
  }
  /** The wall clock of the zone at t, YYYY-MM-DD HH:MM:SS. */
  private local(t: number): string {
    return instantToWall(this.zone.name, t).toISOString().slice(0, 19).replace('T', ' ');
  }
  /** An instant for a reader: the zone's date and time (seconds only where there are any) and its offset. */
  time(t: number | string): string {
    const at = typeof t === 'string' ? Date.parse(t) : t;
    const wall = this.local(at).replace(/:00$/, '');
    if (this.zone.name === 'UTC') return `${wall} UTC`;
    const off = offsetMinutes(this.zone.name, at);
    const abs = Math.abs(off);
    return `${wall} UTC${off < 0 ? '-' : '+'}${pad2(Math.floor(abs / 60))}:${pad2(abs % 60)}`;
  }
  /**
   * Tick lines over [top, bottom] at the labelled midnights, every labelEvery days, the date under each, and
   * the zone named under them.
   */
  ticks(top: number, bottom: number): string[] {
    const out: string[] = [];
    for (let i = this.firstMidnight; i < this.days.length; i += this.labelEvery) {
      const x = this.x(this.start(i));
      // A label centred this near the drawing's right edge would be cut.
      if (x > WIDTH - LABEL_GAP / 3) break;
      const xt = n1(x);
      out.push(line({ x1: xt, y1: top, x2: xt, y2: bottom, stroke: '#ddd', 'stroke-width': 0.5 }));
      const day = (this.days[i] as LocalDay).date.slice(5);
      out.push(text({ x: xt, y: bottom + 13, 'font-size': 11, 'text-anchor': 'middle', class: 'day-label' }, day));
    }
    const zone = `times in ${this.zone.name}${this.zone.mixed ? ' (the windows are in several zones)' : ''}`;
    out.push(
      text({ x: LEFT + PLOT, y: bottom + 27, 'font-size': 10, 'text-anchor': 'end', class: 'axis-zone' }, esc(zone)),
    );
    return out;
  }
}

/** Room under a chart for the day labels and the zone's name. */
const AXIS_ROOM = 33;

interface Span {
  start: string;
  end: string;
}

/** The windows shaded over [top, top + height], and the freezes over them (a window inside one is no window). */
function windowBands(
  axis: Axis,
  windows: readonly Span[],
  top: number,
  height: number,
  freezes: readonly Span[] = [],
): string[] {
  const band = (w: Span, what: string, style: Record<string, string | number>): string => {
    const x0 = axis.x(Date.parse(w.start));
    const x1 = axis.x(Date.parse(w.end));
    const box = { x: n1(x0), y: top, width: n1(Math.max(1, x1 - x0)), height, ...style };
    return rect(box, `${what} ${esc(axis.time(w.start))} – ${esc(axis.time(w.end))}`);
  };
  return [
    ...windows.map((w) => band(w, 'window', { fill: COLORS.window })),
    ...freezes.map((f) => band(f, 'freeze', { fill: COLORS.freeze, class: 'freeze' })),
  ];
}

/** The legend's entry for freezes, where there are some. */
const freezeLegend = (freezes: readonly Span[]): (readonly [string, string])[] =>
  freezes.length > 0 ? [[COLORS.freeze, 'freeze: nothing of ours starts']] : [];

/** One panel of day bars: rotations, fallbacks and expirations stacked, one group per day of the run. */
interface DayPanel {
  label: string;
  days: readonly DayCounts[];
  windows: readonly Span[];
  freezes?: readonly Span[];
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

/** A day's tooltip; the window's time only where the panel has windows (a sum over pools has none). */
const dayTitle = (d: DayCounts, label: string, windows: boolean): string =>
  esc(
    `${label} ${d.date}: ${d.graceful} graceful, ${d.fallback} fallback, ${d.expired} expired; ` +
      (windows ? `${formatDuration(d.windowSeconds)} in a window; ` : '') +
      `${d.atRisk} at risk at the day's start`,
  );

/** Stacked day bars on a shared scale (yMax), so that two panels compare by eye. */
function dayPanel(axis: Axis, p: DayPanel, top: number, yMax: number): string[] {
  const out = windowBands(axis, p.windows, top, PANEL_HEIGHT, p.freezes);
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
  p.days.forEach((d, i) => {
    const x0 = axis.x(axis.start(i));
    const dayWidth = axis.x(axis.end(i)) - x0;
    const barWidth = Math.max(0.6, dayWidth * 0.7);
    const parts = [
      rect(
        {
          x: n1(x0),
          y: top,
          width: n1(Math.max(0.5, dayWidth)),
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
      const bar = { x: n1(x0 + (dayWidth - barWidth) / 2), y: n1(y), width: n1(barWidth), height: n1(h) };
      parts.push(rect({ ...bar, fill: COLORS[kind], class: kind, 'data-count': count }));
    }
    out.push(`<g class="day" data-day="${d.date}">${parts.join('')}</g>`);
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
      return [`${n1(axis.x(axis.start(i)))},${y}`, `${n1(axis.x(axis.end(i)))},${y}`];
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
    const dayWidth = axis.x(axis.end(i)) - axis.x(axis.start(i));
    const barWidth = Math.max(0.6, dayWidth * 0.7);
    const x0 = axis.x(axis.start(i)) + (dayWidth - barWidth) / 2;
    const h = Math.abs(delta) * scale;
    const day = (after[i] as DayCounts).date;
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
        `${day}: ${delta > 0 ? '+' : '−'}${count(Math.abs(delta), 'forceful expiration')} after the change`,
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
  const height = bottom + AXIS_ROOM;
  return `${svgOpen(height, 'rotations per day', 'days')}\n${parts.join('\n')}\n</svg>`;
}

const ROW = 14;

/** Node-by-node rows: each life as a bar, its rotation or expiry in colour, its deadline as a tick. */
function nodeRows(
  axis: Axis,
  lives: readonly NodeLife[],
  windows: readonly Span[],
  freezes: readonly Span[] = [],
): string {
  const top = 20;
  const height = top + lives.length * ROW + AXIS_ROOM;
  const parts = windowBands(axis, windows, top - 4, lives.length * ROW + 4, freezes);
  parts.push(...axis.ticks(top - 4, top + lives.length * ROW));
  lives.forEach((n, i) => {
    const y = top + i * ROW;
    const title = esc(
      `${n.node} (${n.origin}) created ${axis.time(n.createdAt)}, ` +
        `deadline ${n.deadline === null ? 'none' : axis.time(n.deadline)}, ` +
        `${n.end}${n.endedAt ? ` at ${axis.time(n.endedAt)}` : ''}, ${count(n.attempts, 'attempt')}`,
    );
    const xOf = (iso: string | null): number => axis.x(iso === null ? axis.t1 : Date.parse(iso));
    parts.push(
      text(
        { x: LEFT - 6, y: y + ROW - 3, 'font-size': 10, 'text-anchor': 'end', class: 'row-label' },
        esc(fitEnd(n.node, NAME_CHARS)),
      ),
    );
    /** A bar on the node's row from `from` to its end, at least `min` wide, in the colour of its kind. */
    const bar = (from: string | null, min: number, kind: keyof typeof COLORS): string =>
      rect(
        {
          x: n1(xOf(from)),
          y: y + 2,
          width: n1(Math.max(min, xOf(n.endedAt) - xOf(from))),
          height: ROW - 4,
          fill: COLORS[kind],
          class: kind,
        },
        title,
      );
    parts.push(bar(n.createdAt, 1, 'life'));
    if (n.rotationStartedAt) parts.push(bar(n.rotationStartedAt, 3, n.end));
    else if (n.end === 'expired') parts.push(bar(n.drainStartedAt ?? n.deadline, 3, n.end));
    if (n.deadline && Date.parse(n.deadline) <= axis.t1) {
      const xd = n1(xOf(n.deadline));
      parts.push(
        line({
          x1: xd,
          y1: y + 1,
          x2: xd,
          y2: y + ROW - 1,
          stroke: COLORS.deadline,
          'stroke-width': 1.5,
          class: 'deadline',
        }),
      );
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
    : `${shown} of ${count(total, 'node life', 'node lives')}, a deterministic sample: each kind of ending ` +
      '(expired, fallback, reaped, rotated, running) gets a share, evenly spaced in name order; the day chart ' +
      'above counts every one.';

/**
 * The policy's figures under the names `explain` gives its columns, each with its value in h/m/s (or as a
 * count) and what it means: the lines of `explain --legend`, from the same list.
 */
const figuresTable = (f: SimulationResult['figures']): string =>
  `<table class="figures">
<tr><th>figure</th><th>value</th><th>what it means</th></tr>
${FIGURE_LEGEND.map(
  (e) =>
    `<tr><th>${esc(e.column)}</th><td class="n">${esc(figureText(e.figure, f[e.figure] ?? null))}</td>` +
    `<td>${esc(e.meaning)}</td></tr>`,
).join('\n')}
</table>`;

/** The rows' legend: the reaped colour only where a reaped node's bar is drawn. */
const rowLegend = (lives: readonly NodeLife[]) =>
  lives.some((n) => n.end === 'reaped' && n.rotationStartedAt !== null)
    ? [...ROW_LEGEND, [COLORS.reaped, 'reaped: removed by the controller, not as a rotation'] as const]
    : ROW_LEGEND;

export interface HtmlOptions {
  /** The most per-node rows (default DEFAULT_SAMPLE); 0 draws none. */
  sample?: number;
}

/** The report of one scenario run. */
export function renderHtml(r: SimulationResult, options: HtmlOptions = {}): string {
  const axis = new Axis(Date.parse(r.start), Date.parse(r.end), zoneOf([r.timezones]));
  const series = dailySeries(r, axis.zone.name);
  const lives = sampleLives(r.timeline, options.sample ?? DEFAULT_SAMPLE);
  const chart = dayChart(
    axis,
    [
      {
        label: r.mode === 'baseline' ? 'Karpenter alone' : 'controller',
        days: series.days,
        windows: r.windows,
        freezes: r.freezes,
      },
    ],
    [{ label: 'nodes at risk', days: series.days, color: COLORS.after }],
    null,
  );
  const body = `<h1>Simulation: ${esc(r.scenario)} (${esc(r.mode)})</h1>
<p>${esc(axis.time(r.start))} → ${esc(axis.time(r.end))} (${formatDuration((axis.t1 - axis.t0) / 1000)}),
${count(r.nodes, 'node')} at start, ${count(r.timeline.length, 'node life', 'node lives')}.</p>
<table>
${stat('nodes at start', r.nodes)}
${stat('graceful rotations', r.rotations.graceful)}
${stat('forceful fallbacks (in-window, surge-less)', r.rotations.forcefulFallback)}
${stat('failed surge attempts', r.rotations.failedAttempts)}
${stat('forceful expirations (Karpenter reached the deadline)', r.forcefulExpirations)}
${
  r.freezes.length > 0
    ? `${stat('… of them inside a freeze', r.forcefulExpirationsInFreeze)}
`
    : ''
}${stat('rotation starts outside a window', r.startsOutsideWindow)}
${stat('most rotations in flight at once', r.maxConcurrentRotations)}
</table>
<h2>The policy's figures</h2>
<p>As <code>noderotation explain</code> derives them for this NodePool, under the names of its columns.</p>
${figuresTable(r.figures)}
<h2>Per day</h2>
${legend([...DAY_LEGEND, ...freezeLegend(r.freezes), [COLORS.after, 'nodes at risk', 'line']])}
<p>Each column is one calendar day in ${esc(axis.zone.name)}, midnight to midnight (the first and the last cut at
the run's start and end); the line under the bars is the nodes at risk at the day's start: alive, not yet being
rotated, with their deadline before their next window.${removing(series.removingAtEnd)}</p>
${chart}
${rowsSection(axis, lives, r.timeline.length, r.windows, undefined, r.freezes)}`;
  return page(`noderotation simulation: ${r.scenario}`, body);
}

const removing = (n: number): string =>
  n === 0
    ? ''
    : ` ${count(n, 'node')} ${n === 1 ? 'was' : 'were'} still being removed when the run ended and ` +
      `${n === 1 ? 'is' : 'are'} in no day's bar.`;

function rowsSection(
  axis: Axis,
  lives: readonly NodeLife[],
  total: number,
  windows: readonly Span[],
  heading = '<h2>Node by node</h2>',
  freezes: readonly Span[] = [],
): string {
  if (lives.length === 0) return '';
  return `${heading}
${legend([...rowLegend(lives), ...freezeLegend(freezes)])}
<p>${esc(sampleNote(lives.length, total))}</p>
${nodeRows(axis, lives, windows, freezes)}`;
}

export interface WhatIfHtmlOptions extends HtmlOptions {
  /** The pool drawn node by node (both sides); without it no per-node rows. */
  pool?: string;
  /** The most pools charted one by one (default 10): the chosen pool, then those that change most. */
  poolCharts?: number;
}

const EMPTY_DAYS = (axis: Axis): DayCounts[] =>
  axis.days.map((d) => ({
    start: new Date(d.start).toISOString().replace('.000Z', 'Z'),
    date: d.date,
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
  // One axis for every chart: the zone of the policies' windows if they share one (a side without a policy has
  // no windows of its own), else UTC.
  const zone = zoneOf(
    report.nodePools.flatMap((p) =>
      (['before', 'after'] as const).flatMap((side) =>
        p[side].policy !== null && p.runs[side] ? [p.runs[side].timezones] : [],
      ),
    ),
  );
  const axis = new Axis(t0, t0 + report.durationSeconds * 1000, zone);
  const daysOf = (r: SimulationResult | null): DayCounts[] => (r ? dailySeries(r, zone.name).days : EMPTY_DAYS(axis));
  const series = report.nodePools.map((p) => ({ pool: p, before: daysOf(p.runs.before), after: daysOf(p.runs.after) }));
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
  const marker = (at: string | null) =>
    at === null ? null : { at: Date.parse(at), label: `first change ${axis.time(at)}` };
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
    POOL_COLUMNS.map((c) => `<td class="n">${esc(c.cell(p, axis))}</td>`).join('') +
    '</tr>';
  const body = `<h1>What if: ${count(report.nodePools.length, 'NodePool')}, ${count(nodes, 'node')}</h1>
<p>From ${esc(axis.time(t0))} over ${formatDuration(report.durationSeconds)}: the fleet as it is in the cluster,
simulated under the policies as they are (before) and with the changed files (after).</p>
<table>
<tr><th></th><th>before</th><th>after</th></tr>
${stat('graceful rotations', total('before', 'graceful'), total('after', 'graceful'))}
${stat('forceful fallbacks', total('before', 'forcefulFallback'), total('after', 'forcefulFallback'))}
${stat('forceful expirations', total('before', 'forcefulExpirations'), total('after', 'forcefulExpirations'))}
${stat('nodes of today at risk in the run', total('before', 'nodesAtRisk'), total('after', 'nodesAtRisk'))}
${stat('first change', first === null ? 'none' : axis.time(first), '')}
</table>
<h2>The fleet per day</h2>
${legend([
  ...DAY_LEGEND.slice(1),
  [COLORS.before, 'at risk before', 'dashed'],
  [COLORS.after, 'at risk after', 'line'],
])}
<p>Both sides on one scale and one day axis: calendar days in ${esc(axis.zone.name)}, midnight to midnight (the
first and the last cut at --now and the run's end). Under them, the difference in forceful expirations per day
(after − before: above the line, in the expirations' colour, where the change adds them; below it, in the
rotations' colour, where it spares them), then the nodes at risk at each day's start. Each pool's windows are
shaded in its own chart below.</p>
${fleetChart}
<h2>Per NodePool</h2>
<table>
<tr><th>NodePool</th>${POOL_COLUMNS.map((c) => `<th>${esc(c.column)}</th>`).join('')}</tr>
${report.nodePools.map(poolRow).join('\n')}
</table>
${terms(POOL_COLUMNS.map((c) => [c.column, c.meaning]))}
<p>${esc(chartNote(pick.length, report.nodePools.length, options.pool))}</p>
${legend(DAY_LEGEND)}
${poolSections.join('\n')}`;
  return page(`noderotation what-if: ${report.now}`, body);
}

const change = (p: PoolRuns, key: 'graceful' | 'forcefulFallback' | 'forcefulExpirations' | 'nodesAtRisk') =>
  `${p.before[key]} → ${p.after[key]}`;

/** The per-NodePool table's columns after the pool's name: the header, what it means, the cell. */
const POOL_COLUMNS: readonly { column: string; meaning: string; cell: (p: PoolRuns, axis: Axis) => string }[] = [
  {
    column: 'nodes',
    meaning: "the pool's NodeClaims in the cluster, each simulated from its real age",
    cell: (p) => String(p.after.nodes),
  },
  {
    column: 'graceful',
    meaning: 'graceful rotations in the run (a surge node first), before → after',
    cell: (p) => change(p, 'graceful'),
  },
  {
    column: 'fallbacks',
    meaning: 'forceful fallbacks: drained in a window without a surge node, before → after',
    cell: (p) => change(p, 'forcefulFallback'),
  },
  {
    column: 'expirations',
    meaning: "forceful expirations: Karpenter reached a node's deadline itself, before → after",
    cell: (p) => change(p, 'forcefulExpirations'),
  },
  {
    column: 'at risk',
    meaning: "nodes of today's fleet that Karpenter would force-expire within the run, before → after",
    cell: (p) => change(p, 'nodesAtRisk'),
  },
  {
    column: 'first change',
    meaning:
      "the earliest instant at which a node of today's fleet would start rotating, start draining or end " +
      'differently; none: no difference within the run',
    cell: (p, axis) => (p.firstChange === null ? 'none' : axis.time(p.firstChange)),
  },
];

function chartNote(charted: number, pools: number, chosen: string | undefined): string {
  const which =
    charted === 0
      ? 'No pool changes, so no pool has a chart of its own.'
      : `${charted} of ${pools} pools charted: ${chosen ? `${chosen} (chosen with --pool), then ` : ''}` +
        'those whose expirations, fallbacks and rotations change most.';
  return chosen ? which : `${which} Node-by-node rows: --pool NAME.`;
}
