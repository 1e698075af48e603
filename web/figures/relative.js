// Figures of relative position: the similarity of sinusoidal rows and the shift matrix M_k, seed
// 001's score terms, RoPE (relative scores, a rotating pair, long-context scalings), ALiBi and T5.
import * as Plot from '@observablehq/plot';
import { gaussianVector, rotatedScores } from '../notebooks/lib/rope.js';
import { extent, fmt, heatmap, plural } from './spec.js';

export function similarity(pe, { length = 100, dModel = 64, from = 40, highlight } = {}) {
  const t = pe.sinusoidal({ length, dModel });
  const s = pe.similarity(t);
  const byOffset = [...Array(length).keys()].map((off) => ({
    offset: off,
    'from position 0': s.data[off],
    [`from position ${from}`]: s.data[from * length + Math.min(length - 1, from + off)],
  }));
  const map = heatmap(s.data, length, length, { xLabel: 'position j →', yLabel: '↓ position i', title: 'PE(i) · PE(j)', width: 420 });
  const marks = [
    Plot.line(byOffset, { x: 'offset', y: 'from position 0', stroke: '#5e3c99' }),
    Plot.line(byOffset.slice(0, length - from), { x: 'offset', y: `from position ${from}`, stroke: '#e66101', strokeDasharray: '4,3' }),
  ];
  if (highlight !== undefined && highlight < length) {
    map.options.marks.push(Plot.ruleY([highlight + 0.5], { stroke: '#d7191c', strokeWidth: 1.5 }));
    marks.push(Plot.ruleX([highlight], { stroke: '#d7191c' }));
  }
  let spread = 0;
  for (let i = 1; i < length; i++)
    for (let j = 1; j < length; j++) spread = Math.max(spread, Math.abs(s.data[i * length + j] - s.data[(i - 1) * length + j - 1]));
  return {
    panels: [
      map,
      {
        title: 'the same, against the offset',
        width: 420,
        aspect: 1,
        extraHeight: 40,
        options: { x: { label: 'offset j − i →' }, y: { label: '↑ dot product', grid: true }, marks },
      },
    ],
    caption: `Dot products between sinusoidal encodings (${length} positions, d = ${dModel}) depend only on the offset j − i: the heatmap is constant along diagonals (largest change along one: ${spread.toExponential(1)}) and the curves from positions 0 (solid) and ${from} (dashed) coincide. Nearby positions are most similar: PE(p)·PE(p) = ${s.data[0].toFixed(3)}, PE(p)·PE(p+1) = ${s.data[1].toFixed(3)}.`,
    alt: `Similarity heatmap with constant diagonals; the dot product is ${s.data[0].toFixed(0)} at offset 0 and ${s.data[1].toFixed(3)} at offset 1.`,
    csv: byOffset,
  };
}

export function shiftMatrix(pe, { dModel = 16, k = 3, at = 123 } = {}) {
  const M = pe.shiftMatrix({ dModel, k });
  const check = pe.sinusoidal({ dModel, positions: [at, at + k] }).data;
  let err = 0;
  for (let r = 0; r < dModel; r++) {
    let y = 0;
    for (let c = 0; c < dModel; c++) y += M.data[r * dModel + c] * check[c];
    err = Math.max(err, Math.abs(y - check[dModel + r]));
  }
  return {
    panels: [
      heatmap(M.data, dModel, dModel, {
        xLabel: 'column',
        yLabel: 'row',
        title: `M_k for k = ${k}, d = ${dModel}`,
        width: 380,
        color: { type: 'diverging', scheme: 'PuOr', domain: [-1, 1], label: 'value' },
      }),
    ],
    caption: `The matrix M_k with PE(p + k) = M_k · PE(p) for every p: block-diagonal 2 × 2 rotations by k·w_i, one per frequency, so PE(p + k) is a linear function of PE(p). Checked live: |M_k PE(${at}) − PE(${at} + k)| ≤ ${err.toExponential(1)}.`,
    alt: `Block-diagonal ${dModel} by ${dModel} matrix of 2 by 2 rotations for k = ${k}; it maps PE(${at}) to PE(${at + k}) within ${err.toExponential(1)}.`,
  };
}

