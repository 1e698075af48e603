// Absolute encodings: sinusoidal, learned, token embeddings, x + PE, and the wavelengths.
import { LearnedEmbedding, TokenEmbedding } from './embedding.js';
import { guard, produce, scope } from './heap.js';
import { Checker, MAX_ELEMENTS } from './validate.js';

const LAYOUTS = ['interleaved', 'split'];
const INITS = ['normal', 'xavier', 'sinusoidal', 'zeros'];

export const absolute = {
  sinusoidal(options) {
    const c = new Checker('sinusoidal');
    const o = c.options(options);
    const dModel = c.int('dModel', o.dModel, { min: 1 });
    const base = c.base(o.base);
    const layout = c.oneOf('layout', o.layout, LAYOUTS, 'interleaved');
    const offset = c.number('offset', o.offset, { def: 0 });
    let positions = null;
    let length;
    if (o.positions !== undefined) {
      positions = c.numbers('positions', o.positions);
      length = c.int('length', o.length, { def: positions.length });
      if (length !== positions.length) throw c.range(`length is ${length} but positions has ${positions.length} values`);
      if (o.offset !== undefined) throw c.type('pass either positions or offset, not both');
    } else {
      length = c.int('length', o.length);
    }
    const n = c.size('the table', length, dModel);
    const data = produce(this._mod, 'sinusoidal', Float32Array, n, (out, s) =>
      this._mod._sinusoidal(
        out,
        length,
        dModel,
        base,
        LAYOUTS.indexOf(layout),
        offset,
        positions ? s.put(positions) : 0,
        positions ? positions.length : 0,
      ),
    );
    return { data, shape: [length, dModel] };
  },

  wavelengths(options) {
    const c = new Checker('wavelengths');
    const o = c.options(options);
    // ceil(dModel / 2) float64 values: at most 2^27 (1 GiB).
    const dModel = c.int('dModel', o.dModel, { min: 1, max: MAX_ELEMENTS });
    const base = c.base(o.base);
    return produce(this._mod, 'wavelengths', Float64Array, Math.ceil(dModel / 2), (out) => this._mod._wavelengths(out, dModel, base));
  },

  learned(options) {
    const c = new Checker('learned');
    const o = c.options(options);
    const maxLength = c.int('maxLength', o.maxLength, { min: 1 });
    const dModel = c.int('dModel', o.dModel, { min: 1 });
    const init = c.oneOf('init', o.init, INITS, 'normal');
    const std = c.number('std', o.std, { def: 0.02, min: 0, max: 1e30 });
    const seed = c.int('seed', o.seed, { def: 0, max: Number.MAX_SAFE_INTEGER });
    c.size('the table', maxLength, dModel);
    return new LearnedEmbedding(
      this._mod,
      guard(this._mod, 'learned', () => this._mod._makeTable(maxLength, dModel, INITS.indexOf(init), std, seed)),
    );
  },

  tokenEmbedding(options) {
    const c = new Checker('tokenEmbedding');
    const o = c.options(options);
    const vocabSize = c.int('vocabSize', o.vocabSize, { min: 1 });
    const dModel = c.int('dModel', o.dModel, { min: 1 });
    const seed = c.int('seed', o.seed, { def: 0, max: Number.MAX_SAFE_INTEGER });
    const scale = c.bool('scale', o.scale, true);
    c.size('the table', vocabSize, dModel);
    return new TokenEmbedding(
      this._mod,
      guard(this._mod, 'tokenEmbedding', () => this._mod._makeTokenTable(vocabSize, dModel, seed)),
      scale,
    );
  },

  // x + p for x of shape [seq, d] or [batch, seq, d]; p is [rows >= seq, d] (its first seq rows are used).
  addPositional(x, p) {
    const c = new Checker('addPositional');
    const xt = c.tensor('x', x, { ranks: [2, 3] });
    const pt = c.tensor('p', p, { ranks: [2] });
    const [batch, seq, d] = xt.shape.length === 3 ? xt.shape : [1, ...xt.shape];
    if (pt.shape[1] !== d) throw c.range(`p has ${pt.shape[1]} columns but x has ${d}`);
    if (pt.shape[0] < seq) throw c.range(`p has ${pt.shape[0]} rows, fewer than the sequence length ${seq} of x`);
    const n = xt.data.length;
    if (n === 0) return { data: new Float32Array(0), shape: xt.shape };
    const data = scope(this._mod, 'addPositional', (s) => {
      const px = s.put(xt.data);
      const pp = s.put(pt.data.subarray(0, seq * d));
      const out = s.alloc(n * 4);
      this._mod._addPositional(px, batch, seq, d, pp, seq, out);
      return s.get(Float32Array, out, n);
    });
    return { data, shape: xt.shape };
  },
};
