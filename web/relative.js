// Figures for RoPE (relative property, 2-D rotation, long-context scalings), ALiBi and T5.
import * as Plot from '@observablehq/plot';
import { fmt, heatmap, row } from './plots.js';
import { render } from './figure.js';
import { onChange } from './state.js';

const unit = (n, seed) => Float32Array.from({ length: n }, (_, i) => Math.sin(i * 12.9898 + seed * 78.233));
const dot = (a, b) => a.reduce((s, v, i) => s + v * b[i], 0);

export function ropeFigures(pe) {
  onChange('rope', ({ ropeDim, ropeBase }) => {
    // Scores <R(m) q, R(n) k> for m, n < N: constant along diagonals (they depend only on m - n).
    const N = 32;
    const q = unit(ropeDim, 1);
    const k = q; // the same vector as key: the score is then a sum of cos((m - n) w_i), banded along diagonals
    const pos = [...Array(N).keys()];
    const Q = pe.rope(
      { data: Float32Array.from({ length: N * ropeDim }, (_, i) => q[i % ropeDim]), shape: [N, ropeDim] },
      { base: ropeBase, positions: pos },
    ).data;
    const K = pe.rope(
      { data: Float32Array.from({ length: N * ropeDim }, (_, i) => k[i % ropeDim]), shape: [N, ropeDim] },
      { base: ropeBase, positions: pos },
    ).data;
    const scores = new Float32Array(N * N);
    for (let m = 0; m < N; m++)
      for (let n = 0; n < N; n++) scores[m * N + n] = dot(Q.subarray(m * ropeDim, (m + 1) * ropeDim), K.subarray(n * ropeDim, (n + 1) * ropeDim));
    let spread = 0;
    for (let m = 1; m < N; m++) for (let n = 1; n < N; n++) spread = Math.max(spread, Math.abs(scores[m * N + n] - scores[(m - 1) * N + n - 1]));

    // One channel pair of q rotating with position (the first, fastest frequency).
    const pair = pe.rope(
      { data: Float32Array.from({ length: 13 * 2 }, (_, i) => (i % 2 ? 0 : 1)), shape: [13, 2] },
      { positions: [...Array(13).keys()].map((p) => p / 2) },
    ).data;
    const pts = [...Array(13).keys()].map((i) => ({ position: i / 2, x: pair[2 * i], y: pair[2 * i + 1] }));
    const circle = [...Array(65).keys()].map((i) => ({ x: Math.cos((i / 64) * 2 * Math.PI), y: Math.sin((i / 64) * 2 * Math.PI) }));
    render('rope-relative', {
      node: row(
        heatmap(scores, N, N, { xLabel: 'key position n →', yLabel: 'query position m', title: '<R(m)q, R(n)q>', width: 420 }),
        Plot.plot({
          title: 'A channel pair (1, 0) rotated to positions 0 … 6',
          width: 340,
          height: 340,
          aspectRatio: 1,
          x: { domain: [-1.3, 1.3], label: 'channel 0' },
          y: { domain: [-1.3, 1.3], label: 'channel 1' },
          marks: [
            Plot.line(circle, { x: 'x', y: 'y', stroke: '#bbb' }),
            Plot.arrow(pts, { x1: 0, y1: 0, x2: 'x', y2: 'y', stroke: 'position', headLength: 6 }),
            Plot.text(
              pts.filter((p) => Number.isInteger(p.position)),
              { x: (d) => d.x * 1.15, y: (d) => d.y * 1.15, text: (d) => `p=${d.position}` },
            ),
          ],
        }),
      ),
      caption: `RoPE rotates each channel pair of queries and keys by position × frequency, so the score between a query at m and a key at n depends only on m − n: the heatmap (head dim ${ropeDim}, base ${ropeBase}) is constant along its diagonals (largest change along a diagonal: ${spread.toExponential(1)}). Right: the first pair turns by one radian per position.`,
    });
  });

  onChange('scaling', ({ factor }) => {
    const dim = 128;
    const base = 500000;
    const orig = 8192;
    const configs = {
      none: undefined,
      linear: { type: 'linear', factor },
      ntk: { type: 'ntk', factor },
      yarn: { type: 'yarn', factor, originalMaxPositions: orig },
      llama3: { type: 'llama3', factor, lowFreqFactor: 1, highFreqFactor: 4, originalMaxPositions: orig },
    };
    const rows = [];
    const factors = {};
    for (const [name, scaling] of Object.entries(configs)) {
      const { invFreq, attentionFactor } = pe.ropeFrequencies({ dim, base, scaling });
      factors[name] = attentionFactor;
      invFreq.forEach((w, i) => rows.push({ scaling: name, i, wavelength: (2 * Math.PI) / w }));
    }
    render('rope-scaling', {
      node: Plot.plot({
        width: 900,
        height: 380,
        x: { label: 'frequency index i (of dim/2 = 64) →' },
        y: { type: 'log', label: '↑ wavelength (positions)', grid: true },
        color: { legend: true, scheme: 'tableau10' },
        marks: [
          Plot.ruleY([orig], { stroke: '#888', strokeDasharray: '4,4' }),
          Plot.text([{ y: orig }], { x: 2, y: 'y', text: () => `original context ${orig}`, dy: -8, textAnchor: 'start', fill: '#666' }),
          Plot.line(rows, { x: 'i', y: 'wavelength', stroke: 'scaling', strokeWidth: 1.8 }),
        ],
      }),
      caption: `Wavelength of each RoPE frequency for a Llama-3-style head (dim ${dim}, base ${base}, original context ${orig}) scaled ×${factor}. Linear interpolation stretches every band by ${factor}; NTK raises the base, stretching low frequencies most; YaRN and Llama 3 leave the fast bands (short wavelengths) untouched and stretch only bands whose wavelength exceeds the original context, blending in between. YaRN also scales attention by ${fmt(factors.yarn)}.`,
      csv: rows,
    });
  });
}

