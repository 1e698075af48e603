// The JS <-> wasm boundary: each failure measured when posenc was probed as a hostile
// user would, as a test on both backends. Inputs are snapshotted once (a lying length, a getter or
// a shrinking buffer cannot change what the kernel reads), out of memory is a RangeError, unknown
// keys are TypeErrors, every tensor result accepts `out`, finite input gives finite, correct
// output, and Hugging Face config.json files go in as written.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { describe, test } from 'node:test';
import { promisify } from 'node:util';
import { loadLab } from 'posenc/lab';
import { ENUMS } from '../../src/js/contract.js';
import { OPTION_FUNCTIONS, T, healthy } from './argspecs.js';
import { CONFIGS, hfRopeParameters } from './fixtures/hf-configs.js';

// loadLab()'s objects: every function of the core and of the teaching models (posenc/lab)
const backends = [await loadLab(), await loadLab({ simd: false })];
const INDEX_URL = new URL('../../src/js/index.js', import.meta.url).href;

// A Float32Array whose `length` property lies (a subclass can override it).
class Liar extends Float32Array {
  get length() {
    return 16;
  }
}

const valid = {
  sinusoidal: { length: 3, dModel: 4 },
  wavelengths: { dModel: 8 },
  learned: { maxLength: 4, dModel: 4 },
  tokenEmbedding: { vocabSize: 4, dModel: 4 },
  ropeFrequencies: { dim: 8 },
  alibiBias: { numHeads: 2, queryLength: 3 },
  t5Buckets: { queryLength: 3 },
  relativePositions: { length: 3, maxRelative: 1 },
  attention: { q: T([3, 4]), k: T([3, 4]), v: T([3, 4]) },
  permutationLab: {},
  scoreTerms: {},
  shiftMatrix: { dModel: 4, k: 1 },
  trainToy: { task: 'before' },
};

