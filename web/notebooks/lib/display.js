// What the notebooks show: figures, tables and lines of text.
//
// Figures are the demo page's figure specs (web/figures/, see spec.js), drawn here without a browser:
// Observable Plot draws each panel into a linkedom document (plus the small canvas of png.js, for
// rasters and colour ramps), and the panels, their titles and the caption are flattened into one
// standalone SVG, which resvg (@resvg/resvg-wasm) renders to the PNG the notebook stores: one picture
// per figure, which every front end shows (a notebook opened untrusted, in JupyterLab or on a code
// host, hides SVG outputs; nbconvert 6 strips their children). The SVG is sent only when resvg has no font.
//
//   import { figure, show, print, report } from './lib/display.js';
//   import { wavelengths } from '../figures/absolute.js';
//   await show(figure(wavelengths, pe, { dModel: 512 }));
//   await print('some text');
//   await report({ 'a key number': 1.5 });
//
// Everything goes through awaited Deno.jupyter.display calls, never console.log nor a cell's last
// value: the Deno kernel (2.x) publishes both asynchronously, and a headless runner (nbconvert)
// can then file the output under a later cell or drop it.
import * as Plot from '@observablehq/plot';
import { parseHTML } from 'linkedom';
import { plotOptions } from '../../figures/spec.js';
import { flush } from './flush.js';
import { Canvas } from './png.js';
import { pngOf } from './raster.js';

const SVG_NS = 'http://www.w3.org/2000/svg';
const XLINK_NS = 'http://www.w3.org/1999/xlink';

// A document for Plot's `document` option, whose <canvas> elements can draw.
export const document = (() => {
  const { document: doc } = parseHTML('<!doctype html><html><head></head><body></body></html>');
  const createElement = doc.createElement.bind(doc);
  doc.createElement = (name, ...rest) => (String(name).toLowerCase() === 'canvas' ? new Canvas() : createElement(name, ...rest));
  return doc;
})();

const asciiOnly = (s) => String(s).replace(/[^\x20-\x7e]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
const escapeText = (s) => String(s).replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
const escapeAttr = (s) => escapeText(s).replace(/"/g, '&quot;');
const round = (v) => Math.round(v * 100) / 100;
const PAD = 12;

// A figure: its SVG, and what Jupyter displays (a PNG of it, with `alt` as the text/plain fallback).
export class Figure {
  /** width, height in px; body: SVG markup drawn in [0, width] x [0, height]; alt: a text summary;
   * data: { name: string } written as data-name attributes of the <svg>. */
  constructor({ width, height, body, alt = '', data = {} }) {
    Object.assign(this, { width: round(width), height: round(height), body, alt, data });
  }

  // The standalone picture: a white card (legible on dark notebook themes too) with a margin, so
  // labels that Plot lets overflow its edges (legend ticks) stay visible.
  get svg() {
    const w = round(this.width + 2 * PAD),
      h = round(this.height + 2 * PAD);
    return (
      `<svg xmlns="${SVG_NS}" xmlns:xlink="${XLINK_NS}" width="${w}" height="${h}" viewBox="0 0 ${w} ${h}"` +
      Object.entries(this.data)
        .map(([k, v]) => ` data-${k}="${escapeAttr(v)}"`)
        .join('') +
      ` font-family="system-ui, sans-serif" style="color: #222">` +
      (this.alt ? `<title>${escapeText(this.alt)}</title>` : '') +
      `<rect width="${w}" height="${h}" fill="white"/><g transform="translate(${PAD},${PAD})">${this.body}</g></svg>`
    );
  }

  toString() {
    return this.svg;
  }

  // The mime bundle: what show() sends, and what the Deno kernel displays when a Figure is a cell's value.
  // One picture, as PNG: every front end shows it (JupyterLab hides SVG from untrusted notebooks, and
  // nbconvert 6 strips the children of inline SVG). The figure's `data` (the spec, params and options
  // that drew it) rides in the PNG's tEXt chunks as posenc:<name>, JSON-escaped to ASCII. Without a font
  // file for resvg (raster.js), the SVG is sent instead.
  [Symbol.for('Jupyter.display')]() {
    const text = Object.fromEntries(Object.entries(this.data).map(([k, v]) => [`posenc:${k}`, asciiOnly(v)]));
    const png = pngOf(this.svg, text);
    return { ...(png ? { 'image/png': png } : { 'image/svg+xml': this.svg }), 'text/plain': this.alt || `[figure ${this.width} x ${this.height}]` };
  }
}

// Figures side by side (or one under the other with direction 'column'), aligned at the top/left,
// under an optional bold title.
export function concat(figures, { direction = 'row', gap = 16, title, alt } = {}) {
  const top = title ? 28 : 0;
  let at = 0,
    across = 0,
    body = title ? textLine(title, 0, { size: 15, weight: 'bold' }).markup : '';
  for (const f of figures) {
    const [x, y] = direction === 'row' ? [at, top] : [0, at + top];
    body += `<g transform="translate(${round(x)},${round(y)})">${f.body}</g>`;
    at += (direction === 'row' ? f.width : f.height) + gap;
    across = Math.max(across, direction === 'row' ? f.height : f.width);
  }
  at = Math.max(0, at - gap);
  const [width, height] = direction === 'row' ? [at, across + top] : [across, at + top];
  return new Figure({ width, height, body, alt: alt ?? [title, ...figures.map((f) => f.alt)].filter(Boolean).join(' | ') });
}

// Geometry attributes with Plot's full-precision coordinates (159.99999999999997) rounded to 0.01 px:
// the notebooks store every figure, and this makes them a third smaller. Text is left alone.
const GEOMETRY = /\b(d|transform|x|y|x1|x2|y1|y2|cx|cy|r|width|height|points)="([^"]*)"/g;
export const compactNumbers = (markup) =>
  markup.replace(GEOMETRY, (_, name, value) => `${name}="${value.replace(/-?\d+\.\d{3,}(e-?\d+)?/g, (n) => String(round(+n)))}"`);

