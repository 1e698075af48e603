// What every public function accepts, as data: the table the hostile-input suite (errors.test.js)
// and the property-based fuzz (fuzz.test.js) are driven by. Each entry has a valid call (`valid`),
// the specification of each argument (`args`), how to call it from a flat object of arguments
// (`call`) and the shape its result must have (`check`).
//
// Argument kinds and the error class the contract (README, "Errors and reliability") gives a bad value:
//   int / number: not a number -> TypeError; NaN, +-Infinity, out of [min, max], a non-integer
//                 (int), odd (even) -> RangeError
//   enum:         not a string -> TypeError; an unknown string -> RangeError
//   bool:         not a boolean -> TypeError
//   tensor:       not { data, shape } / wrong element type / non-array shape -> TypeError; shape
//                 that does not match data, wrong rank, bad dimension -> RangeError
//   indices:      not an array, typed array or { data, shape } -> TypeError; an index that is not
//                 an integer in range -> RangeError
// A missing (undefined) argument is fine when optional, a TypeError when required.

import { ENUMS, LIMITS } from '../../src/js/contract.js';

export const MAX_INT = 2 ** 31 - 1;
// The public functions that take an options object.
export const OPTION_FUNCTIONS = [
  'sinusoidal',
  'wavelengths',
  'learned',
  'tokenEmbedding',
  'ropeFrequencies',
  'alibiBias',
  't5Buckets',
  'relativePositions',
  'attention',
  'permutationLab',
  'scoreTerms',
  'shiftMatrix',
  'trainToy',
];
export const FLOAT32_MAX = LIMITS.float32Max;

export const int = (min, max, o = {}) => ({ kind: 'int', min, max, optional: false, ...o });
export const num = (min, max, o = {}) => ({ kind: 'number', min, max, optional: true, ...o });
export const oneOf = (allowed, o = {}) => ({ kind: 'enum', allowed, optional: true, ...o });
export const bool = (o = {}) => ({ kind: 'bool', optional: true, ...o });
export const tensor = (o = {}) => ({ kind: 'tensor', optional: false, ranks: [2], nonFinite: 'reject', ...o });
export const indices = (rows) => ({ kind: 'indices', rows, optional: false });
export const other = (o = {}) => ({ kind: 'other', optional: true, ...o });

// Deterministic float tensor of a shape, values in [-1, 1].
export function T(shape, f = (i) => Math.sin(0.7 * i + 0.3)) {
  const n = shape.reduce((a, b) => a * b, 1);
  return { data: Float32Array.from({ length: n }, (_, i) => f(i)), shape: shape.slice() };
}

// Disposes embedding results (the suites create many).
export function release(r) {
  if (r && typeof r.dispose === 'function') r.dispose();
}

const SEED_MAX = Number.MAX_SAFE_INTEGER;
const ENCODINGS = ENUMS.labEncoding;

const shapeIs = (t, shape, Type = Float32Array) =>
  t && t.data instanceof Type && t.data.length === shape.reduce((a, b) => a * b, 1) && JSON.stringify(t.shape) === JSON.stringify(shape);

