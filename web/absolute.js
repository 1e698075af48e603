// Figures for the absolute encodings: heatmap, first dimensions, wavelengths, the robot table,
// and learned-vs-sinusoidal extrapolation.
import * as Plot from '@observablehq/plot';
import { matrixRows, render, renderError } from './figure.js';
import { onChange } from './state.js';

const diverging = { type: 'diverging', scheme: 'PuOr', domain: [-1, 1], legend: true, label: 'value' };

export function sinusoidalFigures(pe) {
  onChange('sinusoidal', ({ length, dModel, base, layout }) => {
    const t = pe.sinusoidal({ length, dModel, base, layout });
    const s = pe.stats(t);
    render('sinusoidal-heatmap', {
      node: Plot.plot({
        width: 900,
        height: 420,
        x: { label: 'dimension →' },
        y: { label: '↓ position', reverse: true },
        color: diverging,
        marks: [Plot.raster(t.data, { width: dModel, height: length, x1: 0, x2: dModel, y1: 0, y2: length, imageRendering: 'pixelated' })],
      }),
      caption: `Heatmap of the ${layout} sinusoidal encoding: ${length} positions (rows) by ${dModel} dimensions (columns), base ${base}. Values span [${s.min.toFixed(4)}, ${s.max.toFixed(4)}], mean ${s.mean.toFixed(4)}. Leftmost columns oscillate quickly down the rows; rightmost columns hardly change.`,
      csv: length * dModel <= 200000 ? matrixRows(t, 'position', 'dimension') : undefined,
    });

    const shown = Math.min(length, 100);
    const curves = [];
    const interleaved = layout === 'interleaved';
    for (let j = 0; j < Math.min(8, dModel); j++)
      for (let p = 0; p < shown; p++) {
        const isSin = interleaved ? j % 2 === 0 : j < dModel / 2;
        curves.push({ position: p, value: t.data[p * dModel + j], dimension: `dim ${j} (${isSin ? 'sin' : 'cos'})`, kind: isSin ? 'sin' : 'cos' });
      }
    render('dimension-curves', {
      node: Plot.plot({
        width: 900,
        height: 320,
        x: { label: 'position →' },
        y: { label: '↑ value', domain: [-1.05, 1.05], grid: true },
        color: { legend: true, scheme: 'tableau10' },
        marks: [
          Plot.line(curves, {
            x: 'position',
            y: 'value',
            stroke: 'dimension',
            strokeDasharray: (d) => (d.kind === 'cos' ? '5,4' : null),
            strokeWidth: 1.6,
          }),
        ],
      }),
      caption: `The first ${Math.min(8, dModel)} dimensions over positions 0 to ${shown - 1}: sines solid, cosines dashed. Lower dimensions oscillate faster.`,
      csv: curves,
    });

    const w = pe.wavelengths({ dModel, base });
    const wl = Array.from(w, (value, i) => ({ i, wavelength: value }));
    render('wavelengths', {
      node: Plot.plot({
        width: 900,
        height: 260,
        x: { label: 'frequency index i →' },
        y: { type: 'log', label: '↑ wavelength (positions)', grid: true },
        marks: [
          Plot.line(wl, { x: 'i', y: 'wavelength' }),
          Plot.dot(wl, { x: 'i', y: 'wavelength', r: 2 }),
          Plot.ruleY([2 * Math.PI, 2 * Math.PI * base], { stroke: '#999', strokeDasharray: '3,3' }),
        ],
      }),
      caption: `Wavelengths 2π·base^(2i/d) form a geometric progression from 2π (${w[0].toFixed(3)}) towards 2π·base (${(2 * Math.PI * base).toFixed(1)}); the largest here is ${w[w.length - 1].toFixed(1)}. A straight line on this log scale.`,
      csv: wl,
    });
  });

  // Seed 003: for a fixed position k, the encoding as a function of the dimension index (d = 512, n = 10000).
  const sinusoids = [];
  const t512 = pe.sinusoidal({ dModel: 512, positions: [0, 4, 8, 12] });
  for (const [r, k] of [0, 4, 8, 12].entries())
    for (let i = 0; i < 100; i++) sinusoids.push({ position: `k = ${k}`, i, value: t512.data[r * 512 + 2 * i] });
  render('position-sinusoids', {
    node: Plot.plot({
      width: 900,
      height: 220,
      fx: { label: null },
      x: { label: 'i →' },
      y: { label: '↑ sin(k / 10000^(2i/512))', domain: [-1.05, 1.05], grid: true },
      marks: [Plot.line(sinusoids, { x: 'i', y: 'value', fx: 'position', stroke: '#5e3c99' }), Plot.frame({ stroke: '#ddd' })],
    }),
    caption:
      'Each position is its own sinusoid along the dimensions: sin(k / 10000^(2i/512)) against i for positions k = 0, 4, 8 and 12. Position 0 is flat; larger k oscillate faster across the low dimensions.',
    csv: sinusoids,
  });

  // The seed's table: positions of "I am a robot" with n = 100, d = 4.
  const words = ['I', 'am', 'a', 'robot'];
  const t = pe.sinusoidal({ length: 4, dModel: 4, base: 100 });
  const table = document.createElement('table');
  table.className = 'values';
  const head = table.createTHead().insertRow();
  for (const h of ['word', 'position', 'P(k,0) sin', 'P(k,1) cos', 'P(k,2) sin', 'P(k,3) cos'])
    head.appendChild(document.createElement('th')).textContent = h;
  const body = table.createTBody();
  const rows = [];
  words.forEach((word, k) => {
    const tr = body.insertRow();
    const vals = Array.from(t.data.subarray(k * 4, k * 4 + 4));
    for (const v of [word, k, ...vals.map((x) => x.toFixed(6))]) tr.insertCell().textContent = v;
    rows.push({ word, position: k, p0: vals[0], p1: vals[1], p2: vals[2], p3: vals[3] });
  });
  render('robot-table', {
    node: table,
    caption:
      'Positional encoding of "I am a robot" with n = 100 and d = 4 (float32, shown to 6 decimals): column pairs share a frequency (1 and 1/10). Any four-word sentence gets the same matrix.',
    csv: rows,
  });
}

