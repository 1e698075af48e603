// The shuffle lab (seeds 000-004): one toy self-attention layer on a sentence and on a shuffle of it.
// The model folds case ("The" and "the" are one word), so every comparison of sentences here does too.
import { ENCODINGS, fmt, heatmap } from './spec.js';

const fold = (tokens) => tokens.map((t) => t.toLowerCase());

// Does `permutation` turn the sentence into a different word sequence, as the model reads it?
export function changesSentence(tokens, permutation) {
  const f = fold(tokens);
  return permutation.some((from, i) => f[from] !== f[i]);
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
  const broken = r.equivarianceError > 1e-4;
  const verdict = same
    ? 'the shuffle gives back the same sentence (the model reads "The" and "the" as one word), so there is nothing to detect.'
    : broken
      ? `with ${r.encoding} positions, shuffling changes what each word attends to: order is visible.`
      : 'the layer returns the same vectors, merely reordered: it cannot see word order (differences are float rounding).';
  return {
    lines: [
      ['Original:', r.tokens.join(' ')],
      ['Shuffled:', r.permutedTokens.join(' ')],
      ['Encoding:', r.encoding],
      ['max |f(Px) − P f(x)| =', r.equivarianceError.toExponential(2)],
      ['Mean-pooled outputs differ by', fmt(r.pooledDifference)],
      ['Verdict:', verdict, same ? 'note' : broken ? 'ok' : undefined],
    ],
    caption: `Toy attention on "${r.tokens.join(' ')}" and its shuffle "${r.permutedTokens.join(' ')}" with encoding ${r.encoding}: equivariance error ${r.equivarianceError.toExponential(2)}, pooled difference ${r.pooledDifference.toExponential(2)}.`,
  };
}

const labelsOf = (tokens) => tokens.map((t, i) => `${i}·${t}`);
const weightsColour = { type: 'linear', scheme: 'Blues', domain: [0, 1], label: 'weight' };

export function attentionWeights(r) {
  const L = r.tokens.length;
  const head = (t) => t.data.subarray(0, L * L);
  const broken = r.equivarianceError > 1e-4;
  const [a, b] = [labelsOf(r.tokens), labelsOf(r.permutedTokens)];
  const opts = { xLabel: 'key →', yLabel: 'query', width: 380, color: weightsColour };
  return {
    panels: [
      heatmap(head(r.weights), L, L, { ...opts, xLabels: a, yLabels: a, title: 'original sentence (head 1)' }),
      heatmap(head(r.permutedWeights), L, L, { ...opts, xLabels: b, yLabels: b, title: 'shuffled sentence (head 1)', legend: false }),
    ],
    caption: `Attention weights of head 1 (rows sum to 1). ${broken ? 'With positional information the shuffled sentence is attended differently, not just reordered.' : 'Without positional information the right map is the left one with rows and columns reordered.'}`,
    alt: `Two ${L} by ${L} attention maps; the first word attends most to word ${argmax(head(r.weights).subarray(0, L))}.`,
    csv: [...head(r.weights)].map((w, i) => ({ query: a[Math.floor(i / L)], key: a[i % L], original: w, shuffled: head(r.permutedWeights)[i] })),
  };
}
const argmax = (xs) => xs.reduce((best, v, i) => (v > xs[best] ? i : best), 0);

// Outputs f(x) next to P^-1 f(Px): identical rows when attention cannot see order.
export function labOutputs(r) {
  const L = r.tokens.length;
  const d = r.output.shape[1];
  const back = new Float32Array(L * d);
  r.permutation.forEach((orig, i) => back.set(r.permutedOutput.data.subarray(i * d, i * d + d), orig * d));
  const labels = labelsOf(r.tokens);
  const m = Math.max(...Array.from(r.output.data, Math.abs), ...Array.from(back, Math.abs));
  const color = { type: 'diverging', scheme: 'PuOr', domain: [-m, m], label: 'output' };
  const broken = r.equivarianceError > 1e-4;
  return {
    panels: [
      heatmap(r.output.data, L, d, { yLabels: labels, xLabel: 'channel', width: 380, color, title: 'f(x): outputs per word' }),
      heatmap(back, L, d, { yLabels: labels, xLabel: 'channel', width: 380, color, legend: false, title: 'f(Px), put back in the original order' }),
    ],
    caption: `Layer outputs for each word of the original sentence (left) and of the shuffled one, put back in the original word order (right). ${broken ? 'They differ: the encoding made outputs depend on position.' : 'They are identical: shuffling only reorders the outputs.'}`,
    alt: `Two ${L} by ${d} output maps; they differ by at most ${r.equivarianceError.toExponential(1)}.`,
  };
}

// The reversal blind spot: which encodings tell a sentence from its reverse.
export function reversal(pe, { sentence, tokens }) {
  const L = tokens.length;
  const rev = [...Array(L).keys()].reverse();
  const palindrome = !changesSentence(tokens, rev);
  const rows = ENCODINGS.map((encoding) => ({
    encoding,
    reversal: palindrome ? 0 : pe.permutationLab({ sentence, encoding, permutation: rev }).equivarianceError,
  }));
  return {
    table: {
      columns: ['encoding', 'error under reversal', 'tells the reverse apart?'],
      rows: rows.map((x) => [x.encoding, x.reversal.toExponential(2), x.reversal > 1e-4 ? 'yes' : 'no']),
    },
    caption: palindrome
      ? `"${tokens.join(' ')}" reads the same reversed, so no encoding can tell it apart from its reverse.`
      : `Reversing "${tokens.join(' ')}": a symmetric relative bias such as bidirectional ALiBi depends only on |i − j|, which reversal preserves, so the layer is blind to it (error ${rows.find((x) => x.encoding === 'alibi').reversal.toExponential(1)}), while RoPE, xPos, T5's signed buckets and absolute encodings see it; none and NoPE see no order at all.`,
    csv: rows,
  };
}
