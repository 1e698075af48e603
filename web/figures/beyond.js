// Positions beyond text: the 2-D sin-cos table of ViT/MAE and Qwen2-VL's multimodal RoPE on a grid of
// image patches, M-RoPE's three id streams and the channel bands each one drives, and xPos's decaying
// q·k next to plain RoPE's. Every number comes from posenc (sinusoidal2d, mropePositions, rope with
// mropeSection or xpos, similarity); the page and notebook 04 draw these specs.
import * as Plot from '@observablehq/plot';
import { param } from './numeric.js';
import { fmt, heatmap, plural, readable } from './spec.js';
import { xposScores } from './xpos.js';

// Qwen2-VL-7B's rotary head (config.json: head_dim 128, rope_scaling.mrope_section [16, 24, 24], rope_theta 1e6).
export const QWEN2_VL = Object.freeze({ headDim: 128, mropeSection: Object.freeze([16, 24, 24]), base: 1e6 });
export const STREAMS = Object.freeze(['t', 'h', 'w']);
export const STREAM_COLOURS = Object.freeze({ t: '#4e79a7', h: '#f28e2c', w: '#59a14f' });
const STREAM_NAMES = { t: 'temporal', h: 'height', w: 'width' };
const PICKED = '#d7191c';

// (1, …, 1) as [rows, dim]: rotated copies of it score pairs of positions by the rotation alone.
const ones = (rows, dim) => ({ data: new Float32Array(rows * dim).fill(1), shape: [rows, dim] });

// ---- (a) a grid of patches ------------------------------------------------------------------------

// MAE's table itself: the cls row, then one row per patch (row-major); the first half of the channels
// encodes the patch's column, the second half its row.
export function sincos2dTable(pe, { height = 14, width = 14, dModel = 64, clsToken = true } = {}) {
  const t = pe.sinusoidal2d({ height, width, dModel, clsToken });
  const [rows, half, first] = [t.shape[0], dModel / 2, clsToken ? 1 : 0];
  // the largest difference between a patch's column half and that of patch (0, column), and between
  // its row half and that of patch (row, 0)
  let column = 0;
  let row = 0;
  for (let p = 0; p < height * width; p++) {
    const [at, c0, r0] = [first + p, first + (p % width), first + p - (p % width)].map((i) => i * dModel);
    for (let j = 0; j < half; j++) column = Math.max(column, Math.abs(t.data[at + j] - t.data[c0 + j]));
    for (let j = half; j < dModel; j++) row = Math.max(row, Math.abs(t.data[at + j] - t.data[r0 + j]));
  }
  const map = heatmap(t.data, rows, dModel, {
    xLabel: 'channel →',
    yLabel: clsToken ? 'cls, then patches' : 'patch',
    title: `sinusoidal2d: ${height} × ${width} patches${clsToken ? ' and cls' : ''}, d = ${dModel}`,
    width: 640,
    raster: true,
    color: { type: 'diverging', scheme: 'PuOr', domain: [-1, 1], label: 'value', legend: true },
  });
  map.options.marginTop = 26;
  map.options.marks.push(
    Plot.ruleX([half], { stroke: '#222', strokeWidth: 1.5 }),
    Plot.text(
      [
        [half / 2, 'column: [sin | cos]'],
        [(3 * half) / 2, 'row: [sin | cos]'],
      ],
      { x: (d) => d[0], y: 0, dy: -9, text: (d) => d[1], fontWeight: 'bold' },
    ),
  );
  return {
    numbers: { rows, column, row },
    panels: [map],
    caption:
      `MAE's 2-D sin-cos table for ${height} × ${width} patches of ${dModel} channels${clsToken ? ', the cls token first (a row of zeros)' : ''}, ` +
      `patches row by row. The first ${half} channels depend on the patch's column only: they repeat every ${width} rows ` +
      `(largest difference from patch (0, column): ${column}); the last ${half} on its row only, constant over each run of ${width} rows (${row}).`,
    alt: `A ${rows} by ${dModel} heatmap; the column half repeats every ${width} rows (difference ${column}) and the row half is constant within each image row (difference ${row}).`,
  };
}

