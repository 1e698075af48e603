// Hostile input, table-driven: every public function, every argument, every kind of bad
// value, on both backends. Each case asserts the error class (TypeError for types and shapes,
// RangeError for values), that the message is posenc's ("posenc.<function>: ..."), names the
// argument and shows the value, that valid values give finite results of the right shape, and that
// the instance still computes the "I am a robot" table afterwards. The arguments are described once, in
// argspecs.js.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { load } from 'posenc';
import { loadLab } from 'posenc/lab';
import { freshLoader } from './helpers.js';
import {
  BAD,
  FLOAT32_MAX,
  FUNCTIONS,
  OPTION_FUNCTIONS,
  SCALINGS,
  T,
  allFinite,
  byName,
  expectedFor,
  healthy,
  indexCases,
  release,
  tensorCases,
} from './argspecs.js';

// loadLab()'s objects: every function of the core and of the teaching models (posenc/lab)
const backends = [await loadLab(), await loadLab({ simd: false })];

// A number as the core's messages write it: printf's "%.10g" (10 significant digits, trailing zeros
// dropped, the exponent form below 1e-4 and from 1e10), e.g. 2^53 as 9.007199255e+15.
function core10g(v) {
  if (!Number.isFinite(v)) return String(v);
  const [m, ex] = v.toExponential(9).split('e');
  const e = Number(ex);
  if (e < -4 || e >= 10) return `${m.replace(/\.?0+$/, '')}e${e < 0 ? '-' : '+'}${String(Math.abs(e)).padStart(2, '0')}`;
  return String(Number(v.toPrecision(10)));
}

// How a scalar value must appear in a message (the value received): as JS writes it, or as the
// core's messages do.
function shows(message, v) {
  if (typeof v === 'number') return message.includes(String(v)) || message.includes(core10g(v));
  if (typeof v === 'string') return message.includes(JSON.stringify(v));
  if (typeof v === 'bigint') return message.includes(`${v}n`);
  if (typeof v === 'symbol') return message.includes('symbol');
  if (typeof v === 'function') return message.includes('function');
  if (v === null || v === undefined || typeof v === 'boolean') return message.includes(String(v));
  if (Array.isArray(v)) return message.includes('array');
  return message.includes('object');
}

const names = (message, arg) => new RegExp(`(^|[^A-Za-z])${arg.split('.').at(-1)}([^A-Za-z]|$)`).test(message);

// A result as plain data, to compare two calls.
function plain(r) {
  if (ArrayBuffer.isView(r)) return Array.from(r, (x) => (Number.isNaN(x) ? 'NaN' : x));
  if (r && typeof r === 'object') {
    if (typeof r.dispose === 'function') return plain(r.table);
    return Object.fromEntries(Object.entries(r).map(([k, v]) => [k, plain(v)]));
  }
  return r;
}

// Calls fn with args and compares the outcome with `want` ('ok' or an error class). Returns a list
// of problems (empty when the case passes). `finite`: whether a successful result must be finite.
function outcome(pe, fn, args, want, { arg, value, label, finite = true, same }) {
  const problems = [];
  let result;
  let error;
  try {
    result = fn.call(pe, args);
  } catch (e) {
    error = e;
  }
  try {
    if (want === 'ok') {
      if (error) problems.push(`${label}: expected success, got ${error.constructor.name}: ${error.message}`);
      else {
        if (!fn.check(result, args)) problems.push(`${label}: the result has the wrong shape or type`);
        if (finite && !allFinite(result)) problems.push(`${label}: the result is not finite`);
        if (same !== undefined && JSON.stringify(plain(result)) !== JSON.stringify(same))
          problems.push(`${label}: the result differs from the plain call's`);
      }
    } else if (!error) {
      problems.push(`${label}: expected ${want.name}, but the call succeeded`);
    } else if (error.constructor !== want) {
      problems.push(`${label}: expected ${want.name}, got ${error.constructor.name}: ${error.message}`);
    } else {
      const prefix = `posenc.${fn.name}: `;
      if (!error.message.startsWith(prefix)) problems.push(`${label}: message does not start with '${prefix}': ${error.message}`);
      if (arg && !names(error.message, arg)) problems.push(`${label}: message does not name '${arg}': ${error.message}`);
      if (value !== NO_VALUE && !shows(error.message, value)) problems.push(`${label}: message does not show the value: ${error.message}`);
    }
  } finally {
    release(result);
  }
  if (!healthy(pe)) problems.push(`${label}: the instance no longer computes the reference table correctly`);
  return problems;
}
const NO_VALUE = Symbol('no value');

