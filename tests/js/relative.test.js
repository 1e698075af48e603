import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { backends, maxAbsDiff, range } from './helpers.js';

const [simd, scalar] = await backends();

// RoPE in float64 from the formula: pairs rotated by p * w_i, w_i = base^(-2i/rot) (already scaled).
function ropeRef(x, [seq, heads, hd], positions, invFreq, layout, rot = hd, factor = 1) {
  const out = Float64Array.from(x);
  for (let r = 0; r < seq; r++)
    for (let h = 0; h < heads; h++) {
      const o = (r * heads + h) * hd;
      for (let i = 0; i < rot / 2; i++) {
        const a = positions[r] * invFreq[i];
        const [c, s] = [Math.cos(a) * factor, Math.sin(a) * factor];
        const [ia, ib] = layout === 'half' ? [o + i, o + i + rot / 2] : [o + 2 * i, o + 2 * i + 1];
        out[ia] = x[ia] * c - x[ib] * s;
        out[ib] = x[ib] * c + x[ia] * s;
      }
    }
  return out;
}
const defaultFreq = (dim, base = 10000) => range(dim / 2).map((i) => base ** ((-2 * i) / dim));
const randomTensor = (n, seed = 1) => Float32Array.from(range(n), (i) => Math.sin(i * 12.9898 + seed * 78.233) * 0.9);
const dot = (a, b) => a.reduce((s, v, i) => s + v * b[i], 0);

// HF modeling_rope_utils, re-derived in float64.
function llama3Ref(dim, base, { factor, lowFreqFactor, highFreqFactor, originalMaxPositions }) {
  const lowWavelen = originalMaxPositions / lowFreqFactor;
  const highWavelen = originalMaxPositions / highFreqFactor;
  return defaultFreq(dim, base).map((w) => {
    const wavelen = (2 * Math.PI) / w;
    if (wavelen < highWavelen) return w;
    if (wavelen > lowWavelen) return w / factor;
    const smooth = (originalMaxPositions / wavelen - lowFreqFactor) / (highFreqFactor - lowFreqFactor);
    return (1 - smooth) * (w / factor) + smooth * w;
  });
}
function yarnRef(dim, base, { factor, originalMaxPositions: orig, betaFast = 32, betaSlow = 1 }) {
  const corr = (rot) => (dim * Math.log(orig / (rot * 2 * Math.PI))) / (2 * Math.log(base));
  const low = Math.max(Math.floor(corr(betaFast)), 0);
  let high = Math.min(Math.ceil(corr(betaSlow)), dim - 1);
  if (low === high) high += 0.001;
  const inv = defaultFreq(dim, base).map((w, i) => {
    const ramp = Math.min(1, Math.max(0, (i - low) / (high - low)));
    const extrapolation = 1 - ramp;
    return (w / factor) * (1 - extrapolation) + w * extrapolation;
  });
  return { inv, attentionFactor: 0.1 * Math.log(factor) + 1 };
}

// T5 bucket with exact integer arithmetic for 32 buckets / max distance 128 (bidirectional: 16 / 8):
// floor(log(n/8)/log(16) * 8) = floor(2 log2(n/8)) = largest b with 64 * 2^b <= n^2.
function t5Ref(rel, bidirectional) {
  let nb = 32;
  let ret = 0;
  let n = -rel;
  if (bidirectional) {
    nb = 16;
    if (n < 0) ret += nb;
    n = Math.abs(n);
  } else n = Math.max(n, 0);
  const maxExact = nb / 2;
  if (n < maxExact) return ret + n;
  // floor(log(n/me) / log(128/me) * (nb - me)) as the largest b with (128/me)^b <= (n/me)^(nb-me):
  //   nb = 16, me = 8:  16^b <= (n/8)^8   <=>  2^(4b) * 8^8 <= n^8
  //   nb = 32, me = 16:  8^b <= (n/16)^16 <=>  2^(3b) * 16^16 <= n^16
  const [bitsPerStep, power] = nb === 16 ? [4, 8] : [3, 16];
  const N = BigInt(n) ** BigInt(power);
  const M = BigInt(maxExact) ** BigInt(power);
  let b = 0;
  while (2n ** BigInt(bitsPerStep * (b + 1)) * M <= N) b++;
  return ret + Math.min(maxExact + b, nb - 1);
}