export const FUNCTIONS = [
  {
    name: 'sinusoidal',
    call: (pe, a) => pe.sinusoidal(a),
    valid: { length: 5, dModel: 6 },
    args: {
      length: int(0, MAX_INT),
      dModel: int(1, MAX_INT),
      base: num(LIMITS.minBase, LIMITS.maxBase),
      layout: oneOf(ENUMS.sinusoidalLayout),
      offset: num(-Infinity, Infinity),
    },
    check: (r, a) => shapeIs(r, [a.length ?? a.positions.length, a.dModel]),
  },
  {
    name: 'wavelengths',
    call: (pe, a) => pe.wavelengths(a),
    valid: { dModel: 6 },
    args: { dModel: int(1, 2 ** 28), base: num(LIMITS.minBase, LIMITS.maxBase) },
    check: (r, a) => r instanceof Float64Array && r.length === Math.ceil(a.dModel / 2),
  },
  {
    name: 'learned',
    call: (pe, a) => pe.learned(a),
    valid: { maxLength: 8, dModel: 4 },
    args: {
      maxLength: int(1, MAX_INT),
      dModel: int(1, MAX_INT),
      init: oneOf(ENUMS.learnedInit),
      std: num(0, LIMITS.maxStd),
      seed: int(0, SEED_MAX, { optional: true }),
    },
    check: (r, a) => shapeIs(r.table, [a.maxLength, a.dModel]),
  },
  {
    name: 'tokenEmbedding',
    call: (pe, a) => pe.tokenEmbedding(a),
    valid: { vocabSize: 8, dModel: 4 },
    args: { vocabSize: int(1, MAX_INT), dModel: int(1, MAX_INT), seed: int(0, SEED_MAX, { optional: true }), scale: bool() },
    check: (r, a) => shapeIs(r.table, [a.vocabSize, a.dModel]),
  },
  {
    name: 'LearnedEmbedding.lookup',
    call: (pe, a) => {
      const e = pe.learned({ maxLength: 8, dModel: 4 });
      try {
        return e.lookup(a.positions);
      } finally {
        e.dispose();
      }
    },
    valid: { positions: [0, 7, 3] },
    args: { positions: indices(8) },
    check: (r, a) => r.data instanceof Float32Array && r.shape.at(-1) === 4 && r.data.length === 4 * (a.positions.data ?? a.positions).length,
  },
  {
    name: 'LearnedEmbedding.resize',
    call: (pe, a) => {
      const e = pe.learned({ maxLength: 8, dModel: 4 });
      try {
        return e.resize(a.newMaxLength, a.method);
      } finally {
        e.dispose();
      }
    },
    valid: { newMaxLength: 12 },
    args: { newMaxLength: int(1, MAX_INT), method: oneOf(ENUMS.resizeMethod) },
    check: (r, a) => shapeIs(r.table, [a.newMaxLength, 4]),
  },
  {
    name: 'TokenEmbedding.lookup',
    call: (pe, a) => {
      const e = pe.tokenEmbedding({ vocabSize: 8, dModel: 4 });
      try {
        return e.lookup(a.ids);
      } finally {
        e.dispose();
      }
    },
    valid: { ids: [5, 1] },
    args: { ids: indices(8) },
    check: (r, a) => r.data instanceof Float32Array && r.data.length === 4 * (a.ids.data ?? a.ids).length,
  },
  {
    name: 'addPositional',
    call: (pe, a) => pe.addPositional(a.x, a.p),
    valid: { x: T([2, 4]), p: T([3, 4]) },
    args: { x: tensor({ ranks: [2, 3], nonFinite: 'propagate' }), p: tensor({ nonFinite: 'propagate' }) },
    check: (r, a) => shapeIs(r, a.x.shape),
  },
  {
    name: 'stats',
    call: (pe, a) => pe.stats(a.t),
    valid: { t: T([2, 3]) },
    args: { t: tensor({ ranks: null, nonFinite: 'propagate', bare: true }) },
    check: (r) => ['min', 'max', 'mean', 'std'].every((k) => typeof r[k] === 'number'),
  },
  {
    name: 'ropeFrequencies',
    call: (pe, a) => pe.ropeFrequencies(a),
    valid: { dim: 8 },
    args: { dim: int(2, LIMITS.maxRotaryDim, { even: true }), base: num(LIMITS.minBase, LIMITS.maxBase), scaling: other() },
    check: (r, a) => r.invFreq instanceof Float32Array && r.invFreq.length === a.dim / 2 && r.attentionFactor > 0,
  },
  {
    name: 'rope',
    call: (pe, a) =>
      pe.rope(a.x, { positions: a.positions, offset: a.offset, base: a.base, layout: a.layout, rotaryDim: a.rotaryDim, scaling: a.scaling }),
    valid: { x: T([3, 2, 4]) },
    args: {
      x: tensor({ ranks: [2, 3, 4], nonFinite: 'propagate' }),
      offset: num(-Infinity, Infinity),
      base: num(LIMITS.minBase, LIMITS.maxBase),
      layout: oneOf(ENUMS.ropeLayout),
      rotaryDim: int(2, 4, { optional: true, even: true }),
      scaling: other(),
    },
    check: (r, a) => shapeIs(r, a.x.shape),
  },
  {
    name: 'alibiSlopes',
    call: (pe, a) => pe.alibiSlopes(a.numHeads),
    valid: { numHeads: 6 },
    args: { numHeads: int(1, LIMITS.maxHeads) },
    check: (r, a) => r instanceof Float32Array && r.length === a.numHeads,
  },
  {
    name: 'alibiBias',
    call: (pe, a) => pe.alibiBias(a),
    valid: { numHeads: 2, queryLength: 3 },
    args: {
      numHeads: int(1, LIMITS.maxHeads),
      queryLength: int(1, MAX_INT),
      keyLength: int(3, MAX_INT, { optional: true }) /* >= queryLength */,
      symmetric: bool(),
    },
    check: (r, a) => shapeIs(r, [a.numHeads, a.queryLength, a.keyLength ?? a.queryLength]),
  },
  {
    name: 't5Buckets',
    call: (pe, a) => pe.t5Buckets(a),
    valid: { queryLength: 3 },
    args: {
      queryLength: int(1, MAX_INT),
      keyLength: int(1, MAX_INT, { optional: true }),
      numBuckets: int(4, LIMITS.maxBuckets, { optional: true }),
      maxDistance: int(9, MAX_INT, { optional: true }),
      bidirectional: bool(),
    },
    check: (r, a) => shapeIs(r, [a.queryLength, a.keyLength ?? a.queryLength], Int32Array),
  },
  {
    name: 'relativePositions',
    call: (pe, a) => pe.relativePositions(a),
    valid: { length: 4, maxRelative: 2 },
    args: { length: int(1, MAX_INT), maxRelative: int(0, LIMITS.maxRelative) },
    check: (r, a) => shapeIs(r, [a.length, a.length], Int32Array),
  },
  {
    name: 'attention',
    call: (pe, a) => pe.attention(a),
    valid: { q: T([3, 4]), k: T([5, 4]), v: T([5, 2]) },
    args: {
      // q, k and v take rank 2, 3 or 4 but all the same: changing one of the valid rank-2 tensors alone is refused
      q: tensor({ ranks: [2] }),
      k: tensor({ ranks: [2] }),
      v: tensor({ ranks: [2] }),
      bias: tensor({ optional: true, ranks: [2, 3, 4], allowNegInf: true }),
      causal: bool(),
      scale: num(-FLOAT32_MAX, FLOAT32_MAX),
      weights: bool(),
    },
    check: (r, a) => {
      const [sq, sk, dv] = [a.q.shape[0], a.k.shape[0], a.v.shape.at(-1)];
      if (a.weights === false) return r.weights === null && shapeIs(r.output, a.q.shape.length === 2 ? [sq, dv] : [sq, a.q.shape[1], dv]);
      if (a.q.shape.length === 2) return shapeIs(r.output, [sq, dv]) && shapeIs(r.weights, [sq, sk]);
      const h = a.q.shape[1];
      return shapeIs(r.output, [sq, h, dv]) && shapeIs(r.weights, [h, sq, sk]);
    },
  },
  {
    name: 'permutationLab',
    call: (pe, a) => pe.permutationLab(a),
    valid: {},
    args: {
      sentence: other(),
      permutation: other(),
      encoding: oneOf(ENCODINGS),
      dModel: int(LIMITS.minLabDModel, LIMITS.maxLabDModel, { optional: true, even: true }),
      seed: int(0, SEED_MAX, { optional: true }),
    },
    check: (r) => shapeIs(r.output, [r.tokens.length, r.output.shape[1]]) && Number.isFinite(r.equivarianceError),
  },
  {
    name: 'scoreTerms',
    call: (pe, a) => pe.scoreTerms(a),
    valid: {},
    args: {
      sentence: other(),
      encoding: oneOf(['sinusoidal', 'learned']),
      dModel: int(LIMITS.minLabDModel, LIMITS.maxLabDModel, { optional: true, even: true }),
      seed: int(0, SEED_MAX, { optional: true }),
    },
    check: (r) => shapeIs(r.total, [r.tokens.length, r.tokens.length]),
  },
  {
    // dModel 24 is a multiple of 2 * heads for every heads in 1..4; with the default 2 heads, of 4
    name: 'trainToy',
    call: (pe, a) => pe.trainToy(a),
    valid: { task: 'before' },
    args: {
      task: oneOf(ENUMS.toyTask, { optional: false }),
      encoding: oneOf(ENCODINGS.filter((e) => e !== 'xpos')),
      steps: int(0, LIMITS.toyMaxSteps, { optional: true }),
      seed: int(0, SEED_MAX, { optional: true }),
      length: int(LIMITS.toyMinLength, LIMITS.toyMaxLength, { optional: true }),
      dModel: int(LIMITS.toyMinDModel, LIMITS.toyMaxDModel, { optional: true, multipleOf: 4 }),
      heads: int(1, LIMITS.toyMaxHeads, { optional: true }),
      layers: int(1, LIMITS.toyMaxLayers, { optional: true }),
      batch: int(1, LIMITS.toyMaxBatch, { optional: true }),
      vocab: int(LIMITS.toyMinVocab, LIMITS.toyMaxVocab, { optional: true }),
      causal: bool(),
      learningRate: num(Number.MIN_VALUE, 1),
    },
    check: (r) => typeof r.step === 'function' && r.config.task !== undefined,
  },
  {
    name: 'similarity',
    call: (pe, a) => pe.similarity(a.t, { metric: a.metric }),
    valid: { t: T([4, 3]) },
    args: { t: tensor(), metric: oneOf(ENUMS.metric) },
    check: (r, a) => shapeIs(r, [a.t.shape[0], a.t.shape[0]]),
  },
  {
    name: 'shiftMatrix',
    call: (pe, a) => pe.shiftMatrix(a),
    valid: { dModel: 4, k: 3 },
    args: {
      dModel: int(2, LIMITS.maxShiftDModel, { even: true }),
      base: num(LIMITS.minBase, LIMITS.maxBase),
      k: num(-Infinity, Infinity, { optional: false }),
    },
    check: (r, a) => shapeIs(r, [a.dModel, a.dModel]),
  },
  {
    name: 'nearestDistances',
    call: (pe, a) => pe.nearestDistances(a.t),
    valid: { t: T([4, 3]) },
    args: { t: tensor() },
    check: (r, a) => r instanceof Float32Array && r.length === a.t.shape[0],
  },
];

