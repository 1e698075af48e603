// Figures of relative position: the similarity of sinusoidal rows and the shift matrix M_k, seed
// 001's score terms, RoPE (relative scores, a rotating pair, long-context scalings), ALiBi and T5.
import * as Plot from '@observablehq/plot';
import { diagonalSpread, gaussianVector, matVec, maxAbsDiff, param, values } from './numeric.js';
import { extent, fixed, fmt, heatmap, minus, plural } from './spec.js';

// The vector v (length dim) repeated on `positions.length` rows and rotated by RoPE at those
// positions: row r is R(positions[r]) v.
export function rotateAt(pe, v, positions, options = {}) {
  const dim = v.length;
  const x = new Float32Array(positions.length * dim);
  for (let r = 0; r < positions.length; r++) x.set(v, r * dim);
  return pe.rope({ data: x, shape: [positions.length, dim] }, { ...options, positions });
}

// Attention logits <R(m) q, R(n) k> for m in qPositions, n in kPositions: [M, N], float64 sums.
export function rotatedScores(pe, q, k, qPositions, kPositions = qPositions, options = {}) {
  const Q = rotateAt(pe, q, qPositions, options),
    K = rotateAt(pe, k, kPositions, options);
  const dim = q.length,
    M = qPositions.length,
    N = kPositions.length;
  const data = new Float64Array(M * N);
  for (let m = 0; m < M; m++)
    for (let n = 0; n < N; n++) {
      let s = 0;
      for (let c = 0; c < dim; c++) s += Q.data[m * dim + c] * K.data[n * dim + c];
      data[m * N + n] = s;
    }
  return { data, shape: [M, N] };
}