// Similarity of one patch to every patch of a height × width grid, under MAE's 2-D sin-cos table and
// under M-RoPE: (1, …, 1) rotated at each patch's ids (0, row, column) from pe.mropePositions, so that
// the score of two patches is that of a query and a key at those patches.
export function patchScores(pe, { row, col, metric = 'cosine', height = 14, width = 14, dModel = 768, ...head } = {}) {
  const { headDim, mropeSection, base } = { ...QWEN2_VL, ...Object.fromEntries(Object.entries(head).filter(([, v]) => v !== undefined)) };
  const n = height * width;
  const at = row * width + col;
  const ids = pe.mropePositions([{ image: [1, height, width] }]);
  const rowOf = (t) => pe.similarity(t, { metric }).data.slice(at * n, at * n + n);
  return {
    n,
    at,
    sincos: rowOf(pe.sinusoidal2d({ height, width, dModel })),
    mrope: rowOf(pe.rope(ones(n, headDim), { positions: ids, mropeSection, base })),
  };
}

// sides: the caption names the panels by side (left, right), as the notebooks lay them out in a row;
// false names them by title, for a page that may stack them.
export function patchGrid(
  pe,
  { row = 4, col = 6, metric = 'cosine', height = 14, width = 14, dModel = 768, base = QWEN2_VL.base, sides = true } = {},
) {
  param('patchGrid', 'row', row, { max: height - 1 });
  param('patchGrid', 'col', col, { max: width - 1 });
  const { at, sincos, mrope } = patchScores(pe, { row, col, metric, height, width, dModel, base });
  const right = col + 1 < width ? at + 1 : at - 1; // the neighbour in the same row
  const below = row + 1 < height ? at + width : at - width; // ... and in the same column
  const lowest = (s) => s.reduce((best, v, i) => (v < s[best] ? i : best), 0);
  const where = (i) => `(${Math.floor(i / width)}, ${i % width})`;
  const [ls, lm] = [lowest(sincos), lowest(mrope)];
  const label = metric === 'cosine' ? 'cosine' : 'dot product';
  const panel = (data, title, legend) => {
    const p = heatmap(data, height, width, {
      xLabel: 'column →',
      yLabel: 'row',
      title,
      width: 400,
      color: { type: 'linear', scheme: 'viridis', label, legend },
    });
    p.options.marks.push(Plot.cell([{ x: col, y: row }], { x: 'x', y: 'y', stroke: PICKED, strokeWidth: 2.5, fill: 'none' }));
    p.pick = true; // a click names the cell under the pointer (render.js)
    return p;
  };
  const f = (v) => v.toPrecision(6);
  const theta = base === QWEN2_VL.base ? 'θ = 10⁶ as Qwen2-VL' : `θ = ${base}`;
  return {
    numbers: { right, below, lowest: [ls, lm], sincos, mrope },
    panels: [
      panel(sincos, `2-D sin-cos (MAE), d = ${dModel}`, true),
      panel(mrope, `M-RoPE ids (0, row, column), head ${QWEN2_VL.headDim}, ${theta.split(' as ')[0]}`, true),
    ],
    takeaway: `Both score a pair of patches by their offset alone; to M-RoPE a whole row of patches looks almost alike (its width band turns slowest).`,
    caption:
      `The ${label} of patch (${row}, ${col}) (red) with every patch of a ${height} × ${width} grid. ${sides ? 'Left' : '2-D sin-cos'}: MAE's 2-D sin-cos table, ` +
      `half of its ${dModel} channels encode the column and half the row. ${sides ? 'Right' : 'M-RoPE'}: the score of (1, …, 1) rotated by M-RoPE at each patch's ` +
      `ids from mropePositions (Qwen2-VL-7B's head: ${QWEN2_VL.headDim} channels, sections [${QWEN2_VL.mropeSection.join(', ')}], ${theta}). ` +
      `An image has one temporal id, so the ${QWEN2_VL.mropeSection[0]} temporal frequencies, the fastest, never turn, and the height and width ` +
      `bands get the slower ones, width the slowest: across the grid the M-RoPE score changes far less than the sin-cos one, and least along a row. ` +
      `Both scores depend only on the offset between patches: pick another patch and the pattern moves with it. ` +
      `Neighbour ${where(right)} in the same row: ${f(sincos[right])} (sin-cos), ${f(mrope[right])} (M-RoPE); ` +
      `${where(below)} in the same column: ${f(sincos[below])} (sin-cos), ${f(mrope[below])} (M-RoPE); ` +
      `least similar: ${where(ls)} at ${f(sincos[ls])} (sin-cos), ${where(lm)} at ${f(mrope[lm])} (M-RoPE).`,
    alt:
      `Two ${height} by ${width} similarity maps around patch (${row}, ${col}); its neighbour ${where(right)} scores ${f(sincos[right])} ` +
      `under 2-D sin-cos and ${f(mrope[right])} under M-RoPE, its neighbour ${where(below)} ${f(sincos[below])} and ${f(mrope[below])}.`,
    csv: Array.from(sincos, (v, i) => ({ row: Math.floor(i / width), column: i % width, sincos: v, mrope: mrope[i] })),
  };
}

