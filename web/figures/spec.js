// What a figure is, for the page and the notebooks alike: a pure function (pe, params) -> spec, with
//   spec = { caption, alt, csv, panels: [panel], table: { columns, rows }, lines: [[label, text, class]] }
//   panel = { title, width, height | aspect, options: Observable Plot options (no width/height), raster }
// `raster` ({ data, rows, cols }, drawn under options.color over the frame [0, cols] x [0, rows]) is
// kept out of the marks so that the page can paint it into a canvas; plotOptions() turns it into
// Plot's raster mark for renderers that want one SVG (the notebooks).
import * as Plot from '@observablehq/plot';

// The encodings of the permutation lab, in the order the page and the notebooks list them.
export const ENCODINGS = ['none', 'sinusoidal', 'learned', 'rope', 'xpos', 'alibi', 't5'];
// Their names in the page's prose, legends and captions.
export const ENCODING_NAMES = Object.freeze({
  none: 'none',
  sinusoidal: 'sinusoidal',
  learned: 'learned',
  rope: 'RoPE',
  xpos: 'xPos',
  alibi: 'ALiBi',
  t5: 'T5',
});

export const fmt = (x) => minus(Math.abs(x) >= 1e-3 || x === 0 ? x.toFixed(4) : x.toExponential(2));
// For a takeaway, which learners read first: a small number as 8.3 × 10⁻⁵ rather than 8.28e-5.
const SUPERSCRIPT = { '-': '⁻', 0: '⁰', 1: '¹', 2: '²', 3: '³', 4: '⁴', 5: '⁵', 6: '⁶', 7: '⁷', 8: '⁸', 9: '⁹' };
export const readable = (x) => {
  if (Math.abs(x) >= 1e-3 || x === 0 || !Number.isFinite(x)) return fmt(x);
  const [m, e] = x.toExponential(1).split('e');
  return `${minus(m)} × 10${[...String(Number(e))].map((ch) => SUPERSCRIPT[ch]).join('')}`;
};
export const plural = (n, word) => `${n} ${word}${n === 1 ? '' : 's'}`;

// Text for the reader: every ASCII hyphen-minus that makes a number negative becomes the typographic
// minus sign U+2212 (CSV downloads keep the hyphen, which spreadsheets parse). `minus(x.toFixed(3))`,
// or `fixed(x, 3)` for the common case. A hyphen after a letter or digit stays (1e-7, x-axis, 0-based).
export const minus = (text) => String(text).replace(/(?<![\w.])-(?=[\d.∞]|Infinity)/g, '−');
export const fixed = (x, digits) => minus(x.toFixed(digits));

export const diverging = (m = 1, label = 'value') => ({ type: 'diverging', scheme: 'PuOr', domain: [-m, m], legend: true, label });

export function extent(data) {
  let lo = Infinity;
  let hi = -Infinity;
  for (let i = 0; i < data.length; i++) {
    const v = data[i];
    if (v < lo) lo = v; // NaN compares false both ways
    if (v > hi) hi = v;
  }
  return lo <= hi ? [lo, hi] : [0, 1];
}

// A matrix [rows, cols] as one heatmap panel: labelled cells when small (unless `raster`), a raster otherwise.
export function heatmap(
  data,
  rows,
  cols,
  { xLabels, yLabels, xLabel = '', yLabel = '', color, title, width = 420, legend = true, raster = false } = {},
) {
  if (!color) {
    const [lo, hi] = extent(data);
    color = diverging(Math.max(Math.abs(lo), Math.abs(hi)) || 1);
  }
  color = { ...color, legend };
  const ticks = (n, labels) => (labels ? labels : [...Array(n).keys()]).filter((_, i) => i % Math.ceil(n / 8) === 0);
  if (rows * cols <= 30 * 30 && !raster) {
    const cells = [];
    for (let r = 0; r < rows; r++)
      for (let c = 0; c < cols; c++) cells.push({ x: xLabels ? xLabels[c] : c, y: yLabels ? yLabels[r] : r, value: data[r * cols + c] });
    return {
      title,
      width,
      aspect: rows / cols,
      extraHeight: 40 + (xLabels ? 40 : 0),
      options: {
        marginLeft: yLabels ? 70 : 40,
        marginBottom: xLabels ? 70 : 34,
        x: { label: xLabel, domain: xLabels ?? [...Array(cols).keys()], tickRotate: xLabels ? -40 : 0, ticks: ticks(cols, xLabels) },
        y: { label: yLabel, domain: yLabels ?? [...Array(rows).keys()], ticks: ticks(rows, yLabels) },
        color,
        marks: [Plot.cell(cells, { x: 'x', y: 'y', fill: 'value', title: (d) => `${d.y} → ${d.x}: ${d.value.toFixed(4)}` })],
      },
    };
  }
  const at = (n) => [...Array(n).keys()].filter((i) => i % Math.ceil(n / 8) === 0);
  const [xTicks, yTicks] = [at(cols).map((i) => i + 0.5), at(rows).map((i) => i + 0.5)];
  return {
    title,
    width,
    aspect: Math.min(1.2, Math.max(0.4, rows / cols)),
    extraHeight: 40,
    raster: shrinkRows(data, rows, cols),
    // What each axis counts, for a renderer that picks round ticks for the width it draws at (the
    // page); it keeps `ticks` only while the options still hold these very arrays.
    axes: { x: { n: cols, labels: xLabels, ticks: xTicks }, y: { n: rows, labels: yLabels, ticks: yTicks } },
    options: {
      marginLeft: yLabels ? 80 : 48,
      x: { label: xLabel, domain: [0, cols], ticks: xTicks, tickFormat: (v) => (xLabels ? xLabels[v - 0.5] : v - 0.5) },
      y: { label: yLabel, domain: [rows, 0], ticks: yTicks, tickFormat: (v) => (yLabels ? yLabels[v - 0.5] : v - 0.5) },
      color,
      marks: [Plot.frame({ stroke: '#ccc' })],
    },
  };
}

