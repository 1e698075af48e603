// What the figures say (web/figures/: takeaways, captions, alt text) holds at the settings the page's
// controls allow, not only at the defaults: each claim is checked against the formula computed here in
// float64, at the extremes where a sentence written for the defaults stopped being true.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { loadLab } from 'posenc/lab';
import { aliasing, dimensionCurves, float32Error, grownTables, positionSinusoids, sinusoidalHeatmap } from '../../web/figures/absolute.js';
import { mropeStreams, patchGrid } from '../../web/figures/beyond.js';
import { clockFaces, rowVector } from '../../web/figures/clock.js';
import { inspectConfig } from '../../web/figures/inspector.js';
import { alibiReversal, attentionWeights, labOutputs, labSummary, shuffleErrors } from '../../web/figures/lab.js';
import { longContext } from '../../web/figures/longcontext.js';
import { inputPipeline } from '../../web/figures/pipeline.js';
import { attentionRecap } from '../../web/figures/story.js';
import { trainingCurves } from '../../web/figures/toy.js';
import { xposScores } from '../../web/figures/xpos.js';
import { alibiBias, ropeDecay, ropePair, ropeRelative, ropeScaling, shiftMatrix, similarity } from '../../web/figures/relative.js';

const pe = await loadLab();
const TAU = 2 * Math.PI;
const wrap = (a) => ((((a + Math.PI) % TAU) + TAU) % TAU) - Math.PI;
const texts = (spec) => [spec.takeaway, spec.caption, spec.alt].join(' | ');

test('clock faces: the dashed hands are PE(p) turned by k·w_i for the base and d_model shown (odd d_model too)', () => {
  for (const [dModel, base, k] of [
    [64, 2, 3],
    [64, 100, 3],
    [17, 10000, 3],
    [33, 2, -5],
  ]) {
    const spec = clockFaces(pe, { dModel, base, position: 63, k });
    for (const h of spec.hands) {
      const w = base ** (-(2 * h.i) / dModel); // the frequency of pair i, in float64
      assert.ok(Math.abs(wrap(h.shifted - (63 + k) * w)) < 1e-5, `d ${dModel}, base ${base}, pair ${h.i}: ${h.shifted} vs ${wrap((63 + k) * w)}`);
    }
    const within = Number(/within ([\d.e+-]+) rad/.exec(spec.caption)[1]);
    assert.ok(within < 1e-6, `d ${dModel}, base ${base}: ${spec.caption}`);
    assert.doesNotMatch(texts(spec), /(?<!\de)-\d/); // a negative shift reads with a minus sign (1e-8 keeps its hyphen)
  }
  assert.match(clockFaces(pe, { dModel: 17, k: 3 }).caption, /posenc builds M_k for an even d_model/);
  assert.match(clockFaces(pe, { dModel: 2 }).alt, /^1 clock face for/);
  assert.throws(() => clockFaces(pe, { dModel: 1 }), /clockFaces: dModel must be at least 2 \(one sin\/cos pair, one clock\), got 1/);
});

test('shift matrix: a negative k reads PE(p − 5) = M_−5 · PE(p)', () => {
  const spec = shiftMatrix(pe, { k: -5 });
  assert.match(spec.takeaway, /Moving any position −5 steps is one fixed matrix: PE\(p − 5\) = M_−5 · PE\(p\)/);
  assert.match(shiftMatrix(pe, { k: 1 }).takeaway, /Moving any position 1 step is/);
});

test('the lab: an encoding blind to a shuffle (symmetric ALiBi, the reversal) is named, not called "no positions"', () => {
  const params = { sentence: 'The cat sat on the mat', encoding: 'alibi', permutation: [5, 4, 3, 2, 1, 0] };
  const r = pe.permutationLab(params);
  assert.ok(r.equivarianceError < 1e-5, 'symmetric ALiBi cannot see the reversal');
  for (const spec of [labSummary(r), attentionWeights(pe, params), labOutputs(pe, params)]) {
    assert.doesNotMatch(spec.takeaway + spec.caption, /Without positions|Without positional/);
    assert.match(spec.takeaway, /ALiBi \(symmetric\)/);
  }
  assert.match(attentionWeights(pe, { ...params, encoding: 'none' }).takeaway, /^Without positions/);
});