export const byName = Object.fromEntries(FUNCTIONS.map((f) => [f.name, f]));

// The error class (or 'ok') the contract gives value v for a scalar argument spec.
export function expectedFor(spec, v) {
  if (v === undefined) return spec.optional ? 'ok' : TypeError;
  switch (spec.kind) {
    case 'int':
    case 'number':
      if (typeof v !== 'number') return TypeError;
      if (!Number.isFinite(v)) return RangeError;
      if (spec.kind === 'int' && !Number.isInteger(v)) return RangeError;
      if (v < spec.min || v > spec.max) return RangeError;
      if (spec.even && v % 2) return RangeError;
      if (spec.multipleOf && v % spec.multipleOf) return RangeError;
      return 'ok';
    case 'enum':
      if (typeof v !== 'string') return TypeError;
      return spec.allowed.includes(v) ? 'ok' : RangeError;
    case 'bool':
      return typeof v === 'boolean' ? 'ok' : TypeError;
    default:
      throw new Error(`no rule for ${spec.kind}`);
  }
}

// Every finite number / typed-array value in a result (recursively), for "no garbage" checks.
export function allFinite(r, seen = new Set()) {
  if (typeof r === 'number') return Number.isFinite(r);
  if (r instanceof Float32Array || r instanceof Float64Array || r instanceof Int32Array) return r.every(Number.isFinite);
  if (r && typeof r === 'object' && !seen.has(r)) {
    seen.add(r);
    if (typeof r.dispose === 'function') return allFinite(r.table, seen);
    return Object.values(r).every((v) => allFinite(v, seen));
  }
  return true;
}

