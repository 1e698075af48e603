// The shuffle lab: one toy self-attention layer on a sentence and on a shuffle of it.
// The model folds case ("The" and "the" are one word), so every comparison of sentences here does too.
import * as Plot from '@observablehq/plot';
import { maxAbsDiff, mulberry32, param, permutations } from './numeric.js';
import { ENCODINGS, ENCODING_NAMES, fmt, heatmap } from './spec.js';

// An equivariance error above this is order being seen; below it, float32 rounding (about 1e-7).
export const DETECTED = 1e-4;

// The lab's run for a figure: the one given (`lab`, as the page computes it once for several
// figures), or a fresh pe.permutationLab on the sentence (default: posenc's) with the encoding and
// permutation (default: posenc's deterministic shuffle).
function labOf(pe, { lab, sentence, encoding = 'none', permutation } = {}) {
  if (lab) return lab;
  const options = { encoding };
  if (sentence !== undefined) options.sentence = sentence;
  if (permutation !== undefined) options.permutation = permutation;
  return pe.permutationLab(options);
}

const fold = (tokens) => tokens.map((t) => t.toLowerCase());

// The encodings as the page names them elsewhere (the lab's ALiBi is the symmetric, bidirectional form).
const LAB_NAMES = Object.freeze({ ...ENCODING_NAMES, alibi: 'ALiBi (symmetric)' });
const nameOf = (encoding) => LAB_NAMES[encoding] ?? encoding;

// Two words of the sentence the model reads as one (the same word, cased differently), or null.
function caseTwins(tokens) {
  const first = new Map();
  for (const t of tokens) {
    const k = t.toLowerCase();
    if (first.has(k) && first.get(k) !== t) return [first.get(k), t];
    if (!first.has(k)) first.set(k, t);
  }
  return null;
}

// Does `permutation` turn the sentence into a different word sequence, as the model reads it?
export function changesSentence(tokens, permutation) {
  const f = fold(tokens);
  return permutation.some((from, i) => f[from] !== f[i]);
}

// Every permutation that reads as the same sentence as `permutation` (case-folded word by word):
// with a repeated word ("The" ... "the") a shuffled sentence can be made in several ways, and which
// copy went where is invisible to the model.
export function sameSentencePermutations(tokens, permutation) {
  const f = fold(tokens);
  const out = [];
  const used = new Array(tokens.length).fill(false);
  const q = [];
  (function place(i) {
    if (i === permutation.length) return void out.push([...q]);
    for (let j = 0; j < f.length; j++)
      if (!used[j] && f[j] === f[permutation[i]]) {
        used[j] = true;
        q.push(j);
        place(i + 1);
        q.pop();
        used[j] = false;
      }
  })(0);
  return out;
}

// The equivariance error compared by tokens: the shuffled sentence's outputs against the original
// outputs of the same (case-folded) words, the smallest over the ways of matching repeated words.
// The lab's own equivarianceError follows word indices: for "The cat sat on the mat" it scores
// [5, 0, 3, 2, 1, 4] (the reversal, with "The" and "the" swapped) as seen by symmetric ALiBi, though
// the layer reads exactly the reversed sentence.
export function tokenEquivarianceError(pe, { sentence, encoding = 'none', permutation }) {
  const tokens = labOf(pe, { sentence }).tokens;
  let best = Infinity;
  for (const q of sameSentencePermutations(tokens, permutation))
    best = Math.min(best, labOf(pe, { sentence, encoding, permutation: q }).equivarianceError);
  return best;
}

// The distinct sentences (case-folded) among all orderings of the words: one permutation each.
export function distinctOrderings(tokens) {
  const f = fold(tokens);
  const seen = new Set();
  return permutations(tokens.length).filter((p) => {
    const key = p.map((i) => f[i]).join(' ');
    return seen.has(key) ? false : (seen.add(key), true);
  });
}

// A random permutation that changes the sentence, or null when every order reads the same.
export function shuffleFor(tokens, random = Math.random) {
  const n = tokens.length;
  if (new Set(fold(tokens)).size < 2) return null;
  for (;;) {
    const p = [...Array(n).keys()];
    for (let i = n - 1; i > 0; i--) {
      const j = Math.floor(random() * (i + 1));
      [p[i], p[j]] = [p[j], p[i]];
    }
    if (changesSentence(tokens, p)) return p;
  }
}