export function scoreTerms(pe, { sentence = 'The cat sat on the mat', encoding = 'sinusoidal' } = {}) {
  const t = pe.scoreTerms({ sentence, encoding });
  const L = t.tokens.length;
  const labels = t.tokens.map((w, i) => `${i}·${w}`);
  const all = [t.contentContent, t.contentPosition, t.positionContent, t.positionPosition, t.total];
  const m = Math.max(...all.flatMap((x) => Array.from(x.data, Math.abs)));
  const names = ['content · content', 'content · position', 'position · content', 'position · position', 'total logit'];
  const color = { type: 'diverging', scheme: 'PuOr', domain: [-m, m], label: 'logit' };
  const share = all.slice(0, 4).map((x) => x.data.reduce((s, v) => s + Math.abs(v), 0));
  const pp = share[3] / share.reduce((a, b) => a + b, 0);
  return {
    panels: all.map((x, i) => heatmap(x.data, L, L, { xLabels: labels, yLabels: labels, width: 260, legend: i === 0, color, title: names[i] })),
    caption: `The attention score (E_i + P_i)ᵀ W_Qᵀ W_K (E_j + P_j) / √d, split into its four terms for "${t.tokens.join(' ')}" with ${encoding} positions: only the position·position term (here ${(100 * pp).toFixed(0)}% of the total magnitude) is the same for every sentence; the cross terms mix word and place, so relative distance is only implicit.`,
    alt: `Five ${L} by ${L} heatmaps: the four score terms and their sum; the position-position term carries ${(100 * pp).toFixed(0)}% of the magnitude.`,
  };
}

// Scores <R(m) q, R(n) q> between rotated copies of one vector: constant along diagonals.
export function ropeRelative(pe, { dim = 16, base = 10000, N = 32 } = {}) {
  const q = gaussianVector(dim, 1);
  const pos = [...Array(N).keys()];
  const scores = rotatedScores(pe, q, q, pos, pos, { base });
  let spread = 0;
  for (let m = 1; m < N; m++)
    for (let n = 1; n < N; n++) spread = Math.max(spread, Math.abs(scores.data[m * N + n] - scores.data[(m - 1) * N + n - 1]));
  // One channel pair (1, 0) rotated to positions 0, 0.5, ..., 6 (the first, fastest frequency).
  const steps = [...Array(13).keys()].map((p) => p / 2);
  const pair = pe.rope({ data: Float32Array.from({ length: 26 }, (_, i) => (i % 2 ? 0 : 1)), shape: [13, 2] }, { positions: steps, base }).data;
  const pts = steps.map((position, i) => ({ position, x: pair[2 * i], y: pair[2 * i + 1] }));
  const circle = [...Array(65).keys()].map((i) => ({ x: Math.cos((i / 64) * 2 * Math.PI), y: Math.sin((i / 64) * 2 * Math.PI) }));
  return {
    panels: [
      heatmap(Float32Array.from(scores.data), N, N, {
        xLabel: 'key position n →',
        yLabel: '↓ query position m',
        title: '<R(m)q, R(n)q>',
        width: 420,
      }),
      {
        title: 'a channel pair (1, 0) rotated to positions 0 … 6',
        width: 340,
        aspect: 1,
        options: {
          x: { domain: [-1.35, 1.35], label: 'channel 0' },
          y: { domain: [-1.35, 1.35], label: 'channel 1' },
          marks: [
            Plot.line(circle, { x: 'x', y: 'y', stroke: '#bbb' }),
            Plot.arrow(pts, { x1: 0, y1: 0, x2: 'x', y2: 'y', stroke: '#5e3c99', strokeOpacity: (d) => 0.3 + d.position / 9, headLength: 6 }),
            Plot.text(
              pts.filter((p) => Number.isInteger(p.position)),
              { x: (d) => d.x * 1.15, y: (d) => d.y * 1.15, text: (d) => `p=${d.position}` },
            ),
          ],
        },
      },
    ],
    caption: `RoPE rotates each channel pair of queries and keys by position × frequency, so the score between a query at m and a key at n depends only on m − n: the heatmap (head dim ${dim}, base ${base}) is constant along its diagonals (largest change along a diagonal: ${spread.toExponential(1)}). Right: the first pair turns by one radian per position.`,
    alt: `RoPE score heatmap constant along diagonals within ${spread.toExponential(1)}, and a unit vector turning one radian per position.`,
  };
}

