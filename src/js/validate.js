// Argument validation. Every public function checks its options here, before any wasm call:
// wrong type or shape -> TypeError, a value out of range -> RangeError. Messages name the function,
// the argument, the value received and what is allowed.

const MAX_INT = 2 ** 31 - 1;
// Largest tensor (input or output) in values: 1 GiB of float32, half of what wasm memory can hold.
export const MAX_ELEMENTS = 2 ** 28;
// Largest amount of work one call may do, in multiply-adds (a few seconds at wasm speed): bounds the
// O(n^2 d) functions (attention, similarity, nearestDistances) so that no call runs for minutes.
export const MAX_WORK = 2 ** 34;
// Frequency bases: [1e-300, 1e300] keeps every frequency and wavelength a finite double.
export const MIN_BASE = 1e-300;
export const MAX_BASE = 1e300;
const FLOAT32_MAX = 3.4028234663852886e38;

export function describe(v) {
  if (v === null) return 'null';
  if (v === undefined) return 'undefined';
  if (typeof v === 'string') return JSON.stringify(v.length > 40 ? `${v.slice(0, 40)}…` : v);
  if (typeof v === 'number' || typeof v === 'boolean') return String(v);
  if (typeof v === 'bigint') return `${v}n (a BigInt)`;
  if (typeof v === 'symbol') return 'a symbol';
  if (Array.isArray(v)) return `an array of length ${v.length}`;
  if (ArrayBuffer.isView(v)) return `a ${v.constructor.name} of length ${v.length}`;
  if (typeof v === 'function') return 'a function';
  return `an object (${Object.prototype.toString.call(v).slice(8, -1)})`;
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

  options(o, name = 'options') {
    if (o === undefined) return {};
    if (typeof o !== 'object' || o === null || Array.isArray(o) || ArrayBuffer.isView(o))
      throw this.type(`${name} must be an object, got ${describe(o)}`);
    return o;
  }

  number(name, v, { def, min = -Infinity, max = Infinity, minExclusive = false } = {}) {
    if (v === undefined && def !== undefined) return def;
    if (typeof v !== 'number') throw this.type(`${name} must be a number, got ${describe(v)}`);
    if (!Number.isFinite(v)) throw this.range(`${name} must be a finite number, got ${v}`);
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
    if (!Number.isInteger(v) || v < min || v > max) throw this.range(`${name} must be an integer in [${min}, ${max}], got ${v}`);
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
    return this.number(name, v, { def, min: -FLOAT32_MAX, max: FLOAT32_MAX });
  }

  oneOf(name, v, allowed, def) {
    if (v === undefined && def !== undefined) return def;
    if (typeof v !== 'string') throw this.type(`${name} must be one of ${allowed.map((a) => `'${a}'`).join(', ')}, got ${describe(v)}`);
    if (!allowed.includes(v)) throw this.range(`${name} must be one of ${allowed.map((a) => `'${a}'`).join(', ')}, got ${describe(v)}`);
    return v;
  }

  // A list of numbers (array or any numeric typed array) -> Float64Array, every value finite.
  numbers(name, v, { integer = false, min = -Infinity, max = Infinity } = {}) {
    if (!(Array.isArray(v) || (ArrayBuffer.isView(v) && !(v instanceof DataView))) || typeof v[0] === 'bigint')
      throw this.type(`${name} must be an array or typed array of numbers, got ${describe(v)}`);
    if (v.length > MAX_ELEMENTS) throw this.range(`${name} has ${v.length} values; at most ${MAX_ELEMENTS} are allowed`);
    const out = new Float64Array(v.length);
    for (let i = 0; i < v.length; i++) {
      const x = v[i];
      if (typeof x !== 'number') throw this.type(`${name}[${i}] must be a number, got ${describe(x)}`);
      if (!Number.isFinite(x) || (integer && !Number.isInteger(x)) || x < min || x > max) {
        const what = integer ? 'an integer' : 'a finite number';
        const bounds = [min > -Infinity && `>= ${min}`, max < Infinity && `<= ${max}`].filter(Boolean).join(' and ');
        throw this.range(`${name}[${i}] must be ${what}${bounds ? ` ${bounds}` : ''}, got ${x}`);
      }
      out[i] = x;
    }
    return out;
  }

  // A tensor argument: { data, shape } or a typed array plus a separate shape. Checks the element
  // type, the rank, and that the shape matches data.length. Returns { data, shape } (not copied).
  tensor(name, v, { dtype = Float32Array, ranks, shape } = {}) {
    let data;
    let dims = shape;
    if (ArrayBuffer.isView(v)) data = v;
    else if (v && typeof v === 'object' && !Array.isArray(v) && 'data' in v) {
      data = v.data;
      dims = v.shape;
    } else throw this.type(`${name} must be a tensor { data, shape }, got ${describe(v)}`);
    if (!(data instanceof dtype)) throw this.type(`${name}.data must be a ${dtype.name}, got ${describe(data)}`);
    if (dims === undefined) throw this.type(`${name} is a ${dtype.name} without a shape: pass { data, shape }`);
    dims = this.shape(`${name}.shape`, dims);
    if (ranks && !ranks.includes(dims.length)) throw this.range(`${name} must have rank ${ranks.join(' or ')}, got shape [${dims}]`);
    const size = dims.reduce((a, b) => a * b, 1);
    if (size !== data.length) throw this.range(`${name}.shape [${dims}] holds ${size} values but data has ${data.length}`);
    if (size > MAX_ELEMENTS) throw this.range(`${name} holds ${size} values; at most ${MAX_ELEMENTS} fit in wasm memory`);
    return { data, shape: dims };
  }

  // A shape: an array of integers in [0, 2^31 - 1]. Returns a copy.
  shape(name, dims) {
    if (!Array.isArray(dims) || dims.some((d) => typeof d !== 'number'))
      throw this.type(`${name} must be an array of integers, got ${describe(dims)}`);
    if (dims.some((d) => !Number.isInteger(d) || d < 0 || d > MAX_INT))
      throw this.range(`${name} must hold integers in [0, ${MAX_INT}], got [${dims}]`);
    return dims.slice();
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
