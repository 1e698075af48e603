// Small declarative helpers over Observable Plot shared by the page's figures.
import * as Plot from '@observablehq/plot';

// A matrix [rows, cols] as a heatmap. Small matrices use cells with labelled rows/columns; large ones
// a raster. Diverging colour (PuOr, readable with colour-blindness) centred on 0 unless `scheme` says.
export function heatmap(
  data,
  rows,
  cols,
  { xLabels, yLabels, xLabel = '', yLabel = '', domain, scheme = 'PuOr', diverging = true, width = 420, height, title, legend = true } = {},
) {
  let lo = Infinity;
  let hi = -Infinity;
  for (const v of data) if (Number.isFinite(v)) [lo, hi] = [Math.min(lo, v), Math.max(hi, v)];
  const m = Math.max(Math.abs(lo), Math.abs(hi)) || 1;
  const color = diverging
    ? { type: 'diverging', scheme, domain: domain ?? [-m, m], legend, label: 'value' }
    : { type: 'linear', scheme, domain: domain ?? [lo, hi], legend, label: 'value' };
  const small = rows * cols <= 80 * 80 && (xLabels || yLabels || rows <= 80);
  if (small) {
    const cells = [];
    for (let r = 0; r < rows; r++)
      for (let c = 0; c < cols; c++) cells.push({ x: xLabels ? xLabels[c] : c, y: yLabels ? yLabels[r] : r, value: data[r * cols + c] });
    return Plot.plot({
      title,
      width,
      height: height ?? Math.max(140, Math.min(width, (width * rows) / cols) + 60),
      marginLeft: yLabels ? 70 : 40,
      marginBottom: xLabels ? 60 : 30,
      x: {
        label: xLabel,
        domain: xLabels ?? [...Array(cols).keys()],
        tickRotate: xLabels ? -40 : 0,
        ticks: xLabels ? undefined : [...Array(cols).keys()].filter((i) => i % Math.ceil(cols / 10) === 0),
      },
      y: {
        label: yLabel,
        domain: yLabels ?? [...Array(rows).keys()],
        ticks: yLabels ? undefined : [...Array(rows).keys()].filter((i) => i % Math.ceil(rows / 10) === 0),
      },
      color,
      marks: [Plot.cell(cells, { x: 'x', y: 'y', fill: 'value', title: (d) => `${d.y} → ${d.x}: ${d.value.toFixed(4)}` })],
    });
  }
  return Plot.plot({
    title,
    width,
    height: height ?? 360,
    x: { label: xLabel },
    y: { label: yLabel, reverse: true },
    color,
    marks: [Plot.raster(data, { width: cols, height: rows, x1: 0, x2: cols, y1: 0, y2: rows, imageRendering: 'pixelated' })],
  });
}

// Several nodes side by side.
export function row(...nodes) {
  const div = document.createElement('div');
  div.className = 'row';
  div.append(...nodes);
  return div;
}

export const fmt = (x) => (Math.abs(x) >= 1e-3 || x === 0 ? x.toFixed(4) : x.toExponential(2));
