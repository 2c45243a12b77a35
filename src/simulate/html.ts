// One self-contained HTML page (inline SVG, no scripts, no external assets): the windows shaded, each node's
// life as a bar, its rotation and its deadline — what a platform team looks at before adopting a plan.
import type { NodeLife, SimulationResult } from './simulate.js';

const esc = (s: string): string =>
  s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');

const COLORS = {
  life: '#9fb7d9',
  rotated: '#2e8b57',
  fallback: '#e08a1e',
  expired: '#c0392b',
  reaped: '#888',
  running: '#9fb7d9',
  window: '#f3e9a6',
  deadline: '#c0392b',
};

type Attributes = Record<string, string | number>;
const attributes = (a: Attributes): string =>
  Object.entries(a)
    .map(([k, v]) => `${k}="${v}"`)
    .join(' ');
/** SVG elements; `title` and `body` are escaped by the caller. */
const rect = (a: Attributes, title: string): string => `<rect ${attributes(a)}><title>${title}</title></rect>`;
const line = (a: Attributes): string => `<line ${attributes(a)}/>`;
const text = (a: Attributes, body: string): string => `<text ${attributes(a)}>${body}</text>`;

const STYLE = [
  'body{font:14px system-ui,sans-serif;margin:24px;color:#222}',
  'table{border-collapse:collapse;margin:8px 0 16px}',
  'th,td{padding:2px 10px;text-align:left;border-bottom:1px solid #eee}',
  '.legend span{display:inline-block;margin-right:14px}',
  '.sw{display:inline-block;width:12px;height:10px;margin-right:4px;vertical-align:middle}',
].join('');

const LEGEND = (
  [
    [COLORS.window, 'maintenance window'],
    [COLORS.life, 'node alive'],
    [COLORS.rotated, 'graceful rotation'],
    [COLORS.fallback, 'forceful fallback'],
    [COLORS.expired, 'forceful expiration'],
    [COLORS.deadline, 'deadline'],
  ] as const
)
  .map(([color, label]) => `<span><i class="sw" style="background:${color}"></i>${label}</span>`)
  .join('');

/** At most this many rows are drawn; the summary counts every node. */
const MAX_ROWS = 400;

export function renderHtml(r: SimulationResult): string {
  const t0 = Date.parse(r.start);
  const t1 = Date.parse(r.end);
  const width = 1100;
  const left = 150;
  const row = 9;
  const rows = r.timeline.slice(0, MAX_ROWS);
  const top = 30;
  const height = top + rows.length * row + 30;
  const x = (iso: string | null): number =>
    left + ((Math.min(Math.max(iso ? Date.parse(iso) : t1, t0), t1) - t0) / (t1 - t0)) * (width - left - 10);
  const parts: string[] = [];
  for (const w of r.windows) {
    const box = { x: x(w.start).toFixed(1), y: top - 5, width: Math.max(1, x(w.end) - x(w.start)).toFixed(1) };
    parts.push(
      rect({ ...box, height: height - top - 20, fill: COLORS.window }, `window ${esc(w.start)} – ${esc(w.end)}`),
    );
  }
  // Day ticks.
  for (let t = t0, i = 0; t <= t1; t += 86_400_000, i++) {
    const xt = x(new Date(t).toISOString()).toFixed(1);
    if (i % Math.max(1, Math.round((t1 - t0) / 86_400_000 / 30)) === 0) {
      parts.push(line({ x1: xt, y1: top - 8, x2: xt, y2: height - 22, stroke: '#ddd', 'stroke-width': 0.5 }));
      const day = new Date(t).toISOString().slice(5, 10);
      parts.push(text({ x: xt, y: top - 12, 'font-size': 9, 'text-anchor': 'middle' }, day));
    }
  }
  rows.forEach((n: NodeLife, i) => {
    const y = top + i * row;
    const endColor = COLORS[n.end];
    const title = esc(
      `${n.node} (${n.origin}) created ${n.createdAt}, deadline ${n.deadline ?? 'none'}, ` +
        `${n.end}${n.endedAt ? ` at ${n.endedAt}` : ''}, attempts ${n.attempts}`,
    );
    parts.push(text({ x: left - 6, y: y + row - 2, 'font-size': 8, 'text-anchor': 'end' }, esc(n.node)));
    /** A bar on the node's row from `from` to its end, at least `min` wide. */
    const bar = (from: string | null, min: number, fill: string): string =>
      rect(
        {
          x: x(from).toFixed(1),
          y: y + 1,
          width: Math.max(min, x(n.endedAt) - x(from)).toFixed(1),
          height: row - 2,
          fill,
        },
        title,
      );
    parts.push(bar(n.createdAt, 1, COLORS.life));
    if (n.rotationStartedAt) parts.push(bar(n.rotationStartedAt, 2, endColor));
    else if (n.end === 'expired') parts.push(bar(n.drainStartedAt ?? n.deadline, 2, endColor));
    if (n.deadline && Date.parse(n.deadline) <= t1) {
      const xd = x(n.deadline).toFixed(1);
      parts.push(line({ x1: xd, y1: y, x2: xd, y2: y + row, stroke: COLORS.deadline, 'stroke-width': 1.5 }));
    }
  });
  const stat = (label: string, value: number | string): string =>
    `<tr><th>${esc(label)}</th><td>${esc(String(value))}</td></tr>`;
  const f = r.figures;
  const figures =
    `${f.windowPeriodSeconds ?? '-'}s / ${f.rotationBoundSeconds ?? '-'}s / ${f.ageThresholdSeconds ?? '-'}s / ` +
    `${f.guaranteedChances ?? '-'} / ${f.capacityPerOccurrence ?? '-'}`;
  const shown =
    r.timeline.length > MAX_ROWS
      ? `Showing the first ${MAX_ROWS} of ${r.timeline.length} nodes.`
      : `${r.timeline.length} nodes over the run.`;
  const svg =
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" ` +
    `viewBox="0 0 ${width} ${height}" role="img" aria-label="node timeline">`;
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>noderotation simulation: ${esc(r.scenario)}</title>
<style>${STYLE}</style>
</head><body>
<h1>Simulation: ${esc(r.scenario)} (${esc(r.mode)})</h1>
<p>${esc(r.start)} → ${esc(r.end)}. ${shown}</p>
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
<p class="legend">${LEGEND}</p>
${svg}
${parts.join('\n')}
</svg>
</body></html>
`;
}
