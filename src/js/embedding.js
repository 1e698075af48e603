// LearnedEmbedding and TokenEmbedding: JS handles around a table that lives in wasm memory (an embind
// Table, src/bindings/bindings.cpp; this module is its single owner). dispose() / [Symbol.dispose]
// delete it; a FinalizationRegistry deletes forgotten ones.
import { ENUMS } from './contract.js';
import { checkCost, estimateSeconds } from './cost.js';
import { disown, disposeSymbol, made, owns, scope } from './heap.js';
import { Checker, guardPrototype } from './validate.js';

// The backend of a core module, from the instruction set it reports (src/js/loader.js BUILDS).
const backendOf = (mod) => (mod._simdArch() === 'wasm' ? 'wasm-simd' : 'wasm-scalar');

class EmbeddingTable {
  #handle;
  #mod;
  #kind;
  #rows;
  #dim;

  // rows and dim: the size the core made the table with (a table never changes its size)
  constructor(mod, handle, kind, rows, dim) {
    this.#mod = mod;
    this.#handle = handle;
    this.#kind = kind;
    this.#rows = rows;
    this.#dim = dim;
    owns(this, handle);
  }

  #live(fn) {
    if (!this.#handle) throw new TypeError(`posenc.${this.#kind}.${fn}: this ${this.#kind} was disposed`);
    return this.#handle;
  }

  get rows() {
    this.#live('rows');
    return this.#rows;
  }
  get dModel() {
    this.#live('dModel');
    return this.#dim;
  }

  // The whole table, copied out as a [rows, dModel] tensor.
  get table() {
    const h = this.#live('table');
    const [rows, d] = [this.#rows, this.#dim];
    const data = new Float32Array(rows * d);
    data.set(new Float32Array(this.#mod.HEAPU8.buffer, h.data(), rows * d));
    return { data, shape: [rows, d] };
  }

  // Rows for integer indices: an array / typed array -> [n, d], or a tensor { data, shape } -> [...shape, d].
  // scaleOf(d) gives the factor applied to the rows.
  _lookup(fn, name, indices, options, limitName, scaleOf) {
    this.#live(fn);
    const where = `${this.#kind}.${fn}`;
    const c = new Checker(where);
    const o = c.options(options, ['dtype', 'out']);
    const dtype = c.dtype(o.dtype);
    // a list gives [n, d]; a tensor (ONNX Runtime, TF.js, transformers.js, { data, shape }) or a nested
    // array keeps its shape: [...shape, d]
    const { data: ids, shape } = c.list(name, indices, { integer: true, min: 0 });
    const mod = this.#mod;
    // the handle is taken after every input was read: a getter that disposed the table is caught here
    const h = this.#live(fn);
    const [rows, d] = [this.#rows, this.#dim];
    for (let i = 0; i < ids.length; i++)
      if (ids[i] >= rows) throw c.range(`${name}[${i}] is ${ids[i]}, but ${limitName} is ${rows} (valid: 0 .. ${rows - 1})`);
    const n = c.size('the lookup result', ids.length, d);
    const out = c.out(o.out, Float32Array, n, dtype); // (intrinsic checks only: no user code)
    checkCost(c, `looking up ${ids.length} rows`, estimateSeconds(backendOf(mod), { lookupValue: n }), `look up fewer ${name} per call`);
    const data = scope(mod, where, (s) => {
      const pIds = s.put(Int32Array.from(ids));
      const pOut = s.alloc(n * 4);
      s.check(h.lookup({ ids: pIds, n: ids.length, out: pOut, scale: scaleOf(d) }));
      return s.get(Float32Array, pOut, n, out, dtype);
    });
    return { data, shape: [...shape, d] };
  }

  dispose() {
    if (!this.#handle) return;
    disown(this, this.#handle);
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
  constructor(mod, handle, rows, dim) {
    super(mod, handle, 'LearnedEmbedding', rows, dim);
    this.#mod = mod;
  }
  get maxLength() {
    this._handle('maxLength');
    return this.rows;
  }
  lookup(positions, options) {
    return this._lookup('lookup', 'positions', positions, options, 'maxLength', () => 1);
  }
  // A new table of newMaxLength rows: 'interpolate' (linear, as ViT) or 'tile' (as Longformer).
  resize(newMaxLength, method = 'interpolate') {
    const h = this._handle('resize');
    const c = new Checker('LearnedEmbedding.resize');
    const rows = c.int('newMaxLength', newMaxLength);
    const m = c.oneOf('method', method, ENUMS.resizeMethod);
    const methodIndex = ENUMS.resizeMethod.indexOf(m);
    return new LearnedEmbedding(this.#mod, made(this.#mod, 'LearnedEmbedding.resize', h.resized({ rows, method: methodIndex })), rows, this.dModel);
  }
}

export class TokenEmbedding extends EmbeddingTable {
  #scale;
  constructor(mod, handle, scale, rows, dim) {
    super(mod, handle, 'TokenEmbedding', rows, dim);
    this.#scale = scale;
  }
  get vocabSize() {
    this._handle('vocabSize');
    return this.rows;
  }
  get scale() {
    return this.#scale;
  }
  // Embeddings of token ids, multiplied by sqrt(dModel) when scale is true (Vaswani et al. 3.4).
  lookup(ids, options) {
    return this._lookup('lookup', 'ids', ids, options, 'vocabSize', (d) => (this.#scale ? Math.fround(Math.sqrt(d)) : 1));
  }
}

for (const [proto, kind] of [
  [EmbeddingTable.prototype, 'EmbeddingTable'],
  [LearnedEmbedding.prototype, 'LearnedEmbedding'],
  [TokenEmbedding.prototype, 'TokenEmbedding'],
])
  guardPrototype(proto, kind);
