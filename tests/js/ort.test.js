// ONNX Runtime Web interop: posenc gives the answers of the runtime that models are deployed with.
//
// Each case builds a one-node (or, for the pipeline, three-node) ONNX model with the builder of
// fixtures/onnx.js and runs it in onnxruntime-web (wasm backend, one thread, SIMD), then checks two
// things, each in its own test:
//   1. ONNX Runtime against a float64 computation written here from the formulas (RoPE with the cos/sin
//      caches fed to the model; softmax attention in float64), so that ORT itself is a trustworthy
//      reference for the shapes, layouts and attributes used;
//   2. posenc (both backends: load() and load({ simd: false })) against ONNX Runtime's output.
// Every comparison allows 1e-6 (max absolute difference). Inputs are in [-0.5, 0.5).
//
// The semantics of the operators used here, from onnxruntime's CPU kernels (which the wasm build runs):
// - com.microsoft.RotaryEmbedding (contrib_ops/cpu/bert/rotary_embedding.cc): input [batch, seq, hidden]
//   or [batch, heads, seq, headDim]; position_ids int64, either one value p0 (token s sits at p0 + s)
//   or [batch, seq]; cos_cache/sin_cache [maxPos, rotaryDim/2], row = position; interleaved = 1 pairs
//   channels (2i, 2i+1), 0 pairs (i, i + rotaryDim/2); channels past rotary_embedding_dim are copied.
// - RotaryEmbedding-23 (core/providers/cpu/llm/rotary_embedding.cc): X [batch, heads, seq, headDim] or
//   [batch, seq, hidden] (num_heads needed); cos/sin [maxPos, rotaryDim/2] with position_ids [batch,
//   seq], or, without position_ids, caches already gathered: [batch, seq, rotaryDim/2].
// - com.microsoft.MultiHeadAttention: query [B, S, N·d], key/value [B, L, N·d] or BNSH [B, N, L, d];
//   attention_bias [B or 1, N or 1, S, T] added to the scaled logits; unidirectional masks key
//   t > P + s with a past of P keys given as past_key/past_value (bottom-right, as posenc's causal),
//   and is used here with S = L only: without a past and S < L, ORT 1.30 masks the first rows top-left
//   and lets the last row see every key (measured with S = 3, L = 5), neither alignment.
// - com.microsoft.GroupQueryAttention: query [B, S, N·d], key/value [B, S, Nkv·d], past_key/value
//   BNSH [B, Nkv, P, d], seqlens_k[b] = (keys of row b) − 1, total_sequence_length; always causal;
//   query s of row b sits at position seqlens_k[b] + 1 − S + s (s for the first prompt), which is also
//   the position do_rotary rotates q and k at (rows are right-padded: a left-padded batch cannot be
//   expressed); cos/sin [≥ total, rotaryDim/2], rotaryDim/2 a multiple of 8 and ≤ d/2; d a multiple of
//   8 (16 with do_rotary); present_key/present_value are required outputs on CPU.
// - Attention-23 (core/providers/cpu/llm/attention.cc): Q/K/V [B, N, S, d] or [B, S, N·d] with
//   q_num_heads/kv_num_heads; query head h reads kv head ⌊h·Nkv/N⌋; attn_mask bool (true = attend) or
//   float (added after scaling), broadcast to [B, N, S, T]; is_causal masks t > P + s (P = the past's
//   length: top-left when there is no past and S < T, so the past goes in past_key/past_value for
//   bottom-right); scale defaults to 1/√d. A false in a bool mask adds the lowest float, not −∞: a row
//   with every key masked gets uniform weights in ORT (zeros in posenc), so no case here has one.
import assert from 'node:assert/strict';
import { before, describe, test } from 'node:test';
import * as ort from 'onnxruntime-web';
import { load } from 'posenc';
import { CONFIGS, hfRopeParameters } from './fixtures/hf-configs.js';
import { input, model, oneNode, output } from './fixtures/onnx.js';

ort.env.wasm.numThreads = 1;
ort.env.wasm.simd = true;

const TOLERANCE = 1e-6;
let backends;
before(async () => {
  backends = [await load(), await load({ simd: false })];
});

// ---- data, layouts, comparisons ---------------------------------------------------------------------

// n deterministic float32 values in [-0.5, 0.5) (a 32-bit LCG; `seed` picks the stream).
function values(n, seed) {
  let s = (seed * 2654435761 + 12345) >>> 0;
  const out = new Float32Array(n);
  for (let i = 0; i < n; i++) {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    out[i] = s / 2 ** 32 - 0.5;
  }
  return out;
}
const f32 = (data, dims) => new ort.Tensor('float32', data, dims);
const i64 = (list, dims) =>
  new ort.Tensor(
    'int64',
    BigInt64Array.from(list, (p) => BigInt(p)),
    dims,
  );
const i32 = (list, dims) => new ort.Tensor('int32', Int32Array.from(list), dims);
const range = (n, start = 0) => Array.from({ length: n }, (_, i) => start + i);
const size = (dims) => dims.reduce((a, b) => a * b, 1);

// Offsets of a head's first channel: (b, h, s) -> index, for [B, S, H, D] ('bshd') and [B, H, S, D] ('bhsd').
const at = {
  bshd: (S, H, D) => (b, h, s) => ((b * S + s) * H + h) * D,
  bhsd: (S, H, D) => (b, h, s) => ((b * H + h) * S + s) * D,
};

// [B, X, Y, D] -> [B, Y, X, D] (bshd <-> bhsd), the test's own glue between ORT's and posenc's layouts.
function swap12(data, [B, X, Y, D]) {
  const out = new Float32Array(data.length);
  for (let b = 0; b < B; b++)
    for (let x = 0; x < X; x++)
      for (let y = 0; y < Y; y++) out.set(data.subarray(((b * X + x) * Y + y) * D, ((b * X + x) * Y + y + 1) * D), ((b * Y + y) * X + x) * D);
  return out;
}

// [B, N, P, d] past (BNSH) and [B, S, N, d] new rows -> [B, P + S, N, d] (bshd).
function concatKeys(past, fresh, [B, N, P, d], S) {
  const out = new Float32Array(B * (P + S) * N * d);
  const toRow = at.bshd(P + S, N, d);
  for (let b = 0; b < B; b++)
    for (let n = 0; n < N; n++) {
      for (let j = 0; j < P; j++) out.set(past.subarray(((b * N + n) * P + j) * d, ((b * N + n) * P + j + 1) * d), toRow(b, n, j));
      for (let s = 0; s < S; s++) out.set(fresh.subarray(((b * S + s) * N + n) * d, ((b * S + s) * N + n + 1) * d), toRow(b, n, P + s));
    }
  return out;
}

function close(actual, expected, what, rows) {
  assert.equal(actual.length, expected.length, `${what}: ${actual.length} values, expected ${expected.length}`);
  // rows: optional predicate over the flat index, for outputs where only some rows are defined
  let worst = 0;
  let where = -1;
  for (let i = 0; i < actual.length; i++) {
    if (rows && !rows(i)) continue;
    const e = Math.abs(actual[i] - expected[i]);
    if (!(e <= worst)) [worst, where] = [e, i];
  }
  assert.ok(worst <= TOLERANCE, `${what}: max |difference| ${worst} at index ${where} (${actual[where]} vs ${expected[where]}) > ${TOLERANCE}`);
}