export function labSummary(r) {
  const same = !changesSentence(r.tokens, r.permutation);
  const oneOrder = new Set(fold(r.tokens)).size < 2; // every word the same word: no shuffle can change the sentence
  const broken = r.equivarianceError > DETECTED;
  const name = nameOf(r.encoding);
  const twins = caseTwins(r.tokens);
  const why = twins ? ` (the model reads "${twins[0]}" and "${twins[1]}" as one word)` : '';
  const verdict = oneOrder
    ? `${r.tokens.length === 1 ? 'one word' : 'every word is the same word'}${why}, so the sentence has only one order and there is nothing to detect: type a sentence with different words.`
    : same
      ? `the shuffle gives back the same sentence${why}, so there is nothing to detect.`
      : broken
        ? `with ${name} positions, shuffling changes what each word attends to: order is visible.`
        : r.encoding === 'none'
          ? 'the layer returns the same vectors, merely reordered: it cannot see word order (differences are float rounding).'
          : `the layer returns the same vectors, merely reordered: ${name} cannot tell this shuffle from the original (differences are float rounding).`;
  return {
    lines: [
      ['Original:', r.tokens.join(' ')],
      ['Shuffled:', r.permutedTokens.join(' ')],
      ['Encoding:', name],
      ['max |f(Px) − P f(x)| =', r.equivarianceError.toExponential(2)],
      ['Mean-pooled outputs differ by', fmt(r.pooledDifference)],
      ['Verdict:', verdict, same ? 'note' : broken ? 'ok' : undefined],
    ],
    takeaway: oneOrder
      ? 'This sentence has only one order: type a sentence with different words to shuffle.'
      : same
        ? 'The shuffle gave back the same sentence: shuffle again.'
        : broken
          ? `With ${name} positions the shuffled words come out changed: the layer sees order.`
          : r.encoding === 'none'
            ? 'Without positions the shuffled words come out exactly as before, only reordered: the layer sees a bag of words.'
            : `With ${name} positions this shuffle still comes out exactly as before, only reordered: ${name} cannot tell it from the original.`,
    caption: `Toy attention on "${r.tokens.join(' ')}" and its shuffle "${r.permutedTokens.join(' ')}" with encoding ${name}: equivariance error ${r.equivarianceError.toExponential(2)}, pooled difference ${r.pooledDifference.toExponential(2)}.`,
  };
}

const labelsOf = (tokens) => tokens.map((t, i) => `${i}·${t}`);
const weightsColour = { type: 'linear', scheme: 'Blues', domain: [0, 1], label: 'weight' };

// The shuffled sentence's weights [heads, L, L] put back into the original word order: entry
// (h, i, j) is how much the word originally at i attends to the word originally at j. Without a
// positional encoding this equals the original weights exactly (up to rounding).
export function unshuffleWeights({ permutedWeights, permutation }) {
  const [heads, L] = permutedWeights.shape;
  const where = new Array(L);
  permutation.forEach((from, i) => (where[from] = i)); // where[word] = its position in the shuffle
  const data = new Float32Array(heads * L * L);
  for (let h = 0; h < heads; h++)
    for (let i = 0; i < L; i++) for (let j = 0; j < L; j++) data[(h * L + i) * L + j] = permutedWeights.data[(h * L + where[i]) * L + where[j]];
  return { data, shape: [heads, L, L] };
}

