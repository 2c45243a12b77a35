// The soak's report: one self-contained HTML page (inline SVG, no scripts) generated from a run's records alone —
// the verdicts, the margin of every rotation against its deadline, the anatomy of the rotations, the chaos against
// the rotations it met, and the full ledger. Pure: the same records give byte-identical HTML.
//
//   npm run soak:report -- DIR [--out FILE]    (DIR: a run's --out; writes DIR/report.html by default)
import { circle, esc, legend, line, page, rect, svgOpen, text } from '../../src/util/html.js';
import { medianMax } from '../controller/measure.js';
import type { Criterion, Rotation, SoakRecords } from './ledger.js';
import { OPERATOR_KINDS } from './plan.js';
import { ledgerTable, poolTable } from './summary.js';

const WIDTH = 1000;
const LEFT = 180;
const PLOT = WIDTH - LEFT - 20;
const COLORS = {
  surge: '#2e8b57',
  fallback: '#e08a1e',
  rolledBack: '#888',
  inFlight: '#9fb7d9',
  chaos: '#c0392b',
  operator: '#8e44ad',
  grid: '#ddd',
  pass: '#2e8b57',
  fail: '#c0392b',
};

export interface RunFacts {
  seed: number;
  minutes: number;
  chaos: boolean;
  /** Where it ran: a sentence (cores, memory, what else ran). */
  machine: string;
}

const s1 = (x: number | undefined): string => (x === undefined || !Number.isFinite(x) ? '—' : x.toFixed(1));
const clock = (ms: number): string => new Date(ms).toISOString().slice(11, 19);
const minutesLabel = (ms: number, t0: number): string => `${Math.round((ms - t0) / 60_000)} min`;

/** A time axis over the run: x of an instant, and a tick every `everyMin` minutes with its label. */
function timeAxis(
  t0: number,
  tEnd: number,
): { x: (ms: number) => number; ticks: (top: number, bottom: number) => string[] } {
  const span = Math.max(tEnd - t0, 1);
  const x = (ms: number): number => LEFT + (PLOT * Math.min(Math.max(ms - t0, 0), span)) / span;
  const everyMin = span > 40 * 60_000 ? 10 : span > 10 * 60_000 ? 2 : 1;
  const ticks = (top: number, bottom: number): string[] => {
    const out: string[] = [];
    for (let m = 0; m * 60_000 <= span; m += everyMin) {
      const xx = x(t0 + m * 60_000).toFixed(1);
      out.push(line({ x1: xx, x2: xx, y1: top, y2: bottom, stroke: COLORS.grid }));
      out.push(text({ x: xx, y: bottom + 18, 'font-size': 11, 'text-anchor': 'middle' }, `${m} min`));
    }
    return out;
  };
  return { x, ticks };
}

/**
 * Every completed rotation's margin (deadline − the old claim gone) as a share of its pool's lead time, against
 * when it started: pools whose lead times differ a hundredfold (a tight pool's 6 min, a windowed one's 94) on one
 * scale, where 100 % is a rotation over the moment it became due and 0 % one that ended at the deadline.
 */
function marginChart(r: SoakRecords, rots: readonly Rotation[]): string {
  const lead = new Map(r.pools.map((p) => [p.name, p.leadTimeS]));
  const done = rots.filter((x) => x.outcome === 'completed' && x.marginS !== undefined && lead.get(x.pool));
  const height = 260;
  const top = 20;
  const bottom = height - 30;
  const y = (share: number): number => bottom - (bottom - top) * Math.min(Math.max(share, 0), 1);
  const axis = timeAxis(r.t0, r.tEnd);
  const out = [svgOpen(WIDTH, height, 'deadline margin of every completed rotation', 'margins')];
  out.push(...axis.ticks(top, bottom));
  for (const v of [0, 0.25, 0.5, 0.75, 1]) {
    const yy = y(v).toFixed(1);
    out.push(line({ x1: LEFT, x2: LEFT + PLOT, y1: yy, y2: yy, stroke: COLORS.grid }));
    out.push(text({ x: LEFT - 6, y: Number(yy) + 4, 'font-size': 11, 'text-anchor': 'end' }, `${v * 100} %`));
  }
  for (const x of done) {
    const leadS = lead.get(x.pool) as number;
    const share = (x.marginS as number) / leadS;
    const color = x.mode === 'surge' ? COLORS.surge : COLORS.fallback;
    const title = esc(
      `${x.pool}/${x.claim} at ${clock(x.start)}: ${s1(x.marginS)} s before its deadline, ` +
        `${Math.round(share * 100)} % of its ${leadS} s lead time (${x.mode})`,
    );
    out.push(circle({ cx: axis.x(x.start).toFixed(1), cy: y(share).toFixed(1), r: 3.5, fill: color }, title));
  }
  out.push('</svg>');
  return out.join('');
}