// ---- float64 references -----------------------------------------------------------------------------

// cos/sin caches [positions.length, dim/2] from inverse frequencies, in float64, rounded once to float32;
// the attention factor multiplies both (as transformers applies it).
function cacheRef(positions, invFreq, attentionFactor = 1) {
  const half = invFreq.length;
  const cos = new Float32Array(positions.length * half);
  const sin = new Float32Array(positions.length * half);
  positions.forEach((p, r) => {
    for (let i = 0; i < half; i++) {
      cos[r * half + i] = Math.cos(p * invFreq[i]) * attentionFactor;
      sin[r * half + i] = Math.sin(p * invFreq[i]) * attentionFactor;
    }
  });
  return { cos, sin, half };
}
const defaultInvFreq = (dim, base) => hfRopeParameters({ head_dim: dim, rope_theta: base }).invFreq;

// RoPE in float64 with the caches a model is fed: x viewed as [B, S, N, H] through `offset(b, n, s)`,
// the first rotaryDim channels of each head rotated with cache row `row(b, s)`.
function ropeRef({ x, B, S, N, H, axes, rotaryDim = H, interleaved, cache, row }) {
  const offset = at[axes](S, N, H);
  const out = Float64Array.from(x);
  const half = rotaryDim / 2;
  for (let b = 0; b < B; b++)
    for (let s = 0; s < S; s++) {
      const r = row(b, s);
      for (let n = 0; n < N; n++) {
        const o = offset(b, n, s);
        for (let i = 0; i < half; i++) {
          const [u, w] = interleaved ? [o + 2 * i, o + 2 * i + 1] : [o + i, o + i + half];
          const c = cache.cos[r * half + i];
          const sn = cache.sin[r * half + i];
          out[u] = x[u] * c - x[w] * sn;
          out[w] = x[w] * c + x[u] * sn;
        }
      }
    }
  return out;
}

// softmax(q kᵀ · scale + bias) v in float64. q/k/v are read through offset functions (b, h, s) -> index;
// query head h reads key/value head ⌊h·Nkv/N⌋; `visible(b, h, i, j)` masks; `bias(b, h, i, j)` adds.
// The output is written through `outAt(b, h, i)`; a row that sees no key stays zero.
function attentionRef({ q, k, v, B, Sq, Sk, N, Nkv = N, d, qAt, kAt, vAt, outAt, scale = 1 / Math.sqrt(d), bias, visible }) {
  const out = new Float64Array(B * Sq * N * d);
  const logits = new Float64Array(Sk);
  for (let b = 0; b < B; b++)
    for (let h = 0; h < N; h++) {
      const hk = Math.floor((h * Nkv) / N);
      for (let i = 0; i < Sq; i++) {
        const qo = qAt(b, h, i);
        let max = -Infinity;
        for (let j = 0; j < Sk; j++) {
          if (visible && !visible(b, h, i, j)) {
            logits[j] = -Infinity;
            continue;
          }
          const ko = kAt(b, hk, j);
          let dot = 0;
          for (let c = 0; c < d; c++) dot += q[qo + c] * k[ko + c];
          logits[j] = dot * scale + (bias ? bias(b, h, i, j) : 0);
          max = Math.max(max, logits[j]);
        }
        if (max === -Infinity) continue;
        let sum = 0;
        for (let j = 0; j < Sk; j++) sum += logits[j] = Math.exp(logits[j] - max);
        const o = outAt(b, h, i);
        for (let j = 0; j < Sk; j++) {
          if (!logits[j]) continue;
          const [w, vo] = [logits[j] / sum, vAt(b, hk, j)];
          for (let c = 0; c < d; c++) out[o + c] += w * v[vo + c];
        }
      }
    }
  return out;
}

// ---- ONNX Runtime -----------------------------------------------------------------------------------
const sessions = new Map();
async function runOrt(bytes, feeds) {
  const key = Buffer.from(bytes).toString('base64');
  if (!sessions.has(key)) sessions.set(key, await ort.InferenceSession.create(bytes, { executionProviders: ['wasm'] }));
  return sessions.get(key).run(feeds);
}

// A case: { model (bytes), feeds, out (output name), reference() -> Float64Array in ORT's output layout,
// posenc(pe) -> Float32Array (or a promise of one) in the same layout, rows (optional predicate over
// output indices, for outputs defined on some rows only) }. Two tests per case.
function check(name, make) {
  let c;
  let ortOut;
  const setup = async () => {
    c ??= make();
    ortOut ??= (await runOrt(c.model, c.feeds))[c.out ?? 'y'].data;
    return c;
  };
  test(`${name}: ONNX Runtime agrees with the float64 formulas`, async () => {
    const c = await setup();
    close(ortOut, c.reference(), `ONNX Runtime, ${name}`, c.rows);
  });
  test(`${name}: posenc agrees with ONNX Runtime`, async () => {
    const c = await setup();
    for (const pe of backends) close(await c.posenc(pe), ortOut, `posenc ${pe.backend}, ${name}`, c.rows);
  });
}

// ---- RoPE models ------------------------------------------------------------------------------------

// A KV cache of P past positions, [B, heads, P, d] of seeded values, fed as past_key and past_value
// at input `slot` (empty names fill the optional inputs before it), with the present outputs: ORT's
// CPU kernels read the past only when the present is requested.
function addPast({ feeds, inputs, outputs }, { B, heads, P, d, seed, slot }) {
  const dims = [B, heads, P, d];
  const pastK = values(size(dims), seed + 4);
  const pastV = values(size(dims), seed + 5);
  Object.assign(feeds, { past_key: f32(pastK, dims), past_value: f32(pastV, dims) });
  while (inputs.length < slot) inputs.push('');
  inputs.push('past_key', 'past_value');
  outputs.push('present_key', 'present_value');
  return { pastK, pastV };
}

// The reference of a RoPE model built below: x rotated in float64 with cache row row(b, s).
const ropeReference = (m, row) => () => ropeRef({ ...m, axes: m.fourD ? 'bhsd' : 'bshd', row });

// com.microsoft.RotaryEmbedding: input [B, S, N·H] (or [B, N, S, H] with fourD), position_ids
// [B, S] (or one value, `start`), caches [maxPos, rotaryDim/2].
function contribRope({ B, S, N, H, rotaryDim = H, interleaved = 0, positions, start, maxPos, cache, fourD = false, seed = 1 }) {
  const dims = fourD ? [B, N, S, H] : [B, S, N * H];
  const x = values(size(dims), seed);
  const half = rotaryDim / 2;
  cache ??= cacheRef(range(maxPos), defaultInvFreq(rotaryDim, 10000));
  const pos = start === undefined ? i64(positions.flat(), [B, S]) : i64([start], [1]);
  return {
    x,
    dims,
    model: oneNode({
      op: 'RotaryEmbedding',
      domain: 'com.microsoft',
      inputs: ['x', 'position_ids', 'cos_cache', 'sin_cache'],
      outputs: ['y'],
      attributes: { interleaved, num_heads: N, rotary_embedding_dim: rotaryDim === H ? undefined : rotaryDim },
      types: { position_ids: 'int64' },
    }),
    feeds: { x: f32(x, dims), position_ids: pos, cos_cache: f32(cache.cos, [maxPos, half]), sin_cache: f32(cache.sin, [maxPos, half]) },
    reference: ropeReference({ x, B, S, N, H, rotaryDim, interleaved, cache, fourD }, (b, s) => (start === undefined ? positions[b][s] : start + s)),
  };
}

