// RoPE at the seams with other runtimes: axis orders, one row of positions per batch entry, the
// exact cos/sin caches ONNX Runtime takes, outputs that share memory with the input, and errors that
// name the right row. (The rotation itself against float64: relative.test.js.)
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { backends, maxAbsDiff, range } from './helpers.js';
import { hfRopeParameters } from './fixtures/hf-configs.js';

const [simd, scalar] = await backends();
const randomTensor = (n, seed = 1) => Float32Array.from(range(n), (i) => Math.sin(i * 12.9898 + seed * 78.233) * 0.9);
const defaultFreq = (dim, base = 10000) => range(dim / 2).map((i) => base ** ((-2 * i) / dim));

// [b, s, h, d] <-> [b, h, s, d]
function swapSeqHeads(x, [b, a, c, d]) {
  const out = new Float32Array(x.length);
  for (let i = 0; i < b; i++)
    for (let j = 0; j < a; j++)
      for (let k = 0; k < c; k++) out.set(x.subarray(((i * a + j) * c + k) * d, ((i * a + j) * c + k + 1) * d), ((i * c + k) * a + j) * d);
  return out;
}

// float64 RoPE ('half' or 'interleaved') of x [b, s, h, d] with positions[b][s].
function ropeRef(x, [b, s, h, d], positions, invFreq, layout = 'half') {
  const out = Float64Array.from(x);
  for (let i = 0; i < b; i++)
    for (let r = 0; r < s; r++)
      for (let k = 0; k < h; k++) {
        const o = ((i * s + r) * h + k) * d;
        for (let f = 0; f < d / 2; f++) {
          const a = positions[i][r] * invFreq[f];
          const [ia, ib] = layout === 'half' ? [o + f, o + f + d / 2] : [o + 2 * f, o + 2 * f + 1];
          out[ia] = x[ia] * Math.cos(a) - x[ib] * Math.sin(a);
          out[ib] = x[ib] * Math.cos(a) + x[ia] * Math.sin(a);
        }
      }
  return out;
}