// ---- (b) M-RoPE's id streams and channel bands ----------------------------------------------------

// The segments of a text + image (or video, t > 1) + text sequence.
export function mropeSegments({ textBefore = 3, grid = [1, 4, 6], textAfter = 2 } = {}) {
  return [{ text: textBefore }, { [grid[0] > 1 ? 'video' : 'image']: grid }, { text: textAfter }];
}

// The channels (of headDim) that move when only stream s moves: (1, …, 1) rotated by pe.rope at ids
// with that one stream at 1000, the others at 0, compared with itself unrotated.
export function drivenChannels(pe, { headDim, mropeSection, base } = QWEN2_VL) {
  param('drivenChannels', 'headDim', headDim, { min: 2, max: 4096 });
  return STREAMS.map((_, s) => {
    const positions = [0, 1, 2].map((k) => [k === s ? 1000 : 0]);
    const y = pe.rope(ones(1, headDim), { positions, mropeSection, base }).data;
    return [...y.keys()].filter((j) => Math.abs(y[j] - 1) > 1e-6);
  });
}

// [0, 1, 2, 5, 6] -> "0–2, 5–6"
export const ranges = (list) =>
  list
    .reduce((acc, v) => {
      const last = acc.at(-1);
      if (last && v === last[1] + 1) last[1] = v;
      else acc.push([v, v]);
      return acc;
    }, [])
    .map(([a, b]) => (a === b ? `${a}` : `${a}–${b}`))
    .join(', ');