// RotaryEmbedding-23: X [B, N, S, H] (fourD) or [B, S, N·H]; caches [maxPos, rotaryDim/2] with
// position_ids [B, S], or gathered [B, S, rotaryDim/2] without (gathered: true).
function onnxRope({ B, S, N, H, rotaryDim = H, interleaved = 0, positions, maxPos, cache, fourD = true, gathered = false, seed = 2 }) {
  const dims = fourD ? [B, N, S, H] : [B, S, N * H];
  const x = values(size(dims), seed);
  const half = rotaryDim / 2;
  cache ??= gathered ? cacheRef(positions.flat(), defaultInvFreq(rotaryDim, 10000)) : cacheRef(range(maxPos), defaultInvFreq(rotaryDim, 10000));
  const cacheDims = gathered ? [B, S, half] : [maxPos, half];
  const feeds = { x: f32(x, dims), cos_cache: f32(cache.cos, cacheDims), sin_cache: f32(cache.sin, cacheDims) };
  if (!gathered) feeds.position_ids = i64(positions.flat(), [B, S]);
  return {
    x,
    dims,
    model: oneNode({
      op: 'RotaryEmbedding',
      inputs: ['x', 'cos_cache', 'sin_cache', gathered ? '' : 'position_ids'],
      outputs: ['y'],
      attributes: {
        interleaved,
        num_heads: fourD ? undefined : N,
        rotary_embedding_dim: rotaryDim === H ? undefined : rotaryDim,
      },
      types: { position_ids: 'int64' },
    }),
    feeds,
    reference: ropeReference({ x, B, S, N, H, rotaryDim, interleaved, cache, fourD }, (b, s) => (gathered ? b * S + s : positions[b][s])),
  };
}

const layoutOf = (interleaved) => (interleaved ? 'interleaved' : 'half');

describe('com.microsoft.RotaryEmbedding', () => {
  check('half layout, [batch, seq, hidden], one starting position (position_ids of one value)', () => {
    const m = contribRope({ B: 2, S: 5, N: 3, H: 16, start: 7, maxPos: 32 });
    return { ...m, posenc: (pe) => pe.rope({ data: m.x, shape: [2, 5, 3, 16] }, { offset: 7 }).data };
  });
  check('interleaved layout, one row of position ids', () => {
    const positions = [[3, 9, 10, 11, 30, 2]];
    const m = contribRope({ B: 1, S: 6, N: 2, H: 32, interleaved: 1, positions, maxPos: 40 });
    return { ...m, posenc: (pe) => pe.rope({ data: m.x, shape: [1, 6, 2, 32] }, { positions: positions[0], layout: 'interleaved' }).data };
  });
  for (const interleaved of [0, 1])
    check(`partial rotary (rotary_embedding_dim 16 of 40), ${layoutOf(interleaved)} layout`, () => {
      const positions = [[0, 1, 2, 17]];
      const m = contribRope({ B: 1, S: 4, N: 2, H: 40, rotaryDim: 16, interleaved, positions, maxPos: 20, seed: 3 + interleaved });
      return {
        ...m,
        posenc: (pe) =>
          pe.rope({ data: m.x, shape: [1, 4, 2, 40] }, { positions: Int32Array.from(positions[0]), rotaryDim: 16, layout: layoutOf(interleaved) })
            .data,
      };
    });
  check('per-row position ids [batch, seq]', () => {
    const positions = [range(4, 0), range(4, 12), [5, 5, 6, 9]];
    const m = contribRope({ B: 3, S: 4, N: 2, H: 8, positions, maxPos: 16, seed: 5 });
    return { ...m, posenc: (pe) => pe.rope({ data: m.x, shape: [3, 4, 2, 8] }, { positions: m.feeds.position_ids }).data };
  });
  for (const interleaved of [0, 1])
    check(`4-D input [batch, heads, seq, headDim] (axes 'bhsd'), ${layoutOf(interleaved)} layout`, () => {
      const positions = [range(5, 3), range(5, 0)];
      const m = contribRope({ B: 2, S: 5, N: 3, H: 16, interleaved, positions, maxPos: 10, fourD: true, seed: 6 + interleaved });
      return {
        ...m,
        posenc: (pe) => pe.rope({ data: m.x, shape: m.dims }, { axes: 'bhsd', positions: m.feeds.position_ids, layout: layoutOf(interleaved) }).data,
      };
    });
  check("batch 1 as rank 3 [heads, seq, headDim] (axes 'hsd')", () => {
    const positions = [[2, 3, 4, 9, 1]];
    const m = contribRope({ B: 1, S: 5, N: 4, H: 16, positions, maxPos: 10, fourD: true, seed: 8 });
    return {
      ...m,
      posenc: (pe) => {
        const r = pe.rope({ data: m.x, shape: [4, 5, 16] }, { axes: 'hsd', positions: positions[0] });
        assert.deepEqual(r.shape, [4, 5, 16]);
        return r.data;
      },
    };
  });
});

describe('RotaryEmbedding (opset 23)', () => {
  for (const interleaved of [0, 1])
    check(`X [batch, heads, seq, headDim] with position_ids [batch, seq] (axes 'bhsd'), ${layoutOf(interleaved)} layout`, () => {
      const positions = [range(6, 0), range(6, 20)];
      const m = onnxRope({ B: 2, S: 6, N: 2, H: 32, interleaved, positions, maxPos: 32, seed: 10 + interleaved });
      return {
        ...m,
        posenc: (pe) => pe.rope({ data: m.x, shape: m.dims }, { axes: 'bhsd', positions: m.feeds.position_ids, layout: layoutOf(interleaved) }).data,
      };
    });
  check('X [batch, seq, hidden] with num_heads, partial rotary 24 of 48, interleaved', () => {
    const positions = [[4, 0, 8, 15, 16]];
    const m = onnxRope({ B: 1, S: 5, N: 3, H: 48, rotaryDim: 24, interleaved: 1, positions, maxPos: 17, fourD: false, seed: 12 });
    return {
      ...m,
      posenc: (pe) =>
        pe.rope({ data: m.x, shape: [1, 5, 3, 48] }, { positions: Float64Array.from(positions[0]), rotaryDim: 24, layout: 'interleaved' }).data,
    };
  });
  check('caches already gathered per token [batch, seq, rotaryDim/2] (no position_ids), from pe.ropeCache', () => {
    const positions = [range(4, 100), [0, 50, 51, 52]];
    const m = onnxRope({ B: 2, S: 4, N: 2, H: 16, positions, gathered: true, seed: 13 });
    return {
      ...m,
      async posenc(pe) {
        // posenc's own caches for the 8 tokens, [8, 8], fed to the same model as [2, 4, 8]
        const { cos, sin } = pe.ropeCache({ base: 10000, rotaryDim: 16, positions: positions.flat() });
        assert.deepEqual(
          [cos.shape, sin.shape],
          [
            [8, 8],
            [8, 8],
          ],
        );
        close(cos.data, m.feeds.cos_cache.data, `posenc ${pe.backend}, ropeCache cos`);
        close(sin.data, m.feeds.sin_cache.data, `posenc ${pe.backend}, ropeCache sin`);
        const fed = await runOrt(m.model, { ...m.feeds, cos_cache: f32(cos.data, [2, 4, 8]), sin_cache: f32(sin.data, [2, 4, 8]) });
        close(fed.y.data, m.reference(), `ONNX Runtime fed posenc ${pe.backend}'s caches`);
        return pe.rope(
          { data: m.x, shape: m.dims },
          { axes: 'bhsd', positions: { data: BigInt64Array.from(positions.flat(), BigInt), shape: [2, 4] } },
        ).data;
      },
    };
  });
});

