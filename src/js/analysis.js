// Analyses of tensors and encodings.
import { produce, scope } from './heap.js';
import { Checker } from './validate.js';

const METRICS = ['dot', 'cosine'];

function rows(c, t) {
  const x = c.tensor('t', t, { ranks: [2] });
  if (x.shape[0] < 1 || x.shape[1] < 1) throw c.range(`t must have at least one row and one column, got shape [${x.shape}]`);
  return { data: x.data, rows: x.shape[0], dim: x.shape[1] };
}

export const analysis = {
  // { min, max, mean, std } of every value (std divides by N, as NumPy).
  stats(t) {
    const c = new Checker('stats');
    const data = ArrayBuffer.isView(t) ? c.tensor('t', t, { shape: [t.length] }).data : c.tensor('t', t).data;
    if (data.length === 0) throw c.range('t must hold at least one value');
    return scope(this._mod, 'stats', (s) => this._mod._stats(s.put(data), data.length));
  },

  // [L, L] dot products or cosines between the rows of t [L, d].
  similarity(t, options) {
    const c = new Checker('similarity');
    const o = c.options(options);
    const x = rows(c, t);
    const metric = c.oneOf('metric', o.metric, METRICS, 'dot');
    const n = c.size('the similarity matrix', x.rows, x.rows);
    c.work(`the similarity of t [${x.rows}, ${x.dim}]`, n * x.dim);
    const data = produce(this._mod, 'similarity', Float32Array, n, (out, s) =>
      this._mod._similarity(s.put(x.data), x.rows, x.dim, METRICS.indexOf(metric), out),
    );
    return { data, shape: [x.rows, x.rows] };
  },

  // The [d, d] rotation M_k with PE(p + k) = M_k PE(p) (interleaved layout, even dModel).
  shiftMatrix(options) {
    const c = new Checker('shiftMatrix');
    const o = c.options(options);
    const dModel = c.int('dModel', o.dModel, { min: 2, max: 8192 });
    if (dModel % 2) throw c.range(`dModel must be even (an odd last column has no cosine partner), got ${dModel}`);
    const base = c.base(o.base);
    const k = c.number('k', o.k);
    const data = produce(this._mod, 'shiftMatrix', Float32Array, dModel * dModel, (out) => this._mod._shiftMatrix(out, dModel, base, k));
    return { data, shape: [dModel, dModel] };
  },

  // For each row of t [L, d], the Euclidean distance to its nearest other row.
  nearestDistances(t) {
    const c = new Checker('nearestDistances');
    const x = rows(c, t);
    if (x.rows < 2) throw c.range(`t needs at least 2 rows, got ${x.rows}`);
    c.work(`the distances between the rows of t [${x.rows}, ${x.dim}]`, ((x.rows * (x.rows - 1)) / 2) * x.dim);
    return produce(this._mod, 'nearestDistances', Float32Array, x.rows, (out, s) => this._mod._nearestDistances(s.put(x.data), x.rows, x.dim, out));
  },
};