// Head 1's weights on the sentence and on its shuffle; `restored` adds the shuffle's weights put
// back in the original word order, which equal the first map when attention cannot see order.
export function attentionWeights(pe, { restored = false, ...params } = {}) {
  const r = labOf(pe, params);
  const L = r.tokens.length;
  const head = (t) => t.data.subarray(0, L * L);
  const broken = r.equivarianceError > DETECTED;
  const [a, b] = [labelsOf(r.tokens), labelsOf(r.permutedTokens)];
  const opts = { xLabel: 'key →', yLabel: 'query', width: 380, color: weightsColour };
  const back = head(unshuffleWeights(r));
  const panels = [
    heatmap(head(r.weights), L, L, { ...opts, xLabels: a, yLabels: a, title: 'original sentence (head 1)' }),
    heatmap(head(r.permutedWeights), L, L, { ...opts, xLabels: b, yLabels: b, title: 'shuffled sentence (head 1)', legend: false }),
  ];
  if (restored) panels.push(heatmap(back, L, L, { ...opts, xLabels: a, yLabels: a, title: 'shuffled, put back in word order', legend: false }));
  const blindHere = r.encoding === 'none' ? 'Without positional information' : `${nameOf(r.encoding)} cannot see this shuffle:`;
  const same = `${blindHere} the ${restored ? 'third map is the first one exactly: the shuffled map is the original' : 'shuffled map is the original one'} with rows and columns reordered.`;
  return {
    panels,
    takeaway: broken
      ? 'With positions, each word attends differently once the sentence is shuffled.'
      : r.encoding === 'none'
        ? 'Without positions, each word attends exactly as before: its row just moved with it.'
        : `With ${nameOf(r.encoding)} positions this shuffle changes nothing: each word attends exactly as before, its row just moved with it.`,
    caption: `Attention weights of head 1 (rows sum to 1). ${broken ? `With positional information the shuffled sentence is attended differently, not just reordered${restored ? `: put back in word order, its weights differ from the original by up to ${maxAbsDiff(back, head(r.weights)).toFixed(3)}` : ''}.` : same}`,
    alt: `${restored ? 'Three' : 'Two'} ${L} by ${L} attention maps; the first word attends most to word ${argmax(head(r.weights).subarray(0, L))}.`,
    csv: [...head(r.weights)].map((w, i) => ({ query: a[Math.floor(i / L)], key: a[i % L], original: w, shuffled: head(r.permutedWeights)[i] })),
  };
}
const argmax = (xs) => xs.reduce((best, v, i) => (v > xs[best] ? i : best), 0);

// Outputs f(x) next to P^-1 f(Px): identical rows when attention cannot see order.
// sides: the caption names the panels by side (left, right), as the notebooks lay them out; false names
// them by title, for a page that may stack them.
export function labOutputs(pe, { sides = true, ...params } = {}) {
  const r = labOf(pe, params);
  const L = r.tokens.length;
  const d = r.output.shape[1];
  const back = new Float32Array(L * d);
  r.permutation.forEach((orig, i) => back.set(r.permutedOutput.data.subarray(i * d, i * d + d), orig * d));
  const labels = labelsOf(r.tokens);
  const m = Math.max(...Array.from(r.output.data, Math.abs), ...Array.from(back, Math.abs));
  const color = { type: 'diverging', scheme: 'PuOr', domain: [-m, m], label: 'output' };
  const broken = r.equivarianceError > DETECTED;
  return {
    // max |f(Px)_i − f(x)_perm[i]| recomputed here in JavaScript from the two outputs
    numbers: { equivarianceError: maxAbsDiff(back, r.output.data) },
    panels: [
      heatmap(r.output.data, L, d, { yLabels: labels, xLabel: 'channel', width: 380, color, title: 'f(x): outputs per word' }),
      heatmap(back, L, d, { yLabels: labels, xLabel: 'channel', width: 380, color, legend: false, title: 'f(Px), put back in the original order' }),
    ],
    takeaway: broken
      ? 'With positions, shuffling changes what each word comes out as.'
      : r.encoding === 'none'
        ? 'Without positions, shuffling only reorders the outputs: every word comes out the same.'
        : `With ${nameOf(r.encoding)} positions this shuffle only reorders the outputs: every word comes out the same.`,
    caption: `Layer outputs for each word of the original sentence (${sides ? 'left' : 'f(x)'}) and of the shuffled one, put back in the original word order (${sides ? 'right' : 'f(Px)'}). ${broken ? 'They differ: the encoding made outputs depend on position.' : 'They are identical: shuffling only reorders the outputs.'}`,
    alt: `Two ${L} by ${d} output maps; they differ by at most ${r.equivarianceError.toExponential(1)}.`,
  };
}