for (const pe of backends) {
  describe(`the boundary (${pe.backend})`, () => {
    test('a typed array whose length lies is refused, and nothing else in wasm memory changes', () => {
      const table = pe.learned({ maxLength: 16, dModel: 16, init: 'sinusoidal' });
      const before = table.table.data.slice();
      for (const bytes of [8, 32]) {
        const lie = new Liar(bytes); // really `bytes` values; claims 16
        assert.equal(lie.length, 16);
        assert.throws(
          () => pe.rope({ data: lie, shape: [4, 4] }, {}),
          (e) => e instanceof RangeError && /x\.shape \[4,4\] holds 16 values but data has/.test(e.message),
        );
        assert.throws(() => pe.stats({ data: lie, shape: [16] }), RangeError);
        // a bare typed array is measured by its real length, not by what `length` claims
        lie.fill(2);
        assert.deepEqual(pe.stats(lie), { min: 2, max: 2, mean: 2, std: 0 });
      }
      assert.equal(table.maxLength, 16);
      assert.equal(table.dModel, 16);
      assert.deepEqual(table.table.data, before);
      assert.equal(table.lookup([15]).data.length, 16);
      table.dispose();
    });

    test('a resizable buffer shrunk by an option getter is refused, never read stale', () => {
      const buffer = new ArrayBuffer(64, { maxByteLength: 64 });
      const x = new Float32Array(buffer); // length-tracking
      x.fill(1);
      const shrink = {
        get offset() {
          buffer.resize(16);
          return 0;
        },
      };
      assert.throws(
        () => pe.rope({ data: x, shape: [4, 4] }, shrink),
        (e) => e instanceof RangeError && /holds 16 values but data has 4/.test(e.message),
      );
      buffer.resize(64);
      const q = { data: x, shape: [4, 4] };
      const options = {
        q,
        k: q,
        v: q,
        get causal() {
          buffer.resize(32);
          return false;
        },
      };
      assert.throws(() => pe.attention(options), RangeError);
      assert.ok(healthy(pe));
    });

    test('a detached buffer is refused', () => {
      const x = new Float32Array(8);
      structuredClone(x.buffer, { transfer: [x.buffer] });
      assert.throws(
        () => pe.rope({ data: x, shape: [2, 4] }),
        (e) => e instanceof RangeError && /detached/.test(e.message),
      );
    });

    test('a shape is read once: a getter that changes its answer cannot pass validation and then lie', () => {
      let reads = 0;
      const shape = [0, 4];
      Object.defineProperty(shape, 0, { get: () => (reads++ ? 1.5 : 2), enumerable: true });
      const r = pe.rope({ data: new Float32Array(8).fill(1), shape }, { offset: 1 });
      assert.equal(reads, 1);
      assert.deepEqual(r.shape, [2, 4]);
      assert.ok(Number.isInteger(r.shape[0]));
      const strings = ['3', '4'];
      assert.throws(() => pe.stats({ data: new Float32Array(12), shape: strings }), TypeError);
    });

    test('every option is read exactly once', () => {
      const reads = {};
      const options = {};
      for (const [k, v] of Object.entries({ length: 3, dModel: 4, base: 100, layout: 'split', offset: 2 }))
        Object.defineProperty(options, k, { enumerable: true, get: () => ((reads[k] = (reads[k] ?? 0) + 1), v) });
      pe.sinusoidal(options);
      assert.deepEqual(reads, { length: 1, dModel: 1, base: 1, layout: 1, offset: 1 });
    });

    test('unknown option keys are a TypeError naming the key, in every function, with a did-you-mean', () => {
      for (const name of OPTION_FUNCTIONS) {
        const args = { ...valid[name], bogusKey: 1 };
        assert.throws(
          () => pe[name](args),
          (e) => e instanceof TypeError && e.message.startsWith(`posenc.${name}: `) && /bogusKey/.test(e.message),
          name,
        );
      }
      assert.throws(() => pe.sinusoidal({ length: 3, dModel: 4, lenght: 3 }), /options\.lenght is not an option; did you mean length\?/);
      assert.throws(
        () => pe.learned({ maxLength: 4, dModel: 4, table: new Float32Array(16) }),
        (e) => e instanceof TypeError && /table/.test(e.message),
      );
      assert.throws(
        () => pe.rope(T([2, 4]), { inplace: true }),
        (e) => e instanceof TypeError && /options\.inplace is not an option; did you mean out\?/.test(e.message),
      );
      assert.throws(
        () => pe.stats({ data: new Float32Array(4), shape: [4], dtype: 'float32' }),
        (e) => e instanceof TypeError && /t\.dtype/.test(e.message),
      );
      assert.throws(
        () => pe.rope(T([2, 4]), { shape: [2, 4] }),
        (e) => e instanceof TypeError && /shape/.test(e.message),
      );
      assert.throws(
        () => pe.sinusoidal({ length: 3, dModel: 4, layout: 'splt' }),
        (e) => e instanceof RangeError && /did you mean 'split'/.test(e.message),
      );
      const e = pe.learned({ maxLength: 4, dModel: 4 });
      assert.throws(() => e.lookup([1], { scale: 2 }), TypeError);
      e.dispose();
    });

    test('every tensor result can be written into `out`; a wrong length or type is refused', () => {
      const x = T([3, 2, 4]);
      const cases = [
        ['sinusoidal', (out) => pe.sinusoidal({ length: 3, dModel: 4, out }), () => pe.sinusoidal({ length: 3, dModel: 4 }).data],
        ['wavelengths', (out) => ({ data: pe.wavelengths({ dModel: 8, out }) }), () => pe.wavelengths({ dModel: 8 })],
        ['ropeFrequencies', (out) => ({ data: pe.ropeFrequencies({ dim: 8, out }).invFreq }), () => pe.ropeFrequencies({ dim: 8 }).invFreq],
        ['rope', (out) => pe.rope(x, { offset: 5, out }), () => pe.rope(x, { offset: 5 }).data],
        ['alibiSlopes', (out) => ({ data: pe.alibiSlopes(6, { out }) }), () => pe.alibiSlopes(6)],
        ['alibiBias', (out) => pe.alibiBias({ numHeads: 2, queryLength: 3, out }), () => pe.alibiBias({ numHeads: 2, queryLength: 3 }).data],
        ['t5Buckets', (out) => pe.t5Buckets({ queryLength: 5, out }), () => pe.t5Buckets({ queryLength: 5 }).data],
        [
          'relativePositions',
          (out) => pe.relativePositions({ length: 4, maxRelative: 1, out }),
          () => pe.relativePositions({ length: 4, maxRelative: 1 }).data,
        ],
        ['addPositional', (out) => pe.addPositional(T([2, 4]), T([3, 4]), { out }), () => pe.addPositional(T([2, 4]), T([3, 4])).data],
        [
          'attention',
          (out) => pe.attention({ q: T([3, 4]), k: T([3, 4]), v: T([3, 4]), out }).output,
          () => pe.attention({ q: T([3, 4]), k: T([3, 4]), v: T([3, 4]) }).output.data,
        ],
        ['similarity', (out) => pe.similarity(T([3, 4]), { out }), () => pe.similarity(T([3, 4])).data],
        ['shiftMatrix', (out) => pe.shiftMatrix({ dModel: 4, k: 2, out }), () => pe.shiftMatrix({ dModel: 4, k: 2 }).data],
        ['nearestDistances', (out) => ({ data: pe.nearestDistances(T([3, 4]), { out }) }), () => pe.nearestDistances(T([3, 4]))],
        ['LearnedEmbedding.lookup', (out) => lookup((e) => e.lookup([2, 1], { out })), () => lookup((e) => e.lookup([2, 1])).data],
        ['TokenEmbedding.lookup', (out) => tokens((e) => e.lookup([2, 1], { out })), () => tokens((e) => e.lookup([2, 1])).data],
        [
          'sinusoidal2d',
          (out) => pe.sinusoidal2d({ height: 2, width: 3, dModel: 8, clsToken: true, out }),
          () => pe.sinusoidal2d({ height: 2, width: 3, dModel: 8, clsToken: true }).data,
        ],
        [
          'mropePositions',
          (out) => pe.mropePositions([{ text: 2 }, { image: [1, 2, 2] }], { out }),
          () => pe.mropePositions([{ text: 2 }, { image: [1, 2, 2] }]).data,
        ],
      ];
      // f(table) on a fresh table, disposed afterwards
      function using(make, f) {
        const e = make();
        try {
          return f(e);
        } finally {
          e.dispose();
        }
      }
      const lookup = (f) => using(() => pe.learned({ maxLength: 4, dModel: 4, seed: 3 }), f);
      const tokens = (f) => using(() => pe.tokenEmbedding({ vocabSize: 4, dModel: 4, seed: 5 }), f);
      for (const [name, withOut, plain] of cases) {
        const want = plain();
        const Type = want.constructor;
        const out = new Type(want.length).fill(-7);
        const r = withOut(out);
        assert.equal(r.data, out, `${name}: the result is the caller's array`);
        assert.deepEqual(out, want, `${name}: same values as without out`);
        assert.throws(() => withOut(new Type(want.length + 1)), RangeError, `${name}: a longer out`);
        const Other = Type === Float32Array ? Int32Array : Float32Array;
        assert.throws(() => withOut(new Other(want.length)), TypeError, `${name}: out of another type`);
        assert.throws(() => withOut([...want]), TypeError, `${name}: a plain array`);
      }
      // rope with out: x.data rotates in place.
      const y = T([3, 2, 4]);
      const rotated = pe.rope(y, { offset: 9 }).data;
      const r = pe.rope(y, { offset: 9, out: y.data });
      assert.equal(r.data, y.data);
      assert.deepEqual(y.data, rotated);
    });

    test('overflow with finite input: distances, similarity, attention and rope are exact or refused', () => {
      assert.deepEqual(Array.from(pe.nearestDistances({ data: new Float32Array([1e20, -1e20]), shape: [2, 1] })), [
        Math.fround(2e20),
        Math.fround(2e20),
      ]);
      const tiny = new Float32Array([1e-30, 2e-30]);
      const gap = Math.fround(tiny[1] - tiny[0]); // the squares (1e-60) underflow float32, not double
      assert.deepEqual(Array.from(pe.nearestDistances({ data: tiny, shape: [2, 1] })), [gap, gap]);
      const sim = pe.similarity({ data: new Float32Array([1e19, 2e19]), shape: [2, 1] }, { metric: 'cosine' }).data;
      assert.deepEqual(Array.from(sim), [1, 1, 1, 1]);
      assert.throws(
        () => pe.similarity({ data: new Float32Array([1e19, 2e19]), shape: [2, 1] }),
        (e) => e instanceof RangeError && /rows 1 and 1/.test(e.message),
      ); // 4e38
      assert.throws(
        () => pe.similarity({ data: new Float32Array([1e20, 2e20]), shape: [2, 1] }),
        (e) => e instanceof RangeError && /beyond float32/.test(e.message),
      );
      // softmax of logits 1e60 and 2e60 (beyond float32, exact in double): all weight on the second key
      const a = pe.attention({
        q: { data: new Float32Array([1e30]), shape: [1, 1] },
        k: { data: new Float32Array([1e30, 2e30]), shape: [2, 1] },
        v: { data: new Float32Array([3, 5]), shape: [2, 1] },
        scale: 1,
      });
      assert.deepEqual(Array.from(a.weights.data), [0, 1]);
      assert.deepEqual(Array.from(a.output.data), [5]);
      // rope near float32's maximum: finite, and within float rounding of the float64 rotation
      const big = new Float32Array([2.4e38, 2.4e38, -3.3e38, 1e38, 1, -1, 2.9e38, -2.0e38]);
      // pairs (channel a, channel b, frequency index): interleaved pairs neighbours, half pairs i and i + 4
      const pairs = { interleaved: [0, 2, 4, 6].map((a) => [a, a + 1, a / 2]), half: [0, 1, 2, 3].map((a) => [a, a + 4, a]) };
      const linear = { type: 'linear', factor: 4 };
      const rotated = { interleaved: 0, half: 0 };
      for (const layout of ['interleaved', 'half'])
        for (const scaling of [undefined, linear])
          for (let p = 0; p < 50; p++) {
            const r = (() => {
              try {
                return pe.rope({ data: big, shape: [1, 8] }, { offset: p, layout, base: 10, scaling });
              } catch (e) {
                assert.ok(e instanceof RangeError && /beyond float32/.test(e.message), e.message);
                return null;
              }
            })();
            if (!r) continue;
            rotated[layout]++;
            for (const [a, b, i] of pairs[layout]) {
              const w = 10 ** (-i / 4) / (scaling ? 4 : 1);
              const [c, s] = [Math.cos(p * w), Math.sin(p * w)];
              const ref = { [a]: big[a] * c - big[b] * s, [b]: big[b] * c + big[a] * s };
              for (const j of [a, b]) {
                assert.ok(Number.isFinite(r.data[j]), `${layout} p ${p} channel ${j}: ${r.data[j]}`);
                assert.ok(Math.abs(r.data[j] - ref[j]) <= 1e-6 * 3.4e38, `${layout} p ${p} channel ${j}: ${r.data[j]} vs ${ref[j]}`);
              }
            }
          }
      // rows whose rotation stays within float32 are rotated (the others are refused): both kinds occur
      for (const layout of ['interleaved', 'half']) assert.ok(rotated[layout] >= 10 && rotated[layout] < 100, `${layout}: ${rotated[layout]} of 100`);
      assert.throws(
        () => pe.rope({ data: new Float32Array([3e38, 3e38]), shape: [1, 2] }, { offset: 1 }),
        (e) => e instanceof RangeError && /^posenc\.rope: x at row 0/.test(e.message),
      );
      assert.ok(healthy(pe));
    });

    test('Hugging Face config.json files go in as written: Llama 3.1, Qwen2.5, Phi-3, DeepSeek-V3, gpt-oss', () => {
      for (const [name, config] of Object.entries(CONFIGS)) {
        const ref = hfRopeParameters(config);
        const got = pe.ropeFrequencies({ config });
        assert.equal(got.invFreq.length, ref.invFreq.length, name);
        for (let i = 0; i < ref.invFreq.length; i++)
          assert.ok(
            Math.abs(got.invFreq[i] - ref.invFreq[i]) <= 2e-7 * ref.invFreq[i],
            `${name}: invFreq[${i}] ${got.invFreq[i]} vs ${ref.invFreq[i]}`,
          );
        assert.ok(
          Math.abs(got.attentionFactor - ref.attentionFactor) < 1e-12,
          `${name}: attentionFactor ${got.attentionFactor} vs ${ref.attentionFactor}`,
        );
        // the config's rope_scaling object also works as `scaling`, with the dimension and base given
        if (config.rope_scaling && (config.rope_scaling.rope_type ?? config.rope_scaling.type) !== 'longrope') {
          const viaScaling = pe.ropeFrequencies({ dim: got.invFreq.length * 2, base: config.rope_theta, scaling: config.rope_scaling });
          assert.deepEqual(viaScaling.invFreq, got.invFreq, name);
        }
      }
      // spot values: Phi-3's attention factor sqrt(1 + ln 32 / ln 4096); DeepSeek-V3 rotates 64 channels
      assert.ok(
        Math.abs(pe.ropeFrequencies({ config: CONFIGS['Phi-3 mini 128k'] }).attentionFactor - Math.sqrt(1 + Math.log(32) / Math.log(4096))) < 1e-12,
      );
      const llama = CONFIGS['Llama 3.1 8B'];
      const x = T([4, 2, 128]);
      assert.equal(pe.ropeFrequencies({ config: CONFIGS['DeepSeek-V3'] }).invFreq.length, 32);
      assert.deepEqual(pe.ropeFrequencies({ dim: 8, base: 1e4, scaling: { rope_type: 'default' } }).invFreq, pe.ropeFrequencies({ dim: 8 }).invFreq);
      // a config.json scaling object without its base would silently take 10000: refused
      assert.throws(
        () => pe.ropeFrequencies({ dim: 8, scaling: { rope_type: 'default' } }),
        (e) => e instanceof TypeError && /rope_theta/.test(e.message),
      );
      assert.throws(
        () => pe.rope(x, { scaling: llama.rope_scaling, offset: 100 }),
        (e) => e instanceof TypeError && /rope_theta/.test(e.message),
      );
      assert.deepEqual(
        pe.rope(x, { base: llama.rope_theta, scaling: llama.rope_scaling, offset: 100 }).data,
        pe.rope(x, {
          base: 500000,
          scaling: { type: 'llama3', factor: 8, lowFreqFactor: 1, highFreqFactor: 4, originalMaxPositions: 8192 },
          offset: 100,
        }).data,
      );
      assert.throws(
        () => pe.ropeFrequencies({ config: { ...llama, rope_scaling: { ...llama.rope_scaling, low_freq_factr: 1 } } }),
        (e) => e instanceof TypeError && /did you mean low_freq_factor/.test(e.message),
      );
      assert.throws(() => pe.ropeFrequencies({ config: llama, dim: 128 }), TypeError);
      assert.throws(() => pe.ropeFrequencies({ config: { hidden_size: 100, num_attention_heads: 3 } }), RangeError);
    });

    test('enums cross by name: every layout, init, metric and encoding the contract lists works', () => {
      for (const layout of ENUMS.sinusoidalLayout) pe.sinusoidal({ length: 2, dModel: 4, layout });
      for (const layout of ENUMS.ropeLayout) pe.rope(T([2, 4]), { layout });
      for (const init of ENUMS.learnedInit) pe.learned({ maxLength: 2, dModel: 2, init }).dispose();
      for (const metric of ENUMS.metric) pe.similarity(T([2, 2]), { metric });
      for (const encoding of ENUMS.labEncoding) pe.permutationLab({ encoding });
      for (const type of ENUMS.scalingType)
        pe.ropeFrequencies({
          dim: 4,
          scaling:
            type === 'none' ? { type } : { type, factor: 2, originalMaxPositions: 64, seqLength: 128, shortFactor: [1, 1], longFactor: [2, 2] },
        });
      for (const axes of ENUMS.axes) pe.rope(T([1, 2, 3, 4]), { axes });
      for (const spacing of ENUMS.sinusoidalSpacing) pe.sinusoidal({ length: 2, dModel: 4, spacing });
    });
  });
}