export function mropeStreams(pe, { textBefore = 3, grid = [1, 4, 6], textAfter = 2 } = {}) {
  const { headDim, mropeSection, base } = QWEN2_VL;
  const segments = mropeSegments({ textBefore, grid, textAfter });
  const ids = pe.mropePositions(segments);
  const seq = ids.shape[1];
  const vision = textBefore + grid[0] * grid[1] * grid[2];
  const kind = grid[0] > 1 ? 'video' : 'image';
  const segmentOf = (i) => (i < textBefore ? 'text' : i < vision ? kind : 'text');
  const tokens = Array.from({ length: seq }, (_, i) => ({
    i,
    segment: segmentOf(i),
    t: ids.data[i],
    h: ids.data[seq + i],
    w: ids.data[2 * seq + i],
  }));
  const start = ids.data[textBefore]; // the vision segment's first id
  const labels = tokens.map((d) => (d.segment === 'text' ? `${d.i} text` : `${d.i} ${kind} (${d.t - start}, ${d.h - start}, ${d.w - start})`));
  const points = tokens.flatMap((d) => STREAMS.map((s) => ({ token: d.i, id: d[s], stream: s })));
  const spans = [
    { segment: 'text', from: 0, to: textBefore },
    { segment: kind, from: textBefore, to: vision },
    { segment: 'text', from: vision, to: seq },
  ].filter((d) => d.to > d.from);
  // Which id each channel turns by: the stream pe.rope was measured to follow there (drivenChannels).
  const driven = drivenChannels(pe);
  const streamOf = new Int8Array(headDim).fill(-1);
  driven.forEach((channels, k) => channels.forEach((j) => (streamOf[j] = k)));
  const used = Float32Array.from({ length: seq * headDim }, (_, n) => ids.data[streamOf[n % headDim] * seq + Math.floor(n / headDim)]);
  // ... and the rotation itself against cos/sin of that id: (1, 1) in pair (j, j + 64) turned by a = id·θ_j
  // is (cos a − sin a, cos a + sin a).
  const { invFreq } = pe.ropeFrequencies({ dim: headDim, base });
  const rotated = pe.rope(ones(seq, headDim), { positions: ids, mropeSection, base }).data;
  const half = headDim / 2;
  let residual = 0;
  for (let i = 0; i < seq; i++)
    for (let j = 0; j < half; j++) {
      const a = used[i * headDim + j] * invFreq[j];
      residual = Math.max(
        residual,
        Math.abs(rotated[i * headDim + j] - (Math.cos(a) - Math.sin(a))),
        Math.abs(rotated[i * headDim + j + half] - (Math.cos(a) + Math.sin(a))),
      );
    }
  const edges = mropeSection.reduce((acc, s) => [...acc, acc.at(-1) + s], [0]); // 0, 16, 40, 64
  const bands = [0, half].flatMap((o) => STREAMS.map((s, k) => ({ stream: s, from: o + edges[k], to: o + edges[k + 1] })));
  const map = heatmap(used, seq, headDim, {
    xLabel: 'channel →',
    yLabels: labels,
    title: 'the id each channel’s rotation follows (channel j turns by id · θⱼ)',
    width: 900,
    raster: true,
    color: { type: 'linear', scheme: 'viridis', label: 'id', legend: true, domain: [0, Math.max(1, ...ids.data)] },
  });
  map.options.y.label = null;
  map.aspect = Math.min(0.5, Math.max(0.25, seq / headDim));
  Object.assign(map.options, { marginTop: 26, marginLeft: 120 });
  map.options.marks.push(
    Plot.ruleX(
      bands.filter((b) => b.from > 0),
      { x: 'from', stroke: 'white', strokeWidth: 2 },
    ),
    Plot.text(bands, {
      x: (b) => (b.from + b.to) / 2,
      y: 0,
      dy: -9,
      text: (b) => b.stream,
      fill: (b) => STREAM_COLOURS[b.stream],
      fontWeight: 'bold',
      fontSize: 12,
    }),
  );
  const resume = textAfter > 0 ? tokens[vision].t : null;
  // The text after resumes at the largest id + 1; that is its token index too when the grid is one line
  // of patches (at most one of t, h, w above 1), where the ids grow by one per token.
  const resumeText =
    resume === null
      ? 'no text follows'
      : resume === vision
        ? `text resumes at ${resume}, the ${kind}'s largest id + 1 (here also its token index: along a single line of patches or frames the ids grow by one per token)`
        : `text resumes at ${resume}, the ${kind}'s largest id + 1, not at its token index ${vision}`;
  const hasText = textBefore + textAfter > 0;
  const over = `over ${grid[0] > 1 ? 'time, ' : ''}height and width`;
  const last = tokens.at(-1);
  const streamsText = STREAMS.map((s, k) => `${STREAM_NAMES[s]} ${ranges(driven[k])} (${driven[k].length} channels)`).join('; ');
  return {
    numbers: { seq, resume, last: last.t, driven: driven.map((d) => d.length), residual },
    panels: [
      {
        title: 'position ids of each token, one row per stream',
        width: 900,
        height: 330,
        options: {
          marginLeft: 40,
          marginRight: 80,
          x: { label: 'token →', domain: [-0.5, seq - 0.5] },
          y: { label: '↑ id', grid: true, ticks: 3 },
          fy: { domain: STREAMS, label: null, padding: 0.18, tickFormat: (s) => `${s}: ${STREAM_NAMES[s]}` },
          color: { domain: STREAMS, range: STREAMS.map((s) => STREAM_COLOURS[s]) },
          marks: [
            Plot.rectX(spans, { x1: (d) => d.from - 0.5, x2: (d) => d.to - 0.5, fill: (d) => (d.segment === 'text' ? '#f3f3f3' : '#e6eef7') }),
            Plot.line(points, { x: 'token', y: 'id', fy: 'stream', stroke: 'stream', z: 'stream' }),
            Plot.dot(points, { x: 'token', y: 'id', fy: 'stream', fill: 'stream', r: 2.5 }),
            Plot.text(spans, { x: (d) => (d.from + d.to - 1) / 2, frameAnchor: 'top', dy: 2, text: 'segment', fill: '#555' }),
          ],
        },
      },
      map,
    ],
    takeaway: hasText
      ? `Text counts up on all three id streams; the ${kind} starts at the next id and runs ${over}; each band of channels turns by its own stream.`
      : `The ${kind} alone: its ids start at 0 and run ${over}; each band of channels turns by its own stream.`,
    caption:
      `Qwen2-VL's position ids (pe.mropePositions) for ${plural(textBefore, 'text token')}, ${kind === 'video' ? `a ${grid.join(' × ')} video` : `a ${grid[1]} × ${grid[2]} image`} ` +
      `(after the 2 × 2 merge) and ${plural(textAfter, 'text token')}: ${plural(seq, 'token')}. ${hasText ? 'Text counts up on all three streams; the' : 'The'} ${kind} starts at ${textBefore > 0 ? 'the largest id so far + 1' : 'id 0'} ` +
      `and runs row-major over t, h, w; ${resumeText}. ` +
      `Below, the channels of Qwen2-VL-7B's head (128, sections [${mropeSection.join(', ')}], θ = 10⁶): each band turns by its own stream's id, and the second half ` +
      `mirrors the first (rotate_half). Channels each stream moves, measured with pe.rope: ${streamsText}; pe.rope's rotation of (1, …, 1) ` +
      `matches cos/sin of these ids within ${residual.toExponential(1)}.`,
    alt: `Three id streams for ${plural(seq, 'token')}; the last token has id ${last.t} on every stream; the temporal stream drives ${driven[0].length} of ${headDim} channels, height ${driven[1].length}, width ${driven[2].length}.`,
    csv: tokens.map((d, k) => ({ token: d.i, segment: d.segment, label: labels[k], t: d.t, h: d.h, w: d.w })),
  };
}