/** The parts of a rotation, each a strip of dots: surge wait, drain, total. */
function anatomyChart(rots: readonly Rotation[]): string {
  const done = rots.filter((x) => x.outcome === 'completed');
  const rows: [string, (x: Rotation) => number | undefined, Rotation[]][] = [
    ['surge wait', (x) => x.surgeWaitS, done.filter((x) => x.mode === 'surge')],
    ['drain', (x) => x.drainS, done],
    ['total', (x) => x.totalS, done],
  ];
  const values = rows.flatMap(([, f, xs]) => xs.map(f)).filter((v): v is number => v !== undefined);
  const xMax = Math.max(10, ...values);
  const rowH = 44;
  const height = rows.length * rowH + 40;
  const x = (v: number): number => LEFT + (PLOT * v) / xMax;
  const out = [svgOpen(WIDTH, height, 'anatomy of the completed rotations', 'anatomy')];
  for (let s = 0; s <= xMax; s += niceStep(xMax)) {
    const xx = x(s).toFixed(1);
    out.push(line({ x1: xx, x2: xx, y1: 10, y2: height - 30, stroke: COLORS.grid }));
    out.push(text({ x: xx, y: height - 14, 'font-size': 11, 'text-anchor': 'middle' }, `${s} s`));
  }
  rows.forEach(([label, f, xs], i) => {
    const mid = 10 + i * rowH + rowH / 2;
    const vs = xs.map((r) => [r, f(r)] as const).filter((p): p is readonly [Rotation, number] => p[1] !== undefined);
    const med = medianMax(vs.map(([, v]) => v)).median;
    out.push(
      text({ x: LEFT - 8, y: mid + 4, 'font-size': 12, 'text-anchor': 'end' }, `${label} (median ${s1(med)} s)`),
    );
    vs.forEach(([rot, v], j) => {
      const jitter = ((j * 7) % 11) - 5;
      const color = rot.mode === 'surge' ? COLORS.surge : COLORS.fallback;
      const title = esc(`${rot.pool}/${rot.claim}: ${label} ${s1(v)} s`);
      out.push(
        circle(
          { cx: x(v).toFixed(1), cy: (mid + jitter * 1.6).toFixed(1), r: 3, fill: color, 'fill-opacity': 0.7 },
          title,
        ),
      );
    });
    if (Number.isFinite(med)) {
      const xm = x(med).toFixed(1);
      out.push(line({ x1: xm, x2: xm, y1: mid - 14, y2: mid + 14, stroke: '#222', 'stroke-width': 2 }));
    }
  });
  out.push('</svg>');
  return out.join('');
}

function niceStep(max: number): number {
  for (const s of [1, 2, 5, 10, 15, 30, 60, 120, 300, 600]) if (max / s <= 10) return s;
  return 1200;
}

/** One row per pool with its rotations as bars, and the chaos under them, numbered as in the table below. */
function timelineChart(r: SoakRecords, rots: readonly Rotation[]): string {
  const rowH = 22;
  const top = 10;
  const poolRows = r.pools.length;
  const chaosTop = top + poolRows * rowH + 12;
  const height = chaosTop + 2 * rowH + 30;
  const axis = timeAxis(r.t0, r.tEnd);
  const out = [svgOpen(WIDTH, height, 'rotations per pool and the chaos they met', 'timeline')];
  out.push(...axis.ticks(top, height - 30));
  r.pools.forEach((p, i) => {
    const y = top + i * rowH;
    out.push(text({ x: LEFT - 8, y: y + 14, 'font-size': 12, 'text-anchor': 'end' }, esc(p.name)));
    for (const x of rots.filter((rot) => rot.pool === p.name)) {
      const end = x.totalS === undefined ? r.tEnd : x.start + x.totalS * 1000;
      const color =
        x.outcome === 'rolled back'
          ? COLORS.rolledBack
          : x.outcome === 'in flight'
            ? COLORS.inFlight
            : x.mode === 'surge'
              ? COLORS.surge
              : COLORS.fallback;
      const x1 = axis.x(x.start);
      const w = Math.max(axis.x(end) - x1, 2);
      const title = esc(`${x.claim}: ${x.mode}, ${x.outcome}, ${clock(x.start)}–${clock(end)}`);
      out.push(rect({ x: x1.toFixed(1), y: y + 3, width: w.toFixed(1), height: rowH - 6, fill: color }, title));
    }
  });
  out.push(text({ x: LEFT - 8, y: chaosTop + 14, 'font-size': 12, 'text-anchor': 'end' }, 'faults'));
  out.push(text({ x: LEFT - 8, y: chaosTop + rowH + 14, 'font-size': 12, 'text-anchor': 'end' }, 'operator'));
  r.chaos.forEach((c, i) => {
    const operator = (OPERATOR_KINDS as readonly string[]).includes(c.kind);
    const y = chaosTop + (operator ? rowH : 0);
    const x1 = axis.x(c.start);
    const w = Math.max(axis.x(c.end) - x1, 3);
    const title = esc(`${i + 1}. ${c.kind} ${clock(c.start)}–${clock(c.end)}: ${c.detail}`);
    out.push(
      rect(
        {
          x: x1.toFixed(1),
          y: y + 3,
          width: w.toFixed(1),
          height: rowH - 6,
          fill: operator ? COLORS.operator : COLORS.chaos,
        },
        title,
      ),
    );
  });
  out.push('</svg>');
  return out.join('');
}