for (const pe of [simd, scalar]) {
  describe(`rope at the seams (${pe.backend})`, () => {
    test("axes: 'bhsd' (ONNX Runtime, torch KV caches) rotates along seq, not heads", () => {
      const shape = [2, 5, 3, 8]; // b, s, h, d
      const x = randomTensor(2 * 5 * 3 * 8);
      const positions = [range(5, 10), range(5, 10)];
      const want = ropeRef(x, shape, positions, defaultFreq(8));
      const bhsd = swapSeqHeads(x, shape);
      for (const layout of ['half', 'interleaved']) {
        const ref = layout === 'half' ? want : ropeRef(x, shape, positions, defaultFreq(8), layout);
        const got = pe.rope({ data: bhsd, shape: [2, 3, 5, 8] }, { axes: 'bhsd', offset: 10, layout });
        assert.deepEqual(got.shape, [2, 3, 5, 8]);
        assert.ok(maxAbsDiff(swapSeqHeads(got.data, [2, 3, 5, 8]), ref) < 1e-6, layout);
        // read as 'bshd' it would rotate along the head axis: not what ORT means
        assert.ok(maxAbsDiff(swapSeqHeads(pe.rope({ data: bhsd, shape: [2, 3, 5, 8] }, { offset: 10, layout }).data, [2, 3, 5, 8]), ref) > 0.1);
      }
      // rank 3: 'hsd' is [heads, seq, d]
      const x3 = x.subarray(0, 5 * 3 * 8);
      const got3 = pe.rope({ data: swapSeqHeads(x3, [1, 5, 3, 8]), shape: [3, 5, 8] }, { axes: 'hsd', offset: 10 });
      assert.ok(maxAbsDiff(swapSeqHeads(got3.data, [1, 3, 5, 8]), want.subarray(0, 5 * 3 * 8)) < 1e-6);
      assert.throws(
        () => pe.rope({ data: x, shape }, { axes: 'bsdh' }),
        (e) => e instanceof RangeError && /axes must be one of/.test(e.message),
      );
    });

    test("axes: 'bsd' reads rank 3 as [batch, seq, d] (one head), with a row of positions per entry", () => {
      const x = randomTensor(2 * 5 * 8, 3);
      const positions = [range(5, 3), [0, 0, 1, 2, 3]];
      const want = ropeRef(x, [2, 5, 1, 8], positions, defaultFreq(8));
      const got = pe.rope({ data: x, shape: [2, 5, 8] }, { axes: 'bsd', positions });
      assert.deepEqual(got.shape, [2, 5, 8]);
      assert.ok(maxAbsDiff(got.data, want) < 1e-6);
      // the default reads it as [seq, heads, d]: two positions, five heads
      assert.ok(
        maxAbsDiff(pe.rope({ data: x, shape: [2, 5, 8] }, { offset: 3 }).data, ropeRef(x, [2, 5, 1, 8], [range(5, 3), range(5, 3)], defaultFreq(8))) >
          0.1,
      );
      for (const shape of [
        [10, 8],
        [2, 5, 1, 8],
      ])
        assert.throws(
          () => pe.rope({ data: x, shape }, { axes: 'bsd' }),
          (e) => e instanceof RangeError && e.message.startsWith(`posenc.rope: axes 'bsd' reads a rank-3 x as [batch, seq, d], got shape [${shape}]`),
        );
    });

    test('positions [batch, seq]: left padding gives every row its own positions, in both axis orders', () => {
      const shape = [3, 4, 2, 16];
      const x = randomTensor(3 * 4 * 2 * 16, 2);
      // HF position_ids with left padding: each row counts from its first real token
      const positions = [
        [0, 1, 2, 3],
        [1, 1, 0, 1],
        [1, 0, 1, 2],
      ];
      const want = ropeRef(x, shape, positions, defaultFreq(16));
      for (const p of [
        positions,
        { data: BigInt64Array.from(positions.flat(), BigInt), dims: [3, 4] },
        { data: Int32Array.from(positions.flat()), shape: [3, 4] },
      ]) {
        const got = pe.rope({ data: x, shape }, { positions: Array.isArray(p) ? { data: p.flat(), shape: [3, 4] } : p });
        assert.ok(maxAbsDiff(got.data, want) < 1e-6);
        const heads = pe.rope(
          { data: swapSeqHeads(x, shape), shape: [3, 2, 4, 16] },
          { axes: 'bhsd', positions: Array.isArray(p) ? { data: p.flat(), shape: [3, 4] } : p },
        );
        assert.ok(maxAbsDiff(swapSeqHeads(heads.data, [3, 2, 4, 16]), want) < 1e-6);
      }
      // [1, seq] is every row's
      const same = pe.rope({ data: x, shape }, { positions: { data: [5, 6, 7, 8], shape: [1, 4] } });
      assert.ok(maxAbsDiff(same.data, ropeRef(x, shape, [range(4, 5), range(4, 5), range(4, 5)], defaultFreq(16))) < 1e-6);
      assert.throws(
        () => pe.rope({ data: x, shape }, { positions: { data: range(8), shape: [2, 4] } }),
        (e) => e instanceof RangeError && /\[3, 4\]/.test(e.message),
      );
    });

    test('ropeCache: exact cos/sin at every position, where float32 recipes drift', () => {
      const dim = 128;
      const invFreq = defaultFreq(dim, 500000);
      const { cos, sin } = pe.ropeCache({ base: 500000, rotaryDim: dim, length: 8192 });
      assert.deepEqual(cos.shape, [8192, 64]);
      let worst = 0;
      for (const p of [0, 1, 4100, 8191])
        for (let i = 0; i < 64; i++) {
          worst = Math.max(
            worst,
            Math.abs(cos.data[p * 64 + i] - Math.cos(p * invFreq[i])),
            Math.abs(sin.data[p * 64 + i] - Math.sin(p * invFreq[i])),
          );
        }
      assert.ok(worst < 1e-6, `worst ${worst}`);
      // the cache built from float32 inverse frequencies, as a user would, is off by ~1e-4 at 4100
      const f32 = pe.ropeFrequencies({ dim, base: 500000 }).invFreq;
      let drift = 0;
      for (let i = 0; i < 64; i++) drift = Math.max(drift, Math.abs(Math.cos(4100 * f32[i]) - Math.cos(4100 * invFreq[i])));
      assert.ok(drift > 1e-5, `drift ${drift}`);
      // the attention factor multiplies both; layouts expand to rotaryDim columns
      const yarn = { type: 'yarn', factor: 4, originalMaxPositions: 4096 };
      const af = pe.ropeFrequencies({ dim: 64, scaling: yarn }).attentionFactor;
      const y = pe.ropeCache({ rotaryDim: 64, scaling: yarn, positions: [0] });
      assert.ok(Math.abs(y.cos.data[0] - af) < 1e-6 && af > 1.1);
      const half = pe.ropeCache({ rotaryDim: 8, length: 3, layout: 'half' });
      const inter = pe.ropeCache({ rotaryDim: 8, length: 3, layout: 'interleaved' });
      const plain = pe.ropeCache({ rotaryDim: 8, length: 3 });
      assert.deepEqual(half.cos.shape, [3, 8]);
      for (let r = 0; r < 3; r++)
        for (let i = 0; i < 4; i++) {
          assert.equal(half.cos.data[r * 8 + i], plain.cos.data[r * 4 + i]);
          assert.equal(half.cos.data[r * 8 + 4 + i], plain.cos.data[r * 4 + i]);
          assert.equal(inter.sin.data[r * 8 + 2 * i + 1], plain.sin.data[r * 4 + i]);
        }
      // the cache and rope agree: rotating with the cache is rope
      const x = randomTensor(3 * 8);
      const rot = pe.rope({ data: x, shape: [3, 8] }).data;
      for (let r = 0; r < 3; r++)
        for (let i = 0; i < 4; i++) {
          const [a, b] = [x[r * 8 + i], x[r * 8 + 4 + i]];
          const [c, s] = [plain.cos.data[r * 4 + i], plain.sin.data[r * 4 + i]];
          assert.ok(Math.abs(rot[r * 8 + i] - (a * c - b * s)) < 1e-6);
        }
      assert.throws(
        () => pe.ropeCache({ length: 4 }),
        (e) => e instanceof TypeError && /rotaryDim/.test(e.message),
      );
    });

    test('out that overlaps x: in place and one row ahead both give the right rotation, for large tensors too', () => {
      for (const [seq, d] of [
        [8, 64],
        [2048, 128],
      ]) {
        const x = randomTensor(seq * d, 7);
        const want = pe.rope({ data: x, shape: [seq, d] }, { offset: 3 }).data;
        // out one row ahead of x in the same buffer (the 256 KiB blocks once wrote x's next block first)
        const buffer = new Float32Array((seq + 1) * d);
        buffer.set(x);
        const view = buffer.subarray(0, seq * d);
        const ahead = buffer.subarray(d, (seq + 1) * d);
        pe.rope({ data: view, shape: [seq, d] }, { offset: 3, out: ahead });
        assert.ok(maxAbsDiff(ahead, want) === 0, `[${seq}, ${d}] ahead: ${maxAbsDiff(ahead, want)}`);
        const behind = new Float32Array((seq + 1) * d);
        behind.set(x, d);
        pe.rope({ data: behind.subarray(d), shape: [seq, d] }, { offset: 3, out: behind.subarray(0, seq * d) });
        assert.ok(maxAbsDiff(behind.subarray(0, seq * d), want) === 0, `[${seq}, ${d}] behind`);
        const inPlace = Float32Array.from(x);
        assert.equal(pe.rope({ data: inPlace, shape: [seq, d] }, { offset: 3, out: inPlace }).data, inPlace);
        assert.deepEqual(inPlace, want);
      }
    });

    test('every other call with out reads its inputs whole first: out overlapping an input gives the same result', () => {
      const n = 64 * 32;
      const make = () => {
        const buffer = new Float32Array(3 * n);
        buffer.set(randomTensor(3 * n, 12));
        return buffer;
      };
      // attention: out starting inside q, k and v's buffer
      let b = make();
      const q = { data: b.subarray(0, n), shape: [64, 32] };
      const want = pe.attention({
        q: { data: q.data.slice(), shape: [64, 32] },
        k: { data: b.slice(n, 2 * n), shape: [64, 32] },
        v: { data: b.slice(2 * n), shape: [64, 32] },
      }).output.data;
      pe.attention({
        q,
        k: { data: b.subarray(n, 2 * n), shape: [64, 32] },
        v: { data: b.subarray(2 * n), shape: [64, 32] },
        out: b.subarray(n / 2, n / 2 + n),
      });
      assert.deepEqual(b.subarray(n / 2, n / 2 + n), want);
      // addPositional: out over x shifted by one row
      b = make();
      const x = b.subarray(0, n);
      const sum = pe.addPositional({ data: x.slice(), shape: [64, 32] }, { data: b.slice(2 * n), shape: [64, 32] }).data;
      pe.addPositional({ data: x, shape: [64, 32] }, { data: b.subarray(2 * n), shape: [64, 32] }, { out: b.subarray(32, 32 + n) });
      assert.deepEqual(b.subarray(32, 32 + n), sum);
    });

    test('a failed in-place rotation leaves x unchanged, and the error names the row of the whole tensor', () => {
      const [seq, d] = [2048, 128];
      const x = randomTensor(seq * d, 8);
      x[(seq - 1) * d] = 3e38; // the last row's first pair rotates beyond float32
      x[(seq - 1) * d + d / 2] = 3e38;
      const before = Float32Array.from(x);
      assert.throws(
        () => pe.rope({ data: x, shape: [seq, d] }, { offset: 1, out: x }),
        (e) => e instanceof RangeError && /row 2047\b/.test(e.message),
      );
      assert.deepEqual(x, before);
      // a row in the middle of a later block, copy path
      const y = randomTensor(seq * d, 9);
      y[1500 * d + 3] = -3e38;
      y[1500 * d + 3 + d / 2] = 3e38;
      assert.throws(
        () => pe.rope({ data: y, shape: [seq, d] }, { offset: 1 }),
        (e) => e instanceof RangeError && /row 1500\b/.test(e.message),
      );
      // xPos too
      assert.throws(
        () =>
          pe.rope(
            { data: randomTensor(seq * 4), shape: [seq, 4] },
            { positions: range(seq).map((i) => (i === 1500 ? -1e6 : i)), xpos: { center: 1000 }, role: 'query' },
          ),
        (e) => e instanceof RangeError && /row 1500\b/.test(e.message),
      );
    });

    test("frequencies kept from call to call: each call gets its own settings' (base, head dimension, scaling, dynamic's length)", () => {
      // config.json settings of one head of `dim` channels; the reference is transformers'
      // modeling_rope_utils transcribed in float64 (fixtures/hf-configs.js), at the call's length
      const config = (dim, theta, rope_scaling) => ({
        hidden_size: dim,
        num_attention_heads: 1,
        rope_theta: theta,
        max_position_embeddings: 64,
        ...(rope_scaling ? { rope_scaling } : {}),
      });
      const llama3 = (factor) => ({ rope_type: 'llama3', factor, original_max_position_embeddings: 64, low_freq_factor: 1, high_freq_factor: 4 });
      const longrope = {
        rope_type: 'longrope',
        factor: 4,
        original_max_position_embeddings: 64,
        short_factor: [1, 1.5, 2, 3],
        long_factor: [2, 3, 5, 8],
      };
      // [config, offset]: rows at offset .. offset + 1 (dynamic and longrope read the length offset + 2)
      const settings = [
        [config(8, 10000, llama3(8)), 30],
        [config(8, 500000, llama3(8)), 30], // another base
        [config(16, 10000, llama3(8)), 30], // another head dimension
        [config(8, 10000, llama3(4)), 30], // another factor
        [config(8, 10000, { rope_type: 'linear', factor: 8 }), 30], // another type, same factor
        [config(8, 10000), 30], // no scaling
        [config(8, 10000, { rope_type: 'dynamic', factor: 2 }), 10], // within max_position_embeddings: unscaled
        [config(8, 10000, { rope_type: 'dynamic', factor: 2 }), 200], // beyond: scaled, by the length
        [config(8, 10000, { rope_type: 'dynamic', factor: 2 }), 100],
        [config(8, 10000, { rope_type: 'dynamic', factor: 2 }), 40],
        [config(8, 10000, longrope), 10], // short factors
        [config(8, 10000, longrope), 100], // long factors
      ];
      const check = ([c, offset], pass) => {
        const dim = c.hidden_size;
        const x = randomTensor(2 * dim, dim);
        const { invFreq, attentionFactor } = hfRopeParameters(c, offset + 2);
        const want = ropeRef(x, [1, 2, 1, dim], [[offset, offset + 1]], invFreq).map((v) => v * attentionFactor);
        const got = pe.rope({ data: x, shape: [2, dim] }, { config: c, offset }).data;
        const label = `${JSON.stringify(c.rope_scaling ?? 'none')} theta ${c.rope_theta}, dim ${dim}, offset ${offset}, pass ${pass}`;
        assert.ok(maxAbsDiff(got, want) < 2e-6, label);
      };
      // in order, then back in reverse (the latest settings are served again, older ones computed again)
      for (const st of settings) check(st, 1);
      for (const st of [...settings].reverse()) check(st, 2);
      // a setting the core refuses is refused every time, also right after a kept one of the same key
      check(settings[0], 3);
      for (let i = 0; i < 2; i++)
        assert.throws(
          () =>
            pe.rope(
              { data: randomTensor(16), shape: [2, 8] },
              { base: 10000, scaling: { type: 'llama3', factor: 8, originalMaxPositions: 64, lowFreqFactor: 4, highFreqFactor: 1 } },
            ),
          RangeError,
        );
    });
  });
}

