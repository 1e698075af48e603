// Argument validation, and the snapshot of every input. Each public function reads its options once
// (unknown keys are a TypeError with a did-you-mean hint), reads each shape once into validated
// integers, and takes one fixed view of each tensor's bytes, sized from the validated shape: what
// the kernel reads cannot change afterwards, whatever a getter, a subclass or a resizable buffer does.
// Wrong type or shape -> TypeError, a value out of range -> RangeError; messages name the function,
// the argument, the value received and what is allowed. Limits come from contract.js.
import { DEFAULTS, LIMITS } from './contract.js';

export const { maxElements: MAX_ELEMENTS, minBase: MIN_BASE, maxBase: MAX_BASE } = LIMITS;
const MAX_INT = 2 ** 31 - 1;

// The engine's own TypedArray accessors: a subclass or an own property cannot lie through them.
const TypedArray = Object.getPrototypeOf(Int8Array.prototype);
const intrinsic = (name) => Object.getOwnPropertyDescriptor(TypedArray, name).get;
const taTag = intrinsic(Symbol.toStringTag);
const taBuffer = intrinsic('buffer');
const taByteOffset = intrinsic('byteOffset');
const taByteLength = intrinsic('byteLength');
const taLength = intrinsic('length');
const taSet = TypedArray.set;

// 'Float32Array', 'Int32Array', ... for a typed array; undefined otherwise.
export function typedArrayName(v) {
  return ArrayBuffer.isView(v) ? taTag.call(v) : undefined;
}

// target.set(source, offset) with the engine's own method (a subclass may override `set`).
export function typedSet(target, source, offset = 0) {
  taSet.call(target, source, offset);
}

// True when typed array `a` shares any byte with the tensor snapshot `t` (validate.js tensor()).
export function overlaps(a, t) {
  if (taBuffer.call(a) !== t.buffer) return false;
  const start = taByteOffset.call(a);
  return start < t.byteOffset + t.byteLength && t.byteOffset < start + taByteLength.call(a);
}

// The element count as the engine sees it (0 when the buffer is detached or out of bounds).
export function typedLength(v) {
  return taLength.call(v);
}

// 'an' before a vowel sound: an Int32Array, an object; but a Uint16Array ("you-int").
const article = (word) => (/^(?!uint)[aeiou]/i.test(word) ? 'an' : 'a');

// Half-float results: Float16Array where the engine has one (float16 only), else Uint16Array bits.
const HALF_DTYPES = Object.freeze(['float16', 'bfloat16']);
// The typed arrays that hold each float element type of a tensor (ONNX Runtime's `type` names).
const FLOAT_TYPE_DATA = Object.freeze({ float32: ['Float32Array'], float16: ['Float16Array', 'Uint16Array'], bfloat16: ['Uint16Array'] });
export function resultType(dtype) {
  if (dtype === 'float32') return Float32Array;
  return dtype === 'float16' && typeof globalThis.Float16Array === 'function' ? globalThis.Float16Array : Uint16Array;
}

export function describe(v) {
  if (v === null) return 'null';
  if (v === undefined) return 'undefined';
  if (typeof v === 'string') return JSON.stringify(v.length > 40 ? `${v.slice(0, 40)}…` : v);
  if (typeof v === 'number') return Number.isNaN(v) ? 'NaN' : String(v);
  if (typeof v === 'boolean') return String(v);
  if (typeof v === 'bigint') return `${v}n (a BigInt)`;
  if (typeof v === 'symbol') return 'a symbol';
  if (Array.isArray(v)) return `an array of length ${v.length}`;
  const tag = typedArrayName(v);
  if (tag) return `${article(tag)} ${tag} of length ${taLength.call(v)}`;
  if (ArrayBuffer.isView(v)) return 'a DataView';
  if (typeof v === 'function') return 'a function';
  return `an object (${Object.prototype.toString.call(v).slice(8, -1)})`;
}

// Edit distance, for did-you-mean hints.
function distance(a, b) {
  const row = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    let prev = row[0];
    row[0] = i;
    for (let j = 1; j <= b.length; j++) {
      const next = Math.min(row[j] + 1, row[j - 1] + 1, prev + (a[i - 1] === b[j - 1] ? 0 : 1));
      prev = row[j];
      row[j] = next;
    }
  }
  return row[b.length];
}