// The colours of the scalings, and the baseline in neutral grey.
export const SCALING_COLOURS = {
  none: '#555555',
  linear: '#4e79a7',
  ntk: '#f28e2c',
  yarn: '#59a14f',
  llama3: '#e15759',
  longrope: '#b07aa1',
  dynamic: '#76b7b2',
};

export function ropeScaling(pe, { factor = 8, dim = 128, base = 500000, original = 8192 } = {}) {
  const configs = {
    none: undefined,
    linear: { type: 'linear', factor },
    ntk: { type: 'ntk', factor },
    yarn: { type: 'yarn', factor, originalMaxPositions: original },
    llama3: { type: 'llama3', factor, lowFreqFactor: 1, highFreqFactor: 4, originalMaxPositions: original },
  };
  const rows = [];
  const factors = {};
  for (const [name, scaling] of Object.entries(configs)) {
    const { invFreq, attentionFactor } = pe.ropeFrequencies({ dim, base, scaling });
    factors[name] = attentionFactor;
    invFreq.forEach((w, i) => rows.push({ scaling: name, i, wavelength: (2 * Math.PI) / w }));
  }
  const names = Object.keys(configs);
  const line = (name) =>
    Plot.line(
      rows.filter((r) => r.scaling === name),
      {
        x: 'i',
        y: 'wavelength',
        stroke: SCALING_COLOURS[name],
        strokeWidth: name === 'none' ? 2.5 : 1.8,
        strokeDasharray: name === 'none' ? '2,3' : undefined,
        className: `series-${name}`,
      },
    );
  const longest = Math.max(...rows.filter((r) => r.scaling === 'linear').map((r) => r.wavelength));
  return {
    panels: [
      {
        width: 900,
        height: 380,
        options: {
          marginRight: 20,
          x: { label: `frequency index i (of dim/2 = ${dim / 2}) →` },
          y: { type: 'log', label: '↑ wavelength (positions)', grid: true, tickFormat: '~s' },
          color: { legend: true, domain: names, range: names.map((n) => SCALING_COLOURS[n]) },
          marks: [
            Plot.ruleY([original], { stroke: '#888', strokeDasharray: '4,4' }),
            Plot.text([{ y: original }], { x: 2, y: 'y', text: () => `original context ${original}`, dy: -8, textAnchor: 'start', fill: '#555' }),
            ...names.map(line),
          ],
        },
      },
    ],
    caption: `Wavelength of each RoPE frequency for a Llama-3-style head (dim ${dim}, base ${base}, original context ${original}) scaled ×${factor}; the unscaled baseline is the grey dotted line. Linear interpolation stretches every band by ${factor}; NTK raises the base, stretching low frequencies most; YaRN and Llama 3 leave the fast bands (short wavelengths) untouched and stretch only bands whose wavelength exceeds the original context, blending in between. YaRN also scales attention by ${fmt(factors.yarn)}.`,
    alt: `Wavelength per frequency for no scaling and four scalings at factor ${factor}; the slowest linear band reaches ${longest.toExponential(2)} positions.`,
    csv: rows,
  };
}

