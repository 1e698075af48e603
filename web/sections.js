// Wiring: each form's controls -> a figure spec (web/figures/) -> the renderer. Nothing here computes
// a number a figure shows.
import * as abs from './figures/absolute.js';
import { attentionWeights, changesSentence, labOutputs, labSummary, reversal, shuffleFor } from './figures/lab.js';
import * as rel from './figures/relative.js';
import { show, showError } from './figures/render.js';
import { getParam, noteBadURL, onChange, setParam, values } from './state.js';

const failed = (id) => (e) => {
  console.warn(e);
  showError(id, `${e.constructor.name}: ${e.message}`);
};
const draw = (id, spec) => show(id, spec);

export function sinusoidalSection(pe) {
  onChange(
    'sinusoidal',
    (v) => {
      draw('sinusoidal-heatmap', abs.sinusoidalHeatmap(pe, v));
      draw('dimension-curves', abs.dimensionCurves(pe, v));
      draw('wavelengths', abs.wavelengths(pe, v));
    },
    failed('sinusoidal-heatmap'),
  );
  draw('position-sinusoids', abs.positionSinusoids(pe));
  draw('robot-table', abs.robotTable(pe));
}

export function relativeSection(pe) {
  draw('similarity', rel.similarity(pe));
  onChange('similarity', ({ shiftK }) => draw('shift-matrix', rel.shiftMatrix(pe, { k: shiftK })), failed('shift-matrix'));
  onChange('scores', ({ scoreEncoding }) => draw('score-terms', rel.scoreTerms(pe, { encoding: scoreEncoding })), failed('score-terms'));
}

export function extrapolationSection(pe) {
  onChange('extrapolation', (v) => draw('extrapolation', abs.extrapolation(pe, v)), failed('extrapolation'));
  distinguishability(pe);
}

// Point by point, one frame each, so that the page stays responsive.
async function distinguishability(pe) {
  const { lengths, dims } = abs.DISTINGUISHABILITY;
  const points = [];
  for (const dModel of dims)
    for (const length of lengths)
      for (const encoding of ['sinusoidal', 'learned']) {
        points.push(abs.closestPair(pe, { encoding, dModel, length }));
        await new Promise((r) => setTimeout(r));
      }
  draw('distinguishability', abs.distinguishability(points));
}

export function ropeSection(pe) {
  onChange('rope', ({ ropeDim, ropeBase }) => draw('rope-relative', rel.ropeRelative(pe, { dim: ropeDim, base: ropeBase })), failed('rope-relative'));
  onChange('scaling', ({ factor }) => draw('rope-scaling', rel.ropeScaling(pe, { factor })), failed('rope-scaling'));
}

export function biasSection(pe) {
  onChange(
    'alibi',
    ({ alibiHeads, alibiLength, alibiSymmetric }) =>
      draw('alibi-bias', rel.alibiBias(pe, { heads: alibiHeads, length: alibiLength, symmetric: alibiSymmetric === 'symmetric' })),
    failed('alibi-bias'),
  );
  onChange(
    't5',
    ({ t5Buckets, t5MaxDistance }) => draw('t5-buckets', rel.t5Buckets(pe, { numBuckets: t5Buckets, maxDistance: t5MaxDistance })),
    failed('t5-buckets'),
  );
}

// The shuffle lab. The permutation lives in the URL (perm=2,0,1,...); one that does not fit the
// sentence is dropped with a note.
export function labSection(pe) {
  const metric = document.querySelector('[data-metric="equivariance-error"]');
  const tokensOf = (sentence) => {
    try {
      return pe.permutationLab({ sentence }).tokens;
    } catch {
      return [];
    }
  };
  let permutation = getParam('perm')?.split(',').map(Number) ?? null;
  const valid = (p, n) => p && p.length === n && p.every((v) => Number.isInteger(v) && v >= 0 && v < n) && new Set(p).size === n;
  if (permutation && !valid(permutation, tokensOf(values('lab').sentence).length)) {
    noteBadURL([`perm "${getParam('perm')}" (not an order of the sentence's words; using a shuffle)`]);
    permutation = null;
    setParam('perm', null);
  }
  const run = () => {
    const { sentence, encoding } = values('lab');
    const tokens = tokensOf(sentence);
    if (tokens.length === 0) {
      metric.textContent = '—';
      delete metric.dataset.value;
      for (const id of ['permutation-lab', 'attention-weights', 'lab-outputs', 'reversal'])
        showError(id, 'The lab needs at least one word: type a sentence.');
      return;
    }
    if (!valid(permutation, tokens.length)) permutation = shuffleFor(tokens) ?? [...tokens.keys()];
    const r = pe.permutationLab({ sentence, encoding, permutation });
    metric.textContent = r.equivarianceError.toExponential(2);
    metric.dataset.value = String(r.equivarianceError);
    const summary = labSummary(r);
    if (!changesSentence(r.tokens, r.permutation) && new Set(r.tokens.map((t) => t.toLowerCase())).size < 2)
      summary.lines.push(['', 'Every word is the same word, so the sentence has only one order: try a longer sentence.', 'note']);
    draw('permutation-lab', summary);
    draw('attention-weights', attentionWeights(r));
    draw('lab-outputs', labOutputs(r));
    draw('reversal', reversal(pe, { sentence, tokens: r.tokens }));
  };
  const choose = (p) => {
    permutation = p;
    setParam('perm', p.join(','));
    run();
  };
  document.querySelector('[data-action="shuffle"]').addEventListener('click', () => {
    const tokens = tokensOf(values('lab').sentence);
    if (tokens.length) choose(shuffleFor(tokens) ?? [...tokens.keys()]);
    else run();
  });
  document.querySelector('[data-action="reverse"]').addEventListener('click', () => {
    const n = tokensOf(values('lab').sentence).length;
    if (n) choose([...Array(n).keys()].reverse());
    else run();
  });
  document.querySelector('[data-control="sentence"]').addEventListener('input', () => {
    permutation = null;
    setParam('perm', null);
  });
  onChange('lab', run, failed('permutation-lab'));
}