const camel = (k) => k.replace(/_([a-z0-9])/g, (_, c) => c.toUpperCase());

// Other libraries' names for posenc's options (PyTorch's `inplace`, Keras's `output`, transformers'
// `seq_len`, `rope_theta` and `position_ids`), and the names other functions of posenc give the same
// thing: the first of a name's candidates that the call allows is suggested.
const SYNONYM_GROUPS = [
  [['inplace', 'in_place', 'output'], ['out']],
  [
    ['seq_len', 'seqlen', 'seq_length', 'seqlength', 'sequence_length'],
    ['length', 'queryLength'],
  ],
  [['length'], ['maxLength', 'queryLength']],
  [['dim'], ['dModel', 'rotaryDim']],
  [['dmodel', 'rotarydim'], ['dim']],
  [['headdim'], ['dim', 'rotaryDim']],
  [['heads', 'nheads', 'num_heads'], ['numHeads']],
  [['maxlen', 'max_len', 'max_position_embeddings'], ['maxLength']],
  [['vocab'], ['vocabSize']],
  [['interleaved'], ['layout']],
  [
    ['mask', 'attn_mask', 'attnmask'],
    ['bias', 'attentionMask'],
  ],
  [['rope_theta', 'theta'], ['base']],
  [['position_ids'], ['positions']],
];
const SYNONYMS = Object.fromEntries(SYNONYM_GROUPS.flatMap(([names, targets]) => names.map((n) => [n, targets])));
// What a suggested option takes, when the name the caller used suggests something else.
const SYNONYM_NOTES = {
  layout: " ('interleaved' or 'half')",
  bias: ' (added to the logits: 0 keeps a key, -Infinity masks it; causal: true masks later keys)',
};

// Keys only a model's configuration has (transformers' config.json): passed where the call's own options
// go, they mean the config itself was passed there.
const MODEL_CONFIG_KEYS = [
  'hidden_size',
  'num_attention_heads',
  'num_key_value_heads',
  'head_dim',
  'rope_scaling',
  'rope_parameters',
  'partial_rotary_factor',
  'model_type',
  'architectures',
  'vocab_size',
  'n_embd',
  'n_head',
];

// The allowed key closest to `key` (a synonym, snake_case, case and small typos), or undefined; with
// `abbreviated`, first the one allowed value `key` begins (an abbreviated value: 'cos' for 'cosine').
function suggest(key, allowed, { abbreviated = false, synonyms = false } = {}) {
  const k = String(key);
  const lower = k.toLowerCase();
  const synonym = synonyms && Object.hasOwn(SYNONYMS, lower) ? SYNONYMS[lower].find((a) => allowed.includes(a)) : undefined;
  if (synonym) return `${synonym}${SYNONYM_NOTES[synonym] ?? ''}`;
  const exact = allowed.find((a) => a.toLowerCase() === camel(k).toLowerCase());
  if (exact) return exact;
  const extending = abbreviated ? allowed.filter((a) => k.length >= 2 && a.toLowerCase().startsWith(k.toLowerCase())) : [];
  if (extending.length === 1) return extending[0];
  let best;
  let bestDistance = Math.max(2, Math.floor(k.length / 3)) + 1;
  for (const a of allowed) {
    const d = distance(k.toLowerCase(), a.toLowerCase());
    if (d < bestDistance) [best, bestDistance] = [a, d];
  }
  return best;
}

// Every error a public entry throws names posenc and the entry: posenc's own errors pass through; any
// other (a revoked Proxy read as options, a getter that throws, an engine error on a detached buffer)
// becomes a TypeError naming the entry, with the original as its cause.
export function asPosencError(name, e) {
  if ((e instanceof TypeError || e instanceof RangeError) && typeof e.message === 'string' && e.message.startsWith('posenc.')) return e;
  const text = e instanceof Error ? `${e.name}: ${e.message}` : String(e);
  return new TypeError(`posenc.${name}: reading the arguments failed (${text})`, { cause: e });
}

// fn wrapped so that what it throws is asPosencError's.
export function guarded(name, fn) {
  return function posencEntry(...args) {
    try {
      return fn.apply(this, args);
    } catch (e) {
      throw asPosencError(name, e);
    }
  };
}

