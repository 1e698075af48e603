// Memory: 10,000 mixed calls (2,500 on the scalar build), failing ones included (errors raised by the JS checks and
// by the C++ core alike), leave the wasm memory size, the bytes malloc'd and the embind handles
// exactly where they were after a warm-up; embedding tables disposed in a loop do not leak; forgotten
// ones are freed by the FinalizationRegistry; huge requests are refused before allocating; running
// out of wasm memory in the middle of a call is a RangeError that leaves the instance working.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { describe, test } from 'node:test';
import { promisify } from 'node:util';
import { loadDev } from '../../scripts/dev-module.mjs';
import { T, healthy } from './argspecs.js';

// The dev builds: the package's modules plus _heapInUse (bytes malloc'd), which the package does not
// ship; with the lab module beside the core, as loadLab() gives them.
const backends = [await loadDev({ lab: true }), await loadDev({ simd: false, lab: true })];
const run = promisify(execFile);
const DEV_URL = new URL('../../scripts/dev-module.mjs', import.meta.url).href;

// Mixed calls: [expected outcome, call]. 'core' errors are reported by the C++ core inside wasm (a
// status code and a message, thrown by the JS layer), 'js' errors by the wrapper's checks.
function mixedCalls(pe) {
  const q = T([6, 2, 8]);
  const x = T([5, 2, 8]);
  return [
    ['ok', () => pe.sinusoidal({ length: 33, dModel: 17, layout: 'split', offset: 1e6 })],
    ['ok', () => pe.sinusoidal({ dModel: 8, positions: [0.5, -3, 1e9] })],
    ['ok', () => pe.sinusoidal({ length: 1500, dModel: 64 })], // 3 blocks of rows from one core Table, closed at the end
    ['ok', () => pe.wavelengths({ dModel: 9, base: 100 })],
    ['ok', () => pe.stats(T([7, 3]))],
    ['ok', () => pe.addPositional(T([2, 3, 4]), T([5, 4]))],
    ['ok', () => pe.ropeFrequencies({ dim: 16, scaling: { type: 'yarn', factor: 4, originalMaxPositions: 2048 } })],
    ['ok', () => pe.rope(x, { offset: 7, layout: 'interleaved', scaling: { type: 'llama3', factor: 8, originalMaxPositions: 64 } })],
    [
      'ok',
      () =>
        pe.rope(x, {
          positions: [1, 5, 2, 8, 3],
          rotaryDim: 4,
          scaling: { type: 'longrope', factor: 2, originalMaxPositions: 4, seqLength: 9, shortFactor: [1, 1], longFactor: [2, 3] },
        }),
    ],
    ['ok', () => pe.alibiSlopes(12)],
    ['ok', () => pe.alibiBias({ numHeads: 3, queryLength: 4, keyLength: 9 })],
    ['ok', () => pe.t5Buckets({ queryLength: 5, keyLength: 40, bidirectional: false })],
    ['ok', () => pe.relativePositions({ length: 9, maxRelative: 3 })],
    ['ok', () => pe.attention({ q, k: q, v: q, causal: true, bias: T([2, 6, 6]) })],
    ['ok', () => pe.permutationLab({ sentence: 'the cat sat on the mat', encoding: 'rope' })],
    ['ok', () => pe.permutationLab({ encoding: 't5', dModel: 8, seed: 3 })],
    ['ok', () => pe.scoreTerms({ encoding: 'learned', dModel: 8 })],
    ['ok', () => pe.similarity(T([9, 4]), { metric: 'cosine' })],
    ['ok', () => pe.shiftMatrix({ dModel: 8, k: -3.5 })],
    ['ok', () => pe.nearestDistances(T([9, 4]))],
    [
      'ok',
      () => {
        const t = pe.trainToy({ task: 'copy', encoding: 't5', length: 6, batch: 4 });
        t.step(1);
        t.evaluate({ length: 10 });
        t.dispose();
      },
    ],
    ['js', () => pe.trainToy({ task: 'before', heads: 3 })],
    [
      'ok',
      () => {
        const e = pe.learned({ maxLength: 16, dModel: 8, init: 'xavier' });
        const r = e.resize(40, 'interpolate');
        r.lookup({ data: [1, 39, 7, 0], shape: [2, 2] });
        e.dispose();
        r.dispose();
      },
    ],
    [
      'ok',
      () => {
        const e = pe.tokenEmbedding({ vocabSize: 50, dModel: 8 });
        e.lookup([3, 4, 49]);
        e[Symbol.dispose]();
      },
    ],
    ['js', () => pe.sinusoidal({ length: 2 ** 20, dModel: 2 ** 12 })],
    ['js', () => pe.sinusoidal({ length: 4, dModel: NaN })],
    ['js', () => pe.rope(x, { positions: [1, 2] })],
    ['js', () => pe.attention({ q, k: T([6, 2, 4]), v: q })],
    ['js', () => pe.permutationLab({ permutation: [0, 0, 1, 2, 3, 4] })],
    ['js', () => pe.similarity(T([9, 4]), { metric: 'l2' })],
    [
      'js',
      () => {
        const e = pe.learned({ maxLength: 4, dModel: 4 });
        try {
          e.lookup([4]);
        } finally {
          e.dispose();
        }
      },
    ],
    ['ok', () => pe.attention({ q: T([1, 2], () => 1e30), k: T([2, 2], (i) => (i === 1 ? -1e30 : 1e30)), v: T([2, 2]) })],
    ['ok', () => pe.sinusoidal({ length: 3, dModel: 4, out: new Float32Array(12) })],
    ['ok', () => pe.rope(x, { out: x.data.slice(), offset: 2 })],
    ['js', () => pe.sinusoidal({ length: 3, dModel: 4, lenght: 3 })],
    ['js', () => pe.sinusoidal({ length: 3, dModel: 4, out: new Float32Array(11) })],
    ['core', () => pe.similarity(T([2, 1], () => 1e20))],
    [
      'core',
      () =>
        pe.rope(
          T([1, 2], () => 3e38),
          { offset: 1 },
        ),
    ],
    ['core', () => pe.attention({ q: T([2, 2], (i) => (i === 3 ? NaN : 1)), k: T([2, 2]), v: T([2, 2]) })],
    ['core', () => pe.t5Buckets({ queryLength: 3, numBuckets: 2 })],
    ['core', () => pe.ropeFrequencies({ dim: 8, scaling: { type: 'yarn', factor: 4 } })],
    [
      'core',
      () =>
        pe.ropeFrequencies({ dim: 8, scaling: { type: 'longrope', factor: 4, originalMaxPositions: 8, shortFactor: [1], longFactor: [1, 2, 3, 4] } }),
    ],
    ['core', () => pe.rope(x, { scaling: { type: 'linear', factor: -2 } })],
    ['core', () => pe.similarity(T([3, 2], (i) => (i ? 1 : NaN)))],
    ['core', () => pe.nearestDistances(T([3, 2], (i) => (i ? 1 : Infinity)))],
  ];
}

