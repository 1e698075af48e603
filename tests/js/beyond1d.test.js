// Positions beyond one dimension, on both backends, against float64 transcriptions of the
// reference code: MAE's 2-D sin-cos table (facebookresearch/mae util/pos_embed.py), Qwen2-VL's
// position ids and multimodal RoPE (HF transformers), torchscale's xPos.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { backends } from './helpers.js';
import { maePosEmbed } from './fixtures/mae.js';
import { qwen2vlRopeIndex, qwen2vlRopeIndexBatch, qwen2vlRotate, torchscaleXpos } from './fixtures/multimodal.js';

for (const pe of await backends()) {
  describe(`sinusoidal2d (${pe.backend})`, () => {
    test("equals MAE's get_2d_sincos_pos_embed: 16 x 4 x 4, 32 x 3 x 3 with cls, 768 x 14 x 14 with cls", () => {
      for (const [d, g, cls] of [
        [16, 4, false],
        [32, 3, true],
        [768, 14, true],
      ]) {
        const ref = maePosEmbed(d, g, g, cls);
        const got = pe.sinusoidal2d({ height: g, width: g, dModel: d, clsToken: cls });
        assert.deepEqual(got.shape, [ref.length, d]);
        let err = 0;
        ref.forEach((row, r) => row.forEach((x, c) => (err = Math.max(err, Math.abs(got.data[r * d + c] - x)))));
        assert.ok(err <= 1e-6, `${d} x ${g} x ${g}: max error ${err}`);
      }
    });

    test('a rectangular grid: the first half follows the column, the second the row', () => {
      const [h, w, d] = [2, 5, 8];
      const ref = maePosEmbed(d, h, w);
      const got = pe.sinusoidal2d({ height: h, width: w, dModel: d });
      for (let r = 0; r < h * w; r++) for (let c = 0; c < d; c++) assert.ok(Math.abs(got.data[r * d + c] - ref[r][c]) <= 1e-7);
      // patch (row 1, column 3): its first half is the 1-D split table at position 3, its second at 1
      const column = pe.sinusoidal({ length: 1, dModel: d / 2, layout: 'split', offset: 3 }).data;
      const row = pe.sinusoidal({ length: 1, dModel: d / 2, layout: 'split', offset: 1 }).data;
      assert.deepEqual(Array.from(got.data.slice(8 * d, 8 * d + d)), [...column, ...row]);
    });

    test('errors name the argument', () => {
      assert.throws(
        () => pe.sinusoidal2d({ height: 2, width: 2, dModel: 6 }),
        (e) => e instanceof RangeError && /dModel must be a multiple of 4/.test(e.message),
      );
      assert.throws(
        () => pe.sinusoidal2d({ height: 0, width: 2, dModel: 8 }),
        (e) => e instanceof RangeError && /height/.test(e.message),
      );
      assert.throws(
        () => pe.sinusoidal2d({ height: 2, width: 2, dModel: 8, clsToken: 1 }),
        (e) => e instanceof TypeError && /clsToken/.test(e.message),
      );
      assert.throws(
        () => pe.sinusoidal2d({ height: 2, widht: 2, dModel: 8 }),
        (e) => e instanceof TypeError && /did you mean width/.test(e.message),
      );
    });
  });
}

const rand = (n, seed) => Float32Array.from({ length: n }, (_, i) => Math.sin(i * 12.9898 + seed * 78.233) * 1.5);
const rows = (data, n, d) => Array.from({ length: n }, (_, r) => Array.from(data.slice(r * d, (r + 1) * d)));