// The methods and getters of a class prototype, guarded in place (`kind` names them: 'TokenEmbedding.lookup').
export function guardPrototype(proto, kind) {
  for (const key of Object.getOwnPropertyNames(proto)) {
    if (key === 'constructor' || key.startsWith('_')) continue;
    const d = Object.getOwnPropertyDescriptor(proto, key);
    if (typeof d.value === 'function') d.value = guarded(`${kind}.${key}`, d.value);
    if (d.get) d.get = guarded(`${kind}.${key}`, d.get);
    Object.defineProperty(proto, key, d);
  }
}

// True for an object literal or Object.create(null): the objects whose keys are checked strictly.
function isPlain(v) {
  const proto = Object.getPrototypeOf(v);
  return proto === Object.prototype || proto === null;
}

export class Checker {
  constructor(fn) {
    this.fn = fn;
  }
  type(msg) {
    return new TypeError(`posenc.${this.fn}: ${msg}`);
  }
  range(msg) {
    return new RangeError(`posenc.${this.fn}: ${msg}`);
  }

  // Refuses keys of `o` that are not in `allowed`, naming the closest allowed one.
  keys(name, o, allowed) {
    for (const key of Object.keys(o))
      if (!allowed.includes(key)) {
        const hint = suggest(key, allowed, { synonyms: true });
        const config = !hint && allowed.includes('config') && MODEL_CONFIG_KEYS.includes(key);
        const advice = hint ? `; did you mean ${hint}?` : config ? `; a model's config.json goes in whole as { config }` : '';
        throw this.type(`${name}.${key} is not an option${advice} (allowed: ${allowed.join(', ') || 'none'})`);
      }
  }

  // The options object, read once: a plain object holding each allowed key's value (read exactly
  // once, so getters run before anything is validated or copied). Unknown keys are a TypeError.
  options(o, allowed, name = 'options') {
    if (o === undefined) return {};
    if (typeof o !== 'object' || o === null || Array.isArray(o) || ArrayBuffer.isView(o))
      throw this.type(`${name} must be an object, got ${describe(o)}`);
    this.keys(name, o, allowed);
    const snapshot = {};
    for (const key of allowed) {
      const v = o[key];
      if (v !== undefined) snapshot[key] = v;
    }
    return snapshot;
  }

  number(name, v, { def, min = -Infinity, max = Infinity, minExclusive = false } = {}) {
    if (v === undefined && def !== undefined) return def;
    if (typeof v !== 'number') throw this.type(`${name} must be a number, got ${describe(v)}`);
    if (!Number.isFinite(v)) throw this.range(`${name} must be a finite number, got ${describe(v)}`);
    if (v < min || (minExclusive && v === min) || v > max) {
      const lo = min === -Infinity ? '' : `${minExclusive ? '>' : '>='} ${min}`;
      const hi = max === Infinity ? '' : `<= ${max}`;
      throw this.range(`${name} must be a number ${[lo, hi].filter(Boolean).join(' and ')}, got ${v}`);
    }
    return v;
  }

  int(name, v, { def, min = 0, max = MAX_INT } = {}) {
    if (v === undefined && def !== undefined) return def;
    if (typeof v !== 'number') throw this.type(`${name} must be an integer, got ${describe(v)}`);
    if (!Number.isInteger(v) || v < min || v > max) {
      // with no lower bound of its own (min 0) the core may still refuse 0 (numHeads): name only the side crossed
      const allowed = min > 0 ? `an integer in [${min}, ${max}]` : v > max ? `an integer at most ${max}` : 'a non-negative integer';
      throw this.range(`${name} must be ${allowed}, got ${describe(v)}`);
    }
    return v;
  }

  bool(name, v, def) {
    if (v === undefined && def !== undefined) return def;
    if (typeof v !== 'boolean') throw this.type(`${name} must be true or false, got ${describe(v)}`);
    return v;
  }

  // A frequency base (sinusoidal, RoPE), default DEFAULTS.base. Its range [MIN_BASE, MAX_BASE] is the
  // core's rule; a base read from a config.json key (`name` other than 'base') is checked here, where
  // the key can be named.
  base(v, name = 'base') {
    return name === 'base'
      ? this.number(name, v, { def: DEFAULTS.base })
      : this.number(name, v, { def: DEFAULTS.base, min: MIN_BASE, max: MAX_BASE });
  }