// scale: 'diverging' (symmetric about 0) or 'sequential' (from the smallest dot product to the largest,
// which the page uses: the dot products of d = 64 rows stay far above 0).
export function similarity(pe, { length = 100, dModel = 64, from = 40, highlight, scale = 'diverging' } = {}) {
  param('similarity', 'length', length, { min: 2, max: 4096 });
  param('similarity', 'from', from, { max: length - 1 });
  const t = pe.sinusoidal({ length, dModel });
  const s = pe.similarity(t);
  const byOffset = [...Array(length).keys()].map((off) => ({
    offset: off,
    'from position 0': s.data[off],
    [`from position ${from}`]: s.data[from * length + Math.min(length - 1, from + off)],
  }));
  const sequential = scale === 'sequential' ? { color: { type: 'linear', scheme: 'Viridis', domain: extent(s.data), label: 'PE(i) · PE(j)' } } : {};
  const map = heatmap(s.data, length, length, { xLabel: 'position j →', yLabel: '↓ position i', title: 'PE(i) · PE(j)', width: 420, ...sequential });
  // the two curves in a colour legend of their own (solid from position 0, dashed from `from`)
  const series = ['from position 0', `from position ${from}`];
  const marks = [
    Plot.line(byOffset, { x: 'offset', y: series[0], stroke: () => series[0] }),
    Plot.line(byOffset.slice(0, length - from), { x: 'offset', y: series[1], stroke: () => series[1], strokeDasharray: '4,3' }),
  ];
  const marked = highlight !== undefined && highlight < length;
  if (marked) {
    map.options.marks.push(Plot.ruleY([highlight + 0.5], { stroke: '#d7191c', strokeWidth: 1.5 }));
    marks.push(Plot.ruleX([highlight], { stroke: '#d7191c' }));
  }
  const spread = diagonalSpread(s);
  return {
    panels: [
      map,
      {
        title: 'the same, against the offset',
        width: 420,
        aspect: 1,
        extraHeight: 40,
        options: {
          x: { label: 'offset j − i →' },
          y: { label: '↑ dot product', grid: true },
          color: { domain: series, range: ['#5e3c99', '#e66101'], legend: true },
          marks,
        },
      },
    ],
    takeaway: `How alike two positions look depends only on how far apart they are: every diagonal is constant, and near beats far.${
      marked ? ` Red: position ${highlight}, the slider's.` : ''
    }`,
    caption: `Dot products between sinusoidal encodings (${length} positions, d = ${dModel}) depend only on the offset j − i: the heatmap is constant along diagonals (largest spread along one: ${spread.toExponential(1)}) and the curves from positions 0 (solid) and ${from} (dashed) coincide. Nearby positions are most similar: PE(p)·PE(p) = ${s.data[0].toFixed(3)}, PE(p)·PE(p+1) = ${s.data[1].toFixed(3)}.`,
    alt: `Similarity heatmap with constant diagonals; the dot product is ${s.data[0].toFixed(0)} at offset 0 and ${s.data[1].toFixed(3)} at offset 1.`,
    csv: byOffset,
    numbers: { spread },
  };
}

export function shiftMatrix(pe, { dModel = 16, k = 3, at = 123 } = {}) {
  const M = pe.shiftMatrix({ dModel, k });
  const check = pe.sinusoidal({ dModel, positions: [at, at + k] }).data;
  const err = maxAbsDiff(matVec(M.data, check.subarray(0, dModel)), check.subarray(dModel));
  return {
    panels: [
      heatmap(M.data, dModel, dModel, {
        xLabel: 'column',
        yLabel: 'row',
        title: `M_k for k = ${minus(k)}, d = ${dModel}`,
        width: 380,
        color: { type: 'diverging', scheme: 'PuOr', domain: [-1, 1], label: 'value' },
      }),
    ],
    takeaway: `Moving any position ${minus(k)} ${Math.abs(k) === 1 ? 'step' : 'steps'} is one fixed matrix: PE(p ${k < 0 ? `− ${-k}` : `+ ${k}`}) = M_${minus(k)} · PE(p) for every p.`,
    caption: `The matrix M_k with PE(p + k) = M_k · PE(p) for every p: block-diagonal 2 × 2 rotations by k·w_i, one per frequency, so PE(p + k) is a linear function of PE(p). Checked live: |M_k PE(${at}) − PE(${at} + k)| ≤ ${err.toExponential(1)}.`,
    alt: `Block-diagonal ${dModel} by ${dModel} matrix of 2 by 2 rotations for k = ${minus(k)}; it maps PE(${at}) to PE(${minus(at + k)}) within ${err.toExponential(1)}.`,
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
    takeaway: `Adding positions to the words splits each score into four terms; only position · position (${(100 * pp).toFixed(0)}% here) is the same for every sentence.`,
    caption: `The attention score (E_i + P_i)ᵀ W_Qᵀ W_K (E_j + P_j) / √d, split into its four terms for "${t.tokens.join(' ')}" with ${encoding} positions: only the position·position term (here ${(100 * pp).toFixed(0)}% of the total magnitude) is the same for every sentence; the cross terms mix word and place, so relative distance is only implicit.`,
    alt: `Five ${L} by ${L} heatmaps: the four score terms and their sum; the position-position term carries ${(100 * pp).toFixed(0)}% of the magnitude.`,
  };
}

// Scores <R(m) q, R(n) k> between rotated copies of a random query q and key k (k = q unless
// keySeed is given): constant along diagonals. Right, unless `pair` is false: ropePair's picture of
// one rotating pair.
export function ropeRelative(pe, { dim = 16, base = 10000, N = 32, seed = 1, keySeed, pair = true } = {}) {
  param('ropeRelative', 'dim', dim, { min: 2, max: 4096 });
  param('ropeRelative', 'N', N, { min: 2, max: 1024 });
  const q = gaussianVector(dim, seed);
  const k = keySeed === undefined ? q : gaussianVector(dim, keySeed);
  const pos = [...Array(N).keys()];
  const scores = rotatedScores(pe, q, k, pos, pos, { base });
  const spread = diagonalSpread(scores);
  const same = keySeed === undefined;
  return {
    panels: [
      heatmap(Float32Array.from(scores.data), N, N, {
        xLabel: 'key position n →',
        yLabel: '↓ query position m',
        title: same ? '<R(m)q, R(n)q>' : '<R(m)q, R(n)k>',
        width: 420,
      }),
      ...(pair ? ropePair(pe, { base }).panels : []),
    ],
    takeaway: 'After RoPE the score of a query at m and a key at n depends only on m − n: the heatmap is constant along its diagonals.',
    caption: `RoPE rotates each channel pair of queries and keys by position × frequency, so the score between a query at m and a key at n depends only on m − n: the heatmap (${same ? 'one random vector as query and key' : 'a random query and key'}, head dim ${dim}, base ${base}) is constant along its diagonals (largest spread along a diagonal: ${spread.toExponential(1)}).${pair ? ' The circle: the first pair turns by one radian per position.' : ''}`,
    alt: `RoPE score heatmap constant along diagonals within ${spread.toExponential(1)}${pair ? ', and a unit vector turning one radian per position' : ''}.`,
    numbers: { spread },
  };
}

// One channel pair (1, 0) rotated by RoPE to the given positions (the first pair turns at θ_0 = 1
// radian per position, whatever the base).
export function ropePair(pe, { base = 10000, positions = [...Array(13).keys()].map((p) => p / 2) } = {}) {
  values('ropePair', 'positions', positions);
  const n = positions.length;
  const pair = pe.rope({ data: Float32Array.from({ length: 2 * n }, (_, i) => (i % 2 ? 0 : 1)), shape: [n, 2] }, { positions, base }).data;
  const pts = positions.map((position, i) => ({ position, x: pair[2 * i], y: pair[2 * i + 1] }));
  const circle = [...Array(65).keys()].map((i) => ({ x: Math.cos((i / 64) * 2 * Math.PI), y: Math.sin((i / 64) * 2 * Math.PI) }));
  const last = Math.max(...positions);
  return {
    panels: [
      {
        title: `a channel pair (1, 0) rotated to positions ${Math.min(...positions)} … ${last}`,
        width: 340,
        aspect: 1,
        options: {
          x: { domain: [-1.35, 1.35], label: 'channel 0' },
          y: { domain: [-1.35, 1.35], label: 'channel 1' },
          marks: [
            Plot.line(circle, { x: 'x', y: 'y', stroke: '#bbb' }),
            Plot.arrow(pts, {
              x1: 0,
              y1: 0,
              x2: 'x',
              y2: 'y',
              stroke: '#5e3c99',
              strokeOpacity: (d) => 0.3 + (0.7 * d.position) / (last || 1),
              headLength: 6,
            }),
            Plot.text(
              pts.filter((p) => Number.isInteger(p.position)),
              { x: (d) => d.x * 1.15, y: (d) => d.y * 1.15, text: (d) => `p=${d.position}` },
            ),
          ],
        },
      },
    ],
    takeaway: 'RoPE turns the first pair one radian per position: once round the circle every 2π ≈ 6.28 positions.',
    caption: `The vector (1, 0) as the first rotary pair at positions ${positions.join(', ')}: RoPE turns it by p·θ_0 = p radians, so it goes once round the circle every 2π ≈ 6.28 positions.`,
    alt: `A unit vector turning one radian per position, drawn at ${n} positions.`,
    csv: pts,
  };
}

// <R(0) q, R(n) q> for q = (1, …, 1): Σ_i 2 cos(n θ_i), a sum of cosines drifting out of phase.
export function ropeDecay(pe, { dim = 128, base = 10000, near = 200, far = 60 } = {}) {
  param('ropeDecay', 'dim', dim, { min: 2, max: 4096 });
  param('ropeDecay', 'near', near, { min: 2, max: 10000 });
  param('ropeDecay', 'far', far, { max: 200 });
  const ones = new Float32Array(dim).fill(1);
  const distances = [...Array(near).keys(), ...Array.from({ length: far }, (_, i) => Math.round(near * 1.08 ** (i + 1)))];
  const scores = rotatedScores(pe, ones, ones, [0], distances, { base });
  const rows = distances.map((distance, i) => ({ distance, score: scores.data[i] })).filter((r) => r.distance > 0);
  const last = rows.at(-1);
  return {
    panels: [
      {
        width: 760,
        height: 260,
        options: {
          x: { type: 'log', label: 'distance n − m (log scale) →', tickFormat: ',' },
          y: { label: '↑ ⟨R_0 q, R_n q⟩ for q = 1', grid: true },
          marks: [Plot.ruleY([0]), Plot.line(rows, { x: 'distance', y: 'score', stroke: 'steelblue' })],
        },
      },
    ],
    takeaway: 'The score between a query and an identical key fades, with ripples, as they move apart.',
    caption: `The logit between a query and an identical key q = (1, …, 1) as the distance grows from 1 to ${last.distance} positions (head dim ${dim}, base ${base}): ${scores.data[0].toFixed(0)} at distance 0, it decays towards 0 with oscillations (${last.score.toFixed(2)} at ${last.distance}).`,
    alt: `RoPE logit of q = k = ones against distance on a log scale, from ${scores.data[0].toFixed(0)} decaying towards 0.`,
    csv: rows,
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

// The scalings compared, as `scaling` options of pe.ropeFrequencies; llama3 is Llama 3.1's
// rope_scaling block exactly as its config.json writes it (posenc reads that spelling too).
export function scalingConfigs(factor = 8, original = 8192) {
  return {
    none: undefined,
    linear: { type: 'linear', factor },
    ntk: { type: 'ntk', factor },
    yarn: { type: 'yarn', factor, originalMaxPositions: original },
    llama3: { factor, low_freq_factor: 1.0, high_freq_factor: 4.0, original_max_position_embeddings: original, rope_type: 'llama3' },
  };
}

// `ratio` adds a panel of θ scaled / θ original per pair.
export function ropeScaling(pe, { factor = 8, dim = 128, base = 500000, original = 8192, ratio = false } = {}) {
  const configs = scalingConfigs(factor, original);
  const rows = [];
  const factors = {};
  const plain = pe.ropeFrequencies({ dim, base }).invFreq;
  for (const [name, scaling] of Object.entries(configs)) {
    const { invFreq, attentionFactor } = pe.ropeFrequencies({ dim, base, scaling });
    factors[name] = attentionFactor;
    invFreq.forEach((w, i) => rows.push({ scaling: name, i, wavelength: (2 * Math.PI) / w, ratio: w / plain[i] }));
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
  const colour = { domain: names, range: names.map((n) => SCALING_COLOURS[n]) };
  const ratioPanel = {
    title: 'θ scaled / θ original: 1 is extrapolated as is, 1/factor fully interpolated',
    width: 900,
    height: 260,
    options: {
      marginRight: 20,
      x: { label: 'frequency index i →' },
      y: { type: 'log', label: '↑ θ scaled / θ original', grid: true, tickFormat: (v) => (v < 1 ? `1/${+(1 / v).toPrecision(3)}` : String(v)) },
      color: colour,
      marks: names.map((name) =>
        Plot.line(
          rows.filter((r) => r.scaling === name),
          { x: 'i', y: 'ratio', stroke: SCALING_COLOURS[name], strokeWidth: 1.8, strokeDasharray: name === 'none' ? '2,3' : undefined },
        ),
      ),
    },
  };
  return {
    panels: [
      {
        width: 900,
        height: 380,
        options: {
          marginRight: 20,
          x: { label: `frequency index i (of dim/2 = ${dim / 2}) →` },
          y: { type: 'log', label: '↑ wavelength (positions)', grid: true, tickFormat: '~s' },
          color: { legend: true, ...colour },
          marks: [
            Plot.ruleY([original], { stroke: '#888', strokeDasharray: '4,4' }),
            Plot.text([{ y: original }], { x: 2, y: 'y', text: () => `original context ${original}`, dy: -8, textAnchor: 'start', fill: '#555' }),
            ...names.map(line),
          ],
        },
      },
      ...(ratio ? [ratioPanel] : []),
    ],
    takeaway:
      factor > 1
        ? `To reach ${factor}× longer contexts, linear scaling slows every band; NTK mostly the slow ones; YaRN and Llama 3 leave the fast bands alone.`
        : 'At factor 1 no scaling changes a band: raise the factor to see how each one stretches the wavelengths.',
    caption: `Wavelength of each RoPE frequency for a Llama-3-style head (dim ${dim}, base ${base}, original context ${original}) scaled ×${factor}; the unscaled baseline is the grey dotted line. Linear interpolation stretches every band by ${factor}; NTK raises the base, stretching low frequencies most; YaRN and Llama 3 leave the fast bands (short wavelengths) untouched and stretch only bands whose wavelength exceeds the original context, blending in between. YaRN also multiplies cos and sin (so queries and keys) by its attention factor ${factors.yarn.toFixed(4)}, so the logits by its square, ${(factors.yarn ** 2).toFixed(4)}.`,
    alt: `Wavelength per frequency for no scaling and four scalings at factor ${factor}; the slowest linear band reaches ${longest.toExponential(2)} positions.`,
    csv: rows,
    numbers: { attentionFactor: factors },
  };
}

// One small raster per head. scale: 'per-head' gives each head its own colour scale, from its own
// most negative bias to 0 (slopes differ by up to 2^8, so every head shows its full shape); 'shared'
// puts all heads on one scale with a legend, so that steep and shallow heads look as different as they
// are (the page). With `distances`, a last panel draws each head's bias against the distance
// 0 … distances.
export function alibiBias(pe, { heads = 8, length = 16, symmetric = false, distances = 0, scale = 'per-head' } = {}) {
  param('alibiBias', 'distances', distances, { max: 10000 });
  const bias = pe.alibiBias({ numHeads: heads, queryLength: length, symmetric });
  const slopes = pe.alibiSlopes(heads);
  const L = length;
  const shared = scale === 'shared';
  const panels = [];
  const csv = [];
  const data = [];
  for (let h = 0; h < heads; h++) {
    const d = Float32Array.from(bias.data.subarray(h * L * L, (h + 1) * L * L));
    if (!symmetric) for (let i = 0; i < L; i++) for (let j = i + 1; j < L; j++) d[i * L + j] = NaN; // masked future keys
    for (let i = 0; i < L; i++) for (let j = 0; j < L; j++) if (!Number.isNaN(d[i * L + j])) csv.push({ head: h + 1, i, j, bias: d[i * L + j] });
    data.push(d);
  }
  const lowest = Math.min(...data.map((d) => extent(d)[0]));
  for (let h = 0; h < heads; h++) {
    const [lo] = extent(data[h]);
    const p = heatmap(data[h], L, L, {
      title: shared ? `head ${h + 1}: m = ${fmt(slopes[h])}` : `head ${h + 1}: m = ${fmt(slopes[h])}, down to ${lo.toFixed(2)}`,
      width: 200,
      legend: shared && h === 0,
      color: { type: 'linear', scheme: 'Viridis', domain: [shared ? lowest : lo, 0], label: 'bias' },
    });
    p.raster = { data: data[h], rows: L, cols: L };
    p.options.x = { label: 'key j →', domain: [0, L], ticks: [] };
    p.options.y = { label: 'query i', domain: [L, 0], ticks: [] };
    p.options.marks = [Plot.frame({ stroke: '#ccc' })];
    p.options.marginLeft = 24;
    panels.push(p);
  }
  if (distances > 0) {
    const lines = Array.from(slopes, (m, h) =>
      Array.from({ length: distances + 1 }, (_, d) => ({ head: `head ${h + 1}: m = ${fmt(m)}`, d, bias: -m * d })),
    ).flat();
    panels.push({
      title: 'bias against distance, one line per head',
      width: 520,
      height: 300,
      options: {
        x: { label: `distance ${symmetric ? '|i − j|' : 'i − j'} →` },
        y: { label: '↑ bias', grid: true },
        color: { legend: true, scheme: 'viridis' },
        marks: [Plot.ruleY([0]), Plot.line(lines, { x: 'd', y: 'bias', stroke: 'head' })],
      },
    });
  }
  // ALiBi's slopes are geometric for a power-of-two head count; otherwise the paper takes those of the
  // power of two below and adds every other slope of the next one, so the steepest head is not head 1.
  const order = [...slopes.keys()].sort((a, b) => slopes[b] - slopes[a]);
  const [steep, flat] = [order[0], order.at(-1)];
  const geometric = (heads & (heads - 1)) === 0;
  const slopeText =
    heads === 1
      ? `with slope ${fmt(slopes[0])} (1 head)`
      : geometric
        ? `with geometric slopes ${Array.from(slopes, fmt).join(', ')} (${plural(heads, 'head')})`
        : `with slopes ${Array.from(slopes, fmt).join(', ')} (${plural(heads, 'head')}: not a power of two, so the ${2 ** Math.floor(Math.log2(heads))}-head slopes come first, then every other slope of the ${2 ** Math.ceil(Math.log2(heads))}-head sequence, and head ${steep + 1} is the steepest)`;
  const scaleText = shared
    ? `One colour scale for all heads, from ${fmt(lowest)} (dark) to 0 (yellow).`
    : 'Each head has its own colour scale, from its most negative bias (dark) to 0 (yellow).';
  const far = (h) => (slopes[h] * (L - 1) >= 0.01 ? fixed(-slopes[h] * (L - 1), 2) : fmt(-slopes[h] * (L - 1)));
  const away = `a key ${plural(L - 1, 'position')} away`;
  return {
    panels,
    takeaway:
      heads > 1
        ? `Steep heads attend locally: ${away} gets ${far(steep)} from head ${steep + 1}, only ${far(flat)} from head ${flat + 1}.`
        : `One head: ${away} gets ${far(0)}.`,
    caption: `ALiBi adds −m·(distance) to each head's logits over ${plural(L, 'position')}, ${slopeText}. ${scaleText} ${symmetric ? 'Symmetric form −m|i − j| (bidirectional).' : 'Causal form −m(i − j); future keys are masked (blank).'} Steep heads attend locally, shallow heads far${distances > 0 ? ': the last panel draws each head’s penalty as a straight line of slope −m' : ''}.`,
    alt: `${plural(heads, 'small heatmap')} of ALiBi biases; ${heads === 1 ? `slope ${fmt(slopes[0])}` : `slopes from ${fmt(slopes[flat])} (head ${flat + 1}) to ${fmt(slopes[steep])} (head ${steep + 1})`}.`,
    csv,
  };
}