// ---- attention models -------------------------------------------------------------------------------

// A bias tensor's reader with ORT's broadcasting of size-1 batch and head dimensions: [B|1, N|1, S, T].
const biasReader =
  (data, [b0, b1, S, T]) =>
  (b, h, i, j) =>
    data[(((b0 === 1 ? 0 : b) * b1 + (b1 === 1 ? 0 : h)) * S + i) * T + j];

// [B, N, P, d] and [B, N, S, d] -> [B, N, P + S, d] (both BNSH).
function concatBHSD(past, fresh, [B, N, P, d], S) {
  const out = new Float32Array(B * N * (P + S) * d);
  for (let c = 0; c < B * N; c++) {
    out.set(past.subarray(c * P * d, (c + 1) * P * d), c * (P + S) * d);
    out.set(fresh.subarray(c * S * d, (c + 1) * S * d), (c * (P + S) + P) * d);
  }
  return out;
}

describe('com.microsoft.MultiHeadAttention', () => {
  // query [B, S, N·d]; key/value [B, L, N·d] or BNSH [B, N, L, d] (kvBNSH); optional attention_bias
  // of `biasDims`; unidirectional with a past of P keys given as past_key/past_value.
  function mha({ B = 2, S = 4, L = S, N = 3, d = 16, kvBNSH = false, biasDims, unidirectional = 0, P = 0, seed = 20 }) {
    const q = values(B * S * N * d, seed);
    const k = values(B * L * N * d, seed + 1);
    const v = values(B * L * N * d, seed + 2);
    const kvDims = kvBNSH ? [B, N, L, d] : [B, L, N * d];
    const feeds = { query: f32(q, [B, S, N * d]), key: f32(k, kvDims), value: f32(v, kvDims) };
    const inputs = ['query', 'key', 'value'];
    const outputs = ['y'];
    let bias;
    if (biasDims) {
      bias = values(size(biasDims), seed + 3);
      feeds.attention_bias = f32(bias, biasDims);
      inputs.push('', '', 'attention_bias');
    }
    const { pastK, pastV } = P ? addPast({ feeds, inputs, outputs }, { B, heads: N, P, d, seed, slot: 6 }) : {};
    // the keys and values attended to, as [B, T, N, d]
    const kAll = P ? concatKeys(pastK, k, [B, N, P, d], L) : kvBNSH ? swap12(k, [B, N, L, d]) : k;
    const vAll = P ? concatKeys(pastV, v, [B, N, P, d], L) : kvBNSH ? swap12(v, [B, N, L, d]) : v;
    const T = P + L;
    return {
      q,
      k,
      v,
      kAll,
      vAll,
      bias,
      T,
      model: oneNode({ op: 'MultiHeadAttention', domain: 'com.microsoft', inputs, outputs, attributes: { num_heads: N, unidirectional } }),
      feeds,
      reference: () =>
        attentionRef({
          q,
          k: kAll,
          v: vAll,
          B,
          Sq: S,
          Sk: T,
          N,
          d,
          qAt: at.bshd(S, N, d),
          kAt: at.bshd(T, N, d),
          vAt: at.bshd(T, N, d),
          outAt: at.bshd(S, N, d),
          bias: bias && biasReader(bias, biasDims),
          visible: unidirectional ? (b, h, i, j) => j <= P + i : undefined,
        }),
    };
  }
  const t4 = (data, dims) => ({ data, shape: dims });

  check('query [batch, seq, hidden], key/value of another length', () => {
    const m = mha({ S: 3, L: 7 });
    return { ...m, posenc: (pe) => pe.attention({ q: t4(m.q, [2, 3, 3, 16]), k: t4(m.k, [2, 7, 3, 16]), v: t4(m.v, [2, 7, 3, 16]) }).output.data };
  });
  check("key/value BNSH [batch, heads, seq, d] (axes 'bhsd')", () => {
    const m = mha({ S: 4, L: 6, kvBNSH: true, seed: 30 });
    return {
      ...m,
      posenc: (pe) => {
        const q = t4(swap12(m.q, [2, 4, 3, 16]), [2, 3, 4, 16]);
        const r = pe.attention({ q, k: t4(m.k, [2, 3, 6, 16]), v: t4(m.v, [2, 3, 6, 16]), axes: 'bhsd', weights: false });
        assert.deepEqual(r.output.shape, [2, 3, 4, 16]);
        return swap12(r.output.data, [2, 3, 4, 16]);
      },
    };
  });
  for (const biasDims of [
    [2, 3, 4, 5],
    [1, 3, 4, 5],
    [2, 1, 4, 5],
  ])
    check(`attention_bias [${biasDims}]`, () => {
      const m = mha({ S: 4, L: 5, biasDims, seed: 40 + biasDims[0] + biasDims[1] });
      return {
        ...m,
        posenc: (pe) =>
          pe.attention({ q: t4(m.q, [2, 4, 3, 16]), k: t4(m.k, [2, 5, 3, 16]), v: t4(m.v, [2, 5, 3, 16]), bias: t4(m.bias, biasDims) }).output.data,
      };
    });
  check('unidirectional (causal), seq = kv seq', () => {
    const m = mha({ S: 6, unidirectional: 1, seed: 50 });
    return {
      ...m,
      posenc: (pe) => pe.attention({ q: t4(m.q, [2, 6, 3, 16]), k: t4(m.k, [2, 6, 3, 16]), v: t4(m.v, [2, 6, 3, 16]), causal: true }).output.data,
    };
  });
  check('unidirectional with past_key/past_value: 3 queries after 5 cached keys (query i sees keys j <= i + 5)', () => {
    const m = mha({ S: 3, P: 5, unidirectional: 1, seed: 60 });
    return {
      ...m,
      posenc: (pe) =>
        pe.attention({ q: t4(m.q, [2, 3, 3, 16]), k: t4(m.kAll, [2, 8, 3, 16]), v: t4(m.vAll, [2, 8, 3, 16]), causal: true }).output.data,
    };
  });
});

