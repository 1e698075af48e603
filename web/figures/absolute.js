// Figures of the absolute encodings: the sinusoidal table, its first dimensions,
// each position as a sinusoid, the wavelengths, the "I am a robot" table, and learned tables against
// the sinusoid past their length.
import * as Plot from '@observablehq/plot';
import { maxAbsDiff, median, param, values } from './numeric.js';
import { diverging, fixed, fmt, heatmap, matrixRows, plural, shrinkRows } from './spec.js';

// `table` and `stats`, when given, are that same encoding and its pe.stats computed beforehand (the page
// computes them in slices, a task each).
export function sinusoidalHeatmap(pe, { length = 500, dModel = 64, base = 10000, layout = 'interleaved', highlight, table, stats } = {}) {
  const t = table ?? pe.sinusoidal({ length, dModel, base, layout });
  const s = stats ?? pe.stats(t);
  const panel = heatmap(t.data, length, dModel, { xLabel: 'dimension →', yLabel: '↓ position', color: diverging(1), width: 900 });
  panel.aspect = undefined;
  panel.height = 420;
  if (highlight !== undefined && highlight < length) {
    const y = panel.raster ? highlight + 0.5 : highlight;
    panel.options.marks.push(Plot.ruleY([y], { stroke: '#d7191c', strokeWidth: 2 }));
  }
  // The slowest column turns by (length − 1)·2π/λ over the table: under a radian it hardly changes (base
  // 10000, d = 64, 500 rows: 0.07 rad); a small base or d_model makes every column turn.
  const slowest = Math.max(...pe.wavelengths({ dModel, base }));
  const still = (length - 1) / slowest < 1 / (2 * Math.PI);
  const slowText = still
    ? 'rightmost columns hardly change'
    : `even the slowest column turns ${((length - 1) / slowest).toFixed(1)} times over these rows (its wavelength at base ${base} and d = ${dModel} is ${slowest.toFixed(1)} positions)`;
  return {
    panels: [panel],
    takeaway: `Every row is one position’s code: the left columns swing fast from row to row, the right ones ${still ? 'barely move' : dModel > 2 ? 'more slowly' : 'at the same pace (d = 2 is one pair)'}.`,
    caption: `Heatmap of the ${layout} sinusoidal encoding: ${plural(length, 'position')} (rows) by ${plural(dModel, 'dimension')} (columns), base ${base}. Values span [${fixed(s.min, 4)}, ${fixed(s.max, 4)}], mean ${fixed(s.mean, 4)}. Leftmost columns oscillate quickly down the rows; ${slowText}.`,
    alt: `Sinusoidal encoding heatmap, ${length} by ${dModel}, values from ${fixed(s.min, 2)} to ${fixed(s.max, 2)}, mean ${fixed(s.mean, 3)}.`,
    csv: length * dModel <= 200000 ? matrixRows(t, 'position', 'dimension') : undefined,
  };
}

