// Positions beyond one dimension (issue 15): MAE's 2-D sin-cos table against a float64 transcription
// of facebookresearch/mae util/pos_embed.py, on both backends.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { backends } from './helpers.js';
import { maePosEmbed } from './fixtures/mae.js';

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