// Running out of memory is the same code on both builds: the same C++ and the same malloc, compiled with
// and without SIMD, and the same glue (checked first: the two .mjs files differ only in the .wasm file's
// name). Each of the two tests below fills 2 GiB of wasm memory, so they share the builds: SIMD fills
// it, scalar refills it after a refusal.
describe('out of memory', () => {
  test('both builds run the same glue: their .mjs files differ only in the name of their .wasm file', async () => {
    const { readFile } = await import('node:fs/promises');
    const glue = async (flavour) =>
      (await readFile(new URL(`../../src/js/wasm/posenc-${flavour}.mjs`, import.meta.url), 'utf8')).replaceAll(
        `posenc-${flavour}.wasm`,
        'posenc-X.wasm',
      );
    assert.ok((await glue('simd')) === (await glue('scalar')));
  });

  test('filling wasm memory gives RangeErrors naming posenc, never a bare number; the instance recovers (wasm-simd)', async () => {
    const { stdout } = await promisify(execFile)(
      process.execPath,
      [
        '--input-type=module',
        '-e',
        `
        import { load } from ${JSON.stringify(INDEX_URL)};
        const out = {};
        for (const simd of [true]) {
          const pe = await load({ simd });
          const tables = [];
          let first;
          for (let i = 0; i < 100 && !first; i++) {
            try { tables.push(pe.learned({ maxLength: 2 ** 14, dModel: 2 ** 11, init: 'zeros' })); } catch (e) { first = e; }
          }
          const during = [];
          const calls = () => [() => pe.alibiSlopes(4), () => pe.sinusoidal({ length: 2 ** 12, dModel: 2 ** 12 }), () => pe.learned({ maxLength: 2 ** 14, dModel: 2 ** 11 })];
          const attempt = (call) => { try { call(); during.push('ok'); } catch (e) { during.push((e?.constructor?.name ?? typeof e) + ': ' + (e?.message ?? e)); } };
          calls().forEach(attempt);
          // then the rest of the heap, in ever smaller tables, until not even a 4-byte one fits
          for (let size = 2 ** 22; size >= 1; ) {
            try { tables.push(pe.learned({ maxLength: size, dModel: 1, init: 'zeros' })); } catch { size = Math.floor(size / 2); }
          }
          [...calls(), () => pe.sinusoidal({ length: 2, dModel: 4 }), () => pe.stats(new Float32Array(4)), () => pe.rope({ data: new Float32Array(8), shape: [2, 4] })].forEach(attempt);
          for (const t of tables) t.dispose();
          const after = pe.sinusoidal({ length: 2, dModel: 4 }).data[4];
          const again = pe.learned({ maxLength: 2 ** 14, dModel: 2 ** 11, init: 'zeros' }); again.dispose();
          out[pe.backend] = { first: first && first.constructor.name + ': ' + first.message, tables: tables.length, during, after };
        }
        console.log(JSON.stringify(out));
        `,
      ],
      { timeout: 120000 },
    );
    const r = JSON.parse(stdout.trim().split('\n').at(-1));
    for (const backend of ['wasm-simd']) {
      const { first, tables, during, after } = r[backend];
      assert.match(first, /^RangeError: posenc\.learned: out of wasm memory/, backend);
      assert.ok(tables >= 10, `${backend}: ${tables} tables of 128 MiB fit first`);
      for (const d of during) assert.ok(d === 'ok' || /^RangeError: posenc\.\w+: out of wasm memory/.test(d), `${backend}: ${d}`);
      // with the heap full, the JS side's own allocations fail too, and say so the same way
      assert.ok(
        during.some((d) => /^RangeError: posenc\.\w+: out of wasm memory: cannot allocate \d+ bytes/.test(d)),
        `${backend}: ${during.join(' | ')}`,
      );
      assert.ok(Math.abs(after - Math.sin(1)) < 1e-7, `${backend}: works after disposing`);
    }
  });
});