// com.microsoft.GroupQueryAttention: query [B, S, N·d], key/value [B, S, Nkv·d], an optional past of P
// keys per row (BNSH), seqlens_k[b] = pastLens[b] + S − 1, optional rotary (do_rotary) with caches.
function gqa({ B, S, N = 8, Nkv = 2, d = 16, P = 0, pastLens, rotary, interleaved = 0, cache, seed = 70 }) {
  pastLens ??= Array(B).fill(P);
  const q = values(B * S * N * d, seed);
  const k = values(B * S * Nkv * d, seed + 1);
  const v = values(B * S * Nkv * d, seed + 2);
  const total = Math.max(...pastLens) + S;
  const feeds = {
    query: f32(q, [B, S, N * d]),
    key: f32(k, [B, S, Nkv * d]),
    value: f32(v, [B, S, Nkv * d]),
    seqlens_k: i32(
      pastLens.map((p) => p + S - 1),
      [B],
    ),
    total_sequence_length: i32([total], [1]),
  };
  let pastK = new Float32Array(0);
  let pastV = new Float32Array(0);
  if (P) {
    pastK = values(B * Nkv * P * d, seed + 3);
    pastV = values(B * Nkv * P * d, seed + 4);
    Object.assign(feeds, { past_key: f32(pastK, [B, Nkv, P, d]), past_value: f32(pastV, [B, Nkv, P, d]) });
  }
  if (rotary) {
    cache ??= cacheRef(range(total), defaultInvFreq(d, rotary.base ?? 10000));
    feeds.cos_cache = f32(cache.cos, [cache.cos.length / cache.half, cache.half]);
    feeds.sin_cache = f32(cache.sin, [cache.sin.length / cache.half, cache.half]);
  }
  // Keys and values as [B, T, Nkv, d], T = the longest row: row b holds its pastLens[b] cached keys, then
  // its S new ones (rotated at positions pastLens[b] + s with rotary); the rest is zero, never seen.
  const T = total;
  const position = (b, s) => pastLens[b] + s;
  const rows = (fresh, past) => {
    const out = new Float64Array(B * T * Nkv * d);
    const to = at.bshd(T, Nkv, d);
    for (let b = 0; b < B; b++)
      for (let n = 0; n < Nkv; n++) {
        for (let j = 0; j < pastLens[b]; j++) for (let c = 0; c < d; c++) out[to(b, n, j) + c] = past[((b * Nkv + n) * P + j) * d + c];
        for (let s = 0; s < S; s++) for (let c = 0; c < d; c++) out[to(b, n, pastLens[b] + s) + c] = fresh[((b * S + s) * Nkv + n) * d + c];
      }
    return out;
  };
  const rotate = (x, heads) =>
    rotary ? ropeRef({ x, B, S, N: heads, H: d, rotaryDim: 2 * cache.half, interleaved, cache, axes: 'bshd', row: position }) : x;
  return {
    q,
    k,
    v,
    pastK,
    pastV,
    pastLens,
    T,
    cache,
    model: oneNode({
      op: 'GroupQueryAttention',
      domain: 'com.microsoft',
      inputs: [
        'query',
        'key',
        'value',
        P ? 'past_key' : '',
        P ? 'past_value' : '',
        'seqlens_k',
        'total_sequence_length',
        ...(rotary ? ['cos_cache', 'sin_cache'] : []),
      ],
      outputs: ['y', 'present_key', 'present_value'], // the CPU kernel writes the present KV cache: both are required
      attributes: { num_heads: N, kv_num_heads: Nkv, do_rotary: rotary ? 1 : 0, rotary_interleaved: interleaved },
      types: { seqlens_k: 'int32', total_sequence_length: 'int32' },
    }),
    feeds,
    // [B, T, Nkv, d] keys/values for posenc from its own rotated new keys (bshd, [B, S, Nkv, d])
    keysFor: (fresh) => Float32Array.from(rows(fresh, pastK)),
    valuesAll: Float32Array.from(rows(v, pastV)),
    reference: () =>
      attentionRef({
        q: rotate(q, N),
        k: rows(rotate(k, Nkv), pastK),
        v: rows(v, pastV),
        B,
        Sq: S,
        Sk: T,
        N,
        Nkv,
        d,
        qAt: at.bshd(S, N, d),
        kAt: at.bshd(T, Nkv, d),
        vAt: at.bshd(T, Nkv, d),
        outAt: at.bshd(S, N, d),
        visible: (b, h, i, j) => j <= position(b, i),
      }),
  };
}

describe('com.microsoft.GroupQueryAttention (8 query heads sharing 2 key/value heads)', () => {
  const t4 = (data, dims) => ({ data, shape: dims });
  // posenc's side of a uniform batch (every row has P cached keys): rope at offset P, then causal attention
  const posencGqa =
    (m, { B, S, P = 0, N = 8, Nkv = 2, d = 16, layout = 'half', rotary = false }) =>
    (pe) => {
      const rot = (x, heads) => (rotary ? pe.rope(t4(x, [B, S, heads, d]), { offset: P, layout }).data : x);
      const kAll = m.keysFor(rot(m.k, Nkv));
      return pe.attention({ q: t4(rot(m.q, N), [B, S, N, d]), k: t4(kAll, [B, m.T, Nkv, d]), v: t4(m.valuesAll, [B, m.T, Nkv, d]), causal: true })
        .output.data;
    };

  check('first prompt, no past (causal)', () => {
    const m = gqa({ B: 2, S: 6 });
    return { ...m, posenc: posencGqa(m, { B: 2, S: 6 }) };
  });
  check('one new token per row after 7 cached keys', () => {
    const m = gqa({ B: 2, S: 1, P: 7, seed: 80 });
    return { ...m, posenc: posencGqa(m, { B: 2, S: 1, P: 7 }) };
  });
  check('3 new tokens after 5 cached keys (a subsequent prompt)', () => {
    const m = gqa({ B: 1, S: 3, P: 5, seed: 90 });
    return { ...m, posenc: posencGqa(m, { B: 1, S: 3, P: 5 }) };
  });
  for (const interleaved of [0, 1]) {
    check(`do_rotary, ${layoutOf(interleaved)} layout, first prompt`, () => {
      const m = gqa({ B: 2, S: 5, rotary: {}, interleaved, seed: 100 + interleaved });
      return { ...m, posenc: posencGqa(m, { B: 2, S: 5, rotary: true, layout: layoutOf(interleaved) }) };
    });
    check(`do_rotary, ${layoutOf(interleaved)} layout, one new token after 9 cached keys`, () => {
      const m = gqa({ B: 2, S: 1, P: 9, rotary: {}, interleaved, seed: 110 + interleaved });
      return { ...m, posenc: posencGqa(m, { B: 2, S: 1, P: 9, rotary: true, layout: layoutOf(interleaved) }) };
    });
  }
  check('do_rotary, rows of different lengths (6 and 3 cached keys): positions [batch, seq] and a [batch, 1, 1, T] mask', () => {
    const m = gqa({ B: 2, S: 1, P: 6, pastLens: [6, 3], rotary: {}, seed: 120 });
    return {
      ...m,
      posenc(pe) {
        const positions = { data: BigInt64Array.from([6n, 3n]), shape: [2, 1] };
        const qr = pe.rope(t4(m.q, [2, 1, 8, 16]), { positions });
        const kr = pe.rope(t4(m.k, [2, 1, 2, 16]), { positions });
        const bias = new Float32Array(2 * m.T).map((_, i) => (i % m.T <= m.pastLens[Math.floor(i / m.T)] ? 0 : -Infinity));
        const k = t4(m.keysFor(kr.data), [2, m.T, 2, 16]);
        return pe.attention({ q: qr, k, v: t4(m.valuesAll, [2, m.T, 2, 16]), bias: t4(bias, [2, 1, 1, m.T]), causal: true }).output.data;
      },
    };
  });
  test('do_rotary fed the cos/sin caches of pe.ropeCache gives the output of the float64 caches', async () => {
    const m = gqa({ B: 2, S: 1, P: 9, rotary: {}, seed: 130 });
    const expected = (await runOrt(m.model, m.feeds)).y.data;
    for (const pe of backends) {
      const { cos, sin } = pe.ropeCache({ base: 10000, rotaryDim: 16, length: m.T });
      assert.deepEqual(cos.shape, [m.T, 8]);
      close(cos.data, m.cache.cos, `posenc ${pe.backend}, ropeCache cos`);
      close(sin.data, m.cache.sin, `posenc ${pe.backend}, ropeCache sin`);
      const got = (await runOrt(m.model, { ...m.feeds, cos_cache: f32(cos.data, cos.shape), sin_cache: f32(sin.data, sin.shape) })).y.data;
      close(got, expected, `ONNX Runtime fed posenc ${pe.backend}'s caches`);
    }
  });
});