// the "I am a robot" table (n = 100, d = 4) of A Gentle Introduction to Positional Encoding: every suite checks the instance against it.
export const SEED_TABLE = [
  0, 1, 0, 1, 0.84147098, 0.54030231, 0.09983342, 0.99500417, 0.90929743, -0.41614684, 0.19866933, 0.98006658, 0.14112001, -0.9899925, 0.29552023,
  0.95533649,
];

export function healthy(pe) {
  const t = pe.sinusoidal({ length: 4, dModel: 4, base: 100 });
  if (t.shape[0] !== 4 || t.shape[1] !== 4) return false;
  return t.data.every((x, i) => Math.abs(x - SEED_TABLE[i]) < 1e-7);
}

// Every kind of bad value an attacker or a careless caller passes.
export const BAD = [
  ['undefined', undefined],
  ['null', null],
  ['a string', 'abc'],
  ['the empty string', ''],
  ['an object', {}],
  ['an empty array', []],
  ['an array holding a number', [4]],
  ['a boxed number', new Number(4)],
  ['NaN', NaN],
  ['Infinity', Infinity],
  ['-Infinity', -Infinity],
  ['-1', -1],
  ['0', 0],
  ['0.5', 0.5],
  ['2^31', 2 ** 31],
  ['2^53', 2 ** 53],
  ['true', true],
  ['a BigInt', 4n],
  ['a symbol', Symbol('s')],
  ['a function', () => 4],
];