// A refused large request must not cost the instance its capacity: Emscripten's dlmalloc stops extending
// its top chunk after one failed heap growth, so such requests are refused before they are tried.
test('after an out-of-memory, the freed memory serves large tables again (each backend in a fresh process)', async () => {
  for (const simd of [false, true]) {
    const { stdout } = await promisify(execFile)(
      process.execPath,
      [
        '--input-type=module',
        '-e',
        `
        import { load } from ${JSON.stringify(INDEX_URL)};
        const pe = await load({ simd: ${simd} });
        const gib = () => pe.learned({ maxLength: 2 ** 18, dModel: 1024, init: 'zeros' }); // 1 GiB
        const a = gib();
        let refused = '';
        try { gib(); } catch (e) { refused = e.constructor.name + ': ' + e.message; }
        a.dispose();
        const half = pe.learned({ maxLength: 2 ** 17, dModel: 1024, init: 'zeros' });
        let again = 'ok';
        try { gib().dispose(); } catch (e) { again = e.message; }
        half.dispose();
        console.log(JSON.stringify({ refused, again }));
        `,
      ],
      { timeout: 120000 },
    );
    const { refused, again } = JSON.parse(stdout.trim().split('\n').at(-1));
    assert.match(refused, /^RangeError: posenc\.learned: out of wasm memory/, `simd ${simd}`);
    assert.equal(again, 'ok', `simd ${simd}: 1 GiB after freeing 1 GiB and taking 512 MiB`);
  }
});

