// Toy attention and the permutation lab.
import { scope } from './heap.js';
import { Checker, describe } from './validate.js';

const ENCODINGS = ['none', 'sinusoidal', 'learned', 'rope', 'alibi', 't5'];
const MAX_TOKENS = 512;
const MAX_SENTENCE = 65536; // characters, checked before tokenising

// Words (letters/digits, with inner apostrophes) and single punctuation marks, in order.
export function tokenize(sentence) {
  return sentence.match(/[\p{L}\p{N}]+(?:['’][\p{L}\p{N}]+)*|[^\s\p{L}\p{N}]/gu) ?? [];
}

function sentenceTokens(c, sentence = 'The cat sat on the mat') {
  if (typeof sentence !== 'string') throw c.type(`sentence must be a string, got ${describe(sentence)}`);
  if (sentence.length > MAX_SENTENCE) throw c.range(`sentence has ${sentence.length} characters; at most ${MAX_SENTENCE} are allowed`);
  const tokens = tokenize(sentence);
  if (tokens.length === 0) throw c.range(`sentence has no tokens, got ${describe(sentence)}`);
  if (tokens.length > MAX_TOKENS) throw c.range(`sentence has ${tokens.length} tokens; at most ${MAX_TOKENS} are allowed`);
  return tokens;
}

const folded = (tokens) => tokens.map((t) => t.toLowerCase());

export const attention = {
  // softmax(q k^T * scale + bias) v, per head.
  attention(options) {
    const c = new Checker('attention');
    const o = c.options(options);
    const q = c.tensor('q', o.q, { ranks: [2, 3] });
    const k = c.tensor('k', o.k, { ranks: [q.shape.length] });
    const v = c.tensor('v', o.v, { ranks: [q.shape.length] });
    const three = q.shape.length === 3;
    const [seqQ, heads, d] = three ? q.shape : [q.shape[0], 1, q.shape[1]];
    const [seqK, kHeads, kd] = three ? k.shape : [k.shape[0], 1, k.shape[1]];
    const [seqV, vHeads, dv] = three ? v.shape : [v.shape[0], 1, v.shape[1]];
    if (kHeads !== heads || kd !== d) throw c.range(`k has shape [${k.shape}] but q has [${q.shape}]: heads and d must match`);
    if (seqV !== seqK || vHeads !== heads)
      throw c.range(`v has shape [${v.shape}]; it needs ${seqK} rows${three ? ` and ${heads} heads` : ''} like k`);
    if (seqQ === 0 || seqK === 0 || d === 0 || dv === 0) throw c.range('q, k and v must be non-empty');
    let bias = null;
    if (o.bias !== undefined) {
      bias = c.tensor('bias', o.bias, { ranks: [2, 3] });
      const want2 = [seqQ, seqK];
      const ok =
        bias.shape.length === 2
          ? bias.shape.every((x, i) => x === want2[i])
          : bias.shape[0] === heads && bias.shape[1] === seqQ && bias.shape[2] === seqK;
      if (!ok) throw c.range(`bias has shape [${bias.shape}]; expected [${seqQ}, ${seqK}] or [${heads}, ${seqQ}, ${seqK}]`);
    }
    const causal = c.bool('causal', o.causal, false);
    const scale = c.float32('scale', o.scale, 1 / Math.sqrt(d));
    const nOut = c.size('the output', seqQ, heads, dv);
    const nW = c.size('the weights', heads, seqQ, seqK);
    c.work(`attention over q [${q.shape}], k [${k.shape}], v [${v.shape}]`, nW * (d + dv));
    return scope(this._mod, 'attention', (s) => {
      const pq = s.put(q.data);
      const pk = s.put(k.data);
      const pv = s.put(v.data);
      const pb = bias ? s.put(bias.data) : 0;
      const out = s.alloc(nOut * 4);
      const w = s.alloc(nW * 4);
      this._mod._attention(pq, pk, pv, seqQ, seqK, heads, d, dv, pb, bias ? bias.data.length : 0, causal, scale, out, w);
      return {
        output: { data: s.get(Float32Array, out, nOut), shape: three ? [seqQ, heads, dv] : [seqQ, dv] },
        weights: { data: s.get(Float32Array, w, nW), shape: three ? [heads, seqQ, seqK] : [seqQ, seqK] },
      };
    });
  },

  // One toy self-attention layer on a sentence and on its shuffled copy.
  permutationLab(options) {
    const c = new Checker('permutationLab');
    const o = c.options(options);
    const tokens = sentenceTokens(c, o.sentence);
    const encoding = c.oneOf('encoding', o.encoding, ENCODINGS, 'none');
    const dModel = c.int('dModel', o.dModel, { def: 16, min: 4, max: 1024 });
    if (dModel % 2) throw c.range(`dModel must be even (two heads of dModel/2), got ${dModel}`);
    const seed = c.int('seed', o.seed, { def: 0, max: Number.MAX_SAFE_INTEGER });
    let permutation = null;
    if (o.permutation !== undefined) {
      const p = c.numbers('permutation', o.permutation, { integer: true, min: 0, max: tokens.length - 1 });
      const seen = new Set(p);
      if (p.length !== tokens.length || seen.size !== tokens.length)
        throw c.range(
          `permutation must be a permutation of 0 .. ${tokens.length - 1} (the sentence has ${tokens.length} tokens), got [${Array.from(p).join(', ')}]`,
        );
      permutation = Int32Array.from(p);
    }
    const L = tokens.length;
    const r = scope(this._mod, 'permutationLab', (s) => {
      const pp = permutation ? s.put(permutation) : 0;
      return this._mod._permutationLab(folded(tokens), pp, permutation ? L : 0, ENCODINGS.indexOf(encoding), dModel, seed);
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

  // Seed 001's attention score split into content/position terms.
  scoreTerms(options) {
    const c = new Checker('scoreTerms');
    const o = c.options(options);
    const tokens = sentenceTokens(c, o.sentence);
    const encoding = c.oneOf('encoding', o.encoding, ['sinusoidal', 'learned'], 'sinusoidal');
    const dModel = c.int('dModel', o.dModel, { def: 16, min: 4, max: 1024 });
    if (dModel % 2) throw c.range(`dModel must be even (the lab's two heads of dModel/2), got ${dModel}`);
    const seed = c.int('seed', o.seed, { def: 0, max: Number.MAX_SAFE_INTEGER });
    const r = scope(this._mod, 'scoreTerms', () => this._mod._scoreTerms(folded(tokens), ENCODINGS.indexOf(encoding), dModel, seed));
    const L = tokens.length;
    const t = (data) => ({ data, shape: [L, L] });
    return {
      tokens,
      contentContent: t(r.contentContent),
      contentPosition: t(r.contentPosition),
      positionContent: t(r.positionContent),
      positionPosition: t(r.positionPosition),
      total: t(r.total),
    };
  },
};