// Bad and edge-case tensors derived from a valid one, with the class the contract gives each.
export function tensorCases(base, spec) {
  const S = base.shape;
  const n = base.data.length;
  const withValue = (x) => {
    const d = Float32Array.from(base.data);
    d[n - 1] = x;
    return { data: d, shape: S };
  };
  const nonFinite = (x) => (spec.nonFinite === 'reject' && !(x === -Infinity && spec.allowNegInf) ? RangeError : 'ok');
  const offsetView = () => {
    const buf = new Float32Array(n + 3);
    buf.set(base.data, 3);
    return { data: buf.subarray(3), shape: S };
  };
  const shared = () => {
    const d = new Float32Array(new SharedArrayBuffer(n * 4));
    d.set(base.data);
    return { data: d, shape: S };
  };
  return [
    ['undefined', undefined, spec.optional ? 'ok' : TypeError],
    ['null', null, TypeError],
    ['a string', 'abc', TypeError],
    ['a number', 5, TypeError],
    ['NaN', NaN, TypeError],
    ['an empty object', {}, TypeError],
    ['true', true, TypeError],
    ['an array of numbers', Array.from(base.data), TypeError],
    ['a bare Float32Array', base.data, spec.bare ? 'ok' : TypeError],
    ['a bare Float64Array', Float64Array.from(base.data), TypeError],
    ['Float64Array data', { data: Float64Array.from(base.data), shape: S }, TypeError],
    ['Int32Array data', { data: new Int32Array(n), shape: S }, TypeError],
    ['Uint8Array data', { data: new Uint8Array(n * 4), shape: S }, TypeError],
    ['Uint16Array data without a dtype (float16 or bfloat16?)', { data: new Uint16Array(n), shape: S }, TypeError],
    ['plain-array data', { data: Array.from(base.data), shape: S }, TypeError],
    ['DataView data', { data: new DataView(base.data.buffer), shape: S }, TypeError],
    ['no shape', { data: base.data }, TypeError],
    ['a string shape', { data: base.data, shape: S.join(',') }, TypeError],
    ['a shape of strings', { data: base.data, shape: S.map(String) }, TypeError],
    ['a shape that does not match data', { data: new Float32Array(n + 1), shape: S }, RangeError],
    ['a negative dimension', { data: base.data, shape: [...S.slice(0, -1), -S.at(-1)] }, RangeError],
    ['a fractional dimension', { data: base.data, shape: [n * 2, 0.5] }, RangeError],
    ['a NaN dimension', { data: base.data, shape: [...S.slice(0, -1), NaN] }, RangeError],
    ['a dimension of 2^31', { data: new Float32Array(0), shape: [2 ** 31, 0] }, RangeError],
    ['a dimension of 2^53', { data: new Float32Array(0), shape: [0, 2 ** 53] }, RangeError],
    ['rank 1', { data: base.data, shape: [n] }, spec.ranks && !spec.ranks.includes(1) ? RangeError : 'ok'],
    ['rank 4', { data: base.data, shape: [1, 1, 1, 1, ...S].slice(-4) }, spec.ranks && !spec.ranks.includes(4) ? RangeError : 'ok'],
    ['rank 5', { data: base.data, shape: [1, 1, 1, 1, 1, ...S].slice(-5) }, spec.ranks ? RangeError : 'ok'],
    ['an unknown key', { data: base.data, shape: S, dtype: 'float32' }, TypeError],
    ['a NaN value', withValue(NaN), nonFinite(NaN)],
    ['an Infinity value', withValue(Infinity), nonFinite(Infinity)],
    ['a -Infinity value', withValue(-Infinity), nonFinite(-Infinity)],
    ['a view at an offset into a larger buffer', offsetView(), 'ok', true],
    ['a SharedArrayBuffer', shared(), 'ok', true],
  ];
}