  oneOf(name, v, allowed, def) {
    if (v === undefined && def !== undefined) return def;
    const list = allowed.map((a) => `'${a}'`).join(', ');
    if (typeof v !== 'string') throw this.type(`${name} must be one of ${list}, got ${describe(v)}`);
    if (!allowed.includes(v)) {
      const hint = suggest(v, allowed, { abbreviated: true });
      throw this.range(`${name} must be one of ${list}, got ${describe(v)}${hint ? `; did you mean '${hint}'?` : ''}`);
    }
    return v;
  }

  // The keys a tensor written as a plain object may have, as the tensors it stands for have them:
  // { data, shape }, ONNX Runtime's { data, dims, type }, TF.js's { shape, dataSync() }.
  tensorKeys(name, v) {
    this.keys(name, v, typeof v.dataSync === 'function' ? ['shape', 'dataSync'] : ['data', 'shape', 'dims', 'type']);
    if (v.shape !== undefined && v.dims !== undefined) throw this.type(`${name} has both shape and dims: pass one`);
  }

  // A list of numbers -> { data: Float64Array, shape }. Takes an array (of numbers or BigInts), any
  // numeric typed array (BigInt64Array and BigUint64Array included: the integer tensors of ONNX
  // Runtime and transformers.js), or a tensor: { data, shape }, an ONNX Runtime tensor ({ data, dims })
  // or a TF.js tensor (shape + dataSync()); shape is [n] for a plain list. Each element is read once;
  // every value must be finite (and an integer with `integer`), BigInts within +-2^53 (exact as numbers).
  list(name, v, { integer = false, min = -Infinity, max = Infinity } = {}) {
    let values = v;
    let dims;
    if (Array.isArray(v) && v.length > 0 && (Array.isArray(v[0]) || ArrayBuffer.isView(v[0]))) [values, dims] = this.nested(name, v);
    else if (v && typeof v === 'object' && !Array.isArray(v) && !ArrayBuffer.isView(v)) {
      if (isPlain(v)) this.tensorKeys(name, v);
      const dataSync = v.dataSync;
      if (typeof dataSync === 'function')
        [dims, values] = [v.shape, dataSync.call(v)]; // TF.js
      else [dims, values] = ['dims' in v && v.dims !== undefined ? v.dims : v.shape, v.data]; // ONNX Runtime, or { data, shape }
      if (dims === undefined) throw this.type(`${name} is a tensor without a shape: pass { data, shape }`);
      const tag = typedArrayName(dims);
      dims = this.shape(`${name}.shape`, tag ? Array.from(dims, Number) : dims);
    }
    const tag = typedArrayName(values);
    if (!(Array.isArray(values) || tag))
      throw this.type(`${name} must be an array, a typed array or a tensor { data, shape } of numbers, got ${describe(v)}`);
    const n = tag ? taLength.call(values) : values.length;
    if (n > MAX_ELEMENTS) throw this.range(`${name} has ${n} values; at most ${MAX_ELEMENTS} are allowed`);
    if (dims && dims.reduce((a, b) => a * b, 1) !== n)
      throw this.range(`${name}.shape [${dims}] holds ${dims.reduce((a, b) => a * b, 1)} values but data has ${n}`);
    const out = new Float64Array(n);
    for (let i = 0; i < n; i++) {
      let x = values[i];
      if (typeof x === 'bigint') {
        if (x > BigInt(Number.MAX_SAFE_INTEGER) || x < -BigInt(Number.MAX_SAFE_INTEGER))
          throw this.range(`${name}[${i}] is ${x}n, beyond 2^53 - 1 in magnitude (not exact as a number)`);
        x = Number(x);
      }
      if (typeof x !== 'number') throw this.type(`${name}[${i}] must be a number, got ${describe(x)}`);
      if (!Number.isFinite(x) || (integer && !Number.isInteger(x)) || x < min || x > max) {
        const what = integer ? 'an integer' : 'a finite number';
        const bounds = [min > -Infinity && `>= ${min}`, max < Infinity && `<= ${max}`].filter(Boolean).join(' and ');
        throw this.range(`${name}[${i}] must be ${what}${bounds ? ` ${bounds}` : ''}, got ${describe(x)}`);
      }
      out[i] = x;
    }
    return { data: out, shape: dims ?? [n] };
  }

