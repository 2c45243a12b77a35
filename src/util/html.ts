// The pieces every self-contained HTML report of ours is made of (the simulator's, the soak's): escaping, inline
// SVG elements, a legend, and the page around them with its one stylesheet. No scripts, no external assets.

/** Text for HTML and SVG: the five characters that could end an element or an attribute, escaped. */
export const esc = (s: string): string =>
  s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');

export type Attributes = Record<string, string | number>;
const attributes = (a: Attributes): string =>
  Object.entries(a)
    .map(([k, v]) => `${k}="${v}"`)
    .join(' ');
/** SVG elements; `title` and `body` are escaped by the caller. */
export const rect = (a: Attributes, title?: string): string =>
  title === undefined ? `<rect ${attributes(a)}/>` : `<rect ${attributes(a)}><title>${title}</title></rect>`;
export const line = (a: Attributes): string => `<line ${attributes(a)}/>`;
export const text = (a: Attributes, body: string): string => `<text ${attributes(a)}>${body}</text>`;
export const circle = (a: Attributes, title?: string): string =>
  title === undefined ? `<circle ${attributes(a)}/>` : `<circle ${attributes(a)}><title>${title}</title></circle>`;

const STYLE = [
  'body{font:14px system-ui,sans-serif;margin:24px;color:#222;max-width:1100px}',
  'table{border-collapse:collapse;margin:8px 0 16px}',
  'th,td{padding:2px 10px;text-align:left;border-bottom:1px solid #eee}',
  'td.n{text-align:right;font-variant-numeric:tabular-nums}',
  '.legend span{display:inline-block;margin-right:14px}',
  '.sw{display:inline-block;width:12px;height:10px;margin-right:4px;vertical-align:middle}',
  'svg{display:block;max-width:100%;height:auto;margin:4px 0 20px}',
  'svg text{font-family:system-ui,sans-serif}',
].join('');

/** A row of colour swatches with their labels. */
export const legend = (items: readonly (readonly [string, string])[]): string =>
  `<p class="legend">${items
    .map(([color, label]) => `<span><i class="sw" style="background:${color}"></i>${esc(label)}</span>`)
    .join('')}</p>`;

/** An inline SVG's opening tag: drawn at `width` × `height`, scaled down with the page. */
export const svgOpen = (width: number, height: number, label: string, cls: string): string =>
  `<svg xmlns="http://www.w3.org/2000/svg" class="${cls}" width="${width}" height="${height}" ` +
  `viewBox="0 0 ${width} ${height}" role="img" aria-label="${esc(label)}">`;

/** The page: its title, the one stylesheet, the body. */
export const page = (title: string, body: string): string => `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>${esc(title)}</title>
<style>${STYLE}</style>
</head><body>
${body}
</body></html>
`;
