// The page's one renderer: draws a figure spec (see spec.js) into its <figure data-figure="id"> at the
// figure's current width, redraws when that width changes, and offers SVG and CSV downloads.
// Large heatmaps are painted straight into a <canvas> through a 256-colour lookup table (no per-pixel
// colour strings, no PNG encoding), so a 4096 x 1024 table draws in a few tens of milliseconds.
// User-visible text is always set with textContent.
import * as Plot from '@observablehq/plot';
import { RASTER_MARGINS, colourTable, panelHeight, toCSV } from './spec.js';

const GAP = 24;
const figures = new Map();
const resize = new ResizeObserver((entries) => {
  for (const e of entries) {
    const f = figures.get(e.target);
    const w = Math.floor(e.contentRect.width);
    if (f && Math.abs(w - f.width) > 1) schedule(e.target);
  }
});

// Figures are drawn in later tasks, one task per figure, after reading every pending figure's width
// at once: one layout instead of one per figure, and no single long task for a whole section.
const pending = new Set();
let flushing = false;
function schedule(fig) {
  pending.add(fig);
  if (flushing) return;
  flushing = true;
  setTimeout(() => {
    const widths = new Map([...pending].map((f) => [f, Math.floor(f.clientWidth) || 900]));
    pending.clear();
    flushing = false;
    for (const [f, w] of widths) setTimeout(() => !pending.has(f) && draw(f, w));
  });
}

export function show(id, spec) {
  const fig = document.querySelector(`[data-figure="${id}"]`);
  if (!fig) return;
  figures.set(fig, { spec, width: figures.get(fig)?.width ?? 0 });
  resize.observe(fig);
  schedule(fig);
}

export function showError(id, message) {
  show(id, { caption: message, lines: [['', message, 'error']] });
}

function draw(fig, width) {
  const entry = figures.get(fig);
  const { spec } = entry;
  entry.width = width;
  const cap = fig.querySelector('figcaption') ?? fig.appendChild(document.createElement('figcaption'));
  for (const child of [...fig.children]) if (child !== cap) child.remove();
  const parts = [];
  if (spec.lines) parts.push(lines(spec.lines));
  if (spec.table) parts.push(table(spec.table));
  if (spec.panels?.length) {
    const body = document.createElement('div');
    body.className = 'panels';
    body.setAttribute('role', 'img');
    body.setAttribute('aria-label', spec.alt ?? spec.caption);
    const legends = spec.panels.some((p) => p.options?.color?.legend);
    const wide = spec.panels.reduce((s, p) => s + (p.width ?? width) + GAP, -GAP) <= width;
    for (const p of spec.panels) body.append(panel(p, wide ? (p.width ?? width) : Math.min(p.width ?? width, width), legends));
    parts.push(body);
  }
  for (const p of parts) fig.insertBefore(p, cap);
  cap.textContent = spec.caption;
  fig.append(actions(fig, spec));
  fig.dataset.rendered = 'true';
}

// One panel: an optional title, a colour legend (or an empty slot of the same height, so panels side
// by side start level), the plot, and a canvas over its frame when the panel is a raster.
function panel(p, width, legendSlot) {
  const div = document.createElement('div');
  div.className = 'panel';
  div.style.width = `${width}px`;
  if (p.title) {
    const title = div.appendChild(document.createElement('p'));
    title.className = 'panel-title';
    title.textContent = p.title;
  }
  const height = panelHeight(p, width);
  const { legend, ...color } = p.options?.color ?? {};
  const margins = p.raster ? RASTER_MARGINS : {};
  const svg = Plot.plot({ ...margins, ...p.options, color: p.options?.color ? color : undefined, width, height });
  if (legendSlot) {
    const slot = div.appendChild(document.createElement('div'));
    slot.className = 'panel-legend';
    const key = legend && svg.legend('color', { width: Math.min(300, width), marginLeft: 16, marginRight: 24, tickSize: 4 });
    if (key) {
      for (const g of key.querySelectorAll('svg')) g.setAttribute('aria-hidden', 'true');
      slot.append(key);
    }
  }
  if (p.pick) pickable(svg);
  tidy(svg);
  svg.dataset.panel = p.title ?? '';
  if (p.raster) {
    const wrap = div.appendChild(document.createElement('div'));
    wrap.className = 'raster';
    wrap.append(svg, paint(p.raster, color, width, height, { ...margins, ...p.options }));
  } else div.append(svg);
  return div;
}