// Both modules: the core's and the lab's memory, malloc'd bytes and embind handles.
function state(pe) {
  const of = (m) => ({ memory: m.HEAPU8.length, malloced: m._heapInUse(), handles: m.count_emval_handles() });
  return { core: of(pe._mod), lab: of(pe._lab) };
}

function runMixed(pe, calls, n, seed) {
  let s = seed >>> 0;
  const counts = { ok: 0, js: 0, core: 0 };
  for (let i = 0; i < n; i++) {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    const [want, call] = calls[s % calls.length];
    try {
      call();
      if (want !== 'ok') throw new Error(`call ${s % calls.length} should have failed`);
    } catch (e) {
      if (want === 'ok' || !(e instanceof RangeError || e instanceof TypeError)) throw e;
    }
    counts[want]++;
  }
  return counts;
}

// The scalar build runs the same JS and the same C++ (compiled without SIMD) a quarter as many times:
// malloc's count and the handles are compared exactly, so a leak shows after one call of its kind, and
// 2,500 calls still make each kind about 50 times.
const CALLS = { 'wasm-simd': 10000, 'wasm-scalar': 2500 };

for (const pe of backends) {
  describe(`memory (${pe.backend})`, () => {
    test(`${CALLS[pe.backend].toLocaleString('en')} mixed calls, failing ones included, keep memory, malloc and handles flat`, (t) => {
      const calls = mixedCalls(pe);
      // warm-up, every call at least once: the heap may grow once, and rope keeps the frequencies of
      // each of its settings (at most a few, src/js/rope.js)
      for (const [, call] of calls)
        try {
          call();
        } catch {}
      runMixed(pe, calls, calls.length * 3, 1);
      const before = state(pe);
      const counts = runMixed(pe, calls, CALLS[pe.backend], 7);
      const after = state(pe);
      t.diagnostic(
        `${counts.ok} succeeded, ${counts.js} refused by the wrapper, ${counts.core} by the core; wasm memory ${(after.core.memory / 2 ** 20).toFixed(0)} + ${(after.lab.memory / 2 ** 20).toFixed(0)} MiB (core + lab), ${after.core.malloced} + ${after.lab.malloced} bytes malloc'd`,
      );
      assert.ok(counts.core > CALLS[pe.backend] / 10 && counts.js > CALLS[pe.backend] / 10);
      assert.deepEqual(after, before);
      assert.ok(healthy(pe));
    });

    test("rope's kept frequencies are bounded: a new setting at every call does not grow the heap", () => {
      const x = T([2, 8]);
      const settings = (first) => Array.from({ length: 40 }, (_, i) => ({ base: first + i, scaling: { type: 'linear', factor: 1 + i / 8 } }));
      for (const o of settings(1000)) pe.rope(x, o); // more settings than are kept: the kept ones now take all they can
      const before = state(pe);
      for (let round = 0; round < 5; round++) for (const o of settings(2000 + 100 * round)) pe.rope(x, o);
      assert.deepEqual(state(pe), before);
    });

    test('embedding tables created and disposed in a loop do not leak', () => {
      const make = () => {
        const a = pe.learned({ maxLength: 64, dModel: 32, init: 'sinusoidal' });
        const b = a.resize(128, 'tile');
        const c = pe.tokenEmbedding({ vocabSize: 100, dModel: 32 });
        c.lookup([1, 2, 3]);
        a.dispose();
        b.dispose();
        c[Symbol.dispose]();
      };
      make();
      const before = state(pe);
      for (let i = 0; i < 2000; i++) make();
      assert.deepEqual(state(pe), before);
    });

    test('requests too large for wasm memory are refused before allocating', () => {
      const before = state(pe);
      const huge = [
        () => pe.sinusoidal({ length: 2 ** 20, dModel: 2 ** 12 }),
        () => pe.sinusoidal({ dModel: 4, positions: new Array(2 ** 31) }),
        () => pe.wavelengths({ dModel: 2 ** 30 + 4 }),
        () => pe.learned({ maxLength: 2 ** 31 - 1, dModel: 2 }),
        () => pe.tokenEmbedding({ vocabSize: 2 ** 16, dModel: 2 ** 16 }),
        () => pe.alibiBias({ numHeads: 4096, queryLength: 2 ** 14 }),
        () => pe.t5Buckets({ queryLength: 2 ** 16 }),
        () => pe.relativePositions({ length: 2 ** 16, maxRelative: 8 }),
        () => pe.similarity(T([2 ** 15, 1], () => 0)),
        () => pe.nearestDistances(T([2 ** 18, 1], () => 0)),
        () => pe.ropeFrequencies({ dim: 2 ** 30 }),
      ];
      // Refused by the checks, before any allocation: memory, malloc'd bytes and handles unchanged.
      for (const call of huge) {
        assert.throws(call, RangeError);
        assert.deepEqual(state(pe), before, `${call}`);
      }
    });
  });
}

