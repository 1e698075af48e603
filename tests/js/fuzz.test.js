// Property-based fuzz of the public API from JavaScript, with a seeded generator (no
// dependency): random valid options for every function, and the same with one argument replaced by
// a bad value. Properties, on both backends:
//   - valid options give a result of the right shape whose values are all finite, or a RangeError
//     for a documented limit (sizes, work, a combination the core refuses);
//   - a bad argument gives exactly the error class the contract assigns it (argspecs.js);
//   - nothing else is ever thrown, and afterwards the instance still computes the "I am a robot" table.
// POSENC_FUZZ_SEED and POSENC_FUZZ_ITERATIONS (per backend) change the run; a failure prints the seed,
// the iteration and the arguments, so it can be replayed.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { loadLab } from 'posenc/lab';
import { BAD, FUNCTIONS, OPTION_FUNCTIONS, SCALINGS, allFinite, byName, expectedFor, healthy, indexCases, release, tensorCases } from './argspecs.js';

const SEED = Number(process.env.POSENC_FUZZ_SEED ?? 20240607);
const ITERATIONS = Number(process.env.POSENC_FUZZ_ITERATIONS ?? 2500);
// loadLab()'s objects: every function of the core and of the teaching models (posenc/lab)
const backends = [await loadLab(), await loadLab({ simd: false })];

// SplitMix32-style generator: deterministic for a seed, on every engine.
function generator(seed) {
  let s = seed >>> 0;
  const next = () => {
    s = (s + 0x9e3779b9) >>> 0;
    let z = s;
    z = Math.imul(z ^ (z >>> 16), 0x85ebca6b) >>> 0;
    z = Math.imul(z ^ (z >>> 13), 0xc2b2ae35) >>> 0;
    return ((z ^ (z >>> 16)) >>> 0) / 2 ** 32;
  };
  const g = {
    u: next,
    int: (lo, hi) => lo + Math.floor(next() * (hi - lo + 1)),
    real: (lo, hi) => lo + next() * (hi - lo),
    pick: (list) => list[Math.floor(next() * list.length)],
    chance: (p) => next() < p,
    even: (lo, hi) => 2 * g.int(Math.ceil(lo / 2), Math.floor(hi / 2)),
    base: () => g.pick([2, 100, 500, 10000, 1e6, 10 ** g.real(0.1, 7)]),
    tensor: (shape, scale = 3) => ({ data: Float32Array.from({ length: shape.reduce((a, b) => a * b, 1) }, () => g.real(-scale, scale)), shape }),
    position: () => (g.chance(0.5) ? g.int(-(2 ** 31), 2 ** 31 - 1) : g.real(-1e9, 1e9)),
  };
  return g;
}

const WORDS = ['the', 'cat', 'sat', 'on', 'mat', 'a', 'dog', 'ran', "didn't", 'Ça', 'va', '🙂', 'robot', 'I', 'am', ',', '.', '!'];

function sentence(g) {
  return Array.from({ length: g.int(1, 12) }, () => g.pick(WORDS)).join(g.pick([' ', '  ', '\n']));
}

function scaling(g, dim) {
  const half = dim / 2;
  switch (g.pick(['none', 'null', 'linear', 'ntk', 'dynamic', 'yarn', 'llama3', 'longrope'])) {
    case 'none':
      return undefined;
    case 'null':
      return null;
    case 'linear':
      return { type: 'linear', factor: g.real(0.5, 16) };
    case 'ntk':
      return { type: 'ntk', factor: g.real(1, 16) };
    case 'dynamic':
      return { type: 'dynamic', factor: g.real(1, 8), originalMaxPositions: g.int(16, 4096), seqLength: g.int(1, 10000) };
    case 'yarn':
      return {
        type: 'yarn',
        factor: g.real(1, 32),
        originalMaxPositions: g.int(64, 8192),
        truncate: g.chance(0.5),
        ...(g.chance(0.3) ? { mscale: g.real(0.5, 1.5), mscaleAllDim: g.real(0.5, 1.5) } : {}),
      };
    case 'llama3':
      return { type: 'llama3', factor: g.real(1, 16), originalMaxPositions: g.int(64, 8192), lowFreqFactor: 1, highFreqFactor: g.real(2, 8) };
    default:
      return {
        type: 'longrope',
        factor: g.real(1, 16),
        originalMaxPositions: g.int(64, 4096),
        seqLength: g.int(0, 8192),
        shortFactor: Array.from({ length: half }, () => g.real(1, 4)),
        longFactor: Array.from({ length: half }, () => g.real(1, 64)),
      };
  }
}