// Bad and edge-case indices for a table of `rows` rows.
export function indexCases(rows) {
  return [
    ['undefined', undefined, TypeError],
    ['null', null, TypeError],
    ['a string', 'abc', TypeError],
    ['a number', 3, TypeError],
    ['NaN', NaN, TypeError],
    ['an empty object', {}, TypeError],
    ['true', true, TypeError],
    ['a BigInt', 3n, TypeError],
    ['an empty array', [], 'ok'],
    ['[NaN]', [NaN], RangeError],
    ['[Infinity]', [Infinity], RangeError],
    ['[-1]', [-1], RangeError],
    ['[0.5]', [0.5], RangeError],
    ['[rows]', [rows], RangeError],
    ['[2^31]', [2 ** 31], RangeError],
    ['[2^53]', [2 ** 53], RangeError],
    ["['1']", ['1'], TypeError],
    ['[1n] (a BigInt, as int64 ids arrive)', [1n], 'ok'],
    ['[2n ** 60n]', [2n ** 60n], RangeError],
    ['[null]', [null], TypeError],
    ['[[1]] (a nested array: shape [1, 1])', [[1]], 'ok'],
    ['a ragged nested array', [[1, 2], [3]], RangeError],
    ['[[1], 2]', [[1], 2], RangeError],
    ['a sparse array', new Array(3), TypeError],
    ['a huge sparse array', new Array(2 ** 31), RangeError],
    ['a Float32Array of 1.5', new Float32Array([1.5]), RangeError],
    ['an Int32Array', new Int32Array([1, 2]), 'ok'],
    ['a Uint8Array', new Uint8Array([1, 2]), 'ok'],
    ['a BigInt64Array (ONNX Runtime, transformers.js)', new BigInt64Array([1n]), 'ok'],
    ['a BigUint64Array', new BigUint64Array([1n]), 'ok'],
    ['an ONNX Runtime-style tensor { data, dims } of int64', { data: new BigInt64Array([1n, 0n]), dims: [1, 2] }, 'ok'],
    ['a tensor with both shape and dims', { data: [1], shape: [1], dims: [1] }, TypeError],
    ['a DataView', new DataView(new ArrayBuffer(8)), TypeError],
    ['a tensor', { data: [1, 2, 3, 4], shape: [2, 2] }, 'ok'],
    ['a tensor whose shape does not match', { data: [1, 2], shape: [3] }, RangeError],
    ['a tensor with a string shape', { data: [1, 2], shape: '2' }, TypeError],
    ['a tensor without a shape', { data: [1] }, TypeError],
    ['a tensor of a string', { data: 'ab', shape: [2] }, TypeError],
    ['a tensor with a 2^31 dimension', { data: [], shape: [2 ** 31, 0] }, RangeError],
    ['a tensor with a fractional dimension', { data: [1], shape: [0.5, 2] }, RangeError],
  ];
}