// The first 8 columns over the first 100 positions, sines solid and cosines dashed.
// rowPadding: the gap between the rows of pairs, as a fraction of a row (the page leaves room between
// one row's −1 and the next row's 1).
export function dimensionCurves(pe, { length = 500, dModel = 64, base = 10000, layout = 'interleaved', highlight, rowPadding } = {}) {
  param('dimensionCurves', 'length', length, { min: 1, max: 1e6 });
  param('dimensionCurves', 'dModel', dModel, { min: 1, max: 1e5 });
  const shown = Math.min(length, 100);
  // Four (sin, cos) pairs: columns 0–7 interleaved; in the split layout pair i is columns i and i + d/2.
  const half = dModel >> 1;
  const split = layout === 'split' && half > 0;
  const dims = split ? [...Array(Math.min(4, half)).keys()].flatMap((i) => [i, i + half]) : [...Array(Math.min(8, dModel)).keys()];
  const n = dims.length;
  const span = (a, b) => (a === b ? `${a}` : `${a}–${b}`);
  // Sampled every quarter position, so that the fast dimensions (a turn every 2π positions) read as
  // curves, each (sin, cos) pair in its own row: overlaid on one axis, 8 curves at integer positions
  // were a tangle of zigzags.
  const step = 0.25;
  const positions = Array.from({ length: (shown - 1) / step + 1 }, (_, i) => i * step);
  const t = pe.sinusoidal({ dModel, base, layout, positions });
  const pairOf = (j) => (split ? j % half : j >> 1);
  const curves = [];
  for (const j of dims) {
    const kind = (split ? j < half : j % 2 === 0) ? 'sin' : 'cos';
    const pair = `pair ${pairOf(j)}`;
    for (let r = 0; r < positions.length; r++)
      curves.push({ position: positions[r], value: t.data[r * dModel + j], dimension: `dim ${j} (${kind})`, kind, pair });
  }
  const line = (kind) =>
    Plot.line(
      curves.filter((c) => c.kind === kind),
      {
        x: 'position',
        y: 'value',
        fy: 'pair',
        stroke: 'dimension',
        strokeWidth: 1.6,
        strokeDasharray: kind === 'cos' ? '5,4' : undefined,
        className: `curve-${kind}`,
      },
    );
  const marks = [line('sin'), line('cos')];
  if (highlight !== undefined && highlight < shown) marks.push(Plot.ruleX([highlight], { stroke: '#d7191c' }));
  const pairs = [...new Set(curves.map((c) => c.pair))];
  return {
    panels: [
      {
        width: 900,
        height: 60 + 80 * pairs.length,
        options: {
          marginRight: 60,
          x: { label: 'position →' },
          y: { label: '↑ value', domain: [-1.05, 1.05], ticks: [-1, 0, 1], grid: true },
          fy: { label: null, domain: pairs, ...(rowPadding === undefined ? {} : { padding: rowPadding }) },
          color: { legend: true, scheme: 'tableau10', domain: [...new Set(curves.map((c) => c.dimension))] },
          marks,
        },
      },
    ],
    takeaway: 'Each pair of columns is the sine and cosine of one frequency; the lower the pair, the faster it turns.',
    caption: `${split ? `Dimensions ${span(0, n / 2 - 1)} and ${span(half, half + n / 2 - 1)} (the split layout puts pair i's sine in column i and its cosine in column i + ${half})` : `The first ${plural(n, 'dimension')}`} over ${shown === 1 ? 'position 0' : `positions 0 to ${shown - 1}`}, one row per frequency pair: sines solid, cosines dashed (a quarter turn apart). Lower pairs oscillate faster: pair 0 turns every ${(2 * Math.PI).toFixed(2)} positions.`,
    alt: `Line charts of ${n} encoding dimensions over ${plural(shown, 'position')}, one row per sin/cos pair; dimension 0 completes a turn every ${(2 * Math.PI).toFixed(2)} positions.`,
    csv: curves,
  };
}

// For a fixed position k, the encoding as a function of the pair index i (d = 512 by default):
// sin(k·w_i) with w_i = base^(−2i/d). The argument k·w_i falls geometrically along i, so each row is a
// chirp, fast at small i and ever slower, not a sinusoid of i.
export function positionSinusoids(pe, { positions = [0, 4, 8, 12], dModel = 512, base = 10000, shown = 100 } = {}) {
  values('positionSinusoids', 'positions', positions);
  param('positionSinusoids', 'shown', shown, { min: 2, max: dModel >> 1 });
  const t = pe.sinusoidal({ dModel, base, positions });
  const rows = [];
  for (const [r, k] of positions.entries()) for (let i = 0; i < shown; i++) rows.push({ position: k, i, value: t.data[r * dModel + 2 * i] });
  // how far the argument k·w_i moves from one i to the next, for the largest k, at both ends of the axis
  const k = Math.max(...positions);
  const step = (i) => k * (base ** (-(2 * i) / dModel) - base ** (-(2 * (i + 1)) / dModel));
  return {
    panels: [
      {
        width: 900,
        height: 220,
        options: {
          fx: { domain: positions, tickFormat: (k) => `k = ${k}`, label: null },
          x: { label: 'i →' },
          y: { label: `↑ sin(k / ${base}^(2i/${dModel}))`, domain: [-1.05, 1.05], grid: true },
          marks: [Plot.line(rows, { x: 'i', y: 'value', fx: 'position', stroke: '#5e3c99' }), Plot.frame({ stroke: '#ddd' })],
        },
      },
    ],
    takeaway: `Read across the dimensions (d = ${dModel}), a position's code swings fast at small i and ever slower: a chirp, not one sinusoid. Position 0 is flat.`,
    caption: `sin(k / ${base}^(2i/${dModel})) against the pair index i for positions k = ${positions.join(', ')} (d = ${dModel}): the argument k·w_i shrinks by the same factor at every step of i, so each curve is a chirp whose frequency falls along i: for k = ${k} the argument moves ${step(0).toFixed(3)} rad from i = 0 to 1 and ${step(shown - 2).toFixed(3)} rad from i = ${shown - 2} to ${shown - 1}. Position 0 is flat; a larger k swings faster over the low i.`,
    alt: `Four small line charts, positions ${positions.join(', ')}, of the sine columns (d = ${dModel}) against the pair index i from 0 to ${shown - 1}, each oscillating more slowly as i grows.`,
    csv: rows,
  };
}

export function wavelengths(pe, { dModel = 64, base = 10000 } = {}) {
  const w = pe.wavelengths({ dModel, base });
  const wl = Array.from(w, (value, i) => ({ i, wavelength: value }));
  return {
    panels: [
      {
        width: 900,
        height: 260,
        options: {
          x: { label: 'frequency index i →' },
          y: { type: 'log', label: '↑ wavelength (positions)', grid: true, tickFormat: '~s' },
          marks: [
            Plot.line(wl, { x: 'i', y: 'wavelength' }),
            Plot.dot(wl, { x: 'i', y: 'wavelength', r: 2 }),
            Plot.ruleY([2 * Math.PI, 2 * Math.PI * base], { stroke: '#999', strokeDasharray: '3,3' }),
          ],
        },
      },
    ],
    takeaway:
      w.length === 1
        ? `With d = ${dModel} there is a single column pair, of wavelength 2π ≈ ${w[0].toFixed(2)} positions.`
        : `From column pair to column pair the wavelength grows by the same factor, from 2π ≈ ${w[0].toFixed(1)} to ${w.at(-1).toFixed(0)} positions.`,
    caption:
      w.length === 1
        ? `d = ${dModel} has one frequency pair, i = 0, of wavelength 2π·base^0 = 2π (${w[0].toFixed(3)} positions); more dimensions add pairs whose wavelengths 2π·base^(2i/d) rise towards 2π·base (${(2 * Math.PI * base).toFixed(1)}).`
        : `Wavelengths 2π·base^(2i/d) form a geometric progression from 2π (${w[0].toFixed(3)}) towards 2π·base (${(2 * Math.PI * base).toFixed(1)}); the largest here is ${w.at(-1).toFixed(1)}. A straight line on this log scale.`,
    alt:
      w.length === 1
        ? `One wavelength, ${w[0].toFixed(2)} positions.`
        : `Wavelengths on a log scale rising in a straight line from ${w[0].toFixed(2)} to ${w.at(-1).toFixed(0)} positions.`,
    csv: wl,
  };
}

// The worked example of "A Gentle Introduction to Positional Encoding in Transformer Models": the positions of "I am a robot" with n = 100, d = 4.
export function robotTable(pe, { words = ['I', 'am', 'a', 'robot'], base = 100, dModel = 4 } = {}) {
  const t = pe.sinusoidal({ length: words.length, dModel, base });
  const csv = words.map((word, k) => ({
    word,
    position: k,
    ...Object.fromEntries([...t.data.subarray(k * dModel, (k + 1) * dModel)].map((v, j) => [`p${j}`, v])),
  }));
  return {
    table: {
      columns: ['word', 'position', ...[...Array(dModel).keys()].map((j) => `P(k,${j}) ${j % 2 ? 'cos' : 'sin'}`)],
      rows: csv.map((r) => [r.word, r.position, ...[...Array(dModel).keys()].map((j) => fixed(r[`p${j}`], 6))]),
    },
    takeaway: `Any ${words.length}-word sentence gets this same matrix: the encoding depends on the position, never on the word.`,
    caption: `Positional encoding of "${words.join(' ')}" with n = ${base} and d = ${dModel} (float32, shown to 6 decimals): column pairs share a frequency (1 and 1/${Math.sqrt(base)}). Any ${words.length}-word sentence gets the same matrix.`,
    csv,
  };
}

// A learned table (rows 0 .. maxLength-1, then nothing) next to the sinusoid, which continues.
export function extrapolation(pe, { maxLength = 512, position = 600, dModel = 16, seed = 0 } = {}) {
  const span = Math.max(position + 1, Math.ceil(maxLength * 1.25), 8);
  const learned = pe.learned({ maxLength, dModel, seed, std: 0.5 });
  let lookup;
  try {
    const row = learned.lookup([position]);
    lookup = [`Learned row ${position}:`, `[${Array.from(row.data.subarray(0, 4), (v) => fixed(v, 4)).join(', ')}, …] — inside the table.`, 'ok'];
  } catch (e) {
    lookup = ['Learned table:', `${e.constructor.name}: ${e.message}`, 'error'];
  }
  const table = learned.table;
  learned.dispose();
  // Both panels share the position axis 0 .. span. Past `sampled` positions only `sampled` evenly spaced
  // rows are computed (no screen shows more): the raster covers the same frame either way.
  const rows = span > SAMPLED ? SAMPLED : span;
  const at = Array.from({ length: rows }, (_, r) => (rows === span ? r : Math.floor(((r + 0.5) * span) / rows)));
  const sin = rows === span ? pe.sinusoidal({ length: span, dModel }) : pe.sinusoidal({ dModel, positions: at });
  const padded = new Float32Array(rows * dModel).fill(NaN);
  for (let r = 0; r < rows && at[r] < maxLength; r++) padded.set(table.data.subarray(at[r] * dModel, (at[r] + 1) * dModel), r * dModel);
  const row0 = pe.sinusoidal({ dModel, positions: [position] }).data;
  const band = (title, data) => {
    const p = heatmap(data, rows, dModel, {
      xLabel: 'dimension →',
      yLabel: '↓ position',
      title,
      width: 300,
      color: diverging(1),
      legend: title.startsWith('learned'),
    });
    p.aspect = undefined;
    p.height = 360;
    p.raster = shrinkRows(data, rows, dModel); // always a raster: the band past L_max is empty
    p.options.x = { label: 'dimension →', domain: [0, dModel], ticks: [] };
    p.options.y = { label: '↓ position', domain: [span, 0], ticks: [0, maxLength, span].filter((v, i, a) => a.indexOf(v) === i) };
    p.options.marks = [
      Plot.frame({ stroke: '#ccc' }),
      Plot.ruleY([maxLength], { stroke: '#222', strokeDasharray: '4,3' }),
      Plot.ruleY([position + 0.5], { stroke: '#d7191c', strokeWidth: 2 }),
    ];
    if (title.startsWith('learned') && maxLength < span)
      p.options.marks.push(
        Plot.rect([{ y1: maxLength, y2: span }], { x1: 0, x2: dModel, y1: 'y1', y2: 'y2', fill: '#a4161a', fillOpacity: 0.08, stroke: '#a4161a' }),
        Plot.text([{ y: (maxLength + span) / 2 }], {
          x: dModel / 2,
          y: 'y',
          text: () => `no rows past L_max = ${maxLength}`,
          fill: '#a4161a',
          fontWeight: 600,
        }),
      );
    return p;
  };
  return {
    lines: [
      lookup,
      [`Sinusoidal row ${position}:`, `[${Array.from(row0.subarray(0, 4), (v) => fixed(v, 4)).join(', ')}, …] — defined for every position.`],
    ],
    panels: [band(`learned table, L_max = ${maxLength}`, padded), band('sinusoidal, any length', sin.data)],
    takeaway: `Past row ${maxLength - 1} a learned table has nothing to return; the sinusoid goes on at any position.`,
    caption: `A learned table of ${plural(maxLength, 'row')} asked for position ${position} (red line), next to the sinusoidal encoding of the same positions. Past L_max (dashed) the learned table has nothing to return; the sinusoid simply continues.`,
    alt: `Two heatmaps over positions 0 to ${span - 1}: the learned table ends at row ${maxLength - 1}, the sinusoid continues; position ${position} is marked.`,
  };
}

// The most rows the extrapolation figure computes (and draws): a longer span is sampled evenly.
const SAMPLED = 4096;

// How close the two closest positions of a table get: one (encoding, d, L) point. The page calls it
// point by point between frames; distinguishability() turns the points into the figure.
export function closestPair(pe, { encoding, dModel, length }) {
  let t;
  if (encoding === 'sinusoidal') t = pe.sinusoidal({ length, dModel });
  else {
    const emb = pe.learned({ maxLength: length, dModel, std: Math.SQRT1_2, seed: 1 });
    t = emb.table;
    emb.dispose();
  }
  const near = pe.nearestDistances(t);
  let i = 0;
  for (let r = 1; r < length; r++) if (near[r] < near[i]) i = r;
  const row = (r) => t.data.subarray(r * dModel, (r + 1) * dModel);
  let j = -1;
  for (let r = 0; r < length; r++)
    if (r !== i && Math.abs(dist(row(i), row(r)) - near[i]) < 1e-5 && (j < 0 || Math.abs(r - i) < Math.abs(j - i))) j = r;
  return {
    encoding: `${encoding} d=${dModel}`,
    d: dModel,
    length,
    distance: near[i],
    from: Math.min(i, j),
    to: Math.max(i, j),
    neighbours: dist(row(0), row(1)),
  };
}
const dist = (a, b) => Math.sqrt(a.reduce((s, v, c) => s + (v - b[c]) ** 2, 0));

export const DISTINGUISHABILITY = { lengths: [32, 64, 128, 256, 512, 1024, 2048], dims: [8, 16, 64] };

export function distinguishability(points) {
  const { lengths } = DISTINGUISHABILITY;
  const sin = points.filter((p) => p.encoding.startsWith('sinusoidal'));
  const claims = DISTINGUISHABILITY.dims.map((d) => {
    const last = sin.filter((p) => p.d === d).at(-1);
    if (!last) return '';
    const gap = last.to - last.from;
    return gap === 1
      ? `at d = ${d} the closest pair is two neighbours (distance ${last.distance.toFixed(3)})`
      : `at d = ${d} the closest pair is positions ${last.from} and ${last.to}, ${gap} apart (distance ${last.distance.toFixed(3)}, against ${last.neighbours.toFixed(3)} for neighbours)`;
  });
  const longest = Math.max(...points.map((p) => p.length));
  // The legend in order of d (as numbers), sinusoidal then learned; both tables of one d in one hue,
  // full and solid for the sinusoid, paler and dashed for the learned table.
  const dims = [...new Set(points.map((p) => p.d))].sort((a, b) => a - b);
  const domain = dims.flatMap((d) => [`sinusoidal d=${d}`, `learned d=${d}`]);
  const range = dims.flatMap((_, j) => [HUES[j % HUES.length], lighter(HUES[j % HUES.length])]);
  // at the longest length measured, the d where the learned table's closest pair is closer than the sinusoid's
  const at = (kind, d) => points.find((p) => p.d === d && p.length === longest && p.encoding.startsWith(kind));
  const closer = dims.filter((d) => at('learned', d) && at('sinusoidal', d) && at('learned', d).distance < at('sinusoidal', d).distance);
  const learnedClaim =
    closer.length === dims.length
      ? `at ${longest} positions the random learned tables (dashed) come closer still`
      : closer.length
        ? `at ${longest} positions the random learned tables (dashed) come closer at d = ${closer.join(', ')}`
        : `at ${longest} positions the random learned tables (dashed) stay further apart`;
  const line = (kind, dash) =>
    Plot.line(
      points.filter((p) => p.encoding.startsWith(kind)),
      { x: 'length', y: 'distance', stroke: 'encoding', marker: 'circle', strokeDasharray: dash },
    );
  return {
    panels: [
      {
        width: 900,
        height: 320,
        options: {
          marginRight: 20,
          x: { type: 'log', base: 2, label: 'sequence length →', ticks: lengths, tickFormat: (v) => String(v) },
          y: { type: 'log', base: 2, label: '↑ smallest distance between two positions', grid: true, tickFormat: (v) => String(+v.toPrecision(2)) },
          color: { legend: true, domain, range },
          marks: [line('sinusoidal'), line('learned', '5,3')],
        },
      },
    ],
    takeaway: `No two positions share a sinusoidal code (solid), but with few dimensions far-apart positions come close; ${learnedClaim}.`,
    caption: `The smallest Euclidean distance between the encodings of any two distinct positions, as the sequence grows to ${longest} (measured here). For sinusoidal tables it levels off: ${claims.filter(Boolean).join('; ')}. Few dimensions make far-apart positions nearly repeat, because the fastest frequencies come back close to where they started. Random learned tables (std √½) crowd as they grow, most at small d; more dimensions keep positions further apart.`,
    alt: `Log-log chart of the smallest distance between two positions for sinusoidal and learned tables at d = 8, 16 and 64; ${claims[0]}.`,
    csv: points,
  };
}

// One hue per d (Tableau's blue, orange, green, red, purple), and the same hue halfway to white.
const HUES = ['#4e79a7', '#f28e2c', '#59a14f', '#e15759', '#af7aa1'];
const lighter = (hex) =>
  '#' +
  [1, 3, 5]
    .map((i) =>
      Math.round((parseInt(hex.slice(i, i + 2), 16) + 255) / 2)
        .toString(16)
        .padStart(2, '0'),
    )
    .join('');

// A learned table (maxLength rows, N(0, std²)) grown to longer lengths by tiling it (row j copies row
// j mod maxLength, as Longformer started from RoBERTa's table) and by interpolating it (resampled rows,
// as for ViT), against the sinusoidal table of each length: the distance from each row to its
// nearest other row. 0 means two positions share one encoding.
export function grownTables(pe, { maxLength = 512, dModel = 64, lengths = [512, 1024, 2048, 4096], std = 0.02, seed = 0 } = {}) {
  values('grownTables', 'lengths', lengths);
  const learned = pe.learned({ maxLength, dModel, std, seed });
  const rows = [];
  for (const L of lengths) {
    const grown = [['sinusoidal', pe.sinusoidal({ length: L, dModel })]];
    for (const [name, method] of [
      ['learned, tiled', 'tile'],
      ['learned, interpolated', 'interpolate'],
    ]) {
      const e = L === maxLength ? learned : learned.resize(L, method);
      grown.push([name, e.table]);
      if (e !== learned) e.dispose();
    }
    for (const [table, t] of grown) {
      const nd = pe.nearestDistances(t);
      rows.push({ length: L, table, min: Math.min(...nd), median: median(nd), duplicated: nd.filter((x) => x === 0).length / L });
    }
  }
  learned.dispose();
  const at = (L, table) => rows.find((r) => r.length === L && r.table === table);
  const [first, last] = [lengths[0], lengths.at(-1)];
  return {
    table: {
      columns: ['length', 'table', 'min', 'median', 'rows with a twin'],
      rows: rows.map((r) => [String(r.length), r.table, r.min.toFixed(4), r.median.toFixed(4), `${(100 * r.duplicated).toFixed(1)} %`]),
    },
    panels: [
      {
        width: 760,
        height: 280,
        options: {
          x: { type: 'log', base: 2, label: 'table length (positions) →', ticks: lengths, tickFormat: ',' },
          y: { label: '↑ median distance to the nearest other row', grid: true },
          color: { legend: true },
          marks: [Plot.ruleY([0]), Plot.line(rows, { x: 'length', y: 'median', stroke: 'table', marker: 'circle' })],
        },
      },
    ],
    caption: `Median distance from each row to its nearest other row as the tables grow from ${first} to ${last} positions (d = ${dModel}; learned table: ${maxLength} rows, N(0, ${std}²)): constant for the sinusoids (${at(last, 'sinusoidal').median.toFixed(4)}), 0 for a tiled table (${(100 * at(last, 'learned, tiled').duplicated).toFixed(0)} % of its rows have a twin), shrinking for an interpolated one (${at(first, 'learned, interpolated').median.toFixed(4)} → ${at(last, 'learned, interpolated').median.toFixed(4)}).`,
    alt: `Median nearest-row distance against table length: flat for sinusoidal, zero for tiled, falling for interpolated.`,
    csv: rows,
  };
}

// PE(pos, 2i) = sin(pos / n^(2i/d)), PE(pos, 2i+1) = cos(pos / n^(2i/d)) in float64 (JavaScript's
// Math.sin/cos reduce large angles exactly): the reference float32 results are measured against.
export function exactRow(pos, d, n = 10000) {
  const row = new Float64Array(d);
  for (let j = 0; j < d; j++) {
    const angle = pos / n ** ((2 * Math.floor(j / 2)) / d);
    row[j] = j % 2 ? Math.cos(angle) : Math.sin(angle);
  }
  return row;
}

// The tutorials' PyTorch recipe, every step rounded to float32 as torch does on float32 tensors:
//   div_term = exp(arange(0, d, 2).float() * (-log(n) / d))
//   pe[:, 0::2] = sin(position * div_term); pe[:, 1::2] = cos(position * div_term)
// Math.fround rounds each intermediate to float32; sin/cos of the (already rounded) float32 angle
// are then rounded once more, as a correctly rounded float32 sin would be.
export function float32RecipeRow(pos, d, n = 10000) {
  const f = Math.fround;
  const scale = f(-Math.log(n) / d); // a Python float turned into a float32 scalar
  const row = new Float32Array(d);
  for (let j = 0; j < d; j++) {
    const divTerm = f(Math.exp(f(f(2 * Math.floor(j / 2)) * scale)));
    const angle = f(f(pos) * divTerm); // the float32 product: the whole problem at large positions
    row[j] = j % 2 ? Math.cos(angle) : Math.sin(angle);
  }
  return row;
}

const RECIPES = ['float32 angles (the usual PyTorch code)', 'posenc (float32 output)'];

// The largest error of one row against float64, for positions 10^(e/4), e = 4 … 36 (10 to 10^9):
// the usual float32 recipe (angles computed in float32, as common PyTorch code does), and posenc
// (angles reduced in double precision, float32 output).
export function float32Error(pe, { dModel = 512, base = 10000 } = {}) {
  param('float32Error', 'dModel', dModel, { min: 2, max: 8192 });
  const rows = [];
  for (let e = 4; e <= 36; e++) {
    const pos = Math.round(10 ** (e / 4));
    const exact = exactRow(pos, dModel, base);
    rows.push({ pos, recipe: RECIPES[0], error: maxAbsDiff(float32RecipeRow(pos, dModel, base), exact) });
    rows.push({ pos, recipe: RECIPES[1], error: maxAbsDiff(pe.sinusoidal({ dModel, base, positions: [pos] }).data, exact) });
  }
  const worst = (recipe) => Math.max(...rows.filter((r) => r.recipe === recipe).map((r) => r.error));
  const at = (pos, recipe) => rows.find((r) => r.pos === pos && r.recipe === recipe).error;
  return {
    panels: [
      {
        width: 760,
        height: 340,
        options: {
          x: { type: 'log', label: 'position →', tickFormat: '.0e' },
          y: { type: 'log', label: `↑ max |value − exact| over ${dModel} dimensions`, tickFormat: '.0e' },
          color: { legend: true, domain: RECIPES, range: ['#e15759', '#4e79a7'] },
          marks: [
            Plot.ruleY([1e-6], { stroke: '#999', strokeDasharray: '4,3' }),
            Plot.line(rows, { x: 'pos', y: 'error', stroke: 'recipe', marker: 'circle' }),
          ],
        },
      },
    ],
    caption: `Largest error of one row of a d = ${dModel} encoding against float64, for positions 10 to 1e9: the float32 recipe grows with the position (${fmt(at(1e6, RECIPES[0]))} at 1e6, ${fmt(at(1e9, RECIPES[0]))} at 1e9), posenc stays below ${worst(RECIPES[1]).toExponential(1)}.`,
    alt: `Log-log chart of the error of the float32 recipe and of posenc against position; posenc stays near 1e-7.`,
    csv: rows,
  };
}

export { fmt };

// Aliasing: one frequency ω sampled at the integer positions, as an encoding reads it. The samples
// sin(ω·p) come from posenc (the first pair of a 2-wide sinusoidal table, whose frequency is 1, at
// positions ω·p). When the wavelength 2π/ω is shorter than 2 positions, the samples are those of a
// slower wave, ω folded into [−π, π] (ω − 2π·round(ω/2π)): two frequencies, one set of samples.
export function aliasing(pe, { omega = 2 * Math.PI * 0.9, positions = 20, steps = 20 } = {}) {
  param('aliasing', 'omega', omega, { min: 1e-6, max: 1e6, integer: false });
  param('aliasing', 'positions', positions, { min: 1, max: 10000 });
  param('aliasing', 'steps', steps, { min: 1, max: 1000 });
  const alias = omega - 2 * Math.PI * Math.round(omega / (2 * Math.PI));
  const at = (w, xs) => {
    const t = pe.sinusoidal({ dModel: 2, positions: xs.map((x) => w * x) });
    return xs.map((x, i) => ({ x, y: t.data[2 * i] }));
  };
  const fine = Array.from({ length: positions * steps + 1 }, (_, i) => i / steps);
  const ints = Array.from({ length: positions + 1 }, (_, i) => i);
  const samples = at(omega, ints);
  const reread = at(alias, ints);
  const wavelength = (w) => (w === 0 ? Infinity : (2 * Math.PI) / Math.abs(w));
  const aliased = Math.abs(alias - omega) > 1e-12;
  return {
    panels: [
      {
        width: 820,
        height: 260,
        options: {
          x: { label: 'position →' },
          y: { label: '↑ sin(ω · position)', domain: [-1.1, 1.1] },
          color: {
            legend: true,
            domain: [
              `ω = ${omega.toFixed(3)} (wavelength ${wavelength(omega).toFixed(2)})`,
              `ω = ${alias.toFixed(3)} (wavelength ${wavelength(alias).toFixed(2)})`,
            ],
          },
          marks: [
            Plot.ruleY([0], { stroke: '#ccc' }),
            Plot.line(at(omega, fine), {
              x: 'x',
              y: 'y',
              stroke: () => `ω = ${omega.toFixed(3)} (wavelength ${wavelength(omega).toFixed(2)})`,
              strokeOpacity: 0.6,
            }),
            ...(aliased
              ? [
                  Plot.line(at(alias, fine), {
                    x: 'x',
                    y: 'y',
                    stroke: () => `ω = ${alias.toFixed(3)} (wavelength ${wavelength(alias).toFixed(2)})`,
                    strokeDasharray: '5,3',
                  }),
                ]
              : []),
            Plot.dot(samples, { x: 'x', y: 'y', fill: 'black', r: 3.5 }),
          ],
        },
      },
    ],
    takeaway: aliased
      ? 'Sampled at whole positions, a wave faster than half a cycle per position looks like a slower one.'
      : 'This wave is slow enough to be read from its samples.',
    caption: aliased
      ? `sin(ω·p) with ω = ${omega.toFixed(3)} (wavelength ${wavelength(omega).toFixed(2)} positions, under the 2 a whole-position sampling can resolve), read at the positions 0 … ${positions} (dots): the same dots as ω = ${alias.toFixed(3)} (wavelength ${wavelength(alias).toFixed(2)}, dashed). The sinusoidal encoding's fastest pair has wavelength 2π ≈ 6.28, so none of its pairs aliases at whole positions.`
      : `sin(ω·p) with ω = ${omega.toFixed(3)} (wavelength ${wavelength(omega).toFixed(2)} positions, at least 2): read at the positions 0 … ${positions} (dots), no slower wave gives the same samples.`,
    alt: `A sine of wavelength ${wavelength(omega).toFixed(2)} sampled at ${positions + 1} whole positions${aliased ? `; the samples lie on a sine of wavelength ${wavelength(alias).toFixed(2)}` : ''}.`,
    csv: samples.map((s, i) => ({ position: s.x, sample: s.y, alias: reread[i].y })),
    numbers: {
      omega,
      alias,
      maxSampleDifference: maxAbsDiff(
        samples.map((s) => s.y),
        reread.map((s) => s.y),
      ),
    },
  };
}