// A panel marked `pick` (a grid of cells on band scales) reports a click as a bubbling 'pick' event
// whose detail names the x and y values of the cell under the pointer; its section decides what that
// means (the section's controls stay the way in for the keyboard).
function pickable(svg) {
  svg.classList.add('pickable');
  const cell = (name, v) => {
    const s = svg.scale(name);
    if (!s?.bandwidth) return undefined;
    const step = s.step ?? s.bandwidth;
    return s.domain.find((d) => Math.abs(v - (s.apply(d) + s.bandwidth / 2)) <= step / 2);
  };
  svg.addEventListener('click', (e) => {
    const box = svg.getBoundingClientRect();
    const k = Number(svg.getAttribute('width')) / box.width || 1;
    const x = cell('x', (e.clientX - box.left) * k);
    const y = cell('y', (e.clientY - box.top) * k);
    if (x !== undefined && y !== undefined) svg.dispatchEvent(new CustomEvent('pick', { bubbles: true, detail: { x, y, panel: svg.dataset.panel } }));
  });
}

// Plot labels its <g>s with aria-label, which ARIA prohibits on elements without a role: the panel
// group carries the text alternative instead. Mark axes so tests can find their ticks.
function tidy(svg) {
  for (const g of svg.querySelectorAll('g[aria-label]')) {
    const label = g.getAttribute('aria-label');
    if (/axis/.test(label)) g.dataset.axis = label;
    g.removeAttribute('aria-label');
  }
  svg.removeAttribute('aria-label');
  svg.setAttribute('aria-hidden', 'true');
}

// Paints the raster at the size it is shown (at most one canvas pixel per device pixel): each canvas
// pixel is the mean of the block of values it covers, then one lookup in a 256-colour table.
function paint({ data, rows, cols }, color, width, height, m) {
  const w = width - m.marginLeft - m.marginRight;
  const h = height - m.marginTop - m.marginBottom;
  const dpr = Math.min(2, window.devicePixelRatio || 1);
  const W = Math.max(1, Math.min(cols, Math.round(w * dpr)));
  const H = Math.max(1, Math.min(rows, Math.round(h * dpr)));
  const canvas = document.createElement('canvas');
  canvas.width = W;
  canvas.height = H;
  Object.assign(canvas.style, { left: `${m.marginLeft}px`, top: `${m.marginTop}px`, width: `${w}px`, height: `${h}px` });
  if (W === cols && H === rows) canvas.style.imageRendering = 'pixelated';
  const sum = new Float64Array(W * H);
  const count = new Uint32Array(W * H);
  const column = Int32Array.from({ length: cols }, (_, c) => Math.floor((c * W) / cols));
  const { lut, lo, hi } = colourTable(color, data);
  const k = 255 / (hi - lo || 1);
  // Big rasters are summed in slices of about a million values, one task each.
  const step = Math.max(1, Math.floor(2 ** 20 / cols));
  const slice = (from) => {
    for (let r = from, i = from * cols; r < Math.min(rows, from + step); r++) {
      const base = Math.floor((r * H) / rows) * W;
      for (let c = 0; c < cols; c++, i++) {
        const v = data[i];
        if (v === v) {
          sum[base + column[c]] += v;
          count[base + column[c]]++;
        }
      }
    }
    if (from + step < rows) return void setTimeout(() => canvas.isConnected && slice(from + step));
    const img = new ImageData(W, H);
    const px = new Uint32Array(img.data.buffer);
    for (let i = 0; i < px.length; i++) {
      if (!count[i]) continue; // transparent: no value here (a masked or missing cell)
      const t = ((sum[i] / count[i] - lo) * k + 0.5) | 0;
      px[i] = lut[t < 0 ? 0 : t > 255 ? 255 : t];
    }
    canvas.getContext('2d').putImageData(img, 0, 0);
    canvas.dataset.painted = 'true';
  };
  slice(0);
  canvas.setAttribute('aria-hidden', 'true');
  return canvas;
}

function lines(items) {
  const div = document.createElement('div');
  div.className = 'lines';
  for (const [label, text, cls] of items) {
    const p = div.appendChild(document.createElement('p'));
    if (label) p.appendChild(document.createElement('strong')).textContent = `${label} `;
    const span = p.appendChild(document.createElement('span'));
    span.textContent = text;
    if (cls) span.className = cls;
  }
  return div;
}

function table({ columns, rows }) {
  const wrap = document.createElement('div');
  wrap.className = 'table-wrap';
  // it may scroll sideways on a narrow screen: a keyboard must be able to reach it
  wrap.tabIndex = 0;
  wrap.setAttribute('role', 'region');
  wrap.setAttribute('aria-label', `table: ${columns.join(', ')}`);
  const t = wrap.appendChild(document.createElement('table'));
  t.className = 'values';
  const head = t.createTHead().insertRow();
  for (const c of columns) head.appendChild(document.createElement('th')).textContent = c;
  const body = t.createTBody();
  for (const r of rows) {
    const tr = body.insertRow();
    for (const v of r) tr.insertCell().textContent = v;
  }
  return wrap;
}