// Child processes: a clean heap for each, and --expose-gc where needed.
async function child(code, flags = []) {
  const { stdout } = await run(process.execPath, [...flags, '--input-type=module', '-e', code], { timeout: 120000 });
  return JSON.parse(stdout.trim().split('\n').at(-1));
}

describe('memory in fresh processes', () => {
  test('a FinalizationRegistry frees forgotten embedding tables', async () => {
    const r = await child(
      `
      import { loadDev } from ${JSON.stringify(DEV_URL)};
      const out = {};
      for (const simd of [true, false]) {
        const pe = await loadDev({ simd });
        const base = pe._mod._heapInUse();
        (() => { for (let i = 0; i < 300; i++) { const t = i % 2 ? pe.learned({ maxLength: 64, dModel: 64 }) : pe.tokenEmbedding({ vocabSize: 64, dModel: 64 }); t.lookup([0]); } })();
        const grown = pe._mod._heapInUse() - base;
        let left = grown;
        for (let i = 0; i < 100 && left > 0; i++) {
          globalThis.gc();
          await new Promise((r) => setTimeout(r, 10));
          left = pe._mod._heapInUse() - base;
        }
        out[pe.backend] = { grown, left };
      }
      console.log(JSON.stringify(out));
      `,
      ['--expose-gc'],
    );
    for (const backend of ['wasm-simd', 'wasm-scalar']) {
      assert.ok(r[backend].grown >= 300 * 64 * 64 * 4, `${backend}: the tables were allocated`);
      assert.equal(r[backend].left, 0, `${backend}: every forgotten table was freed`);
    }
  });

  test('running out of wasm memory inside a call is a RangeError; the instance keeps working', async () => {
    const r = await child(`
      import { loadDev } from ${JSON.stringify(DEV_URL)};
      const out = {};
      for (const simd of [true, false]) {
        const pe = await loadDev({ simd });
        const base = pe._mod._heapInUse();
        const errors = [];
        const memory = [];
        for (let i = 0; i < 3; i++) {
          // 1 GiB of output fits; the core's 1 GiB distance table then does not (2 GiB in all).
          try { pe.t5Buckets({ queryLength: 1, keyLength: 2 ** 28 }); errors.push('none'); } catch (e) { errors.push(e.constructor.name + ': ' + e.message); }
          memory.push(pe._mod.HEAPU8.length);
        }
        const t = pe.sinusoidal({ length: 4, dModel: 4, base: 100 }).data;
        out[pe.backend] = { errors, memory, leaked: pe._mod._heapInUse() - base, row1: Array.from(t.slice(4, 8)) };
      }
      console.log(JSON.stringify(out));
    `);
    for (const backend of ['wasm-simd', 'wasm-scalar']) {
      const { errors, memory, leaked, row1 } = r[backend];
      for (const e of errors) assert.match(e, /^RangeError: posenc\.t5Buckets: out of wasm memory/);
      assert.equal(new Set(memory).size, 1, `${backend}: memory grew once, then stayed (${memory})`);
      assert.equal(leaked, 0);
      assert.ok(Math.abs(row1[0] - 0.84147098) < 1e-7 && Math.abs(row1[3] - 0.99500417) < 1e-7);
    }
  });
});
