// Absolute encodings: sinusoidal, learned, token embeddings, x + PE, and the wavelengths.
import { DEFAULTS, ENUMS } from './contract.js';
import { LearnedEmbedding, TokenEmbedding } from './embedding.js';
import { angleTerms, checkCost, estimateSeconds, WIDE_FREQUENCIES } from './cost.js';
import { made, produce, produceRows, scope } from './heap.js';
import { Checker, MAX_ELEMENTS, resultType } from './validate.js';

const LAYOUTS = ENUMS.sinusoidalLayout;
const SPACINGS = ENUMS.sinusoidalSpacing;
const INITS = ENUMS.learnedInit;

// Explicit positions (a Float64Array) or undefined; `length` defaults to their count.
function positionsOption(c, o, rows, rowsName) {
  if (o.positions === undefined) return undefined;
  if (o.offset !== undefined) throw c.type('pass either positions or offset, not both');
  const positions = c.numbers('positions', o.positions);
  if (rows !== undefined && positions.length !== rows) throw c.range(`positions has ${positions.length} values but ${rowsName} is ${rows}`);
  return positions;
}

export const absolute = {
  sinusoidal(options) {
    const c = new Checker('sinusoidal');
    const o = c.options(options, ['length', 'dModel', 'base', 'layout', 'spacing', 'offset', 'positions', 'dtype', 'out']);
    const dModel = c.int('dModel', o.dModel, { min: 1 });
    const base = c.base(o.base);
    const layout = c.oneOf('layout', o.layout, LAYOUTS, DEFAULTS.sinusoidalLayout);
    const spacing = c.oneOf('spacing', o.spacing, SPACINGS, DEFAULTS.sinusoidalSpacing);
    const offset = c.number('offset', o.offset, { def: 0 });
    const length = o.positions !== undefined && o.length === undefined ? undefined : c.int('length', o.length);
    const positions = positionsOption(c, o, length, 'length');
    const rows = length ?? positions.length;
    const n = c.size('the table', rows, dModel);
    const dtype = c.dtype(o.dtype);
    const out = c.out(o.out, Float32Array, n, dtype);
    const h = Math.ceil(dModel / 2);
    const freqs = { base, step: spacing === 'vaswani' ? 2 / dModel : 1 / Math.max(1, h - 1), count: h };
    const terms = {
      [h > WIDE_FREQUENCIES ? 'sinusoidalWideValue' : 'sinusoidalValue']: n,
      sinusoidalFrequency: h,
      ...angleTerms(rows, positions ? (r) => positions[r] : (r) => offset + r, freqs),
    };
    checkCost(c, 'this table', estimateSeconds(this.backend, terms), 'compute it in blocks of rows (length and offset, or fewer positions per call)');
    const mod = this._mod;
    const layoutIndex = LAYOUTS.indexOf(layout);
    let table;
    // rows in cache-sized blocks: one call when the table is one block, else from one core Table opened
    // (with its setup) at the first block and deleted when the call ends
    const data = produceRows(
      mod,
      'sinusoidal',
      Float32Array,
      rows,
      dModel,
      (p, r0, k, s) => {
        if (!table) {
          const args = {
            rows,
            dModel,
            base,
            layout: layoutIndex,
            offset,
            positions: positions ? s.put(positions) : 0,
            spacing: SPACINGS.indexOf(spacing),
            out: k === rows ? p : 0,
          };
          if (k === rows) return mod._sinusoidal(args);
          table = made(mod, 'sinusoidal', mod._sinusoidalOpen(args));
          s.onExit(() => table.delete());
        }
        return table.write({ out: p, first: r0, rows: k });
      },
      out,
      undefined,
      dtype,
    );
    return { data, shape: [rows, dModel] };
  },

  // MAE's 2-D sin-cos table for a height x width grid of patches: [clsToken + height * width, dModel].
  sinusoidal2d(options) {
    const c = new Checker('sinusoidal2d');
    const o = c.options(options, ['height', 'width', 'dModel', 'base', 'clsToken', 'dtype', 'out']);
    const height = c.int('height', o.height);
    const width = c.int('width', o.width);
    const dModel = c.int('dModel', o.dModel, { min: 1 }); // a multiple of 4: the core's rule
    const base = c.base(o.base);
    const clsToken = c.bool('clsToken', o.clsToken, false);
    const rows = c.size('the grid', height, width) + (clsToken ? 1 : 0);
    const n = c.size('the table', rows, dModel);
    const dtype = c.dtype(o.dtype);
    const out = c.out(o.out, Float32Array, n, dtype);
    const data = produce(
      this._mod,
      'sinusoidal2d',
      Float32Array,
      n,
      (p) => this._mod._sinusoidal2d({ out: p, height, width, dModel, base, clsToken }),
      out,
      dtype,
    );
    return { data, shape: [rows, dModel] };
  },

  wavelengths(options) {
    const c = new Checker('wavelengths');
    const o = c.options(options, ['dModel', 'base', 'spacing', 'out']);
    // ceil(dModel / 2) float64 values: at most 2^27 (1 GiB).
    const dModel = c.int('dModel', o.dModel, { max: MAX_ELEMENTS });
    const base = c.base(o.base);
    const spacing = c.oneOf('spacing', o.spacing, SPACINGS, DEFAULTS.sinusoidalSpacing);
    const n = Math.ceil(dModel / 2);
    const out = c.out(o.out, Float64Array, n);
    checkCost(c, `${n} wavelengths`, estimateSeconds(this.backend, { wavelength: n }), 'ask for a smaller dModel');
    return produce(
      this._mod,
      'wavelengths',
      Float64Array,
      n,
      (p) => this._mod._wavelengths({ out: p, dModel, base, spacing: SPACINGS.indexOf(spacing) }),
      out,
    );
  },

  learned(options) {
    const c = new Checker('learned');
    const o = c.options(options, ['maxLength', 'dModel', 'init', 'std', 'seed']);
    const maxLength = c.int('maxLength', o.maxLength);
    const dModel = c.int('dModel', o.dModel);
    const init = c.oneOf('init', o.init, INITS, DEFAULTS.learnedInit);
    const std = c.number('std', o.std, { def: DEFAULTS.learnedStd });
    const seed = c.int('seed', o.seed, { def: 0, max: Number.MAX_SAFE_INTEGER });
    const n = maxLength * dModel; // the core allocates the table, and refuses past LIMITS.maxElements
    const draw = { normal: 'normalValue', xavier: 'uniformValue' }[init]; // 'sinusoidal' and 'zeros' are fast at any size
    if (draw) checkCost(c, `a ${init} init of ${n} values`, estimateSeconds(this.backend, { [draw]: n }), 'make a smaller table');
    const handle = made(this._mod, 'learned', this._mod._makeTable({ rows: maxLength, dim: dModel, init: INITS.indexOf(init), std, seed }));
    return new LearnedEmbedding(this._mod, handle, maxLength, dModel);
  },

  tokenEmbedding(options) {
    const c = new Checker('tokenEmbedding');
    const o = c.options(options, ['vocabSize', 'dModel', 'seed', 'scale']);
    const vocabSize = c.int('vocabSize', o.vocabSize, { min: 1 });
    const dModel = c.int('dModel', o.dModel, { min: 1 });
    const seed = c.int('seed', o.seed, { def: 0, max: Number.MAX_SAFE_INTEGER });
    const scale = c.bool('scale', o.scale, true);
    const n = c.size('the table', vocabSize, dModel);
    checkCost(c, `a uniform init of ${n} values`, estimateSeconds(this.backend, { uniformValue: n }), 'make a smaller table');
    const handle = made(this._mod, 'tokenEmbedding', this._mod._makeTokenTable({ vocab: vocabSize, dim: dModel, seed }));
    return new TokenEmbedding(this._mod, handle, scale, vocabSize, dModel);
  },

  // x + p for x of shape [seq, d] or [batch, seq, d]; p is [rows >= seq, d] (its first seq rows are used).
  addPositional(x, p, options) {
    const c = new Checker('addPositional');
    const o = c.options(options, ['dtype', 'out']);
    const dtypeOption = o.dtype === undefined ? undefined : c.dtype(o.dtype);
    const xt = c.tensor('x', x, { ranks: [2, 3], half: dtypeOption });
    const pt = c.tensor('p', p, { ranks: [2], half: dtypeOption });
    const dtype = dtypeOption ?? (xt.elem === 'float32' ? 'float32' : xt.elem);
    const [batch, seq, d] = xt.shape.length === 3 ? xt.shape : [1, ...xt.shape];
    if (pt.shape[1] !== d) throw c.range(`p has ${pt.shape[1]} columns but x has ${d}`);
    if (pt.shape[0] < seq) throw c.range(`p has ${pt.shape[0]} rows, fewer than the sequence length ${seq} of x`);
    const n = xt.length;
    checkCost(c, `x [${xt.shape}] + p`, estimateSeconds(this.backend, { addValue: n }), 'add in slices of rows or batch entries');
    const out = c.out(o.out, Float32Array, n, dtype);
    if (n === 0) return { data: out ?? new (resultType(dtype))(0), shape: xt.shape };
    const pRows = { ...pt, byteLength: seq * d * (pt.elem === 'float32' ? 4 : 2) }; // its first seq rows
    const data = scope(this._mod, 'addPositional', (s) => {
      const px = s.put(xt);
      const pp = s.put(pRows);
      const po = s.alloc(n * 4);
      s.check(this._mod._addPositional({ x: px, batch, seq, dim: d, p: pp, out: po }));
      return s.get(Float32Array, po, n, out, dtype);
    });
    return { data, shape: xt.shape };
  },
};