// An <svg> rendered by Plot -> a <g> with the same attributes and children (a nested <svg> would
// pick up Plot's `height: auto` style, which some renderers stretch to the whole picture).
function svgAsGroup(svg, y) {
  const keep = [...svg.attributes].filter((a) => !['width', 'height', 'viewBox', 'xmlns', 'style'].includes(a.name));
  const attrs = keep.map((a) => ` ${a.name}="${escapeAttr(a.value)}"`).join('');
  return {
    markup: `<g transform="translate(0,${round(y)})"${attrs}>${compactNumbers(svg.innerHTML)}</g>`,
    width: +svg.getAttribute('width'),
    height: +svg.getAttribute('height'),
  };
}

// Plot's categorical legend is HTML (<span> swatches); redraw it as SVG, wrapping at `width`.
function swatchesAsGroup(div, y, width) {
  let x = 0,
    row = 0,
    markup = '';
  const rowHeight = 20;
  for (const span of div.querySelectorAll('span')) {
    const sw = span.querySelector('svg');
    const label = span.textContent.trim();
    const w = 15 + 6 + label.length * 6 + 16;
    if (x > 0 && x + w > width) {
      x = 0;
      row++;
    }
    const fill = sw?.getAttribute('fill') ?? 'currentColor';
    const stroke = sw?.getAttribute('stroke');
    const shape = sw?.innerHTML?.trim() || '<rect width="15" height="15"/>';
    markup +=
      `<g transform="translate(${x},${row * rowHeight})"><svg width="15" height="15" fill="${escapeAttr(fill)}"${stroke ? ` stroke="${escapeAttr(stroke)}"` : ''} overflow="visible">${shape.replace(/"100%"/g, '"15"')}</svg>` +
      `<text x="21" y="11.5" font-size="10" fill="currentColor">${escapeText(label)}</text></g>`;
    x += w;
  }
  return { markup: `<g transform="translate(0,${round(y + 6)})">${markup}</g>`, width, height: (row + 1) * rowHeight + 8 };
}

function textLine(text, y, { size, weight = 'normal', color = 'currentColor', x = 0 }) {
  return {
    markup: `<text x="${x}" y="${round(y + size)}" font-size="${size}" font-weight="${weight}" fill="${color}">${escapeText(text)}</text>`,
    height: size + 8,
  };
}

// Plot's output (an <svg>, or a <figure> holding a title, legends, the plot and a caption) -> Figure.
export function toFigure(node, alt = '') {
  if (node.tagName.toLowerCase() === 'svg') {
    const g = svgAsGroup(node, 0);
    return new Figure({ width: g.width, height: g.height, body: g.markup, alt });
  }
  const children = [...node.children];
  const width = Math.max(0, ...children.filter((c) => c.tagName.toLowerCase() === 'svg').map((s) => +s.getAttribute('width')));
  let y = 0,
    body = '',
    plotTop = 0;
  for (const child of children) {
    const tag = child.tagName.toLowerCase();
    let piece;
    if (tag === 'svg') [piece, plotTop] = [svgAsGroup(child, y), y];
    else if (tag === 'h2') piece = textLine(child.textContent, y, { size: 16, weight: 'bold' });
    else if (tag === 'h3') piece = textLine(child.textContent, y, { size: 12, color: '#555' });
    else if (tag === 'figcaption') piece = textLine(child.textContent, y + 4, { size: 11, color: '#555' });
    else if (tag === 'div' && child.querySelector('span')) piece = swatchesAsGroup(child, y, width);
    else continue;
    body += piece.markup;
    y += piece.height;
  }
  return Object.assign(new Figure({ width, height: y, body, alt }), { plotTop });
}