// ---- (c) xPos: q·k decays with distance -----------------------------------------------------------

export { xposScores } from './xpos.js';

// Powers of ten within the range of some positive values, at most `most` of them (every k-th decade
// down from the highest; Plot's own ticks when fewer than two).
const decades = (values, most = 8) => {
  const positive = values.filter((v) => v > 0);
  if (!positive.length) return undefined;
  const [lo, hi] = [Math.ceil(Math.log10(Math.min(...positive))), Math.floor(Math.log10(Math.max(...positive)))];
  const step = Math.max(1, Math.ceil((hi - lo + 1) / most));
  return hi > lo ? Array.from({ length: Math.floor((hi - lo) / step) + 1 }, (_, k) => 10 ** (hi - k * step)).reverse() : undefined;
};

// The scale panel's ticks over [lowest, 1]: powers of ten when the range spans two or more, else a few
// ticks with as many decimals as tell them apart (a large scale base keeps every pair near 1: 0.990 to 1
// would read "1e+0" at every tick).
const logTicks = (lowest) => {
  const ticks = decades([lowest, 1]);
  if (ticks) return { ticks, tickFormat: '.0e' };
  const digits = Math.min(12, Math.max(1, Math.ceil(-Math.log10(1 - Math.min(lowest, 1 - 1e-12))) + 1));
  return { ticks: 4, tickFormat: (v) => v.toFixed(digits) };
};

export const XPOS_COLOURS = Object.freeze({ RoPE: '#888888', xPos: '#e15759' });

// Every k-th point of a curve, keeping the lowest and the highest of each run of k (in their order):
// the same picture at a width of about points / 2 pixels, with a fraction of the points.
function thin(points, most, key = 'score') {
  const k = Math.ceil(points.length / Math.max(2, most / 2));
  if (k <= 1) return points;
  const out = [];
  for (let i = 0; i < points.length; i += k) {
    const run = points.slice(i, i + k);
    const [lo, hi] = run.reduce(([a, b], p) => [p[key] < a[key] ? p : a, p[key] > b[key] ? p : b], [run[0], run[0]]);
    out.push(...(lo === hi ? [lo] : lo.distance < hi.distance ? [lo, hi] : [hi, lo]));
  }
  return out;
}