describe('the shipped module', () => {
  test('no exception trampolines and no bench or test hooks, in either build', async () => {
    const { readFile } = await import('node:fs/promises');
    for (const flavour of ['simd', 'scalar']) {
      const wasm = await readFile(new URL(`../../src/js/wasm/posenc-${flavour}.wasm`, import.meta.url));
      const glue = await readFile(new URL(`../../src/js/wasm/posenc-${flavour}.mjs`, import.meta.url), 'utf8');
      // the imports are minified: the glue's import object names what each one is
      const imports = WebAssembly.Module.imports(new WebAssembly.Module(wasm));
      const table = glue.match(/var asmLibraryArg=\{([^}]*)\}/);
      assert.ok(table, `${flavour}: the glue's import object`);
      const provided = table[1].split(',').map((entry) => entry.split(':')[1]);
      assert.equal(provided.length, imports.length, `${flavour}: ${provided.join(' ')}`);
      assert.ok(!provided.some((f) => /invoke_|__cxa_/.test(f)), `${flavour}: ${provided.join(' ')}`);
      assert.ok(!/\binvoke_\w+/.test(glue), `${flavour}: the glue defines invoke_* trampolines`);
      // embind names are strings in the module's data
      for (const hook of ['_bench', '_heapInUse', '_heapFootprint']) assert.equal(wasm.indexOf(hook), -1, `${flavour}: ${hook}`);
    }
    for (const pe of backends)
      assert.deepEqual(
        Object.keys(pe._mod).filter((k) => /^_bench|^_heap(InUse|Footprint)/.test(k)),
        [],
        pe.backend,
      );
  });
});