export function biasFigures(pe) {
  onChange('alibi', ({ alibiHeads, alibiLength, alibiSymmetric }) => {
    const symmetric = alibiSymmetric === 'symmetric';
    const bias = pe.alibiBias({ numHeads: alibiHeads, queryLength: alibiLength, symmetric });
    const slopes = pe.alibiSlopes(alibiHeads);
    const L = alibiLength;
    const cells = [];
    for (let h = 0; h < alibiHeads; h++)
      for (let i = 0; i < L; i++)
        for (let j = 0; j < L; j++)
          if (symmetric || j <= i) cells.push({ head: h, col: h % 4, line: Math.floor(h / 4), i, j, bias: bias.data[(h * L + i) * L + j] });
    const titles = Array.from(slopes, (m, h) => ({ col: h % 4, line: Math.floor(h / 4), label: `head ${h + 1}: m = ${fmt(m)}` }));
    render('alibi-bias', {
      node: Plot.plot({
        width: 900,
        height: 60 + 210 * Math.ceil(alibiHeads / 4),
        fx: { axis: null },
        fy: { axis: null },
        x: { label: 'key j →', ticks: [] },
        y: { label: 'query i', ticks: [] },
        color: { type: 'linear', scheme: 'Viridis', legend: true, label: 'bias' },
        marks: [
          Plot.cell(cells, { x: 'j', y: 'i', fill: 'bias', fx: 'col', fy: 'line', inset: 0 }),
          Plot.text(titles, { fx: 'col', fy: 'line', frameAnchor: 'top', dy: -12, text: 'label' }),
        ],
      }),
      caption: `ALiBi adds −m·(distance) to each head's logits, with geometric slopes ${Array.from(slopes, fmt).join(', ')} (${alibiHeads} heads). ${symmetric ? 'Symmetric form −m|i − j| (bidirectional).' : 'Causal form −m(i − j); future keys are masked.'} Steep heads attend locally, shallow heads far.`,
      csv: cells,
    });
  });

  onChange('t5', ({ t5Buckets, t5MaxDistance }) => {
    const L = 301;
    const b = pe.t5Buckets({ queryLength: L, keyLength: L, numBuckets: t5Buckets, maxDistance: t5MaxDistance });
    const c = pe.t5Buckets({ queryLength: L, keyLength: L, numBuckets: t5Buckets, maxDistance: t5MaxDistance, bidirectional: false });
    const rows = [];
    for (let j = 0; j < L; j++) rows.push({ relative: j - 150, bidirectional: b.data[150 * L + j], causal: c.data[150 * L + j] });
    const long = rows.flatMap((r) => [
      { relative: r.relative, bucket: r.bidirectional, mode: 'bidirectional' },
      { relative: r.relative, bucket: r.causal, mode: 'causal' },
    ]);
    const small = pe.t5Buckets({ queryLength: 48, numBuckets: t5Buckets, maxDistance: t5MaxDistance });
    render('t5-buckets', {
      node: row(
        Plot.plot({
          width: 520,
          height: 320,
          x: { label: 'relative position (key − query) →', grid: true },
          y: { label: '↑ bucket', grid: true },
          color: { legend: true },
          marks: [Plot.line(long, { x: 'relative', y: 'bucket', stroke: 'mode', curve: 'step' })],
        }),
        heatmap(small.data, 48, 48, { diverging: false, scheme: 'Viridis', xLabel: 'key →', yLabel: 'query', width: 340, title: 'buckets, 48 × 48' }),
      ),
      caption: `T5 maps key − query to ${t5Buckets} buckets: exact buckets for small distances, then logarithmically wider ones up to ${t5MaxDistance}, beyond which all distances share the last bucket. Bidirectional mode spends half the buckets on each direction; each head learns one scalar bias per bucket.`,
      csv: rows,
    });
  });
}