function actions(fig, spec) {
  const id = fig.dataset.figure;
  const div = document.createElement('div');
  div.className = 'figure-actions';
  if (spec.panels?.length)
    div.append(button(`Download ${id}.svg`, 'SVG', 'svg', () => save(`${id}.svg`, new Blob([exportSVG(fig)], { type: 'image/svg+xml' }))));
  if (spec.csv?.length)
    div.append(button(`Download ${id}.csv`, 'CSV', 'csv', () => save(`${id}.csv`, new Blob([toCSV(spec.csv)], { type: 'text/csv' }))));
  return div;
}

function button(label, text, kind, onClick) {
  const b = document.createElement('button');
  b.type = 'button';
  b.textContent = text;
  b.dataset.download = kind;
  b.setAttribute('aria-label', label);
  b.addEventListener('click', onClick);
  return b;
}

function save(name, blob) {
  const a = document.createElement('a');
  a.href = URL.createObjectURL(blob);
  a.download = name;
  a.click();
  setTimeout(() => URL.revokeObjectURL(a.href), 1000);
}

const esc = (s) => String(s).replaceAll('&', '&amp;').replaceAll('<', '&lt;').replaceAll('>', '&gt;').replaceAll('"', '&quot;');
// Synchronous: canvas.toBlob encodes at idle priority, about a second per canvas in a busy browser,
// and a figure of eight heads waited that long eight times before its download began.
const pngURL = (canvas) => canvas.toDataURL('image/png');

// One standalone SVG of the figure's panels where they sit on the page: titles, legends (ramps as
// drawn, swatches redrawn as SVG), each plot, and each raster as an embedded PNG over its frame.
export function exportSVG(fig) {
  const box = fig.querySelector('.panels');
  const origin = box.getBoundingClientRect();
  const at = (el) => {
    const r = el.getBoundingClientRect();
    return { x: Math.round(r.left - origin.left), y: Math.round(r.top - origin.top), w: Math.round(r.width), h: Math.round(r.height) };
  };
  let body = '';
  for (const title of box.querySelectorAll('.panel-title')) {
    const { x, y, h } = at(title);
    body += `<text x="${x}" y="${y + h - 4}" font-size="13" font-weight="600">${esc(title.textContent)}</text>`;
  }
  for (const sw of box.querySelectorAll('[class$="-swatch"]')) {
    const { x, y } = at(sw);
    const mark = sw.querySelector('svg');
    const fill = mark?.getAttribute('fill') ?? mark?.getAttribute('stroke') ?? '#444';
    body += `<rect x="${x}" y="${y + 2}" width="12" height="12" fill="${esc(fill)}"/><text x="${x + 16}" y="${y + 12}" font-size="10">${esc(sw.textContent)}</text>`;
  }
  for (const svg of box.querySelectorAll('.panel-legend > svg, svg[data-panel]')) {
    const canvas = svg.parentElement.querySelector(':scope > canvas');
    let image = '';
    if (svg.dataset.panel !== undefined && canvas) {
      const c = at(canvas);
      const s = at(svg);
      const pixelated = canvas.style.imageRendering ? ' style="image-rendering:pixelated"' : '';
      image = `<image href="${pngURL(canvas)}" x="${c.x - s.x}" y="${c.y - s.y}" width="${c.w}" height="${c.h}" preserveAspectRatio="none"${pixelated}/>`;
    }
    body += nested(svg, at(svg), image);
  }
  const width = Math.max(box.scrollWidth, 1);
  const height = Math.max(box.scrollHeight, 1);
  const caption = fig.querySelector('figcaption')?.textContent ?? '';
  return (
    `<svg xmlns="http://www.w3.org/2000/svg" xmlns:xlink="http://www.w3.org/1999/xlink" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" font-family="system-ui, sans-serif" font-size="10">` +
    `<title>${esc(caption)}</title><rect width="100%" height="100%" fill="white"/>${body}</svg>`
  );
}

function nested(svg, { x, y }, before = '') {
  const w = svg.getAttribute('width');
  const h = svg.getAttribute('height');
  const cls = svg.getAttribute('class') ?? '';
  return `<svg x="${x}" y="${y}" width="${w}" height="${h}" viewBox="0 0 ${w} ${h}" class="${esc(cls)}">${before}${svg.innerHTML}</svg>`;
}