// Cases that involve several arguments at once: [label, function, args, expected, argument named].
const T34 = T([3, 4]);
const CROSS = [
  ['positions (fractional, negative)', 'sinusoidal', { dModel: 4, positions: [0, 1.5, -3, 1e6] }, 'ok'],
  ['positions as a Float64Array', 'sinusoidal', { dModel: 4, positions: new Float64Array([1, 2]) }, 'ok'],
  ['positions a string', 'sinusoidal', { dModel: 4, positions: 'abc' }, TypeError, 'positions'],
  ['positions null', 'sinusoidal', { dModel: 4, positions: null }, TypeError, 'positions'],
  ['positions holding NaN', 'sinusoidal', { dModel: 4, positions: [0, NaN] }, RangeError, 'positions'],
  ['positions holding Infinity', 'sinusoidal', { dModel: 4, positions: [0, Infinity] }, RangeError, 'positions'],
  ['positions holding a string', 'sinusoidal', { dModel: 4, positions: [0, '1'] }, TypeError, 'positions'],
  ['positions as a BigInt64Array beyond 2^53', 'sinusoidal', { dModel: 4, positions: new BigInt64Array([2n ** 62n]) }, RangeError, 'positions'],
  ['positions and a different length', 'sinusoidal', { dModel: 4, positions: [0, 1], length: 3 }, RangeError, 'length'],
  ['positions and offset', 'sinusoidal', { dModel: 4, positions: [0, 1], offset: 2 }, TypeError, 'offset'],
  ['a table too large for wasm memory', 'sinusoidal', { length: 2 ** 20, dModel: 2 ** 12 }, RangeError, 'table'],
  ['dModel past 2^28', 'wavelengths', { dModel: 2 ** 28 + 2 }, RangeError, 'dModel'],
  ['a table too large for wasm memory', 'learned', { maxLength: 2 ** 20, dModel: 2 ** 12 }, RangeError, 'table'],
  ['std past 1e30', 'learned', { maxLength: 2, dModel: 2, std: 1e31 }, RangeError, 'std'],
  ['a table too large for wasm memory', 'tokenEmbedding', { vocabSize: 2 ** 20, dModel: 2 ** 12 }, RangeError, 'table'],
  ['a resized table too large for wasm memory', 'LearnedEmbedding.resize', { newMaxLength: 2 ** 27 }, RangeError, 'table'],
  ['p with other columns', 'addPositional', { x: T([2, 4]), p: T([3, 5]) }, RangeError, 'p'],
  ['p with too few rows', 'addPositional', { x: T([2, 4]), p: T([1, 4]) }, RangeError, 'p'],
  ['x batched [batch, seq, d]', 'addPositional', { x: T([2, 2, 4]), p: T([2, 4]) }, 'ok'],
  ['an empty x', 'addPositional', { x: T([0, 4]), p: T([3, 4]) }, 'ok'],
  ['an empty x with a 2^31 - 1 batch', 'addPositional', { x: { data: new Float32Array(0), shape: [2 ** 31 - 1, 0, 4] }, p: T([3, 4]) }, 'ok'],
  ['an empty tensor', 'stats', { t: { data: new Float32Array(0), shape: [0] } }, RangeError, 't'],
  ['an empty bare array', 'stats', { t: new Float32Array(0) }, RangeError, 't'],
  ['k with another d', 'attention', { q: T34, k: T([5, 3]), v: T([5, 2]) }, RangeError, 'k'],
  ['v with other rows', 'attention', { q: T34, k: T([5, 4]), v: T([4, 2]) }, RangeError, 'v'],
  ['q with 3 dimensions, k with 2', 'attention', { q: T([3, 1, 4]), k: T([5, 4]), v: T([5, 2]) }, RangeError, 'k'],
  ['multi-query: one key/value head for two query heads', 'attention', { q: T([3, 2, 4]), k: T([5, 1, 4]), v: T([5, 1, 2]) }, 'ok'],
  ['query heads not a multiple of the key heads', 'attention', { q: T([3, 2, 4]), k: T([5, 3, 4]), v: T([5, 3, 2]) }, RangeError, 'k'],
  ['v with other heads than k', 'attention', { q: T([3, 4, 4]), k: T([5, 2, 4]), v: T([5, 4, 2]) }, RangeError, 'v'],
  ['batches that differ', 'attention', { q: T([2, 3, 1, 4]), k: T([1, 5, 1, 4]), v: T([1, 5, 1, 2]) }, RangeError, 'k'],
  ['weights: false', 'attention', { q: T34, k: T([5, 4]), v: T([5, 2]), weights: false }, 'ok'],
  ['weights: a string', 'attention', { q: T34, k: T([5, 4]), v: T([5, 2]), weights: 'no' }, TypeError, 'weights'],
  ['heads [seq, heads, d]', 'attention', { q: T([3, 2, 4]), k: T([5, 2, 4]), v: T([5, 2, 2]), bias: T([2, 3, 5]) }, 'ok'],
  ['a bias of the wrong shape', 'attention', { q: T34, k: T([5, 4]), v: T([5, 2]), bias: T([5, 3]) }, RangeError, 'bias'],
  ['a per-head bias for one head', 'attention', { q: T34, k: T([5, 4]), v: T([5, 2]), bias: T([2, 3, 5]) }, RangeError, 'bias'],
  [
    'a bias of -Infinity everywhere, causal',
    'attention',
    { q: T34, k: T([5, 4]), v: T([5, 2]), bias: T([3, 5], () => -Infinity), causal: true },
    'ok',
  ],
  ['empty q', 'attention', { q: T([0, 4]), k: T([5, 4]), v: T([5, 2]) }, RangeError, 'q'],
  ['scale beyond float32', 'attention', { q: T34, k: T([5, 4]), v: T([5, 2]), scale: 1e39 }, RangeError, 'scale'],
  ['scale of exactly float32 max', 'attention', { q: T34, k: T([5, 4]), v: T([5, 2]), scale: FLOAT32_MAX }, 'ok'],
  [
    'logits that overflow float32 (Infinity - Infinity): computed again in double',
    'attention',
    { q: T([1, 2], () => 1e30), k: T([2, 2], (i) => (i === 1 ? -1e30 : 1e30)), v: T([2, 2]) },
    'ok',
  ],
  [
    'an overflowed logit masked by -Infinity',
    'attention',
    { q: T([1, 1], () => 1e30), k: T([2, 1], (i) => (i ? 1 : 1e30)), v: T([2, 1]), bias: T([1, 2], (i) => (i ? 0 : -Infinity)), scale: 1 },
    'ok',
  ],
  [
    'work estimated past 2 s (a long call)',
    'attention',
    { q: T([8192, 4, 64], () => 0), k: T([8192, 4, 64], () => 0), v: T([8192, 4, 64], () => 0) },
    RangeError,
    'attention',
  ],
  [
    'tiny heads but 2^33 logits: the time, not the multiply-adds, is refused',
    'attention',
    { q: T([32, 16384, 1, 1], () => 0), k: T([32, 16384, 1, 1], () => 0), v: T([32, 16384, 1, 1], () => 0), weights: false },
    RangeError,
    'attention',
  ],
  ['positions of another length', 'rope', { x: T([3, 2, 4]), positions: [0, 1] }, RangeError, 'positions'],
  ['positions and offset', 'rope', { x: T([3, 2, 4]), positions: [0, 1, 2], offset: 1 }, TypeError, 'offset'],
  ['positions holding NaN', 'rope', { x: T([3, 2, 4]), positions: [0, NaN, 2] }, RangeError, 'positions'],
  ['explicit positions', 'rope', { x: T([3, 2, 4]), positions: [7, -2.5, 1e9] }, 'ok'],
  ['an odd head dimension', 'rope', { x: T([3, 5]) }, RangeError, 'rotaryDim'],
  ['rotaryDim below the head dimension', 'rope', { x: T([3, 6]), rotaryDim: 2 }, 'ok'],
  ['zero channels', 'rope', { x: { data: new Float32Array(0), shape: [3, 0] } }, RangeError, 'x'],
  ['zero heads', 'rope', { x: { data: new Float32Array(0), shape: [3, 0, 4] } }, RangeError, 'x'],
  ['zero rows', 'rope', { x: T([0, 4]) }, 'ok'],
  ['keyLength below queryLength', 'alibiBias', { numHeads: 2, queryLength: 5, keyLength: 3 }, RangeError, 'keyLength'],
  [
    'keyLength below queryLength with a mask',
    'alibiBias',
    { numHeads: 2, queryLength: 5, attentionMask: [1, 1, 1] },
    RangeError,
    'keyLength must be >= queryLength',
  ],
  [
    'keyLength below queryLength (the core says so)',
    't5Buckets',
    { queryLength: 5, keyLength: 3 },
    RangeError,
    'the queries are the last queryLength positions',
  ],
  ['a bias too large for wasm memory', 'alibiBias', { numHeads: 4096, queryLength: 2 ** 14, keyLength: 2 ** 14 }, RangeError, 'bias'],
  ['2 buckets, bidirectional', 't5Buckets', { queryLength: 3, numBuckets: 2 }, RangeError, 'numBuckets'],
  ['2 buckets, causal', 't5Buckets', { queryLength: 3, numBuckets: 2, maxDistance: 2, bidirectional: false }, 'ok'],
  ['maxDistance within the exact buckets', 't5Buckets', { queryLength: 3, maxDistance: 8 }, RangeError, 'maxDistance'],
  ['keyLength below queryLength', 't5Buckets', { queryLength: 5, keyLength: 3 }, RangeError, 'keyLength'],
  ['indices too large for wasm memory', 'relativePositions', { length: 2 ** 15, maxRelative: 2 }, RangeError, 'indices'],
  ['sentence null', 'permutationLab', { sentence: null }, TypeError, 'sentence'],
  ['sentence a number', 'permutationLab', { sentence: 5 }, TypeError, 'sentence'],
  ['sentence empty', 'permutationLab', { sentence: '' }, RangeError, 'sentence'],
  ['sentence of spaces', 'permutationLab', { sentence: '   \n\t' }, RangeError, 'sentence'],
  ['sentence of punctuation', 'permutationLab', { sentence: '!? ...' }, 'ok'],
  ['sentence of one word', 'permutationLab', { sentence: 'cat' }, 'ok'],
  ['sentence of emoji and accents', 'permutationLab', { sentence: 'Ça va 🙂 très bien' }, 'ok'],
  ['sentence of a lone surrogate', 'permutationLab', { sentence: 'a \ud800 b' }, 'ok'],
  ['sentence past 65536 characters', 'permutationLab', { sentence: 'x'.repeat(70000) }, RangeError, 'sentence'],
  ['sentence past 512 tokens', 'permutationLab', { sentence: 'a '.repeat(513) }, RangeError, 'sentence'],
  ['permutation too short', 'permutationLab', { permutation: [0] }, RangeError, 'permutation'],
  ['permutation repeating an index', 'permutationLab', { permutation: [0, 0, 1, 2, 3, 4] }, RangeError, 'permutation'],
  ['permutation past the last token', 'permutationLab', { permutation: [6, 1, 2, 3, 4, 5] }, RangeError, 'permutation'],
  ['permutation fractional', 'permutationLab', { permutation: [0, 1, 2, 3, 4, 5.5] }, RangeError, 'permutation'],
  ['permutation a string', 'permutationLab', { permutation: 'abc' }, TypeError, 'permutation'],
  ['permutation null', 'permutationLab', { permutation: null }, TypeError, 'permutation'],
  ['permutation reversed', 'permutationLab', { permutation: [5, 4, 3, 2, 1, 0] }, 'ok'],
  ['permutation as an Int32Array', 'permutationLab', { permutation: new Int32Array([1, 0, 2, 3, 4, 5]) }, 'ok'],
  ['the identity permutation', 'permutationLab', { permutation: [0, 1, 2, 3, 4, 5] }, 'ok'],
  ['sentence null', 'scoreTerms', { sentence: null }, TypeError, 'sentence'],
  ["encoding 'rope' (not additive)", 'scoreTerms', { encoding: 'rope' }, RangeError, 'encoding'],
  ["encoding 'nope' (no positions to split off)", 'scoreTerms', { encoding: 'nope' }, RangeError, 'encoding'],
  ["encoding 'xpos' (not additive)", 'scoreTerms', { encoding: 'xpos' }, RangeError, 'encoding'],
  ["encoding 'nope'", 'permutationLab', { encoding: 'nope' }, 'ok'],
  ["encoding 'xpos'", 'permutationLab', { encoding: 'xpos' }, 'ok'],
  ["encoding 'xPos' (the paper's spelling)", 'permutationLab', { encoding: 'xPos' }, RangeError, 'encoding'],
  ["encoding 'NoPE' (the paper's spelling)", 'permutationLab', { encoding: 'NoPE' }, RangeError, 'encoding'],
  ['encoding an options object', 'permutationLab', { encoding: { xpos: {} } }, TypeError, 'encoding'],
  ['t without rows', 'similarity', { t: T([0, 3]) }, RangeError, 't'],
  ['t of one row', 'similarity', { t: T([1, 3]) }, 'ok'],
  ['a call estimated past LIMITS.maxCallSeconds', 'similarity', { t: T([8192, 512], () => 0) }, RangeError, 'similarity'],
  ['t of one row', 'nearestDistances', { t: T([1, 3]) }, RangeError, 't'],
  ['duplicate rows', 'nearestDistances', { t: T([3, 2], () => 1) }, 'ok'],
  ['a call estimated past LIMITS.maxCallSeconds', 'nearestDistances', { t: T([2 ** 18, 1], () => 0) }, RangeError, 'distances'],
];