describe('Attention (opset 23)', () => {
  const t4 = (data, dims) => ({ data, shape: dims });
  // Q [B, N, S, d] and K/V [B, Nkv, T, d] (fourD) or [B, S, N·d] / [B, T, Nkv·d]; an optional mask of
  // maskDims (bool: true = attend, or float: added); an optional past of P keys (BNSH) with causal.
  function onnxAttention({
    B = 2,
    S = 4,
    L = S,
    N = 4,
    Nkv = N,
    d = 16,
    fourD = true,
    causal = 0,
    maskDims,
    maskType = 'float',
    P = 0,
    scale,
    seed = 140,
  }) {
    const q = values(B * S * N * d, seed);
    const k = values(B * L * Nkv * d, seed + 1);
    const v = values(B * L * Nkv * d, seed + 2);
    const [qDims, kvDims] = fourD
      ? [
          [B, N, S, d],
          [B, Nkv, L, d],
        ]
      : [
          [B, S, N * d],
          [B, L, Nkv * d],
        ];
    const feeds = { Q: f32(q, qDims), K: f32(k, kvDims), V: f32(v, kvDims) };
    const inputs = ['Q', 'K', 'V'];
    const outputs = ['y'];
    const T = P + L;
    let mask;
    let maskBias;
    if (maskDims) {
      const n = size(maskDims);
      if (maskType === 'bool') {
        // keep key 0 for every query, so that no row is fully masked; drop about a third of the others
        mask = Uint8Array.from({ length: n }, (_, i) => (i % T === 0 || (i * 7919) % 3 !== 0 ? 1 : 0));
        feeds.attn_mask = new ort.Tensor('bool', mask, maskDims);
        maskBias = Float32Array.from(mask, (m) => (m ? 0 : -Infinity));
      } else {
        mask = values(n, seed + 3);
        feeds.attn_mask = f32(mask, maskDims);
        maskBias = mask;
      }
      inputs.push('attn_mask');
    }
    const { pastK, pastV } = P ? addPast({ feeds, inputs, outputs }, { B, heads: Nkv, P, d, seed, slot: 4 }) : {};
    const kAll = P ? concatBHSD(pastK, k, [B, Nkv, P, d], L) : k;
    const vAll = P ? concatBHSD(pastV, v, [B, Nkv, P, d], L) : v;
    const lay = fourD ? at.bhsd : at.bshd;
    // masks broadcast right-aligned to [B, N, S, T]
    const mdims = maskDims && [...Array(4 - maskDims.length).fill(1), ...maskDims];
    return {
      q,
      k,
      v,
      kAll,
      vAll,
      maskBias,
      T,
      model: oneNode({
        op: 'Attention',
        inputs,
        outputs,
        attributes: {
          is_causal: causal,
          q_num_heads: fourD ? undefined : N,
          kv_num_heads: fourD ? undefined : Nkv,
          scale: scale === undefined ? undefined : { float: scale },
        },
        types: { attn_mask: maskType === 'bool' ? 'bool' : 'float32' },
      }),
      feeds,
      reference: () =>
        attentionRef({
          q,
          k: kAll,
          v: vAll,
          B,
          Sq: S,
          Sk: T,
          N,
          Nkv,
          d,
          scale,
          qAt: lay(S, N, d),
          kAt: lay(T, Nkv, d),
          vAt: lay(T, Nkv, d),
          outAt: lay(S, N, d),
          bias: maskDims && maskType !== 'bool' ? biasReader(mask, mdims) : undefined,
          visible: (b, h, i, j) => (!causal || j <= P + i) && (maskType !== 'bool' || !maskDims || biasReader(mask, mdims)(b, h, i, j) === 1),
        }),
    };
  }

  check("Q/K/V [batch, heads, seq, d], 4 query heads on 2 key/value heads, is_causal (axes 'bhsd')", () => {
    const m = onnxAttention({ N: 4, Nkv: 2, S: 5, causal: 1 });
    return {
      ...m,
      posenc: (pe) =>
        pe.attention({ q: t4(m.q, [2, 4, 5, 16]), k: t4(m.k, [2, 2, 5, 16]), v: t4(m.v, [2, 2, 5, 16]), axes: 'bhsd', causal: true }).output.data,
    };
  });
  check("batch 1 as rank 3 [heads, seq, d] (axes 'hsd'), 2 query heads on 1 key/value head, is_causal", () => {
    const m = onnxAttention({ B: 1, N: 2, Nkv: 1, S: 5, causal: 1, seed: 145 });
    return {
      ...m,
      posenc: (pe) => {
        const r = pe.attention({ q: t4(m.q, [2, 5, 16]), k: t4(m.k, [1, 5, 16]), v: t4(m.v, [1, 5, 16]), axes: 'hsd', causal: true });
        assert.deepEqual(
          [r.output.shape, r.weights.shape],
          [
            [2, 5, 16],
            [2, 5, 5],
          ],
        );
        return r.output.data;
      },
    };
  });
  check('Q/K/V [batch, seq, heads·d] with q_num_heads 4, kv_num_heads 1, float attn_mask [seq, total]', () => {
    const m = onnxAttention({ N: 4, Nkv: 1, S: 5, L: 7, fourD: false, maskDims: [5, 7], seed: 150 });
    return {
      ...m,
      posenc: (pe) =>
        pe.attention({ q: t4(m.q, [2, 5, 4, 16]), k: t4(m.k, [2, 7, 1, 16]), v: t4(m.v, [2, 7, 1, 16]), bias: t4(m.maskBias, [5, 7]) }).output.data,
    };
  });
  check('bool attn_mask [batch, 1, seq, total] with is_causal: a -Infinity bias', () => {
    const m = onnxAttention({ N: 2, S: 6, causal: 1, maskDims: [2, 1, 6, 6], maskType: 'bool', seed: 160 });
    return {
      ...m,
      posenc: (pe) =>
        pe.attention({
          q: t4(m.q, [2, 2, 6, 16]),
          k: t4(m.k, [2, 2, 6, 16]),
          v: t4(m.v, [2, 2, 6, 16]),
          bias: t4(m.maskBias, [2, 1, 6, 6]),
          causal: true,
          axes: 'bhsd',
        }).output.data,
    };
  });
  check('scale attribute 0.3, float attn_mask [heads, seq, total], [batch, seq, heads·d] inputs', () => {
    const m = onnxAttention({ N: 3, S: 4, L: 6, fourD: false, maskDims: [3, 4, 6], scale: 0.3, seed: 170 });
    return {
      ...m,
      posenc: (pe) =>
        pe.attention({ q: t4(m.q, [2, 4, 3, 16]), k: t4(m.k, [2, 6, 3, 16]), v: t4(m.v, [2, 6, 3, 16]), bias: t4(m.maskBias, [3, 4, 6]), scale: 0.3 })
          .output.data,
    };
  });
  check('past_key/past_value with is_causal: 3 queries after 4 cached keys, grouped heads', () => {
    const m = onnxAttention({ N: 4, Nkv: 2, S: 3, P: 4, causal: 1, seed: 180 });
    return {
      ...m,
      posenc: (pe) =>
        pe.attention({ q: t4(m.q, [2, 4, 3, 16]), k: t4(m.kAll, [2, 2, 7, 16]), v: t4(m.vAll, [2, 2, 7, 16]), axes: 'bhsd', causal: true }).output
          .data,
    };
  });
});