export function analysisFigures(pe) {
  onChange('similarity', ({ shiftK }) => {
    const L = 100;
    const d = 64;
    const t = pe.sinusoidal({ length: L, dModel: d });
    const s = pe.similarity(t);
    const byOffset = [...Array(L).keys()].map((off) => ({
      offset: off,
      'from position 0': s.data[off],
      'from position 40': s.data[40 * L + Math.min(L - 1, 40 + off)],
    }));
    render('similarity', {
      node: row(
        heatmap(s.data, L, L, { xLabel: 'position j →', yLabel: 'position i', title: 'PE(i) · PE(j)', width: 420 }),
        Plot.plot({
          width: 420,
          height: 360,
          x: { label: 'offset j − i →' },
          y: { label: '↑ dot product', grid: true },
          marks: [
            Plot.line(byOffset, { x: 'offset', y: 'from position 0', stroke: '#5e3c99' }),
            Plot.line(byOffset.slice(0, L - 40), { x: 'offset', y: 'from position 40', stroke: '#e66101', strokeDasharray: '4,3' }),
          ],
        }),
      ),
      caption: `Dot products between sinusoidal encodings (${L} positions, d = ${d}) depend only on the offset j − i: the heatmap is constant along diagonals and the curves from positions 0 (solid) and 40 (dashed) coincide. Nearby positions are most similar.`,
      csv: byOffset,
    });

    const k = shiftK;
    const M = pe.shiftMatrix({ dModel: 16, k });
    const check = pe.sinusoidal({ dModel: 16, positions: [123, 123 + k] }).data;
    let err = 0;
    for (let r = 0; r < 16; r++) {
      let y = 0;
      for (let c = 0; c < 16; c++) y += M.data[r * 16 + c] * check[c];
      err = Math.max(err, Math.abs(y - check[16 + r]));
    }
    render('shift-matrix', {
      node: heatmap(M.data, 16, 16, { xLabel: 'column', yLabel: 'row', title: `M_k for k = ${k}, d = 16`, width: 380, domain: [-1, 1] }),
      caption: `The matrix M_k with PE(p + k) = M_k · PE(p) for every p: block-diagonal 2 × 2 rotations by k·w_i, one per frequency (seed 000's "linear function of PE_pos"). Checked live: |M_k PE(123) − PE(123 + k)| ≤ ${err.toExponential(1)}.`,
    });
  });

  onChange('scores', ({ scoreEncoding }) => {
    const t = pe.scoreTerms({ sentence: 'The cat sat on the mat', encoding: scoreEncoding });
    const L = t.tokens.length;
    const labels = t.tokens.map((w, i) => `${i}·${w}`);
    const opts = { xLabels: labels, yLabels: labels, width: 260, legend: false };
    const all = [t.contentContent, t.contentPosition, t.positionContent, t.positionPosition, t.total];
    const m = Math.max(...all.flatMap((x) => Array.from(x.data, Math.abs)));
    const names = ['content · content', 'content · position', 'position · content', 'position · position', 'total logit'];
    render('score-terms', {
      node: row(...all.map((x, i) => heatmap(x.data, L, L, { ...opts, domain: [-m, m], title: names[i], legend: i === 4 }))),
      caption: `Seed 001's score (E_i + P_i)ᵀ W_Qᵀ W_K (E_j + P_j) / √d split into its four terms for "The cat sat on the mat" with ${scoreEncoding} positions: only the position·position term is the same for every sentence; the cross terms mix word and place, so relative distance is only implicit.`,
    });
  });
}
