// Argument validation. Every public function checks its options here, before any wasm call:
// wrong type or shape -> TypeError, a value out of range -> RangeError. Messages name the function,
// the argument, the value received and what is allowed.

const MAX_INT = 2 ** 31 - 1;

export function describe(v) {
  if (v === null) return 'null';
  if (v === undefined) return 'undefined';
  if (typeof v === 'string') return JSON.stringify(v.length > 40 ? `${v.slice(0, 40)}…` : v);
  if (typeof v === 'number' || typeof v === 'boolean' || typeof v === 'bigint') return String(v);
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
    if (!Number.isInteger(v) || v < min || v > max)
      throw this.range(`${name} must be an integer in [${min}, ${max}], got ${v}`);
    return v;
  }

  bool(name, v, def) {
    if (v === undefined && def !== undefined) return def;
    if (typeof v !== 'boolean') throw this.type(`${name} must be true or false, got ${describe(v)}`);
    return v;
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
    if (!Array.isArray(dims) || dims.some((d) => typeof d !== 'number'))
      throw this.type(`${name}.shape must be an array of integers, got ${describe(dims)}`);
    if (dims.some((d) => !Number.isInteger(d) || d < 0)) throw this.range(`${name}.shape must hold non-negative integers, got [${dims}]`);
    if (ranks && !ranks.includes(dims.length))
      throw this.range(`${name} must have rank ${ranks.join(' or ')}, got shape [${dims}]`);
    const size = dims.reduce((a, b) => a * b, 1);
    if (size !== data.length) throw this.range(`${name}.shape [${dims}] holds ${size} values but data has ${data.length}`);
    return { data, shape: dims.slice() };
  }

  // Refuses outputs larger than the core accepts (1 GiB of float32) before anything is allocated.
  size(what, ...dims) {
    const n = dims.reduce((a, b) => a * b, 1);
    if (n > MAX_ELEMENTS) throw this.range(`${what} would hold ${n} values (${dims.join(' x ')}); at most ${MAX_ELEMENTS} fit in wasm memory`);
    return n;
  }
}

export const MAX_ELEMENTS = 2 ** 28;