test('M-RoPE: "not at its token index" only where the ids and the token index differ', () => {
  // Qwen2-VL: text resumes at the vision segment's largest id + 1 = textBefore + max(t, h, w); its token
  // index is textBefore + t·h·w
  for (const [textBefore, grid, textAfter] of [
    [1, [1, 1, 6], 1],
    [2, [2, 1, 1], 2],
    [3, [1, 4, 6], 2],
    [0, [2, 2, 2], 1],
  ]) {
    const spec = mropeStreams(pe, { textBefore, grid, textAfter });
    const resume = textBefore + Math.max(...grid);
    const index = textBefore + grid[0] * grid[1] * grid[2];
    assert.equal(spec.numbers.resume, resume);
    if (resume === index)
      assert.match(spec.caption, new RegExp(`text resumes at ${resume}, the (image|video)'s largest id \\+ 1 \\(here also its token index`));
    else assert.match(spec.caption, new RegExp(`text resumes at ${resume}, the (image|video)'s largest id \\+ 1, not at its token index ${index}`));
  }
  const alone = mropeStreams(pe, { textBefore: 0, grid: [1, 1, 1], textAfter: 0 });
  assert.match(alone.takeaway, /^The image alone: its ids start at 0/);
  assert.doesNotMatch(texts(alone), /\b1 tokens|0 text tokens,.*Text counts up/);
  assert.match(mropeStreams(pe, { textBefore: 1, grid: [1, 2, 2], textAfter: 1 }).caption, /for 1 text token,/);
});

test('ALiBi: the alt text gives the slopes’ true range; a short length reads 1 position and no −0.00', () => {
  // the paper's slopes: 2^(−8i/n) for n a power of two; otherwise those of the power of two below, then
  // every other slope of the next power of two
  const slopes = (heads) => {
    const pow = (n) => Array.from({ length: n }, (_, i) => 2 ** ((-8 * (i + 1)) / n));
    const n = 2 ** Math.floor(Math.log2(heads));
    return [...pow(n), ...pow(2 * n).filter((_, i) => i % 2 === 0)].slice(0, heads);
  };
  for (const heads of [3, 5, 6, 8]) {
    const s = slopes(heads);
    const [lo, hi] = [Math.min(...s), Math.max(...s)];
    const alt = alibiBias(pe, { heads, length: 16, scale: 'shared' }).alt;
    assert.match(
      alt,
      new RegExp(`slopes from ${lo.toFixed(4)} \\(head ${s.indexOf(lo) + 1}\\) to ${hi.toFixed(4)} \\(head ${s.indexOf(hi) + 1}\\)`),
      alt,
    );
  }
  const short = alibiBias(pe, { heads: 1, length: 2, scale: 'shared' });
  assert.match(short.takeaway, /a key 1 position away gets −0\.0039/);
  assert.doesNotMatch(texts(short), /0\.00\b|-0|geometric/);
});

test('the sinusoidal table: "the rightmost columns hardly change" only while the slowest one turns under a radian', () => {
  const slowTurns = (length, dModel, base) => (length - 1) / (TAU * base ** ((dModel - 2) / dModel));
  assert.ok(slowTurns(500, 64, 10000) < 1 / TAU);
  assert.match(sinusoidalHeatmap(pe, {}).caption, /rightmost columns hardly change/);
  const fast = sinusoidalHeatmap(pe, { base: 2 });
  assert.match(fast.caption, new RegExp(`even the slowest column turns ${slowTurns(500, 64, 2).toFixed(1)} times over these rows`));
  assert.doesNotMatch(texts(fast), /hardly|barely/);
  // PE(63) at base 2: its last pair has turned 63 / (2π·2^(62/64)) times
  const row = rowVector(pe, { base: 2, position: 63 });
  assert.match(row.takeaway, new RegExp(`has turned ${(63 / (TAU * 2 ** (62 / 64))).toFixed(2)} times by position 63`));
  assert.match(rowVector(pe, {}).takeaway, /the right ones sit near sin 0 = 0 and cos 0 = 1/);
});

test('dimension curves: in the split layout each row is one pair, its sine (column i) and cosine (column i + d/2)', () => {
  const spec = dimensionCurves(pe, { layout: 'split', dModel: 64 });
  const byPair = new Map();
  for (const c of spec.csv) byPair.set(c.pair, new Set([...(byPair.get(c.pair) ?? []), c.dimension]));
  assert.deepEqual(
    [...byPair].map(([pair, dims]) => [pair, [...dims]]),
    [0, 1, 2, 3].map((i) => [`pair ${i}`, [`dim ${i} (sin)`, `dim ${i + 32} (cos)`]]),
  );
  // a sine and its cosine agree with sin(p·w_i), cos(p·w_i) at p = 10 for w_i = 10000^(−2i/64)
  for (const c of spec.csv.filter((c) => c.position === 10)) {
    const i = Number(/pair (\d+)/.exec(c.pair)[1]);
    const want = (c.kind === 'sin' ? Math.sin : Math.cos)(10 * 10000 ** ((-2 * i) / 64));
    assert.ok(Math.abs(c.value - want) < 1e-6, `${c.dimension}: ${c.value} vs ${want}`);
  }
  assert.match(spec.caption, /^Dimensions 0–3 and 32–35/);
  assert.match(dimensionCurves(pe, { length: 1 }).alt, /over 1 position,/);
});