// RoPE scaling objects (Hugging Face rope_scaling, camelCase): [label, scaling, expected, named];
// expected may differ between ropeFrequencies and rope: { ropeFrequencies, rope }. A config.json
// (snake_case) object names its base (rope_theta) or is refused.
export const SCALINGS = [
  ['null (as in HF configs)', null, 'ok'],
  ['a string', 'linear', TypeError, 'scaling'],
  ['a number', 5, TypeError, 'scaling'],
  ['an array', [], TypeError, 'scaling'],
  ['without type', { factor: 2 }, TypeError, 'type'],
  ['an unknown type', { type: 'bogus' }, RangeError, 'type'],
  ['a numeric type', { type: 5 }, TypeError, 'type'],
  ['linear', { type: 'linear', factor: 2 }, 'ok'],
  ['factor 0', { type: 'linear', factor: 0 }, RangeError, 'factor'],
  ['factor -1', { type: 'linear', factor: -1 }, RangeError, 'factor'],
  ['factor NaN', { type: 'linear', factor: NaN }, RangeError, 'factor'],
  ['factor a string', { type: 'linear', factor: '2' }, TypeError, 'factor'],
  ['factor so small that invFreq leaves float32', { type: 'linear', factor: 1e-300 }, RangeError, 'factor'],
  ['a snake_case key (config.json) and its rope_theta', { type: 'linear', factor: 2, original_max_position_embeddings: 4096, rope_theta: 1e4 }, 'ok'],
  ['a snake_case key (config.json) without a base', { type: 'linear', factor: 2, original_max_position_embeddings: 4096 }, TypeError, 'base'],
  ['rope_type (config.json) without a base', { rope_type: 'linear', factor: 2 }, TypeError, 'rope_theta'],
  ['rope_type (config.json)', { rope_type: 'linear', factor: 2, rope_theta: 1e4 }, 'ok'],
  ["rope_type 'default' (no scaling)", { rope_type: 'default', rope_theta: 1e4 }, 'ok'],
  ['type and rope_type that agree (as transformers re-saves configs)', { type: 'linear', rope_type: 'linear', factor: 2, rope_theta: 1e4 }, 'ok'],
  ['type and rope_type that disagree', { type: 'yarn', rope_type: 'linear', factor: 2, rope_theta: 1e4 }, TypeError, 'rope_type'],
  ["Qwen2-VL's rope_scaling (type 'mrope': default frequencies)", { type: 'mrope', mrope_section: [16, 24, 24], rope_theta: 1e6 }, 'ok'],
  [
    'yarn with factor null (config.json)',
    { rope_type: 'yarn', factor: null, original_max_position_embeddings: 4096, rope_theta: 1e4 },
    TypeError,
    'factor',
  ],
  ['yarn without a factor (config.json)', { rope_type: 'yarn', original_max_position_embeddings: 4096, rope_theta: 1e4 }, TypeError, 'factor'],
  ['linear without a factor', { type: 'linear' }, TypeError, 'factor'],
  [
    'partial_rotary_factor in a scaling object',
    { rope_type: 'default', rope_theta: 1e4, partial_rotary_factor: 0.5 },
    TypeError,
    'partial_rotary_factor',
  ],
  [
    'the same key in both spellings',
    { type: 'yarn', factor: 2, originalMaxPositions: 4096, original_max_position_embeddings: 4096 },
    TypeError,
    'originalMaxPositions',
  ],
  ['an unknown key', { type: 'linear', factr: 2 }, TypeError, 'factor'],
  ['yarn without originalMaxPositions', { type: 'yarn', factor: 4 }, TypeError, 'originalMaxPositions'],
  ['yarn', { type: 'yarn', factor: 4, originalMaxPositions: 4096 }, 'ok'],
  ['yarn with betaFast < betaSlow', { type: 'yarn', factor: 4, originalMaxPositions: 4096, betaFast: 1, betaSlow: 32 }, RangeError, 'betaFast'],
  ['yarn truncate a string', { type: 'yarn', factor: 4, originalMaxPositions: 4096, truncate: 'yes' }, TypeError, 'truncate'],
  ['yarn with a huge mscale', { type: 'yarn', factor: 4, originalMaxPositions: 4096, mscale: 1e300, mscaleAllDim: 1 }, RangeError, 'mscale'],
  ['attentionFactor beyond float32', { type: 'linear', factor: 2, attentionFactor: 1e300 }, RangeError, 'attentionFactor'],
  ['attentionFactor 0', { type: 'linear', factor: 2, attentionFactor: 0 }, RangeError, 'attentionFactor'],
  ['llama3', { type: 'llama3', factor: 8, originalMaxPositions: 8192 }, 'ok'],
  [
    "llama3 with lowFreqFactor = highFreqFactor (Llama 4 Scout's config: no band to blend)",
    { rope_type: 'llama3', factor: 16, original_max_position_embeddings: 8192, low_freq_factor: 1, high_freq_factor: 1, rope_theta: 5e5 },
    'ok',
  ],
  [
    'llama3 (config.json) without its band',
    { rope_type: 'llama3', factor: 8, original_max_position_embeddings: 8192, rope_theta: 5e5 },
    TypeError,
    'low_freq_factor',
  ],
  [
    'llama3 with lowFreqFactor > highFreqFactor',
    { type: 'llama3', factor: 8, originalMaxPositions: 8192, lowFreqFactor: 4, highFreqFactor: 1 },
    RangeError,
    'highFreqFactor',
  ],
  ['longrope', { type: 'longrope', factor: 4, originalMaxPositions: 4096, shortFactor: [1, 1], longFactor: [2, 2] }, 'ok'],
  [
    'longrope shortFactor of the wrong length',
    { type: 'longrope', factor: 4, originalMaxPositions: 4096, shortFactor: [1], longFactor: [2, 2] },
    RangeError,
    'shortFactor',
  ],
  [
    'longrope shortFactor a string',
    { type: 'longrope', factor: 4, originalMaxPositions: 4096, shortFactor: 'x', longFactor: [2, 2] },
    TypeError,
    'shortFactor',
  ],
  [
    'longrope longFactor holding NaN',
    { type: 'longrope', factor: 4, originalMaxPositions: 4096, shortFactor: [1, 1], longFactor: [2, NaN] },
    RangeError,
    'longFactor',
  ],
  [
    'dynamic without seqLength (rope takes the largest position + 1)',
    { type: 'dynamic', factor: 2, originalMaxPositions: 2048 },
    { ropeFrequencies: RangeError, rope: 'ok' },
    'seqLength',
  ],
  [
    'longrope with short_mscale and long_mscale (vLLM, Phi-3-small)',
    {
      rope_type: 'longrope',
      original_max_position_embeddings: 4096,
      short_factor: [1, 1],
      long_factor: [2, 2],
      short_mscale: 1.1,
      long_mscale: 1.2,
      rope_theta: 1e4,
    },
    'ok',
  ],
  [
    'longrope with attentionFactor and an mscale',
    { type: 'longrope', originalMaxPositions: 4096, shortFactor: [1, 1], longFactor: [2, 2], shortMscale: 1.1, attentionFactor: 1 },
    TypeError,
    'attentionFactor',
  ],
  ['dynamic', { type: 'dynamic', factor: 2, originalMaxPositions: 2048, seqLength: 4096 }, 'ok'],
  ['ntk', { type: 'ntk', factor: 2 }, 'ok'],
];
