// Analyses of tensors and encodings.
import { DEFAULTS, ENUMS, LIMITS } from './contract.js';
import { produce, scope } from './heap.js';
import { checkCost, estimateSeconds, WIDE_ROW } from './cost.js';
import { Checker, typedArrayName, typedLength } from './validate.js';

const METRICS = ENUMS.metric;

function rows(c, t) {
  const x = c.tensor('t', t, { ranks: [2] }); // its rows and columns: the core's rules
  return { snapshot: x, rows: x.shape[0], dim: x.shape[1] };
}

export const analysis = {
  // { min, max, mean, std } of every value (std divides by N, as NumPy).
  stats(t) {
    const c = new Checker('stats');
    const x = typedArrayName(t) === 'Float32Array' ? c.tensor('t', t, { shape: [typedLength(t)] }) : c.tensor('t', t);
    return scope(this._mod, 'stats', (s) => {
      const p = s.alloc(32);
      s.check(this._mod._stats({ x: s.put(x), rows: x.length, dim: 1, out: p }));
      const [min, max, mean, std] = s.get(Float64Array, p, 4);
      return { min, max, mean, std };
    });
  },

  // [L, L] dot products or cosines between the rows of t [L, d].
  similarity(t, options) {
    const c = new Checker('similarity');
    const o = c.options(options, ['metric', 'out']);
    const metric = c.oneOf('metric', o.metric, METRICS, DEFAULTS.metric);
    const x = rows(c, t);
    const n = c.size('the similarity matrix', x.rows, x.rows);
    checkCost(
      c,
      `the similarity of t [${x.rows}, ${x.dim}]`,
      estimateSeconds(this.backend, { similarityOutput: n, similarityOutputDim: n * x.dim, inputValue: x.rows * x.dim }),
      'compare fewer rows per call',
    );
    const out = c.out(o.out, Float32Array, n);
    const data = produce(
      this._mod,
      'similarity',
      Float32Array,
      n,
      (p, s) => this._mod._similarity({ x: s.put(x.snapshot), rows: x.rows, dim: x.dim, metric: METRICS.indexOf(metric), out: p }),
      out,
    );
    return { data, shape: [x.rows, x.rows] };
  },

  // The [d, d] rotation M_k with PE(p + k) = M_k PE(p) (interleaved layout, even dModel).
  shiftMatrix(options) {
    const c = new Checker('shiftMatrix');
    const o = c.options(options, ['dModel', 'base', 'k', 'out']);
    const dModel = c.int('dModel', o.dModel, { min: 2, max: LIMITS.maxShiftDModel });
    const base = c.base(o.base);
    const k = c.number('k', o.k);
    const out = c.out(o.out, Float32Array, dModel * dModel);
    const data = produce(this._mod, 'shiftMatrix', Float32Array, dModel * dModel, (p) => this._mod._shiftMatrix({ out: p, dModel, base, k }), out);
    return { data, shape: [dModel, dModel] };
  },

  // For each row of t [L, d], the Euclidean distance to its nearest other row.
  nearestDistances(t, options) {
    const c = new Checker('nearestDistances');
    const o = c.options(options, ['out']);
    const x = rows(c, t);
    const pairs = (x.rows * (x.rows - 1)) / 2;
    checkCost(
      c,
      `the distances between the rows of t [${x.rows}, ${x.dim}]`,
      estimateSeconds(this.backend, {
        nearestPair: pairs,
        [x.dim > WIDE_ROW ? 'nearestPairDimWide' : 'nearestPairDim']: pairs * x.dim,
        inputValue: x.rows * x.dim,
      }),
      'use fewer rows',
    );
    const out = c.out(o.out, Float32Array, x.rows);
    return produce(
      this._mod,
      'nearestDistances',
      Float32Array,
      x.rows,
      (p, s) => this._mod._nearestDistances({ x: s.put(x.snapshot), rows: x.rows, dim: x.dim, out: p }),
      out,
    );
  },
};