// Plot.plot with the shim document, as a Figure. `alt` (a sentence on what the figure shows) is
// also the figure's <title> and its text/plain output.
export function plot(options, alt = '') {
  return toFigure(Plot.plot({ ...options, document }), alt);
}

// Plot numbers the ids it defines (markers, clip paths) from a counter that lives as long as the
// process; renumbered in order of appearance, a figure is the same whichever cells ran before it.
export function renumberIds(markup) {
  const ids = new Map();
  return markup.replace(/\bplot-(\w+)-(\d+)\b/g, (id, kind) => {
    if (!ids.has(id)) ids.set(id, `plot-${kind}-${ids.size + 1}`);
    return ids.get(id);
  });
}

// Text broken into lines of at most `chars` characters (at spaces), as one Figure.
function paragraph(text, width, { size = 12, color = '#444', weight } = {}) {
  const chars = Math.max(20, Math.floor(width / (size * 0.52)));
  const lines = [];
  for (const word of String(text).split(/\s+/).filter(Boolean)) {
    const last = lines.at(-1);
    if (last !== undefined && (last + ' ' + word).length <= chars) lines[lines.length - 1] = `${last} ${word}`;
    else lines.push(word);
  }
  const step = size + 4;
  const body = lines.map((line, i) => textLine(line, i * step, { size, color, weight }).markup).join('');
  return new Figure({ width, height: lines.length * step + 4, body });
}

// A figure spec of the page (web/figures/) drawn as one SVG: `spec(pe, params)`'s panels at their
// own widths (at most `width`), side by side and wrapping at `width`, each under its title, and the
// caption below. `panels` picks some panels by index. The spec's name, the params and these options
// are kept on the <svg> (data-spec, data-params, data-options): tests/notebooks/ draws the same spec
// again from them and compares. The Figure's `spec` is the spec's result, for its numbers and csv.
export function figure(spec, pe, params = {}, options = {}) {
  const { width = 900, panels: picked } = options;
  const result = spec(pe, params);
  const chosen = picked ? picked.map((i) => result.panels[i]) : (result.panels ?? []);
  if (!chosen.length) throw new RangeError(`figure: ${spec.name} has no panels to draw; show its table or lines instead`);
  // Each panel: its title over the plot (with its legend, if any); `top` is where the plot starts.
  const drawn = chosen.map((panel) => {
    const w = Math.min(panel.width ?? width, width);
    const f = toFigure(Plot.plot({ ...plotOptions(panel, w), document }));
    const title = panel.title ? paragraph(panel.title, f.width, { size: 13, weight: 'bold', color: 'currentColor' }) : null;
    return { parts: title ? [title, f] : [f], width: f.width, top: (title?.height ?? 0) + (f.plotTop ?? 0) };
  });
  const rows = [];
  for (const d of drawn) {
    const row = rows.at(-1);
    if (row && row.reduce((s, g) => s + g.width + 20, 0) + d.width <= width) row.push(d);
    else rows.push([d]);
  }
  // Panels side by side start their plots at the same height, whether or not they have a title or legend.
  const spacer = (height) => new Figure({ width: 0, height, body: '' });
  const aligned = (row) => {
    const top = Math.max(...row.map((d) => d.top));
    return row.map((d) => concat(top > d.top ? [spacer(top - d.top), ...d.parts] : d.parts, { direction: 'column', gap: 0 }));
  };
  const body = concat(
    rows.map((row) => concat(aligned(row), { gap: 20 })),
    { direction: 'column', gap: 16 },
  );
  const parts = [body];
  if (result.caption) parts.push(paragraph(result.caption, Math.max(body.width, 400)));
  const out = concat(parts, { direction: 'column', gap: 10, alt: result.alt ?? result.caption ?? '' });
  out.body = renumberIds(out.body);
  out.data = { spec: spec.name, params: JSON.stringify(params), options: JSON.stringify(options) };
  out.spec = result;
  return out;
}

// A spec's table ({ columns, rows } of strings) as a Table, under its caption unless told otherwise.
export function specTable(result, { caption = result.caption } = {}) {
  const { columns, rows } = result.table;
  return new Table(
    rows.map((r) => Object.fromEntries(columns.map((c, j) => [c, r[j]]))),
    { columns, caption },
  );
}

// A spec's lines ([label, text] pairs) as plain text.
export const specLines = (result) => result.lines.map(([label, text]) => [label, text].filter(Boolean).join(' ')).join('\n');

const inJupyter = () => typeof Deno !== 'undefined' && Boolean(Deno.jupyter);

