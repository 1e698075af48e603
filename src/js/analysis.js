// Analyses of tensors and encodings.
import { scope } from './heap.js';
import { Checker } from './validate.js';

export const analysis = {
  // { min, max, mean, std } of every value (std divides by N, as NumPy).
  stats(t) {
    const c = new Checker('stats');
    const data = ArrayBuffer.isView(t) ? c.tensor('t', t, { shape: [t.length] }).data : c.tensor('t', t).data;
    if (data.length === 0) throw c.range('t must hold at least one value');
    return scope(this._mod, (s) => this._mod._stats(s.put(data), data.length));
  },
};