// Word vectors of the causal layer below: one fixed random vector per case-folded word (the lab's own
// embeddings are inside its wasm), from a seed made of the word's characters.
const CAUSAL_DIM = 16;
function wordVectors(tokens) {
  const data = new Float32Array(tokens.length * CAUSAL_DIM);
  tokens.forEach((t, i) => {
    let seed = 17;
    for (const ch of t.toLowerCase()) seed = (Math.imul(seed, 31) + ch.codePointAt(0)) >>> 0;
    const random = mulberry32(seed);
    for (let c = 0; c < CAUSAL_DIM; c++) data[i * CAUSAL_DIM + c] = 2 * random() - 1;
  });
  return { data, shape: [tokens.length, CAUSAL_DIM] };
}

// max |f(Rx) − R f(x)| for R the reversal and f one causal attention layer (pe.attention, q = k = v = the
// word vectors, no learned weights), with a bias or none: what a causal mask does to the blind spot.
function causalReversalError(pe, tokens, bias) {
  const L = tokens.length;
  const x = wordVectors(tokens);
  const f = (t) => pe.attention({ q: t, k: t, v: t, causal: true, ...(bias && { bias }) }).output.data;
  const out = f(x);
  const back = f(wordVectors([...tokens].reverse()));
  let e = 0;
  for (let i = 0; i < L; i++)
    for (let c = 0; c < CAUSAL_DIM; c++) e = Math.max(e, Math.abs(back[i * CAUSAL_DIM + c] - out[(L - 1 - i) * CAUSAL_DIM + c]));
  return e;
}

// The reversal blind spot: which encodings tell a sentence from its reverse. With `orderings`, also
// how many of all n! orderings each encoding cannot see (n! runs of the layer per encoding).
// `byTokens`: orderings are the distinct sentences (case-folded; 360 of the 720 orderings of "The cat sat
// on the mat") and errors are compared by tokens (tokenEquivarianceError), not by word index.
// `causal`: two more rows, from a causal layer (causalReversalError): causal ALiBi (the first of 2 heads,
// slope 1/16) and a causal mask without positions.
export function reversal(pe, { sentence, tokens, orderings = false, byTokens = false, causal = false } = {}) {
  tokens ??= pe.permutationLab(sentence === undefined ? {} : { sentence }).tokens;
  const L = tokens.length;
  const rev = [...Array(L).keys()].reverse();
  const palindrome = !changesSentence(tokens, rev);
  const all = !orderings ? [] : byTokens ? distinctOrderings(tokens) : permutations(L);
  const run = (encoding, permutation) => pe.permutationLab(sentence === undefined ? { encoding, permutation } : { sentence, encoding, permutation });
  const lab = byTokens
    ? (encoding, permutation) => ({
        ...run(encoding, permutation),
        equivarianceError: tokenEquivarianceError(pe, { sentence, encoding, permutation }),
      })
    : run;
  const blind = {};
  const rows = ENCODINGS.map((encoding) => {
    const r = palindrome ? { equivarianceError: 0, pooledDifference: 0 } : lab(encoding, rev);
    const row = { encoding, reversal: r.equivarianceError, pooled: r.pooledDifference };
    if (orderings) {
      blind[encoding] = all.filter((p) => lab(encoding, p).equivarianceError <= DETECTED);
      row.blind = blind[encoding].length;
    }
    return row;
  });
  const alibiHead = () => ({ data: pe.alibiBias({ numHeads: 2, queryLength: L }).data.subarray(0, L * L), shape: [L, L] });
  const causalRows = causal
    ? [
        { name: 'ALiBi (causal)', reversal: palindrome ? 0 : causalReversalError(pe, tokens, alibiHead()) },
        { name: 'none, causal mask', reversal: palindrome ? 0 : causalReversalError(pe, tokens, null) },
      ]
    : [];
  const n = all.length;
  const sees = (x) => x.reversal > DETECTED;
  const e = (x) => x.reversal.toExponential(1);
  const symmetric = rows.find((x) => x.encoding === 'alibi');
  const names = (list) => list.map((x) => (x.encoding === 'none' ? 'none (no positions)' : nameOf(x.encoding))).join(', ') || 'no encoding';
  const [causalAlibi, causalNone] = causalRows;
  const causalSentence = causal
    ? ` Behind a causal mask (a causal layer of pe.attention on word vectors of its own): ALiBi (causal) ${sees(causalAlibi) ? 'tells them apart' : 'cannot tell them apart either'} (error ${e(causalAlibi)}), and ${sees(causalNone) ? 'so does the mask alone, without positions, since word i sees only the words before it' : 'the mask alone, without positions, does not'} (error ${e(causalNone)}).`
    : '';
  return {
    table: {
      columns: [
        'encoding',
        'error under reversal',
        'tells the reverse apart?',
        ...(orderings ? ['pooled difference', `${byTokens ? 'sentences' : 'orderings'} it cannot see (of ${n})`] : []),
      ],
      rows: [
        ...rows.map((x) => [
          nameOf(x.encoding),
          x.reversal.toExponential(2),
          sees(x) ? 'yes' : 'no',
          ...(orderings ? [x.pooled.toExponential(2), String(x.blind)] : []),
        ]),
        ...causalRows.map((x) => [x.name, x.reversal.toExponential(2), sees(x) ? 'yes' : 'no']),
      ],
    },
    takeaway: palindrome
      ? 'This sentence reads the same reversed: nothing can tell it from its reverse.'
      : `ALiBi (symmetric) sees only |i − j|, which reversing keeps: it ${sees(symmetric) ? 'still tells' : 'cannot tell'} a sentence from its reverse.${
          causal
            ? ` Causal ALiBi ${sees(causalAlibi) ? 'can' : 'cannot either'}${sees(causalNone) ? ', and so can a causal mask with no positions' : '; a causal mask with no positions cannot'}.`
            : ''
        }`,
    caption: palindrome
      ? `"${tokens.join(' ')}" reads the same reversed, so no encoding can tell it apart from its reverse.`
      : `Reversing "${tokens.join(' ')}" in the lab's bidirectional layer: a symmetric relative bias such as ALiBi (symmetric) depends only on |i − j|, which reversal preserves (error ${e(symmetric)}). Seen by ${names(rows.filter(sees))}; not by ${names(rows.filter((x) => !sees(x)))}.${causalSentence}${orderings ? (byTokens ? ` Over all ${n} distinct sentences the words make (case-folded, compared by tokens), the errors at or below ${DETECTED} are the sentences an encoding cannot tell from the original.` : ` Over all ${n} orderings, the errors at or below ${DETECTED} are the orderings an encoding cannot see.`) : ''}`,
    csv: rows,
    numbers: orderings ? { blind } : { causal: Object.fromEntries(causalRows.map((x) => [x.name, x.reversal])) },
  };
}

