// The permutation lab and the attention score's four terms (src/core/lab.hpp), in the lab module.
import { DEFAULTS, ENUMS, LIMITS } from '../contract.js';
import { check, scope } from '../heap.js';
import { Checker, describe } from '../validate.js';

const ENCODINGS = ENUMS.labEncoding;
// The `encoding` option: one of `allowed` (an ENUMS list), or 'nope' (NoPE, Kazemnejad et al. 2023: no
// positional encoding), 'none' under the paper's name.
export function encodingOption(c, value, allowed, def) {
  const e = c.oneOf('encoding', value, [...allowed, 'nope'], def);
  return e === 'nope' ? 'none' : e;
}
const { maxSentenceChars: MAX_SENTENCE, labHeads: HEADS } = LIMITS;
const encoder = new TextEncoder();

// The sentence as the core reads it (src/bindings/lab.cpp SentenceArgs, fields of the call's struct): the tokens' UTF-8 bytes and the
// end offset of each token, the encoding, the model width and the seed.
function sentenceArgs(s, tokens, encoding, dModel, seed) {
  const parts = tokens.map((t) => encoder.encode(t));
  const ends = new Int32Array(parts.length);
  let n = 0;
  parts.forEach((b, i) => (ends[i] = n += b.length));
  const bytes = new Uint8Array(n);
  parts.forEach((b, i) => bytes.set(b, ends[i] - b.length));
  return { bytes: s.put(bytes), ends: s.put(ends), nTokens: tokens.length, encoding: ENCODINGS.indexOf(encoding), dModel, seed };
}

// Words (letters/digits, with inner apostrophes) and single punctuation marks, in order.
export function tokenize(sentence) {
  return sentence.match(/[\p{L}\p{N}]+(?:['’][\p{L}\p{N}]+)*|[^\s\p{L}\p{N}]/gu) ?? [];
}

function sentenceTokens(c, sentence = 'The cat sat on the mat') {
  if (typeof sentence !== 'string') throw c.type(`sentence must be a string, got ${describe(sentence)}`);
  if (sentence.length > MAX_SENTENCE) throw c.range(`sentence has ${sentence.length} characters; at most ${MAX_SENTENCE} are allowed`);
  return tokenize(sentence);
}

// The dModel option (an integer; its range and parity are the core's rules) and the core's check of
// the sentence's length, the encoding and dModel, before anything is allocated.
function checkedArgs(c, lab, tokens, encoding, dModel) {
  const d = c.int('dModel', dModel, { def: DEFAULTS.labDModel });
  check(lab, c.fn, lab._labCheck({ nTokens: tokens.length, encoding: ENCODINGS.indexOf(encoding), dModel: d }));
  return d;
}

const folded = (tokens) => tokens.map((t) => t.toLowerCase());

export const lab = {
  // One toy self-attention layer on a sentence and on its shuffled copy.
  permutationLab(options) {
    const c = new Checker('permutationLab');
    const o = c.options(options, ['sentence', 'permutation', 'encoding', 'dModel', 'seed']);
    const tokens = sentenceTokens(c, o.sentence);
    const encoding = encodingOption(c, o.encoding, ENCODINGS, DEFAULTS.labEncoding);
    const dModel = checkedArgs(c, this._lab, tokens, encoding, o.dModel);
    const seed = c.int('seed', o.seed, { def: 0, max: Number.MAX_SAFE_INTEGER });
    let permutation = null;
    if (o.permutation !== undefined) {
      // Int32 indices; that they are a permutation of the words is the core's rule
      permutation = Int32Array.from(c.numbers('permutation', o.permutation, { integer: true, min: -(2 ** 31), max: 2 ** 31 - 1 }));
    }
    const L = tokens.length;
    const mod = this._lab;
    const r = scope(mod, 'permutationLab', (s) => {
      const sentence = sentenceArgs(s, folded(tokens), encoding, dModel, seed);
      const pp = permutation ? s.put(permutation) : 0;
      const [perm, output, permutedOutput, weights, permutedWeights, metrics] = [
        L * 4,
        L * dModel * 4,
        L * dModel * 4,
        HEADS * L * L * 4,
        HEADS * L * L * 4,
        16,
      ].map((bytes) => s.alloc(bytes));
      s.check(
        mod._permutationLab({
          ...sentence,
          permutation: pp,
          nPermutation: permutation ? permutation.length : 0,
          outPermutation: perm,
          output,
          permutedOutput,
          weights,
          permutedWeights,
          metrics,
        }),
      );
      const m = s.get(Float64Array, metrics, 2);
      return {
        permutation: s.get(Int32Array, perm, L),
        output: s.get(Float32Array, output, L * dModel),
        permutedOutput: s.get(Float32Array, permutedOutput, L * dModel),
        weights: s.get(Float32Array, weights, HEADS * L * L),
        permutedWeights: s.get(Float32Array, permutedWeights, HEADS * L * L),
        heads: HEADS,
        equivarianceError: m[0],
        pooledDifference: m[1],
      };
    });
    return {
      tokens,
      permutedTokens: Array.from(r.permutation, (i) => tokens[i]),
      permutation: Array.from(r.permutation),
      encoding,
      output: { data: r.output, shape: [L, dModel] },
      permutedOutput: { data: r.permutedOutput, shape: [L, dModel] },
      weights: { data: r.weights, shape: [r.heads, L, L] },
      permutedWeights: { data: r.permutedWeights, shape: [r.heads, L, L] },
      equivarianceError: r.equivarianceError,
      pooledDifference: r.pooledDifference,
    };
  },

  // The attention score with absolute encodings split into its content and position terms.
  scoreTerms(options) {
    const c = new Checker('scoreTerms');
    const o = c.options(options, ['sentence', 'encoding', 'dModel', 'seed']);
    const tokens = sentenceTokens(c, o.sentence);
    // which encodings are additive (have position terms to split off): the core's rule
    const encoding = encodingOption(c, o.encoding, ENCODINGS, 'sinusoidal');
    const dModel = checkedArgs(c, this._lab, tokens, encoding, o.dModel);
    const seed = c.int('seed', o.seed, { def: 0, max: Number.MAX_SAFE_INTEGER });
    const L = tokens.length;
    const terms = scope(this._lab, 'scoreTerms', (s) => {
      const p = s.alloc(5 * L * L * 4);
      s.check(this._lab._scoreTerms({ ...sentenceArgs(s, folded(tokens), encoding, dModel, seed), terms: p }));
      return [0, 1, 2, 3, 4].map((i) => ({ data: s.get(Float32Array, p + i * L * L * 4, L * L), shape: [L, L] }));
    });
    const [contentContent, contentPosition, positionContent, positionPosition, total] = terms;
    return { tokens, contentContent, contentPosition, positionContent, positionPosition, total };
  },
};