export function extrapolationFigures(pe) {
  let learned;
  onChange('extrapolation', ({ maxLength, position }) => {
    learned?.dispose();
    learned = pe.learned({ maxLength, dModel: 16, seed: 0 });
    const sin = pe.sinusoidal({ dModel: 16, positions: [position] });
    const box = document.createElement('div');
    const a = box.appendChild(document.createElement('p'));
    const b = box.appendChild(document.createElement('p'));
    b.textContent = `Sinusoidal row ${position}: [${Array.from(sin.data.subarray(0, 4), (v) => v.toFixed(4)).join(', ')}, …] — defined for every position.`;
    try {
      const row = learned.lookup([position]);
      a.className = 'ok';
      a.textContent = `Learned row ${position}: [${Array.from(row.data.subarray(0, 4), (v) => v.toFixed(4)).join(', ')}, …] — inside the table.`;
    } catch (e) {
      a.className = 'error';
      a.textContent = `Learned table: ${e.constructor.name}: ${e.message}`;
    }
    render('extrapolation', {
      node: box,
      caption: `A learned table of ${maxLength} rows asked for position ${position}, next to the sinusoidal encoding of the same position.`,
    });
  });
  distinguishability(pe);
  return () => learned?.dispose();
}

// How far apart the two closest positions are as the sequence grows, sinusoidal vs random learned.
async function distinguishability(pe) {
  const lengths = [32, 64, 128, 256, 512, 1024, 2048];
  const points = [];
  for (const d of [8, 16, 64]) {
    for (const L of lengths) {
      const sin = pe.sinusoidal({ length: L, dModel: d });
      points.push({ length: L, encoding: `sinusoidal d=${d}`, distance: Math.min(...pe.nearestDistances(sin)) });
      const emb = pe.learned({ maxLength: L, dModel: d, std: Math.SQRT1_2, seed: 1 });
      points.push({ length: L, encoding: `learned d=${d}`, distance: Math.min(...pe.nearestDistances(emb.table)) });
      emb.dispose();
      await new Promise((r) => setTimeout(r)); // keep the page responsive
    }
  }
  render('distinguishability', {
    node: Plot.plot({
      width: 900,
      height: 320,
      x: { type: 'log', label: 'sequence length →', ticks: lengths, tickFormat: String },
      y: { type: 'log', label: '↑ smallest distance between two positions', grid: true },
      color: { legend: true, scheme: 'tableau10' },
      marks: [Plot.line(points, { x: 'length', y: 'distance', stroke: 'encoding', marker: 'circle' })],
    }),
    caption: `The smallest Euclidean distance between the encodings of any two distinct positions, as the sequence grows (measured here, d = 8, 16, 64). For sinusoidal tables it stays constant: the closest pair is always two neighbours, whose distance depends only on d and the base, so no far-apart positions collide at these lengths. Random learned tables (std √½) crowd as they grow, most at small d. Either way more dimensions keep positions further apart.`,
    csv: points,
  });
}

export { renderError };