// Why symmetric ALiBi cannot see a reversal: its bias −m|i − j| for one head, that bias with rows
// and columns reversed (the same matrix), and the causal −m(i − j) with future keys masked.
export function alibiReversal(pe, { length = 6, heads = 2, head = 1 } = {}) {
  param('alibiReversal', 'head', head, { min: 1, max: heads });
  const L = length;
  const one = (t) => Float32Array.from(t.data.subarray((head - 1) * L * L, head * L * L));
  const symmetric = one(pe.alibiBias({ numHeads: heads, queryLength: L, symmetric: true }));
  const causal = one(pe.alibiBias({ numHeads: heads, queryLength: L }));
  for (let i = 0; i < L; i++) for (let j = i + 1; j < L; j++) causal[i * L + j] = NaN; // masked future keys
  const reversed = symmetric.map((_, n) => symmetric[(L - 1 - Math.floor(n / L)) * L + (L - 1 - (n % L))]);
  const m = pe.alibiSlopes(heads)[head - 1];
  const lo = -m * (L - 1);
  const color = { type: 'diverging', scheme: 'RdBu', domain: [lo, -lo], label: 'bias' };
  const opts = { xLabel: 'key j →', yLabel: 'query i', width: 260, color };
  const difference = maxAbsDiff(symmetric, reversed);
  return {
    numbers: { difference, slope: m },
    panels: [
      heatmap(symmetric, L, L, { ...opts, title: 'symmetric: −m|i − j|' }),
      heatmap(reversed, L, L, { ...opts, title: 'symmetric, reversed', legend: false }),
      heatmap(causal, L, L, { ...opts, title: 'causal: −m(i − j)', legend: false }),
    ],
    caption: `ALiBi bias of head ${head} of ${heads} (slope m = ${fmt(m)}) over ${L} positions. Reversing the rows and columns of the symmetric bias gives back the same matrix (largest difference ${difference}), so a bidirectional layer with it cannot tell a sentence from its reverse. The causal form (future keys masked, blank) is not symmetric under reversal.`,
    alt: `Three ${L} by ${L} ALiBi bias maps: symmetric, symmetric reversed (identical) and causal.`,
  };
}

