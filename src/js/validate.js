// Argument validation, and the snapshot of every input. Each public function reads its options once
// (unknown keys are a TypeError with a did-you-mean hint), reads each shape once into validated
// integers, and takes one fixed view of each tensor's bytes, sized from the validated shape: what
// the kernel reads cannot change afterwards, whatever a getter, a subclass or a resizable buffer does.
// Wrong type or shape -> TypeError, a value out of range -> RangeError; messages name the function,
// the argument, the value received and what is allowed. Limits come from contract.js.
import { LIMITS } from './contract.js';

export const { maxElements: MAX_ELEMENTS, minBase: MIN_BASE, maxBase: MAX_BASE } = LIMITS;
const MAX_WORK = 2 ** 34; // superseded by the time estimates of cost.js, function by function
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

// The element count as the engine sees it (0 when the buffer is detached or out of bounds).
export function typedLength(v) {
  return taLength.call(v);
}

const article = (word) => (/^[aeiou]/i.test(word) ? 'an' : 'a');

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

// Other libraries' names for posenc's options (PyTorch's `inplace`, Keras's `output`).
const SYNONYMS = { inplace: 'out', in_place: 'out', output: 'out' };

// The allowed key closest to `key` (a synonym, snake_case, case and small typos), or undefined.
export function suggest(key, allowed) {
  const k = String(key);
  const synonym = Object.hasOwn(SYNONYMS, k.toLowerCase()) ? SYNONYMS[k.toLowerCase()] : undefined;
  if (synonym && allowed.includes(synonym)) return synonym;
  const exact = allowed.find((a) => a.toLowerCase() === camel(k).toLowerCase());
  if (exact) return exact;
  let best;
  let bestDistance = Math.max(2, Math.floor(k.length / 3)) + 1;
  for (const a of allowed) {
    const d = distance(k.toLowerCase(), a.toLowerCase());
    if (d < bestDistance) [best, bestDistance] = [a, d];
  }
  return best;
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
        const hint = suggest(key, allowed);
        throw this.type(`${name}.${key} is not an option${hint ? `; did you mean ${hint}?` : ''} (allowed: ${allowed.join(', ') || 'none'})`);
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
    if (!Number.isInteger(v) || v < min || v > max) throw this.range(`${name} must be an integer in [${min}, ${max}], got ${describe(v)}`);
    return v;
  }

  bool(name, v, def) {
    if (v === undefined && def !== undefined) return def;
    if (typeof v !== 'boolean') throw this.type(`${name} must be true or false, got ${describe(v)}`);
    return v;
  }

  // A frequency base (sinusoidal, RoPE): a number in [MIN_BASE, MAX_BASE], default 10000.
  base(v, name = 'base') {
    return this.number(name, v, { def: 10000, min: MIN_BASE, max: MAX_BASE });
  }

  // A float32 scalar: a finite number that float32 can hold.
  float32(name, v, def) {
    return this.number(name, v, { def, min: -LIMITS.float32Max, max: LIMITS.float32Max });
  }

  oneOf(name, v, allowed, def) {
    if (v === undefined && def !== undefined) return def;
    const list = allowed.map((a) => `'${a}'`).join(', ');
    if (typeof v !== 'string') throw this.type(`${name} must be one of ${list}, got ${describe(v)}`);
    if (!allowed.includes(v)) {
      const hint = suggest(v, allowed);
      throw this.range(`${name} must be one of ${list}, got ${describe(v)}${hint ? `; did you mean '${hint}'?` : ''}`);
    }
    return v;
  }

  // A list of numbers (array or any numeric typed array) -> a new Float64Array, every value finite
  // (each element read once).
  numbers(name, v, { integer = false, min = -Infinity, max = Infinity } = {}) {
    const tag = typedArrayName(v);
    if (!(Array.isArray(v) || (tag && !tag.startsWith('Big'))))
      throw this.type(`${name} must be an array or typed array of numbers, got ${describe(v)}`);
    const n = tag ? taLength.call(v) : v.length;
    if (n > MAX_ELEMENTS) throw this.range(`${name} has ${n} values; at most ${MAX_ELEMENTS} are allowed`);
    const out = new Float64Array(n);
    for (let i = 0; i < n; i++) {
      const x = v[i];
      if (typeof x !== 'number') throw this.type(`${name}[${i}] must be a number, got ${describe(x)}`);
      if (!Number.isFinite(x) || (integer && !Number.isInteger(x)) || x < min || x > max) {
        const what = integer ? 'an integer' : 'a finite number';
        const bounds = [min > -Infinity && `>= ${min}`, max < Infinity && `<= ${max}`].filter(Boolean).join(' and ');
        throw this.range(`${name}[${i}] must be ${what}${bounds ? ` ${bounds}` : ''}, got ${describe(x)}`);
      }
      out[i] = x;
    }
    return out;
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
  //   { shape, length, buffer, byteOffset, byteLength }
  // from which heap.put() takes its view and copies, inside the call, after every option and input
  // was read: nothing user code does before then can change what the kernel reads.
  tensor(name, v, { dtype = Float32Array, ranks, shape } = {}) {
    let data;
    let dims = shape;
    if (ArrayBuffer.isView(v)) data = v;
    else if (v && typeof v === 'object' && !Array.isArray(v)) {
      if (shape !== undefined) throw this.type(`pass the shape of ${name} in ${name}.shape, not as a separate shape option`);
      if (isPlain(v)) {
        this.keys(name, v, ['data', 'shape']);
        data = v.data;
        dims = v.shape;
      } else {
        const dataSync = v.dataSync;
        if (typeof dataSync === 'function') {
          dims = v.shape; // TF.js
          data = dataSync.call(v);
        } else if ('dims' in v) {
          dims = v.dims; // ONNX Runtime (a readonly number[])
          data = v.data;
        } else {
          data = v.data;
          dims = v.shape;
        }
      }
    } else throw this.type(`${name} must be a tensor { data, shape } or a typed array with a shape, got ${describe(v)}`);
    if (typedArrayName(data) !== dtype.name) throw this.type(`${name}.data must be ${article(dtype.name)} ${dtype.name}, got ${describe(data)}`);
    if (dims === undefined) throw this.type(`${name} is ${describe(data)} without a shape: pass { data, shape }`);
    dims = this.shape(`${name}.shape`, typedArrayName(dims) && !typedArrayName(dims).startsWith('Big') ? Array.from(dims) : dims);
    if (ranks && !ranks.includes(dims.length)) throw this.range(`${name} must have rank ${ranks.join(' or ')}, got shape [${dims}]`);
    let size = 1;
    for (const d of dims) size *= d;
    if (size > MAX_ELEMENTS) throw this.range(`${name} holds ${size} values; at most ${MAX_ELEMENTS} fit in wasm memory`);
    const byteLength = size * dtype.BYTES_PER_ELEMENT;
    const have = taByteLength.call(data);
    if (have !== byteLength) {
      const detached = have === 0 && taBuffer.call(data).byteLength === 0 ? ' (its buffer is detached or was shrunk)' : '';
      throw this.range(`${name}.shape [${dims}] holds ${size} values but data has ${have / dtype.BYTES_PER_ELEMENT}${detached}`);
    }
    return { name, shape: dims, length: size, buffer: taBuffer.call(data), byteOffset: taByteOffset.call(data), byteLength };
  }

  // `out`: a typed array of exactly n elements of dtype (by the engine's own accessors), or undefined.
  out(v, dtype, n) {
    if (v === undefined) return undefined;
    if (typedArrayName(v) !== dtype.name) throw this.type(`out must be ${article(dtype.name)} ${dtype.name} of length ${n}, got ${describe(v)}`);
    const have = taLength.call(v);
    if (have !== n) throw this.range(`out must be ${article(dtype.name)} ${dtype.name} of length ${n} (the result's size), got length ${have}`);
    return v;
  }

  // Refuses outputs larger than the core accepts (1 GiB of float32) before anything is allocated.
  size(what, ...dims) {
    const n = dims.reduce((a, b) => a * b, 1);
    if (n > MAX_ELEMENTS) throw this.range(`${what} would hold ${n} values (${dims.join(' x ')}); at most ${MAX_ELEMENTS} fit in wasm memory`);
    return n;
  }

  // Refuses calls that would run for minutes: `n` multiply-adds, described by `what`.
  work(what, n) {
    if (n > MAX_WORK) throw this.range(`${what} needs ${n} multiply-adds; at most 2^34 = ${MAX_WORK} are allowed per call`);
    return n;
  }
}
