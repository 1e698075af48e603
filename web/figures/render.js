// The page's one renderer: draws a figure spec (see spec.js) into its <figure data-figure="id"> at the
// figure's current width, redraws when that width changes, and offers SVG, PNG and CSV downloads.
// The caption is the spec's one-line `takeaway`, with the full `caption` (its numbers and how they
// were checked) in a disclosure under it.
// Heatmaps are painted straight into a <canvas> through a 256-colour lookup table (no per-pixel colour
// strings, no PNG encoding): one canvas pixel per cell, scaled up with crisp (pixelated) edges, or
// when there are more cells than pixels, the cell at each pixel's centre (an average of many cells
// would turn a fast sin/cos column into flat grey), with a note saying so. Their ticks are chosen
// here, round and spaced for the width the panel is drawn at.
// User-visible text is always set with textContent.
import * as Plot from '@observablehq/plot';
import { RASTER_MARGINS, colourTable, extent, niceTicks, panelHeight, toCSV } from './spec.js';

const GAP = 24;
const figures = new Map();
const resize = new ResizeObserver((entries) => {
  for (const e of entries) {
    const f = figures.get(e.target);
    const w = Math.floor(e.contentRect.width);
    if (f && Math.abs(w - f.width) > 1) schedule(e.target);
  }
});

// Figures are drawn in later tasks, one task per panel, after reading every pending figure's width
// at once: one layout instead of one per figure, and no single long task for a whole section or a
// figure of many panels.
const pending = new Set();
let flushing = false;
let drawing = 0; // figures being built
function schedule(fig) {
  pending.add(fig);
  if (flushing) return;
  flushing = true;
  setTimeout(() => {
    const widths = new Map([...pending].map((f) => [f, Math.floor(f.clientWidth) || 900]));
    pending.clear();
    flushing = false;
    for (const [f, w] of widths) {
      drawing++;
      setTimeout(() =>
        (pending.has(f) ? Promise.resolve() : draw(f, w)).finally(() => {
          drawing--;
        }),
      );
    }
  });
}
const nextTask = () => new Promise((resolve) => setTimeout(resolve));