for (const pe of await backends()) {
  describe(`multimodal RoPE and xPos (${pe.backend})`, () => {
    test("mropePositions: Qwen2-VL's get_rope_index for text + image + text and text + video + text", () => {
      for (const segments of [
        [{ text: 3 }, { image: [1, 4, 6] }, { text: 2 }],
        [{ text: 5 }, { video: [3, 2, 2] }, { text: 4 }],
        [{ image: [1, 2, 2] }, { image: [1, 3, 1] }, { text: 1 }],
      ]) {
        const ref = qwen2vlRopeIndex(segments);
        const got = pe.mropePositions(segments);
        assert.deepEqual(got.shape, [3, ref[0].length]);
        assert.deepEqual(Array.from(got.data), ref.flat(), JSON.stringify(segments));
      }
      assert.throws(() => pe.mropePositions([{ image: [1, 2] }]), RangeError);
      assert.throws(() => pe.mropePositions([{ text: 2, image: [1, 1, 1] }]), TypeError);
      assert.throws(
        () => pe.mropePositions([{ txt: 2 }]),
        (e) => e instanceof TypeError && /did you mean text/.test(e.message),
      );
    });

    test('mropePositions({ inputIds, grids, attentionMask, config }): the batched get_rope_index, with padding and its deltas', () => {
      // Qwen2-VL-7B-Instruct's token ids and merge size, as its config.json gives them
      const config = { image_token_id: 151655, video_token_id: 151656, vision_start_token_id: 151652, vision_config: { spatial_merge_size: 2 } };
      const cfg = { imageTokenId: 151655, videoTokenId: 151656, visionStartTokenId: 151652, spatialMergeSize: 2 };
      const [S, I, V, P] = [151652, 151655, 151656, 0]; // vision start, image, video, padding
      // row 0: 2 text, an image of 1 x 4 x 4 patches (2 x 2 after merging), 2 text; row 1 left-padded:
      // a video of 2 x 2 x 4 (2 x 1 x 2 after merging), 3 text
      const rows = [
        [11, S, I, I, I, I, 12, 13],
        [P, 21, S, V, V, V, V, 22],
      ];
      const attentionMask = [
        [1, 1, 1, 1, 1, 1, 1, 1],
        [0, 1, 1, 1, 1, 1, 1, 1],
      ];
      const args = { inputIds: rows, imageGridThw: [[1, 4, 4]], videoGridThw: [[2, 2, 4]], attentionMask };
      const ref = qwen2vlRopeIndexBatch(args, cfg);
      for (const inputs of [
        { ...args, config },
        { ...args, ...cfg },
        // as ONNX Runtime / transformers.js tensors: int64 ids and mask
        {
          inputIds: { data: BigInt64Array.from(rows.flat(), BigInt), dims: [2, 8] },
          imageGridThw: { data: BigInt64Array.from([1n, 4n, 4n]), dims: [1, 3] },
          videoGridThw: { data: BigInt64Array.from([2n, 2n, 4n]), dims: [1, 3] },
          attentionMask: { data: BigInt64Array.from(attentionMask.flat(), BigInt), dims: [2, 8] },
          config,
        },
      ]) {
        const got = pe.mropePositions(inputs);
        assert.deepEqual(got.positions.shape, [3, 2, 8]);
        assert.deepEqual(Array.from(got.positions.data), ref.positions.flat(2));
        assert.deepEqual(got.deltas.shape, [2, 1]);
        assert.deepEqual(Array.from(got.deltas.data), ref.deltas);
      }
      // text only, with and without padding
      for (const mask of [null, attentionMask]) {
        const text = { inputIds: rows, attentionMask: mask };
        const want = qwen2vlRopeIndexBatch(text, cfg);
        const got = pe.mropePositions({ ...text, attentionMask: mask ?? undefined });
        assert.deepEqual(Array.from(got.positions.data), want.positions.flat(2));
        assert.deepEqual(Array.from(got.deltas.data), want.deltas);
      }
      // vision grids need the token ids; more images than grids is an error
      assert.throws(
        () => pe.mropePositions({ inputIds: rows, imageGridThw: [[1, 4, 4]], videoGridThw: [[2, 2, 4]] }),
        (e) => e instanceof TypeError && /imageTokenId/.test(e.message),
      );
      assert.throws(
        () => pe.mropePositions({ inputIds: rows, imageGridThw: [[1, 4, 4]], config }),
        (e) => e instanceof RangeError && /videos/.test(e.message),
      );
      // the positions rotate a batch: M-RoPE with [3, batch, seq]
      const ids = pe.mropePositions({ ...args, config });
      const q = rand(2 * 8 * 128, 3);
      const both = pe.rope({ data: q, shape: [2, 8, 1, 128] }, { positions: ids.positions, mropeSection: [16, 24, 24], base: 1e6 });
      for (let b = 0; b < 2; b++) {
        const streams = [0, 1, 2].map((k) => ref.positions[k][b]);
        const one = pe.rope(
          { data: q.slice(b * 8 * 128, (b + 1) * 8 * 128), shape: [8, 128] },
          { positions: streams, mropeSection: [16, 24, 24], base: 1e6 },
        );
        assert.deepEqual(both.data.slice(b * 8 * 128, (b + 1) * 8 * 128), one.data);
      }
    });

    test('M-RoPE: HF apply_multimodal_rotary_pos_emb with Qwen2-VL-7B (head_dim 128, sections [16, 24, 24], theta 1e6)', () => {
      for (const segments of [
        [{ text: 3 }, { image: [1, 4, 6] }, { text: 2 }],
        [{ text: 2 }, { video: [2, 2, 3] }, { text: 3 }],
      ]) {
        const ids = pe.mropePositions(segments);
        const seq = ids.shape[1];
        const [heads, headDim] = [2, 128];
        const q = rand(seq * heads * headDim, 5);
        const got = pe.rope({ data: q, shape: [seq, heads, headDim] }, { positions: ids, mropeSection: [16, 24, 24], base: 1e6 });
        const streams = [0, 1, 2].map((k) => Array.from(ids.data.slice(k * seq, (k + 1) * seq)));
        for (let h = 0; h < heads; h++) {
          const head = Array.from({ length: seq }, (_, s) => Array.from(q.slice((s * heads + h) * headDim, (s * heads + h + 1) * headDim)));
          const ref = qwen2vlRotate(head, streams, { headDim, section: [16, 24, 24], theta: 1e6 });
          for (let s = 0; s < seq; s++)
            for (let c = 0; c < headDim; c++) {
              const v = got.data[(s * heads + h) * headDim + c];
              assert.ok(
                Math.abs(v - ref[s][c]) <= 1e-5 * Math.max(1, Math.abs(ref[s][c])),
                `${JSON.stringify(segments)} s ${s} c ${c}: ${v} vs ${ref[s][c]}`,
              );
            }
        }
      }
      const x = { data: rand(4 * 8, 1), shape: [4, 8] };
      const ids = { data: new Int32Array(12), shape: [3, 4] };
      assert.throws(
        () => pe.rope(x, { positions: ids, mropeSection: [1, 1, 1] }),
        (e) => e instanceof RangeError && /sum to rotaryDim\/2 = 4/.test(e.message),
      );
      assert.throws(() => pe.rope(x, { positions: ids, mropeSection: [2, 1, 1], layout: 'interleaved' }), RangeError);
      assert.throws(() => pe.rope(x, { mropeSection: [2, 1, 1] }), TypeError);
    });

    test("xPos: torchscale's XPOS for queries and keys at positions 0-7 and 1000-1007", () => {
      const headDim = 16;
      for (const offset of [0, 1000])
        for (const role of ['query', 'key']) {
          const x = rand(8 * headDim, 9);
          const ref = torchscaleXpos(rows(x, 8, headDim), { headDim, offset, downscale: role === 'key' });
          const got = pe.rope({ data: x, shape: [8, headDim] }, { offset, xpos: {}, role, layout: 'interleaved' });
          for (let r = 0; r < 8; r++)
            for (let c = 0; c < headDim; c++) {
              const v = got.data[r * headDim + c];
              assert.ok(
                Math.abs(v - ref[r][c]) <= 1e-5 * Math.max(1, Math.abs(ref[r][c])),
                `offset ${offset} ${role} r ${r} c ${c}: ${v} vs ${ref[r][c]}`,
              );
            }
        }
      // q.k of xPos-scaled vectors depends on m - n and decays with the distance
      const v = { data: new Float32Array(16).fill(1), shape: [1, 16] };
      const dot = (m, n) => {
        const q = pe.rope(v, { offset: m, xpos: { center: 0 }, role: 'query', layout: 'interleaved' }).data;
        const k = pe.rope(v, { offset: n, xpos: { center: 0 }, role: 'key', layout: 'interleaved' }).data;
        return q.reduce((s, x, i) => s + x * k[i], 0);
      };
      assert.ok(Math.abs(dot(10, 3) - dot(107, 100)) < 1e-4);
      assert.ok(dot(200, 0) < dot(20, 0));
      assert.throws(() => pe.rope(v, { xpos: {}, layout: 'interleaved' }), TypeError); // role is required
      assert.throws(() => pe.rope(v, { role: 'query' }), TypeError);
      assert.throws(
        () => pe.rope(v, { offset: 1e7, xpos: { scaleBase: 1e-3, center: 0 }, role: 'key' }),
        (e) => e instanceof RangeError && /xPos scale/.test(e.message),
      );
      assert.throws(
        () => pe.rope(v, { xpos: { scalebase: 2 }, role: 'key' }),
        (e) => e instanceof TypeError && /did you mean scaleBase/.test(e.message),
      );
    });
  });
}