const SCALAR_KINDS = new Set(['int', 'number', 'enum', 'bool']);
const ALL_OPTIONAL = new Set(['permutationLab', 'scoreTerms']);

for (const pe of backends) {
  describe(`hostile arguments (${pe.backend})`, () => {
    for (const fn of FUNCTIONS) {
      for (const [arg, spec] of Object.entries(fn.args)) {
        if (SCALAR_KINDS.has(spec.kind)) {
          test(`${fn.name}: ${arg}`, () => {
            const problems = [];
            for (const [label, value] of BAD)
              problems.push(...outcome(pe, fn, { ...fn.valid, [arg]: value }, expectedFor(spec, value), { arg, value, label: `${arg} = ${label}` }));
            assert.deepEqual(problems, []);
          });
        } else if (spec.kind === 'tensor') {
          test(`${fn.name}: tensor ${arg}`, () => {
            const base = fn.valid[arg] ?? T([3, 5]);
            const same = plain(fn.call(pe, { ...fn.valid, [arg]: base }));
            const problems = [];
            for (const [label, value, want, compare] of tensorCases(base, spec)) {
              const finite = !(spec.nonFinite === 'propagate' && /NaN value|Infinity value/.test(label)); // elementwise: IEEE propagation
              problems.push(
                ...outcome(pe, fn, { ...fn.valid, [arg]: value }, want, {
                  arg,
                  value: NO_VALUE,
                  label: `${arg}: ${label}`,
                  finite,
                  same: compare ? same : undefined,
                }),
              );
            }
            assert.deepEqual(problems, []);
          });
        } else if (spec.kind === 'indices') {
          test(`${fn.name}: indices ${arg}`, () => {
            const problems = [];
            for (const [label, value, want] of indexCases(spec.rows))
              problems.push(...outcome(pe, fn, { [arg]: value }, want, { arg, value: NO_VALUE, label: `${arg}: ${label}` }));
            assert.deepEqual(problems, []);
          });
        }
      }
    }

    test('options objects that are not objects', () => {
      const problems = [];
      for (const name of OPTION_FUNCTIONS) {
        const fn = { name, call: (p, o) => p[name](o), check: () => true };
        for (const [label, value] of [
          ['null', null],
          ['a string', 'abc'],
          ['a number', 5],
          ['an array', []],
          ['a Float32Array', new Float32Array(2)],
          ['true', true],
          ['a function', () => ({})],
        ])
          problems.push(...outcome(pe, fn, value, TypeError, { arg: 'options', value: NO_VALUE, label: `${name}(${label})` }));
        problems.push(...outcome(pe, fn, undefined, ALL_OPTIONAL.has(name) ? 'ok' : TypeError, { value: NO_VALUE, label: `${name}()` }));
      }
      for (const [name, call] of [
        ['rope', (p, o) => p.rope(T([2, 4]), o)],
        ['similarity', (p, o) => p.similarity(T([2, 4]), o)],
      ]) {
        const fn = { name, call, check: () => true };
        for (const [label, value] of [
          ['null', null],
          ['a string', 'abc'],
          ['a number', 5],
          ['an array', []],
        ])
          problems.push(...outcome(pe, fn, value, TypeError, { arg: 'options', value: NO_VALUE, label: `${name}(t, ${label})` }));
        problems.push(...outcome(pe, fn, undefined, 'ok', { value: NO_VALUE, label: `${name}(t)` }));
      }
      assert.deepEqual(problems, []);
    });

    test('arguments that only go wrong together', () => {
      const problems = [];
      for (const [label, name, args, want, named] of CROSS) {
        problems.push(...outcome(pe, byName[name], args, want, { arg: named, value: NO_VALUE, label: `${name}: ${label}` }));
      }
      assert.deepEqual(problems, []);
    });

    test('RoPE scaling objects (ropeFrequencies and rope)', () => {
      const problems = [];
      for (const [label, scaling, want, named] of SCALINGS) {
        const [wantFrequencies, wantRope] = want?.rope ? [want.ropeFrequencies, want.rope] : [want, want];
        problems.push(
          ...outcome(pe, byName.ropeFrequencies, { dim: 4, scaling }, wantFrequencies, {
            arg: named,
            value: NO_VALUE,
            label: `ropeFrequencies: ${label}`,
          }),
        );
        problems.push(...outcome(pe, byName.rope, { x: T([3, 2, 4]), scaling }, wantRope, { arg: named, value: NO_VALUE, label: `rope: ${label}` }));
      }
      assert.deepEqual(problems, []);
    });

    test('a huge table is refused before allocating', () => {
      const bytes = pe._mod.HEAPU8.length;
      assert.throws(
        () => pe.sinusoidal({ length: 2 ** 20, dModel: 2 ** 12 }),
        (e) => e instanceof RangeError && /4294967296 values/.test(e.message),
      );
      assert.equal(pe._mod.HEAPU8.length, bytes); // no allocation: memory did not grow
    });

    test('embedding tables: dispose, Symbol.dispose, use after dispose', () => {
      for (const make of [() => pe.learned({ maxLength: 8, dModel: 4 }), () => pe.tokenEmbedding({ vocabSize: 8, dModel: 4 })]) {
        const e = make();
        const kind = e.constructor.name;
        const table = e.table.data;
        assert.equal(e.disposed, false);
        e.dispose();
        assert.equal(e.disposed, true);
        e.dispose(); // twice is fine
        for (const [what, use] of [
          ['lookup', () => e.lookup([0])],
          ['table', () => e.table],
          ['rows', () => e.rows],
          ['dModel', () => e.dModel],
          ...(kind === 'LearnedEmbedding'
            ? [
                ['resize', () => e.resize(4)],
                ['maxLength', () => e.maxLength],
              ]
            : [['vocabSize', () => e.vocabSize]]),
        ])
          assert.throws(
            use,
            (err) => err.constructor === TypeError && err.message === `posenc.${kind}.${what}: this ${kind} was disposed`,
            `${kind}.${what}`,
          );
        const f = make();
        assert.deepEqual(f.table.data, table); // a new table where the old one was: same values, fresh object
        f[Symbol.dispose]();
        assert.equal(f.disposed, true);
        assert.ok(healthy(pe));
      }
      const e = pe.learned({ maxLength: 8, dModel: 4, init: 'sinusoidal' });
      const longer = e.resize(16, 'tile');
      e.dispose();
      assert.deepEqual(longer.lookup([9]).data, longer.lookup([1]).data); // independent of the disposed original
      longer.dispose();
    });
  });
}