// Random valid arguments for each function (small sizes: thousands of calls must stay fast).
const VALID = {
  sinusoidal: (g) => {
    const a = { dModel: g.int(1, 64), base: g.base(), layout: g.pick(['interleaved', 'split', undefined]) };
    if (g.chance(0.3)) a.positions = Array.from({ length: g.int(0, 32) }, () => g.position());
    else Object.assign(a, { length: g.int(0, 100), offset: g.chance(0.5) ? g.position() : undefined });
    return a;
  },
  wavelengths: (g) => ({ dModel: g.int(1, 512), base: g.base() }),
  learned: (g) => ({
    maxLength: g.int(1, 64),
    dModel: g.int(1, 32),
    init: g.pick(['normal', 'xavier', 'sinusoidal', 'zeros']),
    std: g.real(0, 2),
    seed: g.int(0, 2 ** 53 - 1),
  }),
  tokenEmbedding: (g) => ({ vocabSize: g.int(1, 64), dModel: g.int(1, 32), seed: g.int(0, 2 ** 31), scale: g.chance(0.5) }),
  'LearnedEmbedding.lookup': (g) => ({
    positions: g.chance(0.3)
      ? { data: Array.from({ length: 6 }, () => g.int(0, 7)), shape: [2, 3] }
      : Array.from({ length: g.int(0, 20) }, () => g.int(0, 7)),
  }),
  'LearnedEmbedding.resize': (g) => ({ newMaxLength: g.int(1, 100), method: g.pick(['interpolate', 'tile', undefined]) }),
  'TokenEmbedding.lookup': (g) => ({ ids: Int32Array.from({ length: g.int(0, 20) }, () => g.int(0, 7)) }),
  addPositional: (g) => {
    const [seq, d] = [g.int(0, 10), g.int(1, 16)];
    return { x: g.tensor(g.chance(0.5) ? [seq, d] : [g.int(1, 3), seq, d], 10), p: g.tensor([seq + g.int(0, 5), d], 10) };
  },
  stats: (g) => ({
    t: g.chance(0.2)
      ? g.tensor([g.int(1, 50)]).data
      : g.tensor(
          Array.from({ length: g.int(1, 3) }, () => g.int(1, 8)),
          1e3,
        ),
  }),
  ropeFrequencies: (g) => {
    const dim = g.even(4, 256);
    return { dim, base: g.base(), scaling: scaling(g, dim) };
  },
  rope: (g) => {
    const [seq, heads, headDim] = [g.int(0, 70), g.int(1, 3), g.even(2, 32)];
    const rotaryDim = g.chance(0.3) ? g.even(2, headDim) : undefined;
    const a = {
      x: g.tensor(g.chance(0.5) ? [seq, headDim] : [seq, heads, headDim], 1),
      base: g.base(),
      layout: g.pick(['half', 'interleaved', undefined]),
      rotaryDim,
    };
    a.scaling = scaling(g, rotaryDim ?? headDim);
    if (g.chance(0.3)) a.positions = Array.from({ length: seq }, () => g.position());
    else a.offset = g.chance(0.5) ? g.position() : undefined;
    return a;
  },
  alibiSlopes: (g) => ({ numHeads: g.int(1, 300) }),
  alibiBias: (g) => {
    const queryLength = g.int(1, 16);
    return { numHeads: g.int(1, 16), queryLength, keyLength: g.chance(0.5) ? g.int(queryLength, 24) : undefined, symmetric: g.chance(0.5) };
  },
  t5Buckets: (g) => {
    const queryLength = g.int(1, 20);
    const bidirectional = g.chance(0.5);
    const numBuckets = bidirectional ? g.int(4, 64) : g.int(2, 64);
    const exact = Math.floor((bidirectional ? Math.floor(numBuckets / 2) : numBuckets) / 2);
    return { queryLength, keyLength: g.int(queryLength, 30), numBuckets, maxDistance: g.int(exact + 1, exact + 300), bidirectional };
  },
  relativePositions: (g) => ({ length: g.int(1, 40), maxRelative: g.int(0, 50) }),
  attention: (g) => {
    const [sq, sk, dv, d] = [g.int(1, 10), g.int(1, 10), g.int(1, 8), g.int(1, 16)];
    const three = g.chance(0.4);
    const h = three ? g.int(1, 3) : 1;
    const shape = (s, w) => (three ? [s, h, w] : [s, w]);
    const a = {
      q: g.tensor(shape(sq, d)),
      k: g.tensor(shape(sk, d)),
      v: g.tensor(shape(sk, dv)),
      causal: g.chance(0.5),
      scale: g.chance(0.5) ? g.real(-4, 4) : undefined,
    };
    if (g.chance(0.4)) {
      a.bias = g.tensor(three && g.chance(0.5) ? [h, sq, sk] : [sq, sk], 5);
      for (let i = 0; i < a.bias.data.length; i++) if (g.chance(0.2)) a.bias.data[i] = -Infinity;
    }
    return a;
  },
  permutationLab: (g) => {
    const a = {
      sentence: sentence(g),
      encoding: g.pick(['none', 'sinusoidal', 'learned', 'rope', 'alibi', 't5', undefined]),
      dModel: g.chance(0.5) ? g.even(4, 32) : undefined,
      seed: g.int(0, 2 ** 40),
    };
    if (g.chance(0.3)) {
      const n = a.sentence.match(/[\p{L}\p{N}]+(?:['’][\p{L}\p{N}]+)*|[^\s\p{L}\p{N}]/gu).length;
      const p = Array.from({ length: n }, (_, i) => i);
      for (let i = n - 1; i > 0; i--) {
        const j = g.int(0, i);
        [p[i], p[j]] = [p[j], p[i]];
      }
      a.permutation = p;
    }
    return a;
  },
  scoreTerms: (g) => ({
    sentence: sentence(g),
    encoding: g.pick(['sinusoidal', 'learned', undefined]),
    dModel: g.chance(0.5) ? g.even(4, 32) : undefined,
    seed: g.int(0, 100),
  }),
  trainToy: (g) => {
    const heads = g.pick([1, 2, 4, undefined]);
    return {
      task: g.pick(['before', 'copy', 'count']),
      encoding: g.pick(['none', 'nope', 'sinusoidal', 'learned', 'rope', 'alibi', 't5', undefined]),
      length: g.chance(0.5) ? g.int(4, 32) : undefined,
      heads,
      dModel: g.chance(0.5) ? 8 * g.int(1, 8) : undefined,
      layers: g.pick([1, 2, undefined]),
      batch: g.chance(0.3) ? g.int(1, 256) : undefined,
      vocab: g.chance(0.3) ? g.int(4, 64) : undefined,
      causal: g.chance(0.5),
      seed: g.int(0, 2 ** 40),
    };
  },
  similarity: (g) => ({ t: g.tensor([g.int(1, 20), g.int(1, 16)]), metric: g.pick(['dot', 'cosine', undefined]) }),
  shiftMatrix: (g) => ({ dModel: g.even(2, 64), base: g.base(), k: g.chance(0.5) ? g.int(-1e6, 1e6) : g.real(-1e6, 1e6) }),
  nearestDistances: (g) => ({ t: g.tensor([g.int(2, 20), g.int(1, 16)]) }),
};

// Bad values for the arguments argspecs.js calls 'other', with the class each must raise.
const OTHER_BAD = {
  sentence: [
    [null, TypeError],
    [5, TypeError],
    [{}, TypeError],
    ['', RangeError],
    [' \n ', RangeError],
    ['x'.repeat(70000), RangeError],
    ['a '.repeat(600), RangeError],
  ],
  permutation: [
    ['abc', TypeError],
    [null, TypeError],
    [{}, TypeError],
    [[NaN], RangeError],
    [[-1], RangeError],
    [[0.5], RangeError],
    [[1e9], RangeError],
  ],
  // (the calls give a base: the entries refused for lacking one do not apply; nor those that differ by function)
  scaling: SCALINGS.filter(([, , want, named]) => typeof want === 'function' && named !== 'base' && named !== 'rope_theta').map(([, s, want]) => [
    s,
    want,
  ]),
};

// One argument replaced by a bad value: [name, value, expected class or 'ok', finite inputs?].
function mutate(g, fn, args) {
  let [name, spec] = g.pick(Object.entries(fn.args));
  if (name === 'length' && args.positions !== undefined) spec = { ...spec, optional: true }; // sinusoidal: implied by positions
  if (name === 'offset' && args.positions !== undefined) {
    // positions and offset together are refused (a TypeError): replace offset alone.
    if (fn.name === 'sinusoidal') args.length = args.positions.length;
    delete args.positions;
  }
  if (spec.kind === 'tensor') {
    const base = args[name] && args[name].data ? args[name] : (fn.valid[name] ?? { data: new Float32Array(4), shape: [2, 2] });
    const [label, value, want] = g.pick(tensorCases(base, spec));
    return [name, value, want, !(spec.nonFinite === 'propagate' && /NaN value|Infinity value/.test(label))]; // elementwise: IEEE propagation
  }
  if (spec.kind === 'indices') {
    const [, value, want] = g.pick(indexCases(spec.rows));
    return [name, value, want];
  }
  if (spec.kind === 'other') {
    const [value, want] = g.pick(OTHER_BAD[name]);
    return [name, value, want];
  }
  const value = g.chance(0.6)
    ? g.pick(BAD)[1]
    : g.pick([
        () => g.int(-10, 2 ** 32),
        () => g.real(-1e6, 1e6),
        () => g.pick([1, -1]) * 10 ** g.real(0, 308),
        () => String(g.int(0, 99)),
        () => [g.int(0, 9)],
        () => ({ value: g.int(0, 9) }),
        () => g.pick([true, false]),
      ])();
  return [name, value, expectedFor(spec, value)];
}

// A short, replayable description of arguments.
function show(args) {
  return JSON.stringify(args, (k, v) =>
    ArrayBuffer.isView(v)
      ? `${v.constructor.name}(${v.length})`
      : Array.isArray(v) && v.length > 64
        ? `Array(${v.length})`
        : typeof v === 'string' && v.length > 64
          ? `${v.slice(0, 20)}... (${v.length} characters)`
          : typeof v === 'bigint'
            ? `${v}n`
            : typeof v === 'symbol' || typeof v === 'function'
              ? String(v)
              : Number.isNaN(v)
                ? 'NaN'
                : v === Infinity || v === -Infinity
                  ? String(v)
                  : v,
  );
}

for (const pe of backends) {
  describe(`property-based fuzz (${pe.backend})`, () => {
    test(`${ITERATIONS} random calls, valid and not, seed ${SEED}`, (t) => {
      const g = generator(SEED);
      const tally = { ok: 0, limit: 0, TypeError: 0, RangeError: 0 };
      for (let i = 0; i < ITERATIONS; i++) {
        const fn = FUNCTIONS[i % FUNCTIONS.length];
        const args = VALID[fn.name](g);
        let want = 'ok';
        let mutated = '';
        let finite = true;
        if (g.chance(0.5)) {
          const [name, value, expected, finiteInputs = true] = mutate(g, fn, args);
          args[name] = value;
          want = expected;
          finite = finiteInputs;
          mutated = ` (${name} replaced)`;
        }
        const at = () => `seed ${SEED}, iteration ${i}, ${fn.name}${mutated}: ${show(args)}`;
        let result;
        let error;
        try {
          result = fn.call(pe, args);
        } catch (e) {
          error = e;
        }
        try {
          if (error && !(error instanceof TypeError || error instanceof RangeError))
            assert.fail(`${at()}: threw ${error.constructor.name}: ${error.message}`);
          if (error && error.constructor !== TypeError && error.constructor !== RangeError)
            assert.fail(`${at()}: threw a subclass ${error.constructor.name}`);
          if (error && !error.message.startsWith('posenc.')) assert.fail(`${at()}: a message not from posenc: ${error.message}`);
          if (want === 'ok') {
            if (error && error.constructor !== RangeError) assert.fail(`${at()}: valid options threw ${error.constructor.name}: ${error.message}`);
            if (error) {
              tally.limit++;
              if (process.env.POSENC_FUZZ_VERBOSE) console.log(`limit: ${at()}: ${error.message}`);
            } else {
              assert.ok(fn.check(result, args), `${at()}: wrong result shape`);
              if (finite) assert.ok(allFinite(result), `${at()}: a result value is not finite`);
              tally.ok++;
            }
          } else {
            assert.ok(error, `${at()}: expected ${want.name}, the call succeeded`);
            assert.equal(error.constructor, want, `${at()}: expected ${want.name}, got ${error.constructor.name}: ${error.message}`);
            tally[want.name]++;
          }
        } finally {
          release(result);
        }
        if (!healthy(pe)) assert.fail(`${at()}: the instance no longer computes the reference table`);
      }
      t.diagnostic(
        `${tally.ok} valid calls succeeded, ${tally.limit} hit a documented limit, ${tally.TypeError} TypeErrors and ${tally.RangeError} RangeErrors as expected`,
      );
      assert.ok(tally.ok > ITERATIONS / 4 && tally.TypeError > ITERATIONS / 20 && tally.RangeError > ITERATIONS / 20);
      assert.ok(tally.limit < ITERATIONS / 20, `${tally.limit} valid calls hit a limit: the generators should stay within them`);
    });

    test('random junk as the options object', () => {
      const g = generator(SEED + 1);
      const junk = () =>
        g.pick([
          () => ({}),
          () =>
            Object.fromEntries(
              Array.from({ length: g.int(1, 4) }, () => [g.pick(['length', 'dModel', 'x', 'q', 'base', 'type', 'foo']), g.pick(BAD)[1]]),
            ),
          () => g.pick(BAD)[1],
          () => new Proxy({}, { get: () => 3 }),
          () => Object.create(null),
          () => Object.assign(Object.create({ dModel: 4, length: 2 }), {}),
        ])();
      for (let i = 0; i < 600; i++) {
        const name = g.pick(OPTION_FUNCTIONS);
        const options = junk();
        try {
          release(pe[name](options));
        } catch (e) {
          if (e.constructor !== TypeError && e.constructor !== RangeError)
            assert.fail(`${name}(${show(options)}): threw ${e.constructor.name}: ${e.message}`);
        }
        assert.ok(healthy(pe));
      }
      assert.ok(byName.sinusoidal); // the spec table is loaded
    });
  });
}