describe('one contract', () => {
  test('the types state every enum of src/js/contract.js exactly, in its order', async () => {
    const { readFile } = await import('node:fs/promises');
    const read = (path) => readFile(new URL(`../../src/js/${path}`, import.meta.url), 'utf8');
    const dts = (await read('index.d.ts')) + (await read('lab/index.d.ts'));
    for (const [name, values] of Object.entries(ENUMS)) {
      const union = values.map((v) => `'${v}'`).join(' | ');
      assert.ok(dts.includes(union), `the types have no union ${union} (${name})`);
    }
  });

  test('the C++ view of the contract is generated from the same definition', async () => {
    const { readFile } = await import('node:fs/promises');
    const { execFileSync } = await import('node:child_process');
    const { mkdtempSync } = await import('node:fs');
    const { tmpdir } = await import('node:os');
    const out = `${mkdtempSync(`${tmpdir()}/posenc-contract-`)}/contract.hpp`;
    execFileSync(process.execPath, [new URL('../../scripts/contract-hpp.mjs', import.meta.url).pathname, out]);
    const hpp = await readFile(out, 'utf8');
    for (const [name, values] of Object.entries(ENUMS)) {
      const type = name[0].toUpperCase() + name.slice(1);
      assert.ok(hpp.includes(`enum class ${type} : std::int32_t { ${values.join(', ')} };`), type);
    }
    assert.match(hpp, /kMaxElements = 268435456;/);
  });
});