test("other libraries' names for an option (transformers' seq_len, rope_theta) get a did-you-mean for posenc's", () => {
  const [pe] = backends;
  // edit distance alone suggests nothing for these: each hint comes from the table of other libraries' names
  for (const [key, want] of [
    ['seq_len', 'length'],
    ['seq_length', 'length'],
    ['sequence_length', 'length'],
    ['rope_theta', 'base'],
    ['theta', 'base'],
  ])
    assert.throws(
      () => pe.ropeCache({ rotaryDim: 8, length: 4, [key]: 4 }),
      (e) => e instanceof TypeError && e.message.startsWith(`posenc.ropeCache: options.${key} is not an option; did you mean ${want}? (allowed: `),
      key,
    );
  assert.throws(
    () => pe.sinusoidal({ dModel: 4, seq_len: 3 }),
    (e) => e instanceof TypeError && /^posenc\.sinusoidal: options\.seq_len is not an option; did you mean length\?/.test(e.message),
  );
  assert.throws(
    () => pe.ropeFrequencies({ dim: 8, rope_theta: 5e5 }),
    (e) => e instanceof TypeError && /^posenc\.ropeFrequencies: options\.rope_theta is not an option; did you mean base\?/.test(e.message),
  );
  // a missing argument that has two forms names both
  assert.throws(
    () => pe.ropeCache({ rotaryDim: 8 }),
    /^TypeError: posenc\.ropeCache: give the rows: length \(positions offset \.\. offset \+ length - 1\) or positions$/,
  );
  // a name another function of posenc uses for the same thing: this function's name for it
  const x = { data: new Float32Array(8), shape: [2, 4] };
  for (const [fn, call, key, want] of [
    ['learned', (o) => pe.learned({ dModel: 4, ...o }), 'length', 'maxLength'],
    ['sinusoidal', (o) => pe.sinusoidal({ length: 2, ...o }), 'dim', 'dModel'],
    ['ropeFrequencies', (o) => pe.ropeFrequencies(o), 'dModel', 'dim'],
    ['ropeFrequencies', (o) => pe.ropeFrequencies(o), 'headDim', 'dim'],
    ['ropeCache', (o) => pe.ropeCache({ length: 2, ...o }), 'dim', 'rotaryDim'],
    ['alibiBias', (o) => pe.alibiBias({ queryLength: 2, ...o }), 'heads', 'numHeads'],
    ['alibiBias', (o) => pe.alibiBias({ numHeads: 2, ...o }), 'seqLen', 'queryLength'],
    ['alibiBias', (o) => pe.alibiBias({ numHeads: 2, ...o }), 'length', 'queryLength'],
    ['t5Buckets', (o) => pe.t5Buckets(o), 'length', 'queryLength'],
    ['tokenEmbedding', (o) => pe.tokenEmbedding({ dModel: 4, ...o }), 'vocab', 'vocabSize'],
    ['rope', (o) => pe.rope(x, o), 'interleaved', "layout ('interleaved' or 'half')"],
    [
      'attention',
      (o) => pe.attention({ q: x, ...o }),
      'mask',
      'bias (added to the logits: 0 keeps a key, -Infinity masks it; causal: true masks later keys)',
    ],
    ['attention', (o) => pe.attention({ q: x, ...o }), 'attn_mask', 'bias (added to the logits'],
  ])
    assert.throws(
      () => call({ [key]: 4 }),
      (e) => e instanceof TypeError && e.message.startsWith(`posenc.${fn}: options.${key} is not an option; did you mean ${want}`),
      `${fn} ${key}`,
    );
});