// The equivariance error of `count` random shuffles of the sentence for each encoding, one tick per
// shuffle (deterministic shuffles from `seed`, each changing the sentence as the model reads it).
// `byTokens`: each shuffle's error compared by tokens (tokenEquivarianceError), as the model reads it.
export function shuffleErrors(pe, { sentence, count = 200, seed = 7, byTokens = false } = {}) {
  param('shuffleErrors', 'count', count, { min: 1, max: 10000 });
  const tokens = pe.permutationLab(sentence === undefined ? {} : { sentence }).tokens;
  const random = mulberry32(seed);
  const shuffles = [];
  for (let n = 0; n < count; n++) {
    const p = shuffleFor(tokens, random);
    if (!p) break; // every order reads the same
    shuffles.push(p);
  }
  if (!shuffles.length)
    throw new RangeError(
      `shuffleErrors: "${tokens.join(' ')}" has only one order (every shuffle reads the same): give a sentence with different words`,
    );
  const rows = ENCODINGS.flatMap((encoding) =>
    shuffles.map((permutation, shuffle) => ({
      encoding,
      shuffle,
      error: byTokens
        ? tokenEquivarianceError(pe, { sentence, encoding, permutation })
        : pe.permutationLab(sentence === undefined ? { encoding, permutation } : { sentence, encoding, permutation }).equivarianceError,
    })),
  );
  const range = (e) => {
    const errs = rows.filter((r) => r.encoding === e).map((r) => r.error);
    return [Math.min(...errs), Math.max(...errs)];
  };
  const [noneLo, noneHi] = range('none');
  const encoded = rows.filter((r) => r.encoding !== 'none');
  const missed = encoded.filter((r) => r.error <= DETECTED).map((r) => ({ ...r, permutation: shuffles[r.shuffle] }));
  const lowest = Math.min(...encoded.filter((r) => r.error > DETECTED).map((r) => r.error));
  const words = (p) => p.map((i) => tokens[i]).join(' ');
  const misses = missed.length
    ? `; missed: ${missed.map((r) => `${r.encoding} on shuffle #${r.shuffle} ("${words(r.permutation)}")`).join(', ')}`
    : '; none missed';
  return {
    panels: [
      {
        width: 760,
        height: 240,
        options: {
          marginLeft: 80,
          x: { type: 'log', domain: [1e-8, 10], label: 'equivariance error max |f(Px) − P f(x)| (log scale) →', tickFormat: '.0e' },
          y: { domain: ENCODINGS, label: null },
          color: { domain: ENCODINGS, scheme: 'tableau10' },
          marks: [
            Plot.ruleX([DETECTED], { stroke: '#999', strokeDasharray: '4,3' }),
            Plot.tickX(rows, { x: 'error', y: 'encoding', stroke: 'encoding', strokeOpacity: 0.5 }),
          ],
        },
      },
    ],
    caption: `Equivariance error of ${shuffles.length} random shuffles of "${tokens.join(' ')}" per encoding, one tick per shuffle: ${noneLo.toExponential(1)} to ${noneHi.toExponential(1)} without an encoding (none; float32 rounding), at least ${lowest.toExponential(1)} with an encoding for every shuffle it sees${misses}. The dashed line is the ${DETECTED} threshold above which order counts as seen.`,
    alt: `Ticks of the equivariance error of ${shuffles.length} shuffles per encoding: about ${noneHi.toExponential(0)} without an encoding, ${lowest.toExponential(0)} or more with one when it sees the shuffle${misses}.`,
    csv: rows,
    numbers: { noneLargest: noneHi, seenSmallest: lowest, missed, shuffles },
  };
}