// ---- scenarios --------------------------------------------------------------------------------------

describe('scenarios', () => {
  const t4 = (data, dims) => ({ data, shape: dims });

  test('int64 position_ids straight from ORT-style inputs: BigInt64Array, an ORT tensor, { data, dims } and { data, shape }', async (t) => {
    const positions = [range(5, 0), [9, 10, 11, 40, 41]];
    const m = contribRope({ B: 2, S: 5, N: 2, H: 16, positions, maxPos: 48, seed: 200 });
    const expected = (await runOrt(m.model, m.feeds)).y.data;
    close(expected, m.reference(), 'ONNX Runtime');
    const x = t4(m.x, [2, 5, 2, 16]);
    const ids = m.feeds.position_ids; // an onnxruntime-common Tensor, type 'int64', data a BigInt64Array
    const forms = {
      'the ORT tensor itself ({ data, dims })': ids,
      '{ data: BigInt64Array, dims }': { data: ids.data, dims: ids.dims },
      '{ data: BigInt64Array, shape }': { data: ids.data, shape: [2, 5] },
    };
    for (const [form, value] of Object.entries(forms))
      await t.test(form, () => {
        for (const pe of backends) close(pe.rope(x, { positions: value }).data, expected, `posenc ${pe.backend}, ${form}`);
      });
    // one row: a bare BigInt64Array (and the other integer arrays) for the positions of a [seq, heads, headDim] input
    const row = m.x.subarray(5 * 32);
    const rowExpected = expected.subarray(5 * 32);
    for (const [form, value] of Object.entries({
      BigInt64Array: BigInt64Array.from(positions[1], BigInt),
      Uint32Array: Uint32Array.from(positions[1]),
      Int32Array: Int32Array.from(positions[1]),
      Float64Array: Float64Array.from(positions[1]),
    }))
      await t.test(`a row of positions as a ${form}`, () => {
        for (const pe of backends) close(pe.rope(t4(row, [5, 2, 16]), { positions: value }).data, rowExpected, `posenc ${pe.backend}, ${form}`);
      });
  });

  // ---- Llama 3.1 8B decoding at positions 4096 .. 4127 -------------------------------------------------
  const llama = CONFIGS['Llama 3.1 8B']; // head_dim 4096 / 32 = 128, θ = 500000, llama3 scaling ×8 (low 1, high 4, original 8192)
  const llamaParams = hfRopeParameters(llama);
  const llamaCache = cacheRef(range(4128), llamaParams.invFreq, llamaParams.attentionFactor);
  const llamaRope = () => contribRope({ B: 1, S: 32, N: 4, H: 128, positions: [range(32, 4096)], maxPos: 4128, cache: llamaCache, seed: 210 });
  check('Llama 3.1 8B at positions 4096..4127 (RotaryEmbedding), scaling given as the rope_scaling object', () => {
    const m = llamaRope();
    return { ...m, posenc: (pe) => pe.rope(t4(m.x, [1, 32, 4, 128]), { base: llama.rope_theta, scaling: llama.rope_scaling, offset: 4096 }).data };
  });
  check('Llama 3.1 8B at positions 4096..4127 (RotaryEmbedding), the whole config.json', () => {
    const m = llamaRope();
    return { ...m, posenc: (pe) => pe.rope(t4(m.x, [1, 32, 4, 128]), { config: llama, offset: 4096 }).data };
  });
  test('Llama 3.1 8B: pe.ropeCache({ config, length: 4128 }) equals the float64 caches; RotaryEmbedding fed them agrees', async () => {
    const m = llamaRope();
    const expected = (await runOrt(m.model, m.feeds)).y.data;
    for (const pe of backends) {
      const { cos, sin } = pe.ropeCache({ config: llama, length: 4128 });
      assert.deepEqual(cos.shape, [4128, 64]);
      close(cos.data, llamaCache.cos, `posenc ${pe.backend}, ropeCache cos`);
      close(sin.data, llamaCache.sin, `posenc ${pe.backend}, ropeCache sin`);
      const got = (await runOrt(m.model, { ...m.feeds, cos_cache: f32(cos.data, cos.shape), sin_cache: f32(sin.data, sin.shape) })).y.data;
      close(got, expected, `ONNX Runtime fed posenc ${pe.backend}'s caches`);
    }
  });
  check(
    'Llama 3.1 8B decoding step: GroupQueryAttention with do_rotary, 32 new tokens after 4096 cached ones, 4 query heads on 1 key/value head of 128',
    () => {
      const m = gqa({ B: 1, S: 32, P: 4096, N: 4, Nkv: 1, d: 128, rotary: {}, cache: llamaCache, seed: 220 });
      return {
        ...m,
        posenc: (pe) => {
          const qr = pe.rope(t4(m.q, [1, 32, 4, 128]), { base: llama.rope_theta, scaling: llama.rope_scaling, offset: 4096 });
          const kr = pe.rope(t4(m.k, [1, 32, 1, 128]), { base: llama.rope_theta, scaling: llama.rope_scaling, offset: 4096 });
          const k = t4(m.keysFor(kr.data), [1, m.T, 1, 128]);
          return pe.attention({ q: qr, k, v: t4(m.valuesAll, [1, m.T, 1, 128]), causal: true, weights: false }).output.data;
        },
      };
    },
  );

  // ---- YaRN: factor 4 over an original 4096 positions, θ = 10⁶ (Qwen2-style), head_dim 128 -------------
  const yarn = {
    hidden_size: 3584,
    num_attention_heads: 28,
    max_position_embeddings: 16384,
    rope_theta: 1000000.0,
    rope_scaling: { rope_type: 'yarn', factor: 4.0, original_max_position_embeddings: 4096 },
  };
  const yarnParams = hfRopeParameters(yarn); // attention factor 0.1 ln 4 + 1 on cos and sin
  const yarnPositions = [[8000, 8001, 8002, 8003, 12000, 12001, 0, 1]];
  const yarnRope = () =>
    onnxRope({
      B: 1,
      S: 8,
      N: 2,
      H: 128,
      positions: yarnPositions,
      maxPos: 12002,
      cache: cacheRef(range(12002), yarnParams.invFreq, yarnParams.attentionFactor),
      fourD: false,
      seed: 230,
    });
  check('YaRN ×4 (original 4096, θ = 10⁶) at positions past 8000 (RotaryEmbedding-23), scaling given as the rope_scaling object', () => {
    const m = yarnRope();
    return {
      ...m,
      posenc: (pe) => pe.rope(t4(m.x, [1, 8, 2, 128]), { base: yarn.rope_theta, scaling: yarn.rope_scaling, positions: yarnPositions[0] }).data,
    };
  });
  check('YaRN ×4 (original 4096, θ = 10⁶) at positions past 8000 (RotaryEmbedding-23), the whole config.json', () => {
    const m = yarnRope();
    return { ...m, posenc: (pe) => pe.rope(t4(m.x, [1, 8, 2, 128]), { config: yarn, positions: yarnPositions[0] }).data };
  });
  test('YaRN: pe.ropeCache({ config, positions }) equals the float64 caches (attention factor applied)', () => {
    const expected = cacheRef(yarnPositions[0], yarnParams.invFreq, yarnParams.attentionFactor);
    for (const pe of backends) {
      const { cos, sin } = pe.ropeCache({ config: yarn, positions: yarnPositions[0] });
      assert.deepEqual(cos.shape, [8, 64]);
      close(cos.data, expected.cos, `posenc ${pe.backend}, ropeCache cos`);
      close(sin.data, expected.sin, `posenc ${pe.backend}, ropeCache sin`);
    }
  });

  // ---- Phi-2: partial_rotary_factor 0.4 of head_dim 80: 32 rotated channels, 48 passed through ---------
  const phi2 = { hidden_size: 2560, num_attention_heads: 32, partial_rotary_factor: 0.4, rope_theta: 10000.0, max_position_embeddings: 2048 };
  const phiRope = () =>
    contribRope({
      B: 1,
      S: 12,
      N: 4,
      H: 80,
      rotaryDim: 32,
      positions: [range(12, 500)],
      maxPos: 512,
      cache: cacheRef(range(512), hfRopeParameters(phi2).invFreq),
      seed: 240,
    });
  check('Phi-2 partial rotary (32 of 80 channels, RotaryEmbedding rotary_embedding_dim 32), rotaryDim given', () => {
    const m = phiRope();
    return { ...m, posenc: (pe) => pe.rope(t4(m.x, [1, 12, 4, 80]), { rotaryDim: 32, offset: 500 }).data };
  });
  check('Phi-2 partial rotary (32 of 80 channels, RotaryEmbedding rotary_embedding_dim 32), the whole config.json', () => {
    const m = phiRope();
    return { ...m, posenc: (pe) => pe.rope(t4(m.x, [1, 12, 4, 80]), { config: phi2, offset: 500 }).data };
  });

  // ---- a left-padded batch: per-row position ids, padding and causal masks ----------------------------
  // Three prompts of 6, 4 and 2 tokens left-padded to 6. Position ids as transformers makes them
  // (cumsum(attention_mask) - 1, pads set to 1). The ORT graph: RotaryEmbedding-23 on Q and on K
  // ([batch, heads, seq, d] with position_ids [batch, seq]), then Attention-23 with is_causal and a bool
  // padding mask [batch, 1, seq, seq]. Only the real tokens' rows are compared (a pad's query sees no key).
  check('left-padded batch: RotaryEmbedding-23 on Q and K with position_ids [batch, seq], Attention-23 causal with a padding mask', () => {
    const [B, S, N, Nkv, d] = [3, 6, 4, 2, 16];
    const pads = [0, 2, 4];
    const positions = pads.map((p) => range(S).map((s) => (s < p ? 1 : s - p)));
    const cache = cacheRef(range(S), defaultInvFreq(d, 10000));
    const q = values(B * N * S * d, 250);
    const k = values(B * Nkv * S * d, 251);
    const v = values(B * Nkv * S * d, 252);
    const keep = Uint8Array.from({ length: B * S * S }, (_, i) => (i % S >= pads[Math.floor(i / (S * S))] ? 1 : 0));
    const bytes = model({
      nodes: [
        { op: 'RotaryEmbedding', name: 'rope_q', inputs: ['q', 'cos_cache', 'sin_cache', 'position_ids'], outputs: ['q_rot'] },
        { op: 'RotaryEmbedding', name: 'rope_k', inputs: ['k', 'cos_cache', 'sin_cache', 'position_ids'], outputs: ['k_rot'] },
        { op: 'Attention', inputs: ['q_rot', 'k_rot', 'v', 'attn_mask'], outputs: ['y'], attributes: { is_causal: 1 } },
      ],
      inputs: [
        input('q', 'float32', [B, N, S, d]),
        input('k', 'float32', [B, Nkv, S, d]),
        input('v', 'float32', [B, Nkv, S, d]),
        input('cos_cache', 'float32', [S, d / 2]),
        input('sin_cache', 'float32', [S, d / 2]),
        input('position_ids', 'int64', [B, S]),
        input('attn_mask', 'bool', [B, 1, S, S]),
      ],
      outputs: [output('y', 'float32')],
    });
    const feeds = {
      q: f32(q, [B, N, S, d]),
      k: f32(k, [B, Nkv, S, d]),
      v: f32(v, [B, Nkv, S, d]),
      cos_cache: f32(cache.cos, [S, d / 2]),
      sin_cache: f32(cache.sin, [S, d / 2]),
      position_ids: i64(positions.flat(), [B, S]),
      attn_mask: new ort.Tensor('bool', keep, [B, 1, S, S]),
    };
    const rotate = (x, heads) => ropeRef({ x, B, S, N: heads, H: d, interleaved: 0, cache, axes: 'bhsd', row: (b, s) => positions[b][s] });
    return {
      model: bytes,
      feeds,
      rows: (i) => Math.floor(i / d) % S >= pads[Math.floor(i / (N * S * d))],
      reference: () =>
        attentionRef({
          q: rotate(q, N),
          k: rotate(k, Nkv),
          v,
          B,
          Sq: S,
          Sk: S,
          N,
          Nkv,
          d,
          qAt: at.bhsd(S, N, d),
          kAt: at.bhsd(S, Nkv, d),
          vAt: at.bhsd(S, Nkv, d),
          outAt: at.bhsd(S, N, d),
          visible: (b, h, i, j) => j <= i && j >= pads[b],
        }),
      posenc(pe) {
        const ids = feeds.position_ids; // int64 [batch, seq], as the model takes it
        const qr = pe.rope(t4(q, [B, N, S, d]), { axes: 'bhsd', positions: ids });
        const kr = pe.rope(t4(k, [B, Nkv, S, d]), { axes: 'bhsd', positions: ids });
        const bias = t4(
          Float32Array.from(keep, (x) => (x ? 0 : -Infinity)),
          [B, 1, S, S],
        );
        return pe.attention({ q: qr, k: kr, v: t4(v, [B, Nkv, S, d]), bias, causal: true, axes: 'bhsd', weights: false }).output.data;
      },
    };
  });
});
