// The figures that open the page's story: what attention computes (scores and softmax, no positions
// anywhere), and the three places a transformer can put positions.
import * as Plot from '@observablehq/plot';
import { gaussianVector, param } from './numeric.js';
import { fmt, heatmap } from './spec.js';
import { rotatedScores } from './relative.js';

// Attention in one picture, for a sentence and one query word: the scores q_i · k_j / √d of every pair
// of words (posenc's scoreTerms: content · content, the score without positions) and, for the query,
// softmax of its row: weights that sum to 1, with which the layer averages the words' values.
export function attentionRecap(pe, { sentence = 'The cat sat on the mat', query = 1 } = {}) {
  const t = pe.scoreTerms({ sentence, encoding: 'sinusoidal' });
  const L = t.tokens.length;
  const i = param('attentionRecap', 'query', query, { max: L - 1 }); // a word of the sentence, not a silent stand-in for one
  const labels = t.tokens.map((w, j) => `${j}·${w}`);
  const scores = t.contentContent.data;
  const row = Array.from(scores.subarray(i * L, (i + 1) * L));
  const top = Math.max(...row);
  const exp = row.map((s) => Math.exp(s - top));
  const sum = exp.reduce((a, b) => a + b, 0);
  const bars = row.map((score, j) => ({ key: labels[j], score, weight: exp[j] / sum }));
  const best = bars.reduce((a, b) => (b.weight > a.weight ? b : a));
  const m = Math.max(...Array.from(scores, Math.abs)) || 1;
  const map = heatmap(scores, L, L, {
    xLabels: labels,
    yLabels: labels,
    xLabel: 'key j →',
    yLabel: 'query i',
    title: 'scores qᵢ · kⱼ / √d',
    width: 360,
    color: { type: 'diverging', scheme: 'PuOr', domain: [-m, m], label: 'score' },
  });
  if (map.raster) map.options.marks.push(Plot.ruleY([i + 0.5], { stroke: '#d7191c', strokeWidth: 2 }));
  else
    map.options.marks.push(
      Plot.cell(
        labels.map((x) => ({ x, y: labels[i] })),
        { x: 'x', y: 'y', stroke: '#d7191c', strokeWidth: 1.5, fill: 'none' },
      ),
    );
  const bar = (field, title, label) => ({
    title,
    width: 260,
    height: 60 + 22 * Math.min(L, 24),
    options: {
      marginLeft: 80,
      x: { label, grid: true, ...(field === 'weight' ? { domain: [0, 1] } : {}) },
      y: { domain: labels, label: null, ...(L > 24 ? { ticks: labels.filter((_, j) => j % Math.ceil(L / 24) === 0) } : {}) },
      marks: [Plot.barX(bars, { y: 'key', x: field, fill: field === 'weight' ? '#5e3c99' : '#e66101' }), Plot.ruleX([0])],
    },
  });
  return {
    numbers: { weights: bars.map((b) => b.weight), query: i },
    panels: [map, bar('score', `row ${labels[i]}: its scores`, 'score →'), bar('weight', `softmax: weights that sum to 1`, 'weight →')],
    takeaway: `"${t.tokens[i]}" attends most to "${t.tokens[labels.indexOf(best.key)]}" (${(100 * best.weight).toFixed(0)}%): the scores compare words, and nothing in them says where a word sits.`,
    caption:
      `A toy attention head (d = 16, fixed random weights) on "${t.tokens.join(' ')}". Every word has a query q and a key k (its embedding times two ` +
      `learned matrices); the score of query i and key j is qᵢ · kⱼ / √d. Softmax turns the row of word ${i} ("${t.tokens[i]}") into weights ` +
      `that sum to 1: ${bars.map((b) => `${b.key} ${fmt(b.weight)}`).join(', ')}. The layer's output for that word is the weighted average of the ` +
      `words' value vectors. The same word gets the same query, key and value wherever it sits.`,
    alt: `A ${L} by ${L} score map and, for word ${i}, its scores and softmax weights; the largest weight is ${best.weight.toFixed(2)} on ${best.key}.`,
    csv: bars,
  };
}

// Three ways to give attention positions, each as what position alone adds to the score of query i and
// key j over `length` positions: (1) added to the input, the position · position part p_i · p_j of a
// sinusoidal table; (2) rotated queries and keys, ⟨R(i) q, R(j) q⟩ for one random vector q (RoPE);
// (3) a bias on the scores, −m|i − j| (ALiBi's first of 8 heads, symmetric).
export function injectionOverview(pe, { length = 12, dModel = 16 } = {}) {
  const L = length;
  const add = pe.similarity(pe.sinusoidal({ length: L, dModel })).data;
  const q = gaussianVector(dModel, 1);
  const pos = [...Array(L).keys()];
  const rotate = Float32Array.from(rotatedScores(pe, q, q, pos).data);
  const slope = pe.alibiSlopes(8)[0];
  const bias = Float32Array.from(pe.alibiBias({ numHeads: 8, queryLength: L, symmetric: true }).data.subarray(0, L * L));
  const panel = (data, title, label) => {
    const [lo, hi] = [Math.min(...data), Math.max(...data)];
    return heatmap(data, L, L, {
      xLabel: 'key j →',
      yLabel: 'query i',
      title,
      width: 280,
      color: { type: 'linear', scheme: 'Viridis', domain: [lo, hi], label },
    });
  };
  return {
    panels: [
      panel(add, '1 · add to the input: pᵢ · pⱼ', 'pᵢ · pⱼ'),
      panel(rotate, '2 · rotate q and k: R(i)q · R(j)q', 'score'),
      panel(bias, `3 · bias the scores: −${fmt(slope)}·|i − j|`, 'bias'),
    ],
    takeaway: 'Wherever position goes in, what reaches the scores is a pattern over (i, j) that, here, depends only on the distance i − j.',
    caption:
      `What position alone contributes to the score of query i and key j, over ${L} positions. 1: a sinusoidal table (d = ${dModel}) added to the ` +
      `word vectors; the score then has a position · position part pᵢ · pⱼ (shown here without the learned matrices), plus cross terms that mix ` +
      `words and places. 2: RoPE rotates a query and a key by angles proportional to their positions; for one vector q as both, the score ` +
      `depends on i − j only. 3: ALiBi adds −m|i − j| to the score itself (m = ${fmt(slope)}, the steepest of 8 heads), and T5 adds a learned ` +
      `number per distance bucket. Each panel has its own colour scale: the three are different quantities.`,
    alt: `Three ${L} by ${L} maps, each constant along its diagonals: the position part of an additive encoding, a RoPE score, and an ALiBi bias.`,
  };
}