// Sends figures, tables or strings to the notebook, in order. Await it (`await show(fig)`): the
// Deno kernel (2.x) publishes displays asynchronously and may announce the end of a cell before
// they are sent; a front end (nbconvert, for one) then drops or misfiles them.
// Outside Jupyter (Node, tests) it prints their text to the console.
export async function show(...items) {
  for (const item of items) {
    const bundle = typeof item === 'string' ? { 'text/plain': item } : item?.[Symbol.for('Jupyter.display')]?.();
    if (!bundle) throw new TypeError(`show: cannot display ${Object.prototype.toString.call(item)}; pass a Figure, a Table or a string`);
    if (inJupyter()) await Deno.jupyter.display(bundle, { raw: true });
    else console.log(bundle['text/plain']);
  }
  // Deno.jupyter.display only queues the message for the kernel's other thread: wait until the kernel
  // has published it to the front end (flush.js), before the cell can report that it is done.
  if (inJupyter()) await flush();
}

// Lines of plain text, as one output.
export const print = (...lines) => show(lines.join('\n'));

// A number for people: 3 significant digits, scientific when tiny or huge.
export function fmt(x, digits = 3) {
  if (!Number.isFinite(x)) return String(x);
  if (x === 0) return '0';
  const a = Math.abs(x);
  return a < 1e-3 || a >= 1e6 ? x.toExponential(digits - 1) : String(Number(x.toPrecision(digits)));
}

// A number as it should be read back: integers as they are, others to 7 significant digits.
export const formatReported = (value) => (typeof value !== 'number' ? String(value) : Number.isInteger(value) ? String(value) : value.toPrecision(7));

// Prints `name = value` lines, report('name', value) or report({ name: value, ... }): the
// notebooks' key numbers, in a form that tests/notebooks/ reads back from the executed notebooks
// and checks against the package.
export function report(nameOrValues, value) {
  const entries = typeof nameOrValues === 'string' ? [[nameOrValues, value]] : Object.entries(nameOrValues);
  return print(...entries.map(([name, v]) => `${name} = ${formatReported(v)}`));
}

// Tables as HTML (with a plain-text twin): rows are objects; columns picks and orders keys;
// format maps a key to a function value -> string.
export class Table {
  constructor(rows, { columns, format = {}, caption } = {}) {
    this.columns = columns ?? Object.keys(rows[0] ?? {});
    this.cells = rows.map((r) => this.columns.map((c) => (format[c] ? format[c](r[c]) : String(r[c]))));
    this.caption = caption;
  }

  get html() {
    const head = this.columns.map((c) => `<th>${escapeText(c)}</th>`).join('');
    const body = this.cells.map((r) => `<tr>${r.map((v) => `<td>${escapeText(v)}</td>`).join('')}</tr>`).join('');
    const cap = this.caption ? `<caption>${escapeText(this.caption)}</caption>` : '';
    return `<table>${cap}<thead><tr>${head}</tr></thead><tbody>${body}</tbody></table>`;
  }

  get text() {
    const widths = this.columns.map((c, j) => Math.max(c.length, ...this.cells.map((r) => r[j].length)));
    const line = (r) => r.map((v, j) => v.padStart(widths[j])).join('  ');
    return [this.caption, line(this.columns), ...this.cells.map(line)].filter((x) => x !== undefined).join('\n');
  }

  [Symbol.for('Jupyter.display')]() {
    return { 'text/html': this.html, 'text/plain': this.text };
  }
}

export const table = (rows, options) => new Table(rows, options);

// The verdict of a self-checked exercise. `cases` is a list of [label, attempt] pairs: each attempt
// returns the largest difference between the reader's answer and posenc's on that case (or throws).
// '✓ …' when every case is within `tolerance`; otherwise '✗ …' naming the first case that failed and
// why (over the tolerance, NaN, or what was thrown: an unwritten exercise throws 'not written yet').
// A bare function is one unnamed case; `measured` names what the attempts return.
export function verdict(name, cases, tolerance, measured = 'difference from posenc') {
  if (typeof cases === 'function') cases = [[null, cases]];
  let worst = 0;
  for (const [label, attempt] of cases) {
    const where = label == null ? name : `${name}, case ${label}`;
    let error;
    try {
      error = attempt();
    } catch (e) {
      return `✗ ${where}: threw ${e?.name ?? 'an error'}: ${e?.message ?? e}`;
    }
    if (!(error <= tolerance)) return `✗ ${where}: ${measured} ${fmt(error)} (over the tolerance ${fmt(tolerance)})`;
    worst = Math.max(worst, error);
  }
  const n = cases.length === 1 ? '' : `${cases.length} cases, `;
  return `✓ ${name}: ${n}largest ${measured} ${fmt(worst)} (within the tolerance ${fmt(tolerance)})`;
}

// What an exercise's stub throws until the reader writes it.
export function notWritten(what) {
  throw new Error(`${what} is not written yet: replace the line that throws with your code`);
}