  // A rectangular nested array (rows of arrays or typed arrays, as Python code writes tensors) ->
  // [flat values, shape]. Each row is read once.
  nested(name, v) {
    const shape = [];
    for (let level = v; Array.isArray(level) || ArrayBuffer.isView(level); level = level[0]) {
      shape.push(ArrayBuffer.isView(level) ? taLength.call(level) : level.length);
      if (ArrayBuffer.isView(level) || shape.length > 8 || level.length === 0) break;
    }
    const flat = [];
    const walk = (x, depth, at) => {
      const n = ArrayBuffer.isView(x) ? taLength.call(x) : Array.isArray(x) ? x.length : -1;
      if (n !== shape[depth])
        throw this.range(
          `${name}${at} must hold ${shape[depth]} values like the first row of its level (a rectangular nested array), got ${describe(x)}`,
        );
      if (depth === shape.length - 1) for (let i = 0; i < n; i++) flat.push(x[i]);
      else for (let i = 0; i < n; i++) walk(x[i], depth + 1, `${at}[${i}]`);
      if (flat.length > MAX_ELEMENTS) throw this.range(`${name} has more than ${MAX_ELEMENTS} values`);
    };
    walk(v, 0, '');
    return [flat, shape];
  }

  // The values of list() alone (a Float64Array), whatever the shape.
  numbers(name, v, options) {
    return this.list(name, v, options).data;
  }

  // A shape: an array of integers in [0, 2^31 - 1], each entry read once. Returns a new array.
  shape(name, dims) {
    if (!Array.isArray(dims)) throw this.type(`${name} must be an array of integers, got ${describe(dims)}`);
    const n = dims.length;
    if (n > 16) throw this.range(`${name} has ${n} dimensions; at most 16 are allowed`);
    const out = [];
    for (let i = 0; i < n; i++) {
      const d = dims[i];
      if (typeof d !== 'number') throw this.type(`${name}[${i}] must be an integer, got ${describe(d)}`);
      if (!Number.isInteger(d) || d < 0 || d > MAX_INT) throw this.range(`${name}[${i}] must be an integer in [0, ${MAX_INT}], got ${describe(d)}`);
      out.push(d);
    }
    return out;
  }