// Resolves once every figure asked for so far is drawn (and no new one was asked for meanwhile).
export async function whenDrawn() {
  for (let quiet = 0; quiet < 2;) {
    await nextTask();
    quiet = pending.size || flushing || drawing ? 0 : quiet + 1;
  }
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

// Builds the figure off the page, one panel per task, then swaps it in; a newer draw of the same
// figure abandons this one.
async function draw(fig, width) {
  const entry = figures.get(fig);
  const { spec } = entry;
  entry.width = width;
  const token = (entry.token = {});
  const parts = [];
  if (spec.lines) parts.push(lines(spec.lines));
  if (spec.table) parts.push(table(spec.table));
  if (spec.panels?.length) {
    const body = document.createElement('div');
    body.className = 'panels';
    body.setAttribute('role', 'img');
    body.setAttribute('aria-label', spec.alt ?? spec.caption);
    const wide = spec.panels.reduce((s, p) => s + (p.width ?? width) + GAP, -GAP) <= width;
    const widths = spec.panels.map((p) => (wide ? (p.width ?? width) : Math.min(p.width ?? width, width)));
    const slots = legendSlots(spec.panels, widths, width);
    for (const [k, p] of spec.panels.entries()) {
      if (k > 0) {
        await nextTask();
        if (entry.token !== token) return;
      }
      body.append(panel(p, widths[k], slots[k]));
    }
    parts.push(body);
  }
  const cap = fig.querySelector('figcaption') ?? fig.appendChild(document.createElement('figcaption'));
  for (const child of [...fig.children]) if (child !== cap) child.remove();
  for (const p of parts) fig.insertBefore(p, cap);
  caption(cap, spec, fig.dataset.figure);
  fig.append(actions(fig, spec));
  fig.dataset.rendered = 'true';
}

// The takeaway, then the whole caption (numbers, method, checks) behind a disclosure that stays open
// across redraws once the reader has opened it.
function caption(cap, { takeaway, caption: full }, id) {
  const wasOpen = cap.querySelector('details')?.open ?? false;
  cap.replaceChildren();
  const line = cap.appendChild(document.createElement('span'));
  line.className = 'takeaway';
  line.textContent = takeaway ?? full;
  if (!takeaway || !full || full === takeaway) return;
  const details = cap.appendChild(document.createElement('details'));
  details.className = 'figure-details';
  details.open = wasOpen;
  details.appendChild(document.createElement('summary')).textContent = 'Numbers and method';
  const p = details.appendChild(document.createElement('p'));
  p.textContent = full;
  p.id = `details-${id}`;
}

// Which panels get a legend slot: those on a row (the panels wrap as the flex layout does, GAP apart
// within `width`) where some panel has a colour legend, so the panels of that row start level and a
// row without a legend has no empty band.
function legendSlots(panels, widths, width) {
  const rows = [];
  let used = Infinity;
  for (const [k, w] of widths.entries()) {
    if (used + GAP + w > width) (rows.push([]), (used = -GAP));
    rows.at(-1).push(k);
    used += GAP + w;
  }
  const slots = [];
  for (const row of rows) {
    const any = row.some((k) => panels[k].options?.color?.legend);
    for (const k of row) slots[k] = any;
  }
  return slots;
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
  // a raster's colours come from its data, which Plot never sees here: give its scale that domain
  if (p.raster && p.options?.color && !color.domain) color.domain = extent(p.raster.data);
  const margins = p.raster ? RASTER_MARGINS : {};
  const options = { ...margins, ...p.options };
  if (p.raster && p.axes) Object.assign(options, rasterTicks(p.axes, options, width, height));
  const svg = Plot.plot({ ...options, color: p.options?.color ? color : undefined, width, height });
  if (legendSlot) {
    const slot = div.appendChild(document.createElement('div'));
    slot.className = 'panel-legend';
    const key = legend && svg.legend('color', { width: Math.min(300, width), marginLeft: 16, marginRight: 24, tickSize: 4 });
    if (key) {
      shareStyles(key);
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
    const canvas = paint(p.raster, color, width, height, options);
    wrap.append(svg, canvas);
    // what the painting skipped: the rows and columns of cells that no pixel shows
    const { rows, cols } = p.raster;
    const { shownRows, shownCols } = canvas.sampled;
    const parts = [
      shownRows < rows && [`${shownRows} of ${rows} rows shown`, 'row', rows - shownRows],
      shownCols < cols && [`${shownCols} of ${cols} columns shown`, 'column', cols - shownCols],
    ].filter(Boolean);
    if (parts.length) {
      const note = div.appendChild(document.createElement('p'));
      note.className = 'raster-note';
      const each = parts.map(([, what, skipped]) => `each pixel ${what} is the ${what} of cells at its centre (${skipped} skipped)`);
      note.textContent = `${parts.map(([said]) => said).join(', ')}: ${each.join('; ')}.`;
    }
  } else div.append(svg);
  return div;
}

// Round ticks for a raster's axes (spec.js heatmap's `axes`: how many cells, and their labels if
// any), as many as fit: numbers every 60 px across and 28 px down; word labels every 16 px down and,
// tilted, as far apart across as their longest word needs.
function rasterTicks(axes, o, width, height) {
  const out = {};
  const room = { x: width - o.marginLeft - o.marginRight, y: height - o.marginTop - o.marginBottom };
  for (const k of ['x', 'y']) {
    const { n, labels, ticks } = axes[k] ?? {};
    if (!n || !o[k] || o[k].ticks !== ticks) continue; // the spec chose its own ticks
    const longest = labels ? Math.max(...labels.map((l) => String(l).length)) : 0;
    const spacing = labels ? (k === 'x' ? 10 + 5.5 * longest : 16) : k === 'x' ? 60 : 28;
    const at = niceTicks(n, Math.max(2, Math.floor(room[k] / spacing)));
    out[k] = {
      ...o[k],
      ticks: at.map((i) => i + 0.5),
      tickFormat: (v) => (labels ? labels[v - 0.5] : String(v - 0.5)),
      ...(labels && k === 'x' ? { tickRotate: -40 } : {}),
    };
  }
  if (axes.x?.labels) out.marginBottom = Math.max(o.marginBottom, 70);
  if (axes.y?.labels) out.marginLeft = Math.max(o.marginLeft, 80);
  return out;
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

// Plot puts the same small <style> (rules on its own class name) into every chart and legend. Each
// one added to the page made the browser match every element against every copy: with some eighty
// charts a redraw spent 130 ms in style recalculation. The page keeps one copy in <head>.
function shareStyles(node) {
  for (const style of node.querySelectorAll('style')) {
    const text = style.textContent;
    if (!plotStyles.has(text)) {
      plotStyles.add(text);
      const copy = document.head.appendChild(document.createElement('style'));
      copy.dataset.plotStyle = '';
      copy.textContent = text;
    }
    style.remove();
  }
}
const plotStyles = new Set();

// Plot labels its <g>s with aria-label, which ARIA prohibits on elements without a role: the panel
// group carries the text alternative instead. Mark axes so tests can find their ticks.
function tidy(svg) {
  shareStyles(svg);
  for (const g of svg.querySelectorAll('g[aria-label]')) {
    const label = g.getAttribute('aria-label');
    if (/axis/.test(label)) g.dataset.axis = label;
    g.removeAttribute('aria-label');
  }
  svg.removeAttribute('aria-label');
  svg.setAttribute('aria-hidden', 'true');
}

// Paints the raster at the size it is shown: one canvas pixel per cell (at most one per device pixel),
// each the cell at the pixel's centre, coloured through a 256-colour table; the canvas is scaled up
// with crisp edges.
function paint({ data, rows, cols }, color, width, height, m) {
  const w = width - m.marginLeft - m.marginRight;
  const h = height - m.marginTop - m.marginBottom;
  const dpr = Math.min(2, window.devicePixelRatio || 1);
  const W = Math.max(1, Math.min(cols, Math.round(w * dpr)));
  const H = Math.max(1, Math.min(rows, Math.round(h * dpr)));
  const canvas = document.createElement('canvas');
  canvas.width = W;
  canvas.height = H;
  Object.assign(canvas.style, { left: `${m.marginLeft}px`, top: `${m.marginTop}px`, width: `${w}px`, height: `${h}px`, imageRendering: 'pixelated' });
  const column = Int32Array.from({ length: W }, (_, x) => Math.floor(((x + 0.5) * cols) / W));
  const rowOf = Int32Array.from({ length: H }, (_, y) => Math.floor(((y + 0.5) * rows) / H));
  const { lut, lo, hi } = colourTable(color, data);
  const k = 255 / (hi - lo || 1);
  const img = new ImageData(W, H);
  const px = new Uint32Array(img.data.buffer);
  for (let y = 0, i = 0; y < H; y++) {
    const row = rowOf[y] * cols;
    for (let x = 0; x < W; x++, i++) {
      const v = data[row + column[x]];
      if (v !== v) continue; // transparent: no value here (a masked or missing cell)
      const t = ((v - lo) * k + 0.5) | 0;
      px[i] = lut[t < 0 ? 0 : t > 255 ? 255 : t];
    }
  }
  canvas.getContext('2d').putImageData(img, 0, 0);
  canvas.dataset.painted = 'true';
  canvas.sampled = { shownRows: new Set(rowOf).size, shownCols: new Set(column).size }; // for the note under it
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
  if (spec.panels?.length) {
    div.append(button(`Download ${id}.svg`, 'SVG', 'svg', () => save(`${id}.svg`, new Blob([exportSVG(fig)], { type: 'image/svg+xml' }))));
    div.append(button(`Download ${id}.png`, 'PNG', 'png', async () => save(`${id}.png`, await exportPNG(fig))));
  }
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

// One standalone SVG of the figure's panels where they sit on the page: titles (one <text> per line
// as the page wrapped them), legends (ramps as drawn, swatches redrawn as SVG), each plot, and each
// raster as an embedded PNG over its frame.
export function exportSVG(fig) {
  const box = fig.querySelector('.panels');
  const origin = box.getBoundingClientRect();
  const at = (el) => {
    const r = el.getBoundingClientRect();
    return { x: Math.round(r.left - origin.left), y: Math.round(r.top - origin.top), w: Math.round(r.width), h: Math.round(r.height) };
  };
  let body = '';
  for (const title of box.querySelectorAll('.panel-title, .raster-note')) {
    const size = parseFloat(getComputedStyle(title).fontSize);
    const weight = getComputedStyle(title).fontWeight;
    for (const { text, x, y, h } of linesOf(title, origin))
      body += `<text x="${x}" y="${y + h * 0.78}" font-size="${size}" font-weight="${weight}" text-anchor="start">${esc(text)}</text>`;
  }
  for (const sw of box.querySelectorAll('[class$="-swatch"]')) {
    const { x, y } = at(sw);
    const mark = sw.querySelector('svg');
    const fill = mark?.getAttribute('fill') ?? mark?.getAttribute('stroke') ?? '#444';
    body += `<rect x="${x}" y="${y + 2}" width="12" height="12" fill="${esc(fill)}"/><text x="${x + 16}" y="${y + 12}" font-size="10" text-anchor="start">${esc(sw.textContent)}</text>`;
  }
  for (const svg of box.querySelectorAll('.panel-legend > svg, svg[data-panel]')) {
    const canvas = svg.parentElement.querySelector(':scope > canvas');
    let image = '';
    if (svg.dataset.panel !== undefined && canvas) {
      const c = at(canvas);
      const s = at(svg);
      image = `<image href="${pngURL(canvas)}" x="${c.x - s.x}" y="${c.y - s.y}" width="${c.w}" height="${c.h}" preserveAspectRatio="none" style="image-rendering:pixelated"/>`;
    }
    body += nested(svg, at(svg), image);
  }
  // a little room past the last panel: a label's glyphs may reach a pixel or two beyond its plot
  const width = Math.max(box.scrollWidth, 1) + 4;
  const height = Math.max(box.scrollHeight, 1) + 4;
  const caption = fig.querySelector('figcaption .takeaway')?.textContent ?? '';
  return (
    `<svg xmlns="http://www.w3.org/2000/svg" xmlns:xlink="http://www.w3.org/1999/xlink" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" font-family="system-ui, sans-serif" font-size="10">` +
    `<title>${esc(caption)}</title><style>${esc([...plotStyles].join('\n')).replaceAll('&quot;', '"')}</style><rect width="100%" height="100%" fill="white"/>${body}</svg>`
  );
}

// The lines an HTML text element was wrapped into, each with its box relative to `origin`.
function linesOf(el, origin) {
  const out = [];
  const range = document.createRange();
  const walker = document.createTreeWalker(el, NodeFilter.SHOW_TEXT);
  for (let node = walker.nextNode(); node; node = walker.nextNode()) {
    const words = node.textContent.split(/(\s+)/);
    let offset = 0;
    for (const word of words) {
      if (word.trim()) {
        range.setStart(node, offset);
        range.setEnd(node, offset + word.length);
        const r = range.getBoundingClientRect();
        const y = Math.round(r.top - origin.top);
        const line = out.find((l) => Math.abs(l.y - y) < r.height / 2);
        if (line) line.text += ` ${word}`;
        else out.push({ text: word, x: Math.round(r.left - origin.left), y, h: Math.round(r.height) });
      }
      offset += word.length;
    }
  }
  return out;
}

// A Plot <svg> as a nested <svg> of the download, with the presentation attributes Plot sets on its
// root (text-anchor, fill, font) and Plot's overflow: labels may reach past its edges.
function nested(svg, { x, y }, before = '') {
  const w = svg.getAttribute('width');
  const h = svg.getAttribute('height');
  const keep = ['class', 'fill', 'font-family', 'font-size', 'font-variant', 'text-anchor', 'stroke'];
  const attrs = keep
    .filter((a) => svg.hasAttribute(a))
    .map((a) => ` ${a}="${esc(svg.getAttribute(a))}"`)
    .join('');
  return `<svg x="${x}" y="${y}" width="${w}" height="${h}" viewBox="0 0 ${w} ${h}" overflow="visible"${attrs}>${before}${svg.innerHTML}</svg>`;
}

// The figure as a PNG at twice its size: the SVG download drawn into a canvas.
export async function exportPNG(fig, scale = 2) {
  const text = exportSVG(fig);
  const [, w, h] = /width="(\d+)" height="(\d+)"/.exec(text).map(Number);
  const img = new Image();
  img.src = `data:image/svg+xml;charset=utf-8,${encodeURIComponent(text)}`;
  await img.decode();
  const canvas = document.createElement('canvas');
  canvas.width = w * scale;
  canvas.height = h * scale;
  const ctx = canvas.getContext('2d');
  ctx.scale(scale, scale);
  ctx.drawImage(img, 0, 0, w, h);
  return new Promise((resolve) => canvas.toBlob(resolve, 'image/png'));
}