// Defects a review of the boundary found (each reproduced first, on both backends).
for (const pe of backends) {
  describe(`the boundary, reviewed (${pe.backend})`, () => {
    test('a table disposed by a getter during lookup is refused, never read after free', () => {
      const table = pe.learned({ maxLength: 4, dModel: 4 });
      const ids = [0, 0, 0];
      Object.defineProperty(ids, 0, { get: () => (table.dispose(), 0) });
      assert.throws(
        () => table.lookup(ids),
        (e) => e instanceof TypeError && /was disposed/.test(e.message),
      );
      const other = pe.learned({ maxLength: 4, dModel: 4, init: 'sinusoidal' });
      const options = {
        get out() {
          other.dispose();
          pe.learned({ maxLength: 4, dModel: 4, init: 'zeros' }).dispose();
          return undefined;
        },
      };
      assert.throws(
        () => other.lookup([3], options),
        (e) => e instanceof TypeError && /was disposed/.test(e.message),
      );
    });

    test('logits that overflow to -Infinity are computed in double, not taken for masks', () => {
      const t = (values, shape) => ({ data: new Float32Array(values), shape });
      for (const weights of [true, false]) {
        const one = pe.attention({ q: t([1e30], [1, 1]), k: t([-1e30], [1, 1]), v: t([5], [1, 1]), scale: 1, weights });
        assert.deepEqual(Array.from(one.output.data), [5]);
        const two = pe.attention({ q: t([1e30], [1, 1]), k: t([-1e30, -2e30], [2, 1]), v: t([5, 7], [2, 1]), scale: 1, weights });
        assert.deepEqual(Array.from(two.output.data), [5]);
        if (weights) assert.deepEqual(Array.from(two.weights.data), [1, 0]);
      }
    });

    test('the snapshot is taken after every getter: the kernel sees one consistent state of each input', () => {
      const x = new Float32Array([1, 0, 1, 0]);
      const positions = [0, 0];
      Object.defineProperty(positions, 1, { get: () => (x.fill(2), 0) });
      const r = pe.rope({ data: x, shape: [2, 2] }, { positions });
      assert.deepEqual(Array.from(r.data), [2, 2, 2, 2]); // the state after the getter, at position 0: unrotated
      const q = new Float32Array([1]);
      const k = { data: new Float32Array([1]), shape: [1, 1] };
      const v = {
        get data() {
          q[0] = NaN;
          return new Float32Array([3]);
        },
        shape: [1, 1],
      };
      assert.throws(
        () => pe.attention({ q: { data: q, shape: [1, 1] }, k, v }),
        (e) => e instanceof RangeError && /q\[0\] must be finite/.test(e.message),
      );
    });

    test('out and foreign tensors: no getter of theirs runs mid-call, and their errors carry the posenc prefix', () => {
      const out = new Float32Array(8);
      Object.defineProperty(out, 'constructor', {
        get() {
          throw 42;
        },
      });
      assert.equal(pe.sinusoidal({ length: 2, dModel: 4, out }).data, out);
      let reads = 0;
      class TfLike {
        get shape() {
          reads++;
          return [2, 2];
        }
        dataSync() {
          reads++;
          return new Float32Array([1, 2, 3, 4]);
        }
      }
      const tf = new TfLike();
      assert.deepEqual(pe.stats(tf), { min: 1, max: 4, mean: 2.5, std: Math.sqrt(1.25) });
      assert.equal(reads, 2); // shape and dataSync, once each
      class OrtLike {
        constructor(dims) {
          this.dims = dims;
          this.data = new Float32Array(4);
        }
      }
      assert.deepEqual(pe.stats(new OrtLike([2, 2])), { min: 0, max: 0, mean: 0, std: 0 });
      for (const dims of [null, ['2', '2'], [2n, 2n], 5])
        assert.throws(
          () => pe.stats(new OrtLike(dims)),
          (e) => e instanceof TypeError && e.message.startsWith('posenc.stats: '),
          String(dims),
        );
    });

    test('a resizable buffer shrunk by a getter that runs after validation is refused, never read stale', () => {
      const buffer = new ArrayBuffer(64, { maxByteLength: 64 });
      const x = new Float32Array(buffer).fill(1); // length-tracking
      // rope reads x (validated: 16 values), then positions, whose last entry shrinks x's buffer
      const positions = [0, 0, 0, 0];
      Object.defineProperty(positions, 3, { get: () => (buffer.resize(16), 0) });
      assert.throws(
        () => pe.rope({ data: x, shape: [4, 4] }, { positions }),
        (e) => e instanceof TypeError && /^posenc\.rope: x's buffer was detached or shrunk during the call/.test(e.message),
      );
      // attention validates q, then reads the bias, whose data getter shrinks q's buffer
      buffer.resize(64);
      x.fill(1);
      const q = { data: x, shape: [4, 4] };
      const bias = {
        get data() {
          buffer.resize(16);
          return new Float32Array(16);
        },
        shape: [4, 4],
      };
      assert.throws(
        () => pe.attention({ q, k: q, v: q, bias }),
        (e) => e instanceof TypeError && /^posenc\.attention: q's buffer was detached or shrunk during the call/.test(e.message),
      );
      assert.ok(healthy(pe));
    });

    test('addPositional: a sum of finite values beyond float32 is a RangeError; NaN and Infinity propagate', () => {
      const x = { data: new Float32Array([1, 3.4e38, 2, -3.4e38]), shape: [2, 2] };
      const p = { data: new Float32Array([1, 3.4e38, 1, -3.4e38]), shape: [2, 2] };
      assert.throws(
        () => pe.addPositional(x, p),
        (e) => e instanceof RangeError && /^posenc\.addPositional: x \+ p overflows float32 at x\[1\]/.test(e.message),
      );
      p.data[1] = -3.4e38;
      assert.throws(
        () => pe.addPositional(x, p),
        (e) => e instanceof RangeError && /at x\[3\]/.test(e.message),
      );
      const inf = pe.addPositional({ data: new Float32Array([Infinity, NaN]), shape: [1, 2] }, { data: new Float32Array([1, 1]), shape: [1, 2] });
      assert.equal(inf.data[0], Infinity);
      assert.ok(Number.isNaN(inf.data[1]));
      assert.ok(healthy(pe));
    });

    test('config.json: partial_rotary_factor rotates the leading part of each head (Phi-2: 0.4 of 80 channels)', () => {
      // microsoft/phi-2 config.json, the fields RoPE reads
      const phi2 = { hidden_size: 2560, num_attention_heads: 32, partial_rotary_factor: 0.4, rope_theta: 10000, rope_scaling: null };
      const got = pe.ropeFrequencies({ config: phi2 });
      const ref = hfRopeParameters(phi2);
      assert.equal(got.invFreq.length, 16); // int(80 * 0.4) = 32 rotary channels
      assert.equal(ref.invFreq.length, 16);
      for (let i = 0; i < 16; i++) assert.ok(Math.abs(got.invFreq[i] - 10000 ** (-i / 16)) <= 6e-8 * got.invFreq[i], `invFreq[${i}]`);
      assert.deepEqual(got.invFreq, Float32Array.from(ref.invFreq));
      assert.deepEqual(pe.ropeFrequencies({ config: { ...phi2, partial_rotary_factor: 0.25 } }).invFreq.length, 10);
      assert.throws(() => pe.ropeFrequencies({ config: { ...phi2, partial_rotary_factor: 0 } }), RangeError);
    });

    test('methods work when taken off the instance', () => {
      const { sinusoidal, rope } = pe;
      assert.deepEqual(sinusoidal({ length: 2, dModel: 2 }).shape, [2, 2]);
      assert.deepEqual(rope(T([2, 4])).shape, [2, 4]);
    });

    test('config.json: type and rope_type together, Qwen2-VL mrope, head_dim 0, LongRoPE factor from the config', () => {
      const yarn = { type: 'yarn', rope_type: 'yarn', factor: 4, original_max_position_embeddings: 4096 };
      assert.deepEqual(
        pe.ropeFrequencies({ dim: 8, base: 1e4, scaling: yarn }).invFreq,
        pe.ropeFrequencies({ dim: 8, base: 1e4, scaling: { rope_type: 'yarn', factor: 4, original_max_position_embeddings: 4096 } }).invFreq,
      );
      const qwen2vl = { hidden_size: 3584, num_attention_heads: 28, rope_theta: 1e6, rope_scaling: { type: 'mrope', mrope_section: [16, 24, 24] } };
      assert.deepEqual(pe.ropeFrequencies({ config: qwen2vl }).invFreq, pe.ropeFrequencies({ dim: 128, base: 1e6 }).invFreq);
      assert.equal(pe.ropeFrequencies({ config: { head_dim: 0, hidden_size: 64, num_attention_heads: 4 } }).invFreq.length, 8);
      const phi3 = { ...CONFIGS['Phi-3 mini 128k'], rope_scaling: { ...CONFIGS['Phi-3 mini 128k'].rope_scaling, factor: 2 } };
      assert.equal(pe.ropeFrequencies({ config: phi3 }).attentionFactor, pe.ropeFrequencies({ config: CONFIGS['Phi-3 mini 128k'] }).attentionFactor);
    });
  });
}