  // A tensor argument: { data, shape }, a typed array plus a separate `shape`, an ONNX Runtime
  // tensor ({ data, dims }) or a TF.js tensor ({ shape, dataSync() }). Reads each property once,
  // checks the element type, the rank and that the bytes match the shape, and returns
  //   { name, shape, length, buffer, byteOffset, byteLength, elem }
  // from which heap.put() takes its view and copies, inside the call, after every option and input
  // was read: nothing user code does before then can change what the kernel reads.
  // A float tensor (dtype Float32Array) may also hold half floats: a Float16Array, or a Uint16Array
  // of float16 / bfloat16 bits, as ONNX Runtime's tensor of that type says, or as `half` (the call's
  // dtype) says. elem is then 'float16' or 'bfloat16'; heap.put() converts them to float32.
  tensor(name, v, { dtype = Float32Array, ranks, shape, half } = {}) {
    let data;
    let dims = shape;
    let declared; // an ONNX Runtime tensor's element type
    if (ArrayBuffer.isView(v)) data = v;
    else if (v && typeof v === 'object' && !Array.isArray(v)) {
      if (shape !== undefined) throw this.type(`pass the shape of ${name} in ${name}.shape, not as a separate shape option`);
      if (isPlain(v)) this.tensorKeys(name, v);
      const dataSync = v.dataSync;
      if (typeof dataSync === 'function') {
        dims = v.shape; // TF.js
        data = dataSync.call(v);
      } else {
        dims = v.dims !== undefined ? v.dims : v.shape; // ONNX Runtime's and transformers.js's dims, or { data, shape }
        data = v.data;
        declared = v.type;
      }
    } else throw this.type(`${name} must be a tensor { data, shape } or a typed array with a shape, got ${describe(v)}`);
    const tag = typedArrayName(data);
    const what = data === v ? name : `${name}.data`; // a bare typed array is the argument itself
    // a tensor's own float type must describe its data (in a plain object it is the caller's word for it)
    if (Object.hasOwn(FLOAT_TYPE_DATA, declared) && !FLOAT_TYPE_DATA[declared].includes(tag))
      throw this.type(`${name}.type is '${declared}' but ${what} is ${describe(data)}`);
    let elem = dtype.name;
    let bytes = dtype.BYTES_PER_ELEMENT;
    if (dtype === Float32Array && tag !== 'Float32Array') {
      if (tag === 'Float16Array') elem = 'float16';
      else if (tag === 'Uint16Array' && (HALF_DTYPES.includes(declared) || HALF_DTYPES.includes(half)))
        elem = HALF_DTYPES.includes(declared) ? declared : half;
      else if (tag === 'Uint16Array')
        throw this.type(`${what} is a Uint16Array: pass dtype: 'float16' or 'bfloat16' to say which half floats it holds`);
      else throw this.type(`${what} must be a Float32Array (or half floats: a Float16Array, or a Uint16Array with dtype), got ${describe(data)}`);
      bytes = 2;
    } else if (tag !== dtype.name) throw this.type(`${what} must be ${article(dtype.name)} ${dtype.name}, got ${describe(data)}`);
    if (dtype === Float32Array && tag === 'Float32Array') elem = 'float32';
    if (dims === undefined) throw this.type(`${name} is ${describe(data)} without a shape: pass { data, shape }`);
    dims = this.shape(`${name}.shape`, typedArrayName(dims) ? Array.from(dims, Number) : dims);
    if (ranks && !ranks.includes(dims.length)) throw this.range(`${name} must have rank ${ranks.join(' or ')}, got shape [${dims}]`);
    let size = 1;
    for (const d of dims) size *= d;
    if (size > MAX_ELEMENTS) throw this.range(`${name} holds ${size} values; at most ${MAX_ELEMENTS} fit in wasm memory`);
    const byteLength = size * bytes;
    const have = taByteLength.call(data);
    if (have !== byteLength) {
      const detached = have === 0 && taBuffer.call(data).byteLength === 0 ? ' (its buffer is detached or was shrunk)' : '';
      throw this.range(`${name}.shape [${dims}] holds ${size} values but data has ${have / bytes}${detached}`);
    }
    return { name, shape: dims, length: size, buffer: taBuffer.call(data), byteOffset: taByteOffset.call(data), byteLength, elem };
  }

  // The dtype of a call's float results: 'float32' (default), 'float16' or 'bfloat16'.
  dtype(v, def = 'float32') {
    return this.oneOf('dtype', v, ['float32', ...HALF_DTYPES], def);
  }

  // `out`: a typed array of exactly n elements of Type (by the engine's own accessors), or undefined.
  // For float results of a half dtype, out holds the 16-bit values: a Uint16Array, or a Float16Array
  // for float16.
  out(v, Type, n, dtype = 'float32') {
    if (v === undefined) return undefined;
    const tag = typedArrayName(v);
    const allowed =
      Type !== Float32Array || dtype === 'float32' ? [Type.name] : dtype === 'float16' ? ['Uint16Array', 'Float16Array'] : ['Uint16Array'];
    const named = allowed.map((t) => `${article(t)} ${t}`).join(' or ');
    if (!allowed.includes(tag))
      throw this.type(`out must be ${named} of length ${n}${dtype === 'float32' ? '' : ` (dtype '${dtype}')`}, got ${describe(v)}`);
    const have = taLength.call(v);
    if (have !== n) throw this.range(`out must be ${named} of length ${n} (the result's size), got length ${have}`);
    return v;
  }

  // Refuses outputs larger than the core accepts (1 GiB of float32) before anything is allocated.
  size(what, ...dims) {
    const n = dims.reduce((a, b) => a * b, 1);
    if (n > MAX_ELEMENTS) throw this.range(`${what} would hold ${n} values (${dims.join(' x ')}); at most ${MAX_ELEMENTS} fit in wasm memory`);
    return n;
  }
}
