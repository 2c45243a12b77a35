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

/**
 * How a legend's swatch looks, as the mark it stands for is drawn: a filled box (bars, bands), a solid or a
 * dashed line (lines across a chart), a thin upright tick (a short vertical mark). The shapes other than the
 * box are styled in place, so that the page's one stylesheet (and every report already written) stays as it is.
 */
export type Swatch = 'box' | 'line' | 'dashed' | 'tick';

const SWATCH_STYLE: Record<Swatch, (color: string) => string> = {
  box: (c) => `background:${c}`,
  line: (c) => `height:0;border-top:2px solid ${c}`,
  dashed: (c) => `height:0;border-top:2px dashed ${c}`,
  tick: (c) => `background:${c};width:2px;margin:0 9px 0 5px`,
};

/** A row of colour swatches with their labels; each swatch drawn as its mark is (default a box). */
export const legend = (items: readonly (readonly [color: string, label: string, swatch?: Swatch])[]): string =>
  `<p class="legend">${items
    .map(
      ([color, label, swatch = 'box']) =>
        `<span><i class="sw${swatch === 'box' ? '' : ` ${swatch}`}" style="${SWATCH_STYLE[swatch](color)}"></i>` +
        `${esc(label)}</span>`,
    )
    .join('')}</p>`;

/** Terms and what they mean in two columns, a legend in words; both escaped here. Styled in place. */
export const terms = (items: readonly (readonly [term: string, meaning: string])[]): string =>
  '<dl class="terms" style="display:grid;grid-template-columns:max-content 1fr;gap:2px 12px;margin:4px 0 16px">' +
  items.map(([t, m]) => `<dt style="font-weight:600">${esc(t)}</dt><dd style="margin:0">${esc(m)}</dd>`).join('') +
  '</dl>';

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
