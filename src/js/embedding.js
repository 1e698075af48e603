// LearnedEmbedding and TokenEmbedding: JS handles around a table that lives in wasm memory.
// dispose() / [Symbol.dispose] free it; a FinalizationRegistry frees forgotten ones.
import { guard, scope } from './heap.js';
import { Checker, describe } from './validate.js';

const disposeSymbol = Symbol.dispose ?? Symbol.for('Symbol.dispose');
const registry = new FinalizationRegistry((handle) => {
  if (!handle.isDeleted()) handle.delete();
});

class EmbeddingTable {
  #handle;
  #mod;
  #kind;

  constructor(mod, handle, kind) {
    this.#mod = mod;
    this.#handle = handle;
    this.#kind = kind;
    registry.register(this, handle, this);
  }

  #live(fn) {
    if (!this.#handle) throw new TypeError(`posenc.${this.#kind}.${fn}: this ${this.#kind} was disposed`);
    return this.#handle;
  }

  get rows() {
    return this.#live('rows').rows();
  }
  get dModel() {
    return this.#live('dModel').dim();
  }

  // The whole table, copied out as a [rows, dModel] tensor.
  get table() {
    const h = this.#live('table');
    const rows = h.rows();
    const d = h.dim();
    const data = new Float32Array(this.#mod.HEAPU8.buffer.slice(h.dataAddress(), h.dataAddress() + rows * d * 4));
    return { data, shape: [rows, d] };
  }

  // Rows for integer indices: an array / typed array -> [n, d], or a tensor { data, shape } -> [...shape, d].
  // scaleOf(d) gives the factor applied to the rows.
  _lookup(fn, name, indices, limitName, scaleOf) {
    const h = this.#live(fn);
    const c = new Checker(`${this.#kind}.${fn}`);
    let values = indices;
    let shape;
    if (indices && typeof indices === 'object' && !Array.isArray(indices) && !ArrayBuffer.isView(indices) && 'data' in indices) {
      values = indices.data;
      shape = c.shape(`${name}.shape`, indices.shape);
      if (!(Array.isArray(values) || ArrayBuffer.isView(values)))
        throw c.type(`${name}.data must be an array or typed array of integers, got ${describe(values)}`);
      if (shape.reduce((a, b) => a * b, 1) !== values.length)
        throw c.range(`${name}.shape [${shape}] holds ${shape.reduce((a, b) => a * b, 1)} values but data has ${values.length}`);
    }
    const ids = c.numbers(name, values, { integer: true, min: 0 });
    const rows = h.rows();
    const d = h.dim();
    for (let i = 0; i < ids.length; i++)
      if (ids[i] >= rows) throw c.range(`${name}[${i}] is ${ids[i]}, but ${limitName} is ${rows} (valid: 0 .. ${rows - 1})`);
    c.size('the lookup result', ids.length, d);
    const data = scope(this.#mod, `${this.#kind}.${fn}`, (s) => {
      const pIds = s.put(Int32Array.from(ids));
      const pOut = s.alloc(ids.length * d * 4);
      h.lookup(pIds, ids.length, pOut, scaleOf(d));
      return s.get(Float32Array, pOut, ids.length * d);
    });
    return { data, shape: [...(shape ?? [ids.length]), d] };
  }

  dispose() {
    if (!this.#handle) return;
    registry.unregister(this);
    this.#handle.delete();
    this.#handle = null;
  }
  [disposeSymbol]() {
    this.dispose();
  }
  get disposed() {
    return !this.#handle;
  }
  _handle(fn) {
    return this.#live(fn);
  }
}

export class LearnedEmbedding extends EmbeddingTable {
  #mod;
  constructor(mod, handle) {
    super(mod, handle, 'LearnedEmbedding');
    this.#mod = mod;
  }
  get maxLength() {
    return this.rows;
  }
  lookup(positions) {
    return this._lookup('lookup', 'positions', positions, 'maxLength', () => 1);
  }
  // A new table of newMaxLength rows: 'interpolate' (linear, as ViT) or 'tile' (as Longformer).
  resize(newMaxLength, method = 'interpolate') {
    const h = this._handle('resize');
    const c = new Checker('LearnedEmbedding.resize');
    const rows = c.int('newMaxLength', newMaxLength, { min: 1 });
    const m = c.oneOf('method', method, ['interpolate', 'tile']);
    c.size('the resized table', rows, h.dim());
    return new LearnedEmbedding(
      this.#mod,
      guard(this.#mod, 'LearnedEmbedding.resize', () => h.resized(rows, m === 'interpolate' ? 0 : 1)),
    );
  }
}

export class TokenEmbedding extends EmbeddingTable {
  #scale;
  constructor(mod, handle, scale) {
    super(mod, handle, 'TokenEmbedding');
    this.#scale = scale;
  }
  get vocabSize() {
    return this.rows;
  }
  get scale() {
    return this.#scale;
  }
  // Embeddings of token ids, multiplied by sqrt(dModel) when scale is true (Vaswani et al. 3.4).
  lookup(ids) {
    return this._lookup('lookup', 'ids', ids, 'vocabSize', (d) => (this.#scale ? Math.fround(Math.sqrt(d)) : 1));
  }
}