// sides: as patchGrid's. maxPoints: the most points each curve is drawn with (the page draws them at
// most 620 px wide; thin() keeps each run's extremes).
// `scores`, when given, is xposScores' result for the same options, computed beforehand (the page
// computes it in a Worker).
export function xposDecay(pe, { headDim = 64, scaleBase = 512, maxDistance = 4096, window = 64, sides = true, maxPoints = Infinity, scores } = {}) {
  param('xposDecay', 'maxDistance', maxDistance, { min: 1, max: 1e5 });
  const r = scores ?? xposScores(pe, { headDim, scaleBase, maxDistance, window });
  const rows = [];
  const curves = [];
  for (let d = 0; d <= maxDistance; d++) {
    rows.push({ distance: d, rope: r.rope[d], xpos: r.xpos[d], ropeEnvelope: r.ropeEnvelope[d], xposEnvelope: r.xposEnvelope[d] });
    curves.push({ distance: d, score: r.rope[d], kind: 'RoPE' }, { distance: d, score: r.xpos[d], kind: 'xPos' });
  }
  const env = rows.flatMap((d) => [
    { distance: d.distance, score: d.ropeEnvelope, kind: 'RoPE' },
    { distance: d.distance, score: d.xposEnvelope, kind: 'xPos' },
  ]);
  // The scale of each pair at the largest distance, measured on pe.rope's output. float32 holds nothing
  // below about 1e-38: when a fast pair's scale falls below that (a small scale base, a long distance),
  // the panel draws every pair's ζᵢ^(Δ/scaleBase) computed in double instead.
  const measured = Array.from(r.pairScale(maxDistance), (s, i) => ({ i, scale: s }));
  const zeta = (i) => (2 * i + 0.4 * headDim) / (1.4 * headDim);
  const underflow = measured.filter((d) => !(d.scale >= 1e-37)).length;
  const scales = underflow ? measured.map(({ i }) => ({ i, scale: Math.exp((maxDistance / scaleBase) * Math.log(zeta(i))) })) : measured;
  const lowest = Math.min(...scales.map((d) => d.scale).filter((v) => v > 0));
  const [xe, re] = [r.xposEnvelope[maxDistance], r.ropeEnvelope[maxDistance]];
  const drawn = (list) =>
    Number.isFinite(maxPoints)
      ? Object.keys(XPOS_COLOURS).flatMap((k) =>
          thin(
            list.filter((p) => p.kind === k),
            maxPoints,
          ),
        )
      : list;
  const kinds = Object.keys(XPOS_COLOURS);
  const color = { legend: true, domain: kinds, range: kinds.map((k) => XPOS_COLOURS[k]) };
  return {
    numbers: { xposEnvelope: xe, ropeEnvelope: re, fastest: scales[0].scale, slowest: scales.at(-1).scale },
    panels: [
      {
        title: 'q·k / d for q = k = (1, …, 1) against distance (thin), and its envelope (bold)',
        width: 620,
        height: 330,
        options: {
          marginRight: 20,
          x: { label: 'distance m − n (query after key) →' },
          y: { label: '↑ q·k / d', grid: true },
          color,
          marks: [
            Plot.ruleY([0], { stroke: '#bbb' }),
            Plot.line(drawn(curves), { x: 'distance', y: 'score', stroke: 'kind', strokeWidth: 0.7, strokeOpacity: 0.45 }),
            Plot.line(drawn(env), { x: 'distance', y: 'score', stroke: 'kind', strokeWidth: 2.5 }),
          ],
        },
      },
      {
        title: `xPos scale per pair at ${maxDistance}`,
        width: 260,
        height: 330,
        options: {
          marginLeft: 48,
          x: { label: 'pair i →' },
          // up to 1, the scale's ceiling (every ζᵢ < 1), which the last pairs approach
          y: { type: 'log', label: '↑ ζᵢ^(Δ/scaleBase)', grid: true, domain: [lowest, 1], ...logTicks(lowest) },
          marks: [
            Plot.line(scales, { x: 'i', y: 'scale', stroke: XPOS_COLOURS.xPos }),
            Plot.dot(scales, { x: 'i', y: 'scale', fill: XPOS_COLOURS.xPos, r: 2 }),
          ],
        },
      },
    ],
    takeaway: `xPos makes RoPE's scores fade with distance: at ${maxDistance} its envelope is ${readable(xe)}, RoPE's still ${readable(re)}.`,
    caption:
      `The score of a query and a key that are both (1, …, 1), ${headDim} channels, base 10000, torchscale's interleaved layout, as the query moves away from the key ` +
      `(normalised: 1 at distance 0). RoPE's score oscillates and its envelope (the largest |score| over the next ${window} distances) decays slowly and unevenly; ` +
      `xPos (scale base ${scaleBase}) also scales pair i by ζᵢ^(Δ/${scaleBase}), ζᵢ = (2i + 0.4d)/(1.4d): the fast pairs fade first ` +
      `(${sides ? 'right' : 'scale per pair'}: ${fmt(scales[0].scale)} for pair 0, ${fmt(scales.at(-1).scale)} for the slowest at distance ${maxDistance}). ` +
      (underflow ? `pe.rope's float32 output rounds ${underflow} of these scales to 0, so they are drawn as computed in double. ` : '') +
      `At distance ${maxDistance} the envelope is ${fmt(xe)} with xPos and ${fmt(re)} with RoPE.`,
    alt: `q·k against distance for RoPE and xPos; at distance ${maxDistance} the xPos envelope is ${fmt(xe)} and RoPE's ${fmt(re)}, of 1 at distance 0.`,
    csv: rows,
  };
}