test('RoPE scaling at factor 1 and a config without a context length say what is there', () => {
  assert.doesNotMatch(ropeScaling(pe, { factor: 1 }).takeaway, /1× longer/);
  const spec = inspectConfig(pe, { hidden_size: 4096, num_attention_heads: 32, rope_scaling: { type: 'linear', factor: 2 } });
  assert.doesNotMatch(JSON.stringify(spec), /undefined/);
  assert.match(spec.caption, /by factor 2 \(the config gives no context length/);
});

test('a figure called by hand with a parameter it cannot draw names the figure and the parameter', () => {
  // values a notebook reader may try: no pairs, an empty list, a fraction, past the end, a string, too many
  for (const [call, type, message] of [
    [() => clockFaces(pe, { pairs: 0 }), RangeError, /^clockFaces: pairs must be an integer from 1 to 512, got 0$/],
    [() => ropeDecay(pe, { near: 0 }), RangeError, /^ropeDecay: near must be an integer from 2 to/],
    [() => ropeDecay(pe, { far: 1e9 }), RangeError, /^ropeDecay: far must be an integer from 0 to 200/],
    [() => similarity(pe, { length: 1 }), RangeError, /^similarity: length must be an integer from 2/],
    [() => similarity(pe, { from: 100 }), RangeError, /^similarity: from must be an integer from 0 to 99, got 100$/],
    [() => alibiReversal(pe, { head: 3 }), RangeError, /^alibiReversal: head must be an integer from 1 to 2, got 3$/],
    [() => shuffleErrors(pe, { count: 0 }), RangeError, /^shuffleErrors: count must be/],
    [() => shuffleErrors(pe, { sentence: 'a a' }), RangeError, /^shuffleErrors: "a a" has only one order/],
    [() => grownTables(pe, { lengths: [] }), RangeError, /^grownTables: lengths must hold at least 1 value, got 0$/],
    [() => positionSinusoids(pe, { positions: [] }), RangeError, /^positionSinusoids: positions must hold at least 1 value/],
    [() => positionSinusoids(pe, { dModel: 16, shown: 100 }), RangeError, /^positionSinusoids: shown must be an integer from 2 to 8, got 100$/],
    [() => ropePair(pe, { positions: [] }), RangeError, /^ropePair: positions must hold/],
    [() => ropeRelative(pe, { N: 0 }), RangeError, /^ropeRelative: N must be an integer from 2/],
    [() => trainingCurves(pe, { runs: [], encodings: [] }), RangeError, /^trainingCurves: encodings must hold/],
    [() => patchGrid(pe, { col: 2.5 }), RangeError, /^patchGrid: col must be an integer from 0 to 13, got 2\.5$/],
    [() => patchGrid(pe, { row: 14 }), RangeError, /^patchGrid: row must be an integer from 0 to 13, got 14$/],
    [() => attentionRecap(pe, { query: 2.5 }), RangeError, /^attentionRecap: query must be an integer/],
    [() => attentionRecap(pe, { query: 6 }), RangeError, /^attentionRecap: query must be an integer from 0 to 5, got 6$/],
    [() => dimensionCurves(pe, { dModel: -3 }), RangeError, /^dimensionCurves: dModel must be/],
    [() => float32Error(pe, { dModel: -3 }), RangeError, /^float32Error: dModel must be/],
    [() => xposScores(pe, { headDim: -3 }), RangeError, /^xposScores: headDim must be/],
    [() => aliasing(pe, { omega: '8' }), TypeError, /^aliasing: omega must be a number, got "8"$/],
    [() => inputPipeline(pe, { length: 1e9 }), RangeError, /^inputPipeline: length must be an integer from 1 to 100000/],
    [() => alibiBias(pe, { distances: 1e9 }), RangeError, /^alibiBias: distances must be/],
    [() => longContext(pe, { results: [], steps: NaN }), RangeError, /^longContext: steps must be/],
  ])
    assert.throws(call, (e) => e instanceof type && message.test(e.message), String(message));
});