describe('RoPE: the rotary dimension', () => {
  for (const pe of [simd, scalar])
    test(`an odd rotary dimension is the core's error, one message for every call that takes one (${pe.backend})`, () => {
      const odd = /^posenc\.\w+: rotaryDim \(dim; by default the head dimension\) must be a positive even integer, got 5$/;
      const x = { data: new Float32Array(15), shape: [3, 5] };
      assert.throws(
        () => pe.rope(x),
        (e) => e instanceof RangeError && odd.test(e.message),
      ); // rotaryDim: the head dimension
      assert.throws(
        () => pe.rope({ data: new Float32Array(18), shape: [3, 6] }, { rotaryDim: 5 }),
        (e) => e instanceof RangeError && odd.test(e.message),
      );
      assert.throws(
        () => pe.ropeCache({ rotaryDim: 5, length: 2 }),
        (e) => e instanceof RangeError && odd.test(e.message),
      );
      assert.throws(
        () => pe.ropeCache({ rotaryDim: 5, length: 2, layout: 'half' }),
        (e) => e instanceof RangeError && odd.test(e.message),
      );
      assert.throws(
        () => pe.ropeFrequencies({ dim: 5 }),
        (e) => e instanceof RangeError && odd.test(e.message),
      );
      // and past the head: the rotation's own rule
      assert.throws(() => pe.rope(x, { rotaryDim: 6 }), /rotaryDim must be at most headDim \(5\), got 6/);
    });
});