// The bucket of every offset from −span to span, and a 48 × 48 map of them.
export function t5Buckets(pe, { numBuckets = 32, maxDistance = 128, span = 150 } = {}) {
  const L = 2 * span + 1;
  const mid = span;
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
  // Where each side reaches its last bucket for good: the logarithmic buckets are floored, so this comes
  // before maxDistance (91 after and 112 before the query for T5's 32 buckets and 128). Buckets never
  // shrink with distance, so a search over 1..maxDistance finds it, past the plotted span if need be.
  const bucketAt = (relative, bidirectional) => pe.t5Buckets({ relativePositions: [relative], numBuckets, maxDistance, bidirectional }).data[0];
  const saturates = (sign, bidirectional) => {
    const last = bucketAt(sign * maxDistance, bidirectional);
    let lo = 1;
    let hi = maxDistance;
    while (lo < hi) {
      const m = (lo + hi) >> 1;
      if (bucketAt(sign * m, bidirectional) === last) hi = m;
      else lo = m + 1;
    }
    return lo;
  };
  const saturation = { after: saturates(1, true), before: saturates(-1, true), causal: saturates(-1, false) };
  // Why the last bucket starts before maxDistance, from the buckets themselves: the log-spaced index is
  // rounded down, so it reaches the last bucket at the first distance where it is no longer below it.
  const early = Math.min(saturation.after, saturation.before);
  // With few buckets (4, or 6 with a short maxDistance) the last bucket follows the exact ones at once:
  // there is no wider bucket between them.
  const noWider = early === exact + 1;
  const ownBuckets = exact === 0 ? 'only distance 0 has a bucket of its own' : `distances 0 to ${exact} have a bucket each`;
  const lastShared =
    early < maxDistance
      ? `from ${early} on all share the last, not only past maxDistance ${maxDistance}: the log-spaced index rounds down, reaching the last bucket at ${early}`
      : `past maxDistance ${maxDistance} all share the last one`;
  const takeaway = noWider
    ? `With ${numBuckets} buckets there is no room for wider ones: ${ownBuckets}, and every distance from ${early} on shares the last.`
    : `Near distances get a bucket each, farther ones ever wider ones; ${lastShared}.`;
  const between = noWider
    ? `then one bucket that every farther distance shares (no room is left for logarithmically wider ones)`
    : `then logarithmically wider ones; the buckets are floored, so the last one is reached before maxDistance`;
  const marks = [
    [saturation.after, 'bidirectional'],
    [-saturation.before, 'bidirectional'],
    [-saturation.causal, 'causal'],
  ].filter(([x]) => Math.abs(x) <= span);
  const dashed = marks.length === 3 ? 'dashed' : `dashed where inside ±${span}`;
  return {
    panels: [
      {
        width: 520,
        aspect: 0.62,
        options: {
          x: { label: 'relative position (key − query) →', grid: true },
          y: { label: '↑ bucket', grid: true },
          color: { legend: true },
          marks: [
            Plot.ruleX(marks, { x: ([x]) => x, stroke: ([, mode]) => mode, strokeDasharray: '4,3', strokeOpacity: 0.6 }),
            Plot.line(long, { x: 'relative', y: 'bucket', stroke: 'mode', curve: 'step' }),
          ],
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
    takeaway,
    caption: `T5 maps key − query to ${numBuckets} buckets (maxDistance ${maxDistance}): ${exact > 0 ? `one bucket per distance up to ${exact}` : 'a bucket of its own for distance 0 only'} on each side, ${between} (${dashed}: bidirectional from ${saturation.after} after and ${saturation.before} before the query, causal from ${saturation.causal} before it), and all farther distances share it. Bidirectional mode spends half the buckets on each direction; each head learns one scalar bias per bucket.`,
    alt: `Step chart of T5 buckets against relative position, exact up to ${exact}, flat from ${saturation.after} (after the query) and ${saturation.before} (before).`,
    numbers: { exact, saturation },
    csv: rows,
  };
}