function table(head: readonly string[], rows: readonly (readonly string[])[], numeric: readonly number[] = []): string {
  const cell = (v: string, i: number): string => `<td${numeric.includes(i) ? ' class="n"' : ''}>${esc(v)}</td>`;
  return (
    `<table><tr>${head.map((h) => `<th>${esc(h)}</th>`).join('')}</tr>` +
    rows.map((r) => `<tr>${r.map(cell).join('')}</tr>`).join('') +
    '</table>'
  );
}

export function renderReport(
  r: SoakRecords,
  rots: readonly Rotation[],
  verdicts: readonly Criterion[],
  facts: RunFacts,
): string {
  const passed = verdicts.filter((v) => v.pass).length;
  const graceful = rots.filter((x) => x.mode === 'surge' && x.outcome === 'completed');
  const margins = graceful.map((x) => x.marginS).filter((m): m is number => m !== undefined);
  const body: string[] = [];
  body.push(
    `<h1>Soak, seed ${facts.seed}: ${passed}/${verdicts.length} criteria passed</h1>`,
    `<p>${esc(new Date(r.t0).toISOString())} → ${esc(new Date(r.tEnd).toISOString())} ` +
      `(${s1((r.tEnd - r.t0) / 60_000)} min), chaos ${facts.chaos ? 'on' : 'off'}: ${r.chaos.length} faults; ` +
      `${rots.length} rotations, ` +
      `${graceful.length} graceful completed, smallest margin ${s1(Math.min(...margins))} s. ${esc(facts.machine)}</p>`,
    '<h2>Criteria</h2>',
    `<table><tr><th>#</th><th>criterion</th><th>verdict</th><th>observed</th></tr>${verdicts
      .map(
        (v, i) =>
          `<tr><td class="n">${i + 1}</td><td>${esc(v.title)}</td><td style="color:${
            v.pass ? COLORS.pass : COLORS.fail
          };font-weight:bold">${v.pass ? 'PASS' : 'FAIL'}</td><td>${esc(v.observed)}</td></tr>`,
      )
      .join('')}</table>`,
    '<h2>Pools</h2>',
    table(...poolTable(r, rots), [2, 3, 4, 5, 6, 7, 8, 9]),
    '<h2>Margin: how long before its deadline each rotation ended</h2>',
    '<p>Deadline (creation + expireAfter) − the old NodeClaim gone, as a share of the pool’s lead time, against ' +
      'when the rotation started (the seconds are in each point’s tooltip and in the ledger).</p>',
    legend([
      [COLORS.surge, 'graceful (surge)'],
      [COLORS.fallback, 'forceful fallback'],
    ]),
    marginChart(r, rots),
    '<h2>Anatomy of a rotation</h2>',
    '<p>Surge wait: the anchor written → the surge NodeClaim Ready. ' +
      'Drain: our delete of the old NodeClaim → it is gone. ' +
      'Total: the anchor written → cleared. The bar is the median.</p>',
    anatomyChart(rots),
    '<h2>Rotations and chaos</h2>',
    legend([
      [COLORS.surge, 'graceful rotation'],
      [COLORS.fallback, 'forceful fallback'],
      [COLORS.rolledBack, 'rolled back'],
      [COLORS.inFlight, 'in flight at the end'],
      [COLORS.chaos, 'fault'],
      [COLORS.operator, "an operator's action"],
    ]),
    timelineChart(r, rots),
    table(
      ['#', 'from', 'to', 'kind', 'what', 'steady after'],
      r.chaos.map((c, i) => [
        String(i + 1),
        clock(c.start),
        clock(c.end),
        c.kind,
        c.detail,
        c.steadyAt === undefined ? 'not within the bound' : `${s1((c.steadyAt - c.end) / 1000)} s`,
      ]),
      [0, 5],
    ),
    '<h2>Ledger</h2>',
    table(...ledgerTable(rots, (ms) => `${clock(ms)} (${minutesLabel(ms, r.t0)})`), [3, 6, 7, 8, 9]),
  );
  return page(`noderotation soak, seed ${facts.seed}`, body.join('\n'));
}