// Round tick positions for an axis of n cells (0 .. n-1): multiples of 1, 2 or 5 × 10^k, at most
// `most` of them (the cell labels of a word axis: every step-th word).
export function niceTicks(n, most = 8) {
  const rough = Math.max(1, (n - 1) / Math.max(1, most - 1));
  const p = 10 ** Math.floor(Math.log10(rough));
  const step = [1, 2, 5, 10].map((m) => m * p).find((s) => s >= rough);
  const out = [];
  for (let v = 0; v < n; v += step) out.push(v);
  return out;
}

// A raster of more than maxRows rows, averaged in blocks of rows (NaN, a missing row, is skipped):
// a canvas may not be taller than 32767 pixels, and no screen shows that many.
export function shrinkRows(data, rows, cols, maxRows = 8192) {
  if (rows <= maxRows) return { data, rows, cols };
  const out = new Float32Array(maxRows * cols);
  const sum = new Float64Array(cols);
  const count = new Uint32Array(cols);
  for (let r = 0; r < maxRows; r++) {
    sum.fill(0);
    count.fill(0);
    for (let k = Math.floor((r * rows) / maxRows); k < Math.floor(((r + 1) * rows) / maxRows); k++)
      for (let c = 0, i = k * cols; c < cols; c++, i++) {
        const v = data[i];
        if (v === v) {
          sum[c] += v;
          count[c]++;
        }
      }
    for (let c = 0; c < cols; c++) out[r * cols + c] = count[c] ? sum[c] / count[c] : NaN;
  }
  return { data: out, rows: maxRows, cols };
}

// The margins of a raster panel unless its options say otherwise (the page lays its canvas over them).
export const RASTER_MARGINS = { marginLeft: 48, marginRight: 12, marginTop: 22, marginBottom: 36 };

export const panelHeight = (panel, width) => Math.round(panel.height ?? width * (panel.aspect ?? 0.5) + (panel.extraHeight ?? 0));

// The panel as plain Plot options at a given width (rasters as Plot's own raster mark).
export function plotOptions(panel, width = panel.width ?? 640) {
  const o = { ...(panel.raster ? RASTER_MARGINS : {}), ...panel.options, width, height: panelHeight(panel, width) };
  if (panel.raster) {
    const { data, rows, cols } = panel.raster;
    o.marks = [Plot.raster(data, { width: cols, height: rows, x1: 0, x2: cols, y1: 0, y2: rows, imageRendering: 'pixelated' }), ...o.marks];
  }
  return o;
}

// 256 packed RGBA colours (little-endian ABGR) spanning a colour scale's domain, for painting rasters.
export function colourTable(color, data) {
  const domain = color.domain ?? extent(data);
  const [lo, hi] = [domain[0], domain[domain.length - 1]];
  const scale = Plot.scale({ color: { ...color, domain } });
  const lut = new Uint32Array(256);
  for (let i = 0; i < 256; i++) {
    const [r, g, b] = rgb(scale.apply(lo + ((hi - lo) * i) / 255));
    lut[i] = (255 << 24) | (b << 16) | (g << 8) | r;
  }
  return { lut, lo, hi };
}

function rgb(s) {
  if (s.startsWith('#')) return [1, 3, 5].map((i) => parseInt(s.slice(i, i + 2), 16));
  return s
    .match(/[\d.]+/g)
    .slice(0, 3)
    .map(Number);
}

// rows: array of objects with the same keys.
export function toCSV(rows) {
  if (!rows.length) return '';
  const keys = Object.keys(rows[0]);
  const cell = (v) => (typeof v === 'string' && /[",\n]/.test(v) ? `"${v.replaceAll('"', '""')}"` : String(v));
  return [keys.join(','), ...rows.map((r) => keys.map((k) => cell(r[k])).join(','))].join('\n');
}

// A tensor [rows, cols] as long-format rows for CSV.
export function matrixRows(t, rowName = 'row', colName = 'col') {
  const [rows, cols] = t.shape;
  const out = [];
  for (let r = 0; r < rows; r++) for (let c = 0; c < cols; c++) out.push({ [rowName]: r, [colName]: c, value: t.data[r * cols + c] });
  return out;
}