// Press et al.'s reference get_slopes.
function alibiRef(n) {
  const pow2 = (k) => {
    const start = 2 ** -(2 ** -(Math.log2(k) - 3));
    return range(k).map((i) => start * start ** i);
  };
  if (Number.isInteger(Math.log2(n))) return pow2(n);
  const closest = 2 ** Math.floor(Math.log2(n));
  return [
    ...pow2(closest),
    ...pow2(2 * closest)
      .filter((_, i) => i % 2 === 0)
      .slice(0, n - closest),
  ];
}

for (const pe of [simd, scalar]) {
  describe(`rope (${pe.backend})`, () => {
    test('both layouts against float64, [seq, dim] and [seq, heads, headDim], offsets near 2^31', () => {
      for (const layout of ['half', 'interleaved'])
        for (const [shape, offset] of [
          [[7, 1, 16], 0],
          [[5, 3, 8], 1e6],
          [[4, 2, 64], 2 ** 31 - 4],
        ]) {
          const x = randomTensor(shape[0] * shape[1] * shape[2]);
          const input = shape[1] === 1 ? { data: x, shape: [shape[0], shape[2]] } : { data: x, shape };
          const got = pe.rope(input, { layout, offset });
          assert.deepEqual(got.shape, input.shape);
          const want = ropeRef(x, shape, range(shape[0], offset), defaultFreq(shape[2]), layout);
          assert.ok(maxAbsDiff(got.data, want) < 1e-6, `${layout} ${shape} ${offset}: ${maxAbsDiff(got.data, want)}`);
        }
    });

    test('many 256 KiB blocks, some across the end of a batch entry: offset, positions, xPos, and out = x.data', () => {
      // [3, 700, 4, 32]: 512 B per position, 512 positions per block, so blocks end inside batch entries
      const [batch, seq, heads, hd] = [3, 700, 4, 32];
      const per = seq * heads * hd;
      const x = randomTensor(batch * per, 5);
      const entry = (data, b) => data.subarray(b * per, (b + 1) * per);
      const positions = range(seq).map((i) => (i * 37) % 1000);
      for (const layout of ['half', 'interleaved']) {
        const got = pe.rope({ data: x, shape: [batch, seq, heads, hd] }, { layout, offset: 5000 });
        const scattered = pe.rope({ data: x, shape: [batch, seq, heads, hd] }, { layout, positions });
        for (let b = 0; b < batch; b++) {
          const want = ropeRef(entry(x, b), [seq, heads, hd], range(seq, 5000), defaultFreq(hd), layout);
          assert.ok(maxAbsDiff(entry(got.data, b), want) < 1e-6, `${layout}, batch entry ${b}`);
          const wantScattered = ropeRef(entry(x, b), [seq, heads, hd], positions, defaultFreq(hd), layout);
          assert.ok(maxAbsDiff(entry(scattered.data, b), wantScattered) < 1e-6, `${layout}, positions, batch entry ${b}`);
        }
      }
      // xPos: every batch entry is scaled as one call of that entry alone (the centre is absolute); the
      // blocks start their angle anchors elsewhere, so the two agree to float rounding, not bit for bit
      const xp = { xpos: { scaleBase: 512 }, role: 'query', layout: 'interleaved', offset: 100 };
      const whole = pe.rope({ data: x, shape: [batch, seq, heads, hd] }, xp).data;
      for (let b = 0; b < batch; b++) {
        const alone = pe.rope({ data: Float32Array.from(entry(x, b)), shape: [seq, heads, hd] }, xp).data;
        assert.ok(maxAbsDiff(entry(whole, b), alone) < 1e-6, `xpos, batch entry ${b}: ${maxAbsDiff(entry(whole, b), alone)}`);
      }
      // in place: each block is read before the same block of out is written
      const copy = Float32Array.from(x);
      const inPlace = pe.rope({ data: copy, shape: [batch, seq, heads, hd] }, { offset: 5000, out: copy });
      assert.equal(inPlace.data, copy);
      assert.deepEqual(copy, pe.rope({ data: x, shape: [batch, seq, heads, hd] }, { offset: 5000 }).data);
    });

    test('half and interleaved are the same rotation up to the channel permutation [0,2,4,..,1,3,5,..]', () => {
      const d = 16;
      const perm = [...range(d / 2).map((i) => 2 * i), ...range(d / 2).map((i) => 2 * i + 1)];
      const x = randomTensor(5 * d);
      const xPermuted = Float32Array.from(range(5 * d), (k) => x[Math.floor(k / d) * d + perm[k % d]]);
      const inter = pe.rope({ data: x, shape: [5, d] }, { layout: 'interleaved', offset: 3 }).data;
      const half = pe.rope({ data: xPermuted, shape: [5, d] }, { layout: 'half', offset: 3 }).data;
      for (let r = 0; r < 5; r++) for (let k = 0; k < d; k++) assert.ok(Math.abs(half[r * d + k] - inter[r * d + perm[k]]) < 1e-6);
    });

    test('<R(m) q, R(n) k> depends only on m - n', () => {
      const q = randomTensor(32, 2);
      const k = randomTensor(32, 3);
      const score = (m, n) =>
        dot(pe.rope({ data: q, shape: [1, 32] }, { positions: [m] }).data, pe.rope({ data: k, shape: [1, 32] }, { positions: [n] }).data);
      for (const [m, n] of [
        [10, 3],
        [1007, 1000],
        [1e6 + 7, 1e6],
      ])
        assert.ok(Math.abs(score(m, n) - score(7, 0)) < 1e-4);
      assert.ok(Math.abs(score(10, 0) - score(7, 0)) > 1e-3);
    });

    test('partial rotary leaves the trailing channels untouched; explicit positions', () => {
      const x = randomTensor(3 * 2 * 12);
      const got = pe.rope({ data: x, shape: [3, 2, 12] }, { rotaryDim: 8, positions: [5, 0, 2.5] });
      const want = ropeRef(x, [3, 2, 12], [5, 0, 2.5], defaultFreq(8), 'half', 8);
      assert.ok(maxAbsDiff(got.data, want) < 1e-6);
      for (let r = 0; r < 6; r++) for (let c = 8; c < 12; c++) assert.equal(got.data[r * 12 + c], x[r * 12 + c]);
    });

    test('scalings: linear, ntk, dynamic, llama3 (Llama 3.1 config), yarn, longrope', () => {
      const close = (a, b, tol = 1e-6) => assert.ok(maxAbsDiff(a, b) <= tol * Math.max(1, ...b.map(Math.abs)), `${a} vs ${b}`);
      close(pe.ropeFrequencies({ dim: 16 }).invFreq, defaultFreq(16));
      close(
        pe.ropeFrequencies({ dim: 16, scaling: { type: 'linear', factor: 4 } }).invFreq,
        defaultFreq(16).map((w) => w / 4),
      );
      close(pe.ropeFrequencies({ dim: 16, scaling: { type: 'ntk', factor: 4 } }).invFreq, defaultFreq(16, 10000 * 4 ** (16 / 14)));
      const dyn = (s) => pe.ropeFrequencies({ dim: 16, scaling: { type: 'dynamic', factor: 2, originalMaxPositions: 2048, seqLength: s } }).invFreq;
      close(dyn(1000), defaultFreq(16));
      close(dyn(4096), defaultFreq(16, 10000 * ((2 * 4096) / 2048 - 1) ** (16 / 14)));
      const l3 = { type: 'llama3', factor: 8, lowFreqFactor: 1, highFreqFactor: 4, originalMaxPositions: 8192 };
      const f = pe.ropeFrequencies({ dim: 128, base: 500000, scaling: l3 });
      close(f.invFreq, llama3Ref(128, 500000, l3));
      assert.equal(f.attentionFactor, 1);
      const yarn = { type: 'yarn', factor: 4, originalMaxPositions: 4096 };
      const y = pe.ropeFrequencies({ dim: 64, scaling: yarn });
      const yr = yarnRef(64, 10000, yarn);
      close(y.invFreq, yr.inv);
      assert.ok(Math.abs(y.attentionFactor - yr.attentionFactor) < 1e-12);
      const shortFactor = range(8).map((i) => 1 + i / 8);
      const longFactor = range(8).map((i) => 2 + i);
      const lr = (seqLength) =>
        pe.ropeFrequencies({ dim: 16, scaling: { type: 'longrope', factor: 32, originalMaxPositions: 4096, shortFactor, longFactor, seqLength } });
      close(
        lr(100).invFreq,
        defaultFreq(16).map((w, i) => w / shortFactor[i]),
      );
      close(
        lr(8192).invFreq,
        defaultFreq(16).map((w, i) => w / longFactor[i]),
      );
      assert.ok(Math.abs(lr(100).attentionFactor - Math.sqrt(1 + Math.log(32) / Math.log(4096))) < 1e-12);
    });

    test('rope applies the scaled frequencies and the attention factor', () => {
      const yarn = { type: 'yarn', factor: 4, originalMaxPositions: 4096 };
      const x = randomTensor(3 * 64);
      const yr = yarnRef(64, 10000, yarn);
      const got = pe.rope({ data: x, shape: [3, 64] }, { scaling: yarn, offset: 10000 });
      assert.ok(maxAbsDiff(got.data, ropeRef(x, [3, 1, 64], [10000, 10001, 10002], yr.inv, 'half', 64, yr.attentionFactor)) < 2e-6);
    });
  });

  describe(`ALiBi, T5 buckets, Shaw (${pe.backend})`, () => {
    test("ALiBi slopes follow the paper's rule for 1..64 heads", () => {
      assert.deepEqual(Array.from(pe.alibiSlopes(8)), [1 / 2, 1 / 4, 1 / 8, 1 / 16, 1 / 32, 1 / 64, 1 / 128, 1 / 256]);
      for (let h = 1; h <= 64; h++) assert.ok(maxAbsDiff(pe.alibiSlopes(h), alibiRef(h)) < 1e-7 * 1, `heads ${h}`);
    });

    test('ALiBi bias: causal -m (i - j), symmetric -m |i - j|, queries as the last positions', () => {
      const m = pe.alibiSlopes(3);
      const causal = pe.alibiBias({ numHeads: 3, queryLength: 2, keyLength: 5 });
      assert.deepEqual(causal.shape, [3, 2, 5]);
      const sym = pe.alibiBias({ numHeads: 3, queryLength: 4, symmetric: true });
      for (let h = 0; h < 3; h++) {
        for (let i = 0; i < 2; i++) for (let j = 0; j < 5; j++) assert.ok(Math.abs(causal.data[(h * 2 + i) * 5 + j] - -m[h] * (i + 3 - j)) < 1e-6);
        for (let i = 0; i < 4; i++) for (let j = 0; j < 4; j++) assert.ok(Math.abs(sym.data[(h * 4 + i) * 4 + j] - -m[h] * Math.abs(i - j)) < 1e-6);
      }
    });

    test("ALiBi with an attention mask: BLOOM's build_alibi_tensor positions, padded keys masked", () => {
      // BLOOM (transformers models/bloom build_alibi_tensor): alibi[b, h, j] = slope_h * ((cumsum(mask) - 1) * mask)[b, j],
      // added to every query row; softmax ignores a per-row constant, so -m (p_i - p_j) is the same bias
      const mask = [
        [0, 0, 1, 1, 1, 1],
        [1, 1, 1, 1, 1, 1],
        [0, 1, 1, 0, 1, 1],
      ];
      const heads = 4;
      const slopes = alibiRef(heads);
      const keyPositions = mask.map((row) => {
        let count = 0;
        return row.map((m) => ((count += m) - 1) * m);
      });
      for (const attentionMask of [
        mask,
        { data: BigInt64Array.from(mask.flat(), BigInt), dims: [3, 6] },
        { data: Uint8Array.from(mask.flat()), shape: [3, 6] },
      ]) {
        const got = pe.alibiBias({ numHeads: heads, attentionMask, queryLength: 2 });
        assert.deepEqual(got.shape, [3, heads, 2, 6]);
        for (let b = 0; b < 3; b++)
          for (let h = 0; h < heads; h++)
            for (let i = 0; i < 2; i++) {
              const pi = keyPositions[b][4 + i]; // the queries are the last two tokens
              for (let j = 0; j < 6; j++) {
                const v = got.data[((b * heads + h) * 2 + i) * 6 + j];
                if (!mask[b][j]) assert.equal(v, -Infinity);
                else assert.ok(Math.abs(v + slopes[h] * pi - slopes[h] * keyPositions[b][j]) < 1e-6, `${b} ${h} ${i} ${j}`);
              }
            }
      }
      // plugged into attention, the weights are BLOOM's softmax(q k / sqrt(d) + alibi) over the real keys
      const bias = pe.alibiBias({ numHeads: heads, attentionMask: mask });
      const q = randomTensor(3 * 6 * heads * 8, 4);
      const k = randomTensor(3 * 6 * heads * 8, 5);
      const { weights } = pe.attention({
        q: { data: q, shape: [3, 6, heads, 8] },
        k: { data: k, shape: [3, 6, heads, 8] },
        v: { data: k, shape: [3, 6, heads, 8] },
        bias,
      });
      for (let b = 0; b < 3; b++)
        for (let h = 0; h < heads; h++) {
          const i = 5;
          const logits = range(6).map((j) => {
            if (!mask[b][j]) return -Infinity;
            let s = 0;
            for (let c = 0; c < 8; c++) s += q[((b * 6 + i) * heads + h) * 8 + c] * k[((b * 6 + j) * heads + h) * 8 + c];
            return s / Math.sqrt(8) + slopes[h] * keyPositions[b][j];
          });
          const m = Math.max(...logits);
          const z = logits.reduce((a, l) => a + Math.exp(l - m), 0);
          for (let j = 0; j < 6; j++) assert.ok(Math.abs(weights.data[((b * heads + h) * 6 + i) * 6 + j] - Math.exp(logits[j] - m) / z) < 1e-6);
        }
      assert.throws(
        () => pe.alibiBias({ numHeads: 2, attentionMask: [[1, 2]] }),
        (e) => e instanceof RangeError && /attentionMask\[1\]/.test(e.message),
      );
      assert.throws(() => pe.alibiBias({ numHeads: 2, attentionMask: [[1, 1]], keyLength: 3 }), RangeError);
    });

    test('T5 buckets of a relative_position tensor, any shape, as T5 computes them with a cache', () => {
      // with 3 cached keys and 2 new queries: relative_position = memory_position - context_position
      const rel = [];
      for (let i = 0; i < 2; i++) for (let j = 0; j < 5; j++) rel.push(j - (i + 3));
      const got = pe.t5Buckets({ relativePositions: { data: rel, shape: [2, 5] } });
      assert.deepEqual(got.shape, [2, 5]);
      assert.deepEqual(
        Array.from(got.data),
        rel.map((r) => t5Ref(r, true)),
      );
      assert.deepEqual(got.data, pe.t5Buckets({ queryLength: 2, keyLength: 5 }).data);
      const wide = range(601).map((r) => r - 300);
      for (const bidirectional of [true, false]) {
        const b = pe.t5Buckets({ relativePositions: BigInt64Array.from(wide, BigInt), bidirectional });
        assert.deepEqual(b.shape, [601]);
        assert.deepEqual(
          Array.from(b.data),
          wide.map((r) => t5Ref(r, bidirectional)),
        );
      }
      assert.throws(() => pe.t5Buckets({ relativePositions: [1.5] }), RangeError);
      assert.throws(() => pe.t5Buckets({ relativePositions: [1], queryLength: 1 }), TypeError);
    });

    test('T5 buckets for every rel in -300..300, both modes, exact at the log boundaries', () => {
      for (const bidirectional of [true, false]) {
        const t = pe.t5Buckets({ queryLength: 1, keyLength: 601, bidirectional });
        // query at position 600 (the last), keys 0..600: rel = j - 600 covers -600..0; use a second call for positives
        const neg = pe.t5Buckets({ queryLength: 301, keyLength: 301, bidirectional });
        for (let rel = -300; rel <= 300; rel++) {
          const i = rel < 0 ? 300 : 0;
          const j = i + rel;
          assert.equal(neg.data[i * 301 + j], t5Ref(rel, bidirectional), `rel ${rel} bidirectional ${bidirectional}`);
        }
        assert.equal(t.shape[1], 601);
      }
      // the boundaries where the log ratio is an integer
      const b = pe.t5Buckets({ queryLength: 65, keyLength: 65 });
      for (const rel of [16, 32, 64]) assert.equal(b.data[rel], t5Ref(rel, true));
    });

    test('Shaw relative positions: clip(j - i, -k, k) + k', () => {
      const r = pe.relativePositions({ length: 6, maxRelative: 2 });
      for (let i = 0; i < 6; i++) for (let j = 0; j < 6; j++) assert.equal(r.data[i * 6 + j], Math.min(2, Math.max(-2, j - i)) + 2);
    });
  });
}

describe('SIMD and scalar agree on rope', () => {
  test('to float rounding', () => {
    const x = { data: randomTensor(64 * 4 * 32), shape: [64, 4, 32] };
    assert.ok(maxAbsDiff(simd.rope(x, { offset: 99 }).data, scalar.rope(x, { offset: 99 }).data) < 1e-6);
  });
});