test("a newcomer's slips get the advice that fixes them", () => {
  const [pe] = backends;
  const t = { data: new Float32Array(8), shape: [2, 4] };
  for (const [call, type, message] of [
    // an abbreviation of one allowed value: that value, not the nearest by edit distance ('dot')
    [
      () => pe.similarity(t, { metric: 'cos' }),
      RangeError,
      /^posenc\.similarity: metric must be one of 'dot', 'cosine', got "cos"; did you mean 'cosine'\?$/,
    ],
    [() => pe.sinusoidal({ lenght: 4, dModel: 4 }), TypeError, /^posenc\.sinusoidal: options\.lenght is not an option; did you mean length\? /],
    // a model's config.json where the options go
    [
      () => pe.ropeFrequencies({ hidden_size: 4096, num_attention_heads: 32, rope_theta: 5e5 }),
      TypeError,
      /^posenc\.ropeFrequencies: options\.hidden_size is not an option; a model's config\.json goes in whole as \{ config \} \(allowed: /,
    ],
    [
      () => pe.rope(t, { rope_scaling: { rope_type: 'linear', factor: 2 } }),
      TypeError,
      /options\.rope_scaling is not an option; a model's config\.json goes in whole as \{ config \}/,
    ],
    // torch's scaled_dot_product_attention(q, k, v) habit
    [
      () => pe.attention(t, t, t),
      TypeError,
      /^posenc\.attention: options is a tensor: attention takes one object \{ q, k, v, \.\.\. \}, so call attention\(\{ q, k, v \}\)$/,
    ],
    // a bare typed array is named as the argument, not as a .data the caller never wrote
    [() => pe.stats(new Float64Array([1, 2])), TypeError, /^posenc\.stats: t must be a Float32Array .*got a Float64Array of length 2$/],
    [() => pe.rope(new Uint16Array(4), { shape: [1, 4] }), TypeError, /^posenc\.rope: x is a Uint16Array: pass dtype/],
  ])
    assert.throws(call, (e) => e instanceof type && message.test(e.message), String(message));
  // where the options do not take a config, no such advice
  assert.throws(
    () => pe.sinusoidal({ dModel: 4, length: 2, hidden_size: 4 }),
    (e) => !/config/.test(e.message),
  );
});

