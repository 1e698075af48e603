import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { backends, maxAbsDiff, range, sinusoidalRef } from './helpers.js';

const [simd, scalar] = await backends();

for (const pe of [simd, scalar]) {
  describe(`sinusoidal (${pe.backend})`, () => {
    test("the worked n=100, d=4 table for 'I am a robot'", () => {
      const t = pe.sinusoidal({ length: 4, dModel: 4, base: 100 });
      assert.deepEqual(t.shape, [4, 4]);
      const want = [
        0, 1, 0, 1, 0.84147098, 0.54030231, 0.09983342, 0.99500417, 0.90929743, -0.41614684, 0.19866933, 0.98006658, 0.14112001, -0.9899925,
        0.29552023, 0.95533649,
      ];
      assert.ok(maxAbsDiff(t.data, want) < 1e-7);
    });

    test('the 100 x 128 example and the 500 x 64 heatmap have their shapes and range', () => {
      assert.deepEqual(pe.sinusoidal({ length: 100, dModel: 128 }).shape, [100, 128]);
      const h = pe.sinusoidal({ length: 500, dModel: 64 });
      const s = pe.stats(h);
      assert.ok(s.min >= -1 && s.max <= 1 && s.min < -0.999 && s.max === 1);
      assert.ok(maxAbsDiff(h.data, sinusoidalRef(range(500), 64)) < 1e-6);
    });

    test("spacing 'tensor2tensor': Whisper's 1500 x 384 table, fairseq's and tensor2tensor's, each against its own formula", () => {
      // openai/whisper model.py sinusoids(length, channels): log(10000) / (channels/2 - 1) spacing, [sin | cos]
      const whisper = (length, channels) => {
        const inc = Math.log(10000) / (channels / 2 - 1);
        const inv = range(channels / 2).map((i) => Math.exp(-inc * i));
        return Float64Array.from(range(length * channels), (k) => {
          const [t, c] = [Math.floor(k / channels), k % channels];
          return c < channels / 2 ? Math.sin(t * inv[c]) : Math.cos(t * inv[c - channels / 2]);
        });
      };
      const table = pe.sinusoidal({ length: 1500, dModel: 384, layout: 'split', spacing: 'tensor2tensor' });
      assert.ok(maxAbsDiff(table.data, whisper(1500, 384)) < 1e-6, `${maxAbsDiff(table.data, whisper(1500, 384))}`);
      // Vaswani's spacing in the split layout is a different table (off by up to ~2)
      assert.ok(maxAbsDiff(pe.sinusoidal({ length: 1500, dModel: 384, layout: 'split' }).data, whisper(1500, 384)) > 1);
      // fairseq SinusoidalPositionalEmbedding.get_embedding: the same, odd dims zero-padded; its positions
      // start after padding_idx (1 here): offset 2
      const fairseq = (n, dim, first) => {
        const half = Math.floor(dim / 2);
        const e = Math.log(10000) / (half - 1);
        return Float64Array.from(range(n * dim), (k) => {
          const [t, c] = [first + Math.floor(k / dim), k % dim];
          if (c >= 2 * half) return 0;
          return c < half ? Math.sin(t * Math.exp(c * -e)) : Math.cos(t * Math.exp((c - half) * -e));
        });
      };
      const f = pe.sinusoidal({ length: 50, dModel: 33, layout: 'split', spacing: 'tensor2tensor', offset: 2 });
      assert.ok(maxAbsDiff(f.data, fairseq(50, 33, 2)) < 1e-6);
      // tensor2tensor get_timing_signal_1d with max(num_timescales - 1, 1): 2 channels keep w = 1
      const t2 = pe.sinusoidal({ length: 3, dModel: 2, layout: 'split', spacing: 'tensor2tensor' });
      assert.ok(maxAbsDiff(t2.data, [0, 1, Math.sin(1), Math.cos(1), Math.sin(2), Math.cos(2)]) < 1e-7);
      // the wavelengths follow the spacing
      const w = pe.wavelengths({ dModel: 384, spacing: 'tensor2tensor' });
      assert.ok(Math.abs(w[191] / (2 * Math.PI) - 10000) < 1e-6 && Math.abs(w[1] / (2 * Math.PI) - Math.exp(Math.log(10000) / 191)) < 1e-9);
      assert.throws(
        () => pe.sinusoidal({ length: 2, dModel: 4, spacing: 'fairseq' }),
        (e) => e instanceof RangeError && /spacing must be one of 'vaswani', 'tensor2tensor'/.test(e.message),
      );
    });

    test('within 1e-6 of float64 at positions up to 2^31 - 1, offsets and explicit positions', () => {
      const start = 2 ** 31 - 300;
      const t = pe.sinusoidal({ length: 300, dModel: 64, offset: start });
      assert.ok(maxAbsDiff(t.data, sinusoidalRef(range(300, start), 64)) < 1e-6);
      const positions = [0, 7, 1e6, 123456789, 2 ** 31 - 1, 2 ** 30 + 0.5, 3.25, -5];
      const e = pe.sinusoidal({ dModel: 33, positions });
      assert.deepEqual(e.shape, [positions.length, 33]);
      assert.ok(maxAbsDiff(e.data, sinusoidalRef(positions, 33)) < 1e-6);
    });

    test('a table of many row blocks (one core Table, copied out block by block) matches float64', () => {
      // 128 KiB blocks: 3000 x 40 floats are 4 blocks of 819 rows, which cut the 64-row anchor blocks anywhere
      const start = 123456;
      const t = pe.sinusoidal({ length: 3000, dModel: 40, offset: start });
      assert.ok(maxAbsDiff(t.data, sinusoidalRef(range(3000, start), 40)) < 1e-6);
      const out = new Float32Array(3000 * 40);
      assert.equal(pe.sinusoidal({ length: 3000, dModel: 40, offset: start, layout: 'interleaved', out }).data, out);
      assert.deepEqual(out, t.data);
      const positions = Array.from({ length: 3000 }, (_, i) => (i * 7919) % 100003);
      assert.ok(maxAbsDiff(pe.sinusoidal({ dModel: 40, positions }).data, sinusoidalRef(positions, 40)) < 1e-6);
    });

    test('explicit consecutive positions equal the offset form', () => {
      const a = pe.sinusoidal({ length: 200, dModel: 16, offset: 1000 });
      const b = pe.sinusoidal({ dModel: 16, positions: range(200, 1000) });
      assert.deepEqual(a.data, b.data);
    });

    test('split layout is the interleaved columns regrouped; odd dModel', () => {
      for (const d of [16, 9]) {
        const inter = pe.sinusoidal({ length: 40, dModel: d }).data;
        const split = pe.sinusoidal({ length: 40, dModel: d, layout: 'split' }).data;
        const h = Math.floor(d / 2);
        for (let r = 0; r < 40; r++) {
          for (let i = 0; i < h; i++) {
            assert.equal(split[r * d + i], inter[r * d + 2 * i]);
            assert.equal(split[r * d + h + i], inter[r * d + 2 * i + 1]);
          }
          if (d % 2) {
            assert.equal(split[r * d + d - 1], 0); // split pads an odd dModel with a zero column
            assert.ok(Math.abs(inter[r * d + d - 1] - Math.sin(r / 10000 ** ((2 * h) / d))) < 1e-6); // interleaved: sin of the next frequency
          }
        }
      }
    });

    test('base changes the frequencies', () => {
      const t = pe.sinusoidal({ length: 10, dModel: 8, base: 500 });
      assert.ok(maxAbsDiff(t.data, sinusoidalRef(range(10), 8, 500)) < 1e-6);
    });

    test('wavelengths are 2 pi base^(2i/d)', () => {
      const w = pe.wavelengths({ dModel: 64 });
      assert.ok(w instanceof Float64Array && w.length === 32);
      w.forEach((x, i) => assert.ok(Math.abs(x / (2 * Math.PI * 10000 ** ((2 * i) / 64)) - 1) < 1e-12));
      assert.equal(pe.wavelengths({ dModel: 5, base: 100 }).length, 3);
    });
  });

  describe(`learned and token embeddings (${pe.backend})`, () => {
    test("the tutorials' learned example: a 512 x 768 table, 100 positions -> [100, 768]", () => {
      const emb = pe.learned({ maxLength: 512, dModel: 768 });
      assert.equal(emb.maxLength, 512);
      assert.equal(emb.dModel, 768);
      const t = emb.table;
      assert.deepEqual(t.shape, [512, 768]);
      const rows = emb.lookup(range(100));
      assert.deepEqual(rows.shape, [100, 768]);
      assert.deepEqual(rows.data, t.data.subarray(0, 100 * 768));
      const s = pe.stats(t);
      assert.ok(Math.abs(s.mean) < 2e-4 && Math.abs(s.std - 0.02) < 2e-4, JSON.stringify(s));
      emb[Symbol.dispose]();
      assert.equal(emb.disposed, true);
    });

    test('lookup keeps a tensor shape, and positions >= maxLength are a RangeError naming both', () => {
      const emb = pe.learned({ maxLength: 8, dModel: 3, init: 'xavier', seed: 3 });
      assert.deepEqual(emb.lookup({ data: [0, 1, 2, 3, 4, 5], shape: [2, 3] }).shape, [2, 3, 3]);
      assert.throws(
        () => emb.lookup([2, 8]),
        (e) => e instanceof RangeError && /positions\[1\] is 8/.test(e.message) && /maxLength is 8/.test(e.message),
      );
      assert.throws(() => emb.lookup([-1]), RangeError);
      assert.throws(() => emb.lookup([1.5]), RangeError);
    });

    test('inits: xavier bounds, sinusoidal equals the table, zeros, seeds differ', () => {
      const x = pe.learned({ maxLength: 64, dModel: 32, init: 'xavier' });
      const a = Math.sqrt(6 / (64 + 32));
      const s = pe.stats(x.table);
      assert.ok(s.min >= -a && s.max <= a && s.max > 0.9 * a);
      const sin = pe.learned({ maxLength: 20, dModel: 8, init: 'sinusoidal' });
      assert.deepEqual(sin.table.data, pe.sinusoidal({ length: 20, dModel: 8 }).data);
      const z = pe.learned({ maxLength: 4, dModel: 4, init: 'zeros' });
      assert.ok(z.table.data.every((v) => v === 0));
      const s1 = pe.learned({ maxLength: 4, dModel: 4, seed: 1 });
      const s2 = pe.learned({ maxLength: 4, dModel: 4, seed: 2 });
      assert.notDeepEqual(s1.table.data, s2.table.data);
    });

    test('resize: linear interpolation (ViT) and tiling (Longformer)', () => {
      const emb = pe.learned({ maxLength: 5, dModel: 2, seed: 9 });
      const t = emb.table.data;
      const up = emb.resize(12);
      assert.equal(up.maxLength, 12);
      // Reference: torch.nn.functional.interpolate(mode='linear', align_corners=False)
      const want = [];
      for (let j = 0; j < 12; j++) {
        const x = Math.max(0, ((j + 0.5) * 5) / 12 - 0.5);
        const i0 = Math.floor(x);
        const i1 = Math.min(i0 + 1, 4);
        const f = x - i0;
        for (let c = 0; c < 2; c++) want.push((1 - f) * t[i0 * 2 + c] + f * t[i1 * 2 + c]);
      }
      assert.ok(maxAbsDiff(up.table.data, want) < 1e-6);
      const tiled = emb.resize(12, 'tile');
      for (let j = 0; j < 12; j++)
        assert.deepEqual(Array.from(tiled.table.data.subarray(j * 2, j * 2 + 2)), Array.from(t.subarray((j % 5) * 2, (j % 5) * 2 + 2)));
    });

    test('token embeddings: Xavier-uniform, multiplied by sqrt(dModel) on lookup', () => {
      const tok = pe.tokenEmbedding({ vocabSize: 100, dModel: 16, seed: 4 });
      const table = tok.table.data;
      const a = Math.sqrt(6 / (100 + 16));
      assert.ok(table.every((v) => Math.abs(v) <= a));
      const e = tok.lookup([7, 3]);
      for (let c = 0; c < 16; c++) assert.equal(e.data[c], Math.fround(table[7 * 16 + c] * Math.fround(4)));
      const raw = pe.tokenEmbedding({ vocabSize: 100, dModel: 16, seed: 4, scale: false });
      assert.deepEqual(raw.lookup([3]).data, table.subarray(3 * 16, 4 * 16));
      assert.throws(
        () => tok.lookup([100]),
        (e) => e instanceof RangeError && /vocabSize is 100/.test(e.message),
      );
    });

    test('dispose, Symbol.dispose and use after dispose', () => {
      const emb = pe.learned({ maxLength: 4, dModel: 4 });
      emb.dispose();
      assert.equal(emb.disposed, true);
      emb.dispose(); // idempotent
      assert.throws(
        () => emb.lookup([0]),
        (e) => e instanceof TypeError && /disposed/.test(e.message),
      );
      assert.throws(() => emb.table, TypeError);
    });
  });

  describe(`addPositional (${pe.backend})`, () => {
    test('x + p for [seq, d] and [batch, seq, d], using the first seq rows of p', () => {
      const p = pe.sinusoidal({ length: 10, dModel: 4 });
      const x2 = { data: Float32Array.from(range(12)), shape: [3, 4] };
      const y2 = pe.addPositional(x2, p);
      assert.deepEqual(y2.shape, [3, 4]);
      y2.data.forEach((v, i) => assert.equal(v, Math.fround(x2.data[i] + p.data[i])));
      const x3 = { data: Float32Array.from(range(24)), shape: [2, 3, 4] };
      const y3 = pe.addPositional(x3, p);
      assert.deepEqual(y3.shape, [2, 3, 4]);
      y3.data.forEach((v, i) => assert.equal(v, Math.fround(x3.data[i] + p.data[i % 12])));
    });

    test('the input pipeline of "Deconstructing the Transformer Architecture": token embeddings x sqrt(d) plus the 500 x 64 encoding', () => {
      const tok = pe.tokenEmbedding({ vocabSize: 1000, dModel: 64 });
      const ids = range(500).map((i) => (i * 37) % 1000);
      const x = tok.lookup(ids);
      const y = pe.addPositional(x, pe.sinusoidal({ length: 500, dModel: 64 }));
      const before = pe.stats(x);
      const after = pe.stats(y);
      assert.ok(Math.abs(after.mean - before.mean - pe.stats(pe.sinusoidal({ length: 500, dModel: 64 })).mean) < 1e-6);
    });
  });
}

describe('SIMD and scalar builds agree', () => {
  test('sinusoidal tables agree to float rounding', () => {
    const a = simd.sinusoidal({ length: 1000, dModel: 96, offset: 12345 }).data;
    const b = scalar.sinusoidal({ length: 1000, dModel: 96, offset: 12345 }).data;
    assert.ok(maxAbsDiff(a, b) <= 2 ** -23);
  });
  test('seeded tables are bit-identical', () => {
    for (const init of ['normal', 'xavier']) {
      const a = simd.learned({ maxLength: 64, dModel: 48, init, seed: 42 });
      const b = scalar.learned({ maxLength: 64, dModel: 48, init, seed: 42 });
      assert.deepEqual(a.table.data, b.table.data);
    }
    const ta = simd.tokenEmbedding({ vocabSize: 50, dModel: 8, seed: 5 });
    const tb = scalar.tokenEmbedding({ vocabSize: 50, dModel: 8, seed: 5 });
    assert.deepEqual(ta.table.data, tb.table.data);
  });
});
