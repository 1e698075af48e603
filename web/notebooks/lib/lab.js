// Helpers for notebook 01 ("Why order matters"): permutations, and attention weights as rows that
// Observable Plot can draw. Pure functions over posenc's { data, shape } results.
import { mulberry32 } from './util.js';

// The order that reads the sentence backwards: position i takes the word from position n-1-i.
export const reversal = (n) => Array.from({ length: n }, (_, i) => n - 1 - i);

// Deterministic shuffles of 0..n-1 (Fisher-Yates driven by mulberry32), never the identity.
export function shuffles(n, count, seed = 1) {
  if (n < 2) throw new RangeError(`shuffles: n must be at least 2 (one word has no other order), got ${n}`);
  const random = mulberry32(seed);
  const out = [];
  while (out.length < count) {
    const p = Array.from({ length: n }, (_, i) => i);
    for (let i = n - 1; i > 0; i--) {
      const j = Math.floor(random() * (i + 1));
      [p[i], p[j]] = [p[j], p[i]];
    }
    if (p.some((v, i) => v !== i)) out.push(p);
  }
  return out;
}

// Every ordering of 0..n-1 (n! of them), in lexicographic order.
export function permutations(n) {
  const out = [];
  const walk = (prefix, rest) => {
    if (rest.length === 0) return void out.push(prefix);
    rest.forEach((v, i) => walk([...prefix, v], [...rest.slice(0, i), ...rest.slice(i + 1)]));
  };
  walk(
    [],
    Array.from({ length: n }, (_, i) => i),
  );
  return out;
}

// max |f(Px)_i - f(x)_perm[i]| recomputed from a permutationLab result: the shuffled sentence's
// output at position i against the original output of the word that moved there.
export function equivarianceError({ output, permutedOutput, permutation }) {
  const d = output.shape[1];
  let worst = 0;
  permutation.forEach((from, i) => {
    for (let c = 0; c < d; c++) worst = Math.max(worst, Math.abs(permutedOutput.data[i * d + c] - output.data[from * d + c]));
  });
  return worst;
}

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

// A [heads, L, L] (or [L, L]) tensor as rows { panel, head, query, key, value } for Plot.cell,
// with the words as labels ("3 sat": position and word, so repeated words stay distinct).
export function weightCells(weights, tokens, panel = '') {
  const [heads, L] = weights.shape.length === 3 ? weights.shape : [1, weights.shape[0]];
  const label = (i) => `${i} ${tokens[i]}`;
  const rows = [];
  for (let h = 0; h < heads; h++)
    for (let i = 0; i < L; i++)
      for (let j = 0; j < L; j++) rows.push({ panel, head: `head ${h}`, query: label(i), key: label(j), value: weights.data[(h * L + i) * L + j] });
  return rows;
}

// For a square [L, L] matrix: the spread (max - min) of each diagonal j - i = k. A matrix that
// depends only on the offset j - i (a Toeplitz matrix) has spread 0 on every diagonal.
export function diagonalSpread(t) {
  const [L, L2] = t.shape;
  if (L !== L2) throw new RangeError(`diagonalSpread: expected a square matrix, got [${t.shape}]`);
  const out = [];
  for (let k = -(L - 1); k < L; k++) {
    let lo = Infinity,
      hi = -Infinity;
    for (let i = Math.max(0, -k); i < Math.min(L, L - k); i++) {
      const v = t.data[i * L + i + k];
      lo = Math.min(lo, v);
      hi = Math.max(hi, v);
    }
    out.push({ offset: k, spread: hi - lo });
  }
  return out;
}