test('the limits the core quotes read as the contract writes them (LIMITS in src/js/contract.js)', () => {
  for (const pe of backends)
    for (const [call, message] of [
      [() => pe.sinusoidal({ length: 2, dModel: 4, base: 1e301 }), 'base must be a number in [1e-300, 1e+300], got 1e+301'],
      [() => pe.ropeFrequencies({ dim: 8, base: 1e-301 }), 'base must be a number in [1e-300, 1e+300], got 1e-301'],
      [() => pe.learned({ maxLength: 2, dModel: 4, init: 'normal', std: 1e31 }), 'std must be a number in [0, 1e+30], got 1e+31'],
      // a count whose lower bound the core keeps (no heads is refused there) is not quoted as [0, max]
      [() => pe.alibiSlopes(4097), 'numHeads must be an integer at most 4096, got 4097'],
      [() => pe.alibiSlopes(0), 'numHeads must be a positive integer, got 0'],
      [() => pe.alibiBias({ numHeads: -1, queryLength: 2 }), 'numHeads must be a non-negative integer, got -1'],
    ])
      assert.throws(call, (e) => e instanceof RangeError && e.message.endsWith(message), `${pe.backend}: ${message}`);
});

describe('load options', () => {
  test('bad options throw TypeError and leave loading possible', async () => {
    const problems = [];
    const specs = {
      simd: (v) => v === undefined || typeof v === 'boolean',
      wasmURL: (v) => v === undefined || typeof v === 'string' || v instanceof URL,
      wasmBinary: (v) => v === undefined || v instanceof ArrayBuffer || v instanceof Uint8Array,
    };
    const extra = [
      ['a URL', new URL('file:///x.wasm')],
      ['an ArrayBuffer', new ArrayBuffer(8)],
      ['a Uint8Array', new Uint8Array(8)],
      ['a Float32Array', new Float32Array(2)],
    ];
    for (const [key, ok] of Object.entries(specs)) {
      for (const [label, value] of [...BAD, ...extra]) {
        if (key === 'simd' && value === true) continue; // requires SIMD; covered by loader.test.js
        let error;
        let instance;
        try {
          instance = await load({ simd: key === 'simd' ? value : false, [key]: value });
        } catch (e) {
          error = e;
        }
        if (ok(value)) {
          if (error) problems.push(`${key} = ${label}: rejected with ${error.message}`);
          else if (instance.backend !== 'wasm-scalar' && value !== undefined) problems.push(`${key} = ${label}: wrong backend`);
        } else if (!(error?.constructor === TypeError && error.message.startsWith('posenc.load: ') && error.message.includes(key)))
          problems.push(`${key} = ${label}: expected a TypeError naming ${key}, got ${error?.message ?? 'none'}`);
      }
    }
    for (const [label, value] of [
      ['null', null],
      ['a string', 'abc'],
      ['a number', 5],
      ['an array', []],
    ]) {
      try {
        await load(value);
        problems.push(`load(${label}) did not reject`);
      } catch (e) {
        if (e.constructor !== TypeError) problems.push(`load(${label}): ${e.constructor.name}`);
      }
    }
    assert.deepEqual(problems, []);
    assert.ok(healthy(await load()));
  });

  test('every error names posenc: revoked Proxies and throwing getters as options, inputs, positions, segments, configs; a detached wasmBinary', async () => {
    const revoked = () => {
      const { proxy, revoke } = Proxy.revocable({}, {});
      revoke();
      return proxy;
    };
    const pe = await load();
    const x = { data: new Float32Array(8), shape: [2, 4] };
    const throwing = {
      get length() {
        throw new Error('boom');
      },
      dModel: 2,
    };
    const table = pe.tokenEmbedding({ vocabSize: 4, dModel: 2 });
    const calls = {
      'sinusoidal(options)': () => pe.sinusoidal(revoked()),
      'sinusoidal(a throwing getter)': () => pe.sinusoidal(throwing),
      'rope(input)': () => pe.rope(revoked()),
      'rope(positions)': () => pe.rope(x, { positions: revoked() }),
      'rope(config)': () => pe.rope(x, { config: revoked() }),
      'ropeFrequencies(config)': () => pe.ropeFrequencies({ config: revoked() }),
      'mropePositions(segment)': () => pe.mropePositions([revoked()]),
      'attention(q)': () => pe.attention({ q: revoked(), k: x, v: x }),
      'lookup(ids)': () => table.lookup(revoked()),
    };
    const problems = [];
    for (const [label, call] of Object.entries(calls))
      try {
        call();
        problems.push(`${label}: no error`);
      } catch (e) {
        if (!(e instanceof TypeError) || !/^posenc\.[A-Za-z.]+: /.test(e.message)) problems.push(`${label}: ${e.constructor.name}: ${e.message}`);
      }
    table.dispose();
    const buffer = new ArrayBuffer(64);
    structuredClone(buffer, { transfer: [buffer] });
    // a fresh copy of the loader: the bytes are read by the first load of a backend
    const freshLoad = await freshLoader(`detached=${Date.now()}`);
    await assert.rejects(
      freshLoad({ simd: false, wasmBinary: buffer }),
      (e) => e instanceof TypeError && /^posenc\.load: wasmBinary's buffer is detached/.test(e.message),
    );
    await assert.rejects(load(revoked()), (e) => e instanceof TypeError && /^posenc\.load: /.test(e.message));
    assert.deepEqual(problems, []);
    assert.ok(healthy(pe));
  });

  test('a failed load rejects, does not hang, and may be retried', async () => {
    // A fresh copy of the loader (its own instance cache); the glue prints the failure as a warning.
    const freshLoad = await freshLoader(`fresh=${Date.now()}`);
    const warn = console.warn;
    console.warn = () => {};
    try {
      await assert.rejects(freshLoad({ simd: false, wasmBinary: new Uint8Array([1, 2, 3]) }));
      await assert.rejects(freshLoad({ simd: false, wasmURL: new URL('file:///nonexistent/posenc.wasm') }), /ENOENT/);
    } finally {
      console.warn = warn;
    }
    const pe = await freshLoad({ simd: false });
    assert.equal(pe.backend, 'wasm-scalar');
    assert.ok(healthy(pe));
  });
});
