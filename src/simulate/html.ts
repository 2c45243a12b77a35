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
    parts.push(
      `<rect x="${x(w.start).toFixed(1)}" y="${top - 5}" width="${Math.max(1, x(w.end) - x(w.start)).toFixed(1)}" height="${height - top - 20}" fill="${COLORS.window}"><title>window ${esc(w.start)} – ${esc(w.end)}</title></rect>`,
    );
  }
  // Day ticks.
  for (let t = t0, i = 0; t <= t1; t += 86_400_000, i++) {
    const xt = x(new Date(t).toISOString());
    if (i % Math.max(1, Math.round((t1 - t0) / 86_400_000 / 30)) === 0) {
      parts.push(
        `<line x1="${xt.toFixed(1)}" y1="${top - 8}" x2="${xt.toFixed(1)}" y2="${height - 22}" stroke="#ddd" stroke-width="0.5"/>`,
      );
      parts.push(
        `<text x="${xt.toFixed(1)}" y="${top - 12}" font-size="9" text-anchor="middle">${new Date(t).toISOString().slice(5, 10)}</text>`,
      );
    }
  }
  rows.forEach((n: NodeLife, i) => {
    const y = top + i * row;
    const endColor = COLORS[n.end];
    const title = esc(
      `${n.node} (${n.origin}) created ${n.createdAt}, deadline ${n.deadline ?? 'none'}, ${n.end}${n.endedAt ? ` at ${n.endedAt}` : ''}, attempts ${n.attempts}`,
    );
    parts.push(`<text x="${left - 6}" y="${y + row - 2}" font-size="8" text-anchor="end">${esc(n.node)}</text>`);
    parts.push(
      `<rect x="${x(n.createdAt).toFixed(1)}" y="${y + 1}" width="${Math.max(1, x(n.endedAt) - x(n.createdAt)).toFixed(1)}" height="${row - 2}" fill="${COLORS.life}"><title>${title}</title></rect>`,
    );
    if (n.rotationStartedAt) {
      parts.push(
        `<rect x="${x(n.rotationStartedAt).toFixed(1)}" y="${y + 1}" width="${Math.max(2, x(n.endedAt) - x(n.rotationStartedAt)).toFixed(1)}" height="${row - 2}" fill="${endColor}"><title>${title}</title></rect>`,
      );
    } else if (n.end === 'expired') {
      parts.push(
        `<rect x="${x(n.drainStartedAt ?? n.deadline).toFixed(1)}" y="${y + 1}" width="${Math.max(2, x(n.endedAt) - x(n.drainStartedAt ?? n.deadline)).toFixed(1)}" height="${row - 2}" fill="${endColor}"><title>${title}</title></rect>`,
      );
    }
    if (n.deadline && Date.parse(n.deadline) <= t1)
      parts.push(
        `<line x1="${x(n.deadline).toFixed(1)}" y1="${y}" x2="${x(n.deadline).toFixed(1)}" y2="${y + row}" stroke="${COLORS.deadline}" stroke-width="1.5"/>`,
      );
  });
  const stat = (label: string, value: number | string): string =>
    `<tr><th>${esc(label)}</th><td>${esc(String(value))}</td></tr>`;
  const f = r.figures;
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>noderotation simulation: ${esc(r.scenario)}</title>
<style>body{font:14px system-ui,sans-serif;margin:24px;color:#222}table{border-collapse:collapse;margin:8px 0 16px}th,td{padding:2px 10px;text-align:left;border-bottom:1px solid #eee}.legend span{display:inline-block;margin-right:14px}.sw{display:inline-block;width:12px;height:10px;margin-right:4px;vertical-align:middle}</style>
</head><body>
<h1>Simulation: ${esc(r.scenario)} (${esc(r.mode)})</h1>
<p>${esc(r.start)} → ${esc(r.end)}. ${r.timeline.length > MAX_ROWS ? `Showing the first ${MAX_ROWS} of ${r.timeline.length} nodes.` : `${r.timeline.length} nodes over the run.`}</p>
<table>
${stat('nodes at start', r.nodes)}
${stat('graceful rotations', r.rotations.graceful)}
${stat('forceful fallbacks (in-window, surge-less)', r.rotations.forcefulFallback)}
${stat('failed surge attempts', r.rotations.failedAttempts)}
${stat('forceful expirations (Karpenter reached the deadline)', r.forcefulExpirations)}
${stat('rotation starts outside a window', r.startsOutsideWindow)}
${stat('most rotations in flight at once', r.maxConcurrentRotations)}
${stat('P / t_rot / A / G / C', `${f.windowPeriodSeconds ?? '-'}s / ${f.rotationBoundSeconds ?? '-'}s / ${f.ageThresholdSeconds ?? '-'}s / ${f.guaranteedChances ?? '-'} / ${f.capacityPerOccurrence ?? '-'}`)}
</table>
<p class="legend"><span><i class="sw" style="background:${COLORS.window}"></i>maintenance window</span><span><i class="sw" style="background:${COLORS.life}"></i>node alive</span><span><i class="sw" style="background:${COLORS.rotated}"></i>graceful rotation</span><span><i class="sw" style="background:${COLORS.fallback}"></i>forceful fallback</span><span><i class="sw" style="background:${COLORS.expired}"></i>forceful expiration</span><span><i class="sw" style="background:${COLORS.deadline}"></i>deadline</span></p>
<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" role="img" aria-label="node timeline">
${parts.join('\n')}
</svg>
</body></html>
`;
}