// One small raster per head, each with its own colour scale (slopes differ by up to 2^8).
export function alibiBias(pe, { heads = 8, length = 16, symmetric = false } = {}) {
  const bias = pe.alibiBias({ numHeads: heads, queryLength: length, symmetric });
  const slopes = pe.alibiSlopes(heads);
  const L = length;
  const panels = [];
  const csv = [];
  for (let h = 0; h < heads; h++) {
    const data = Float32Array.from(bias.data.subarray(h * L * L, (h + 1) * L * L));
    if (!symmetric) for (let i = 0; i < L; i++) for (let j = i + 1; j < L; j++) data[i * L + j] = NaN; // masked future keys
    for (let i = 0; i < L; i++)
      for (let j = 0; j < L; j++) if (!Number.isNaN(data[i * L + j])) csv.push({ head: h + 1, i, j, bias: data[i * L + j] });
    const [lo] = extent(data);
    const p = heatmap(data, L, L, {
      title: `head ${h + 1}: m = ${fmt(slopes[h])}, down to ${lo.toFixed(2)}`,
      width: 200,
      legend: false,
      color: { type: 'linear', scheme: 'Viridis', domain: [lo, 0], label: 'bias' },
    });
    p.raster = { data, rows: L, cols: L };
    p.options.x = { label: 'key j →', domain: [0, L], ticks: [] };
    p.options.y = { label: 'query i', domain: [L, 0], ticks: [] };
    p.options.marks = [Plot.frame({ stroke: '#ccc' })];
    p.options.marginLeft = 24;
    panels.push(p);
  }
  return {
    panels,
    caption: `ALiBi adds −m·(distance) to each head's logits over ${plural(L, 'position')}, with geometric slopes ${Array.from(slopes, fmt).join(', ')} (${heads} heads). Each head has its own colour scale, from its most negative bias (dark) to 0 (yellow). ${symmetric ? 'Symmetric form −m|i − j| (bidirectional).' : 'Causal form −m(i − j); future keys are masked (blank).'} Steep heads attend locally, shallow heads far.`,
    alt: `${heads} small heatmaps of ALiBi biases; slopes from ${fmt(slopes[0])} to ${fmt(slopes[heads - 1])}.`,
    csv,
  };
}

export function t5Buckets(pe, { numBuckets = 32, maxDistance = 128 } = {}) {
  const L = 301;
  const mid = 150;
  const b = pe.t5Buckets({ queryLength: L, keyLength: L, numBuckets, maxDistance });
  const c = pe.t5Buckets({ queryLength: L, keyLength: L, numBuckets, maxDistance, bidirectional: false });
  const rows = [];
  for (let j = 0; j < L; j++) rows.push({ relative: j - mid, bidirectional: b.data[mid * L + j], causal: c.data[mid * L + j] });
  const long = rows.flatMap((r) => [
    { relative: r.relative, bucket: r.bidirectional, mode: 'bidirectional' },
    { relative: r.relative, bucket: r.causal, mode: 'causal' },
  ]);
  const small = pe.t5Buckets({ queryLength: 48, numBuckets, maxDistance });
  // the largest distance up to which every key before the query has a bucket of its own
  const before = rows.slice(0, mid + 1).map((r) => r.bidirectional);
  let exact = 0;
  while (exact < mid && before.filter((b) => b === before[mid - exact - 1]).length === 1) exact++;
  return {
    panels: [
      {
        width: 520,
        aspect: 0.62,
        options: {
          x: { label: 'relative position (key − query) →', grid: true },
          y: { label: '↑ bucket', grid: true },
          color: { legend: true },
          marks: [Plot.line(long, { x: 'relative', y: 'bucket', stroke: 'mode', curve: 'step' })],
        },
      },
      heatmap(Float32Array.from(small.data), 48, 48, {
        xLabel: 'key →',
        yLabel: 'query',
        width: 340,
        title: 'buckets, 48 × 48',
        color: { type: 'linear', scheme: 'Viridis', label: 'bucket' },
      }),
    ],
    caption: `T5 maps key − query to ${numBuckets} buckets: one bucket per distance up to ${exact} on each side, then logarithmically wider ones up to ${maxDistance}, beyond which all distances share the last bucket. Bidirectional mode spends half the buckets on each direction; each head learns one scalar bias per bucket.`,
    alt: `Step chart of T5 buckets against relative position, exact up to ${exact} and flat beyond ${maxDistance}.`,
    csv: rows,
  };
}
