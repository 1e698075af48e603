// Half floats at the boundary (dtype 'float16' | 'bfloat16': 16-bit results, 16-bit inputs, the maths
// in float32) and integer ids and positions in every form the runtimes produce them.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { backends, range } from './helpers.js';

const [simd, scalar] = await backends();

// binary16 from its bits, in float64 (IEEE 754: subnormals 2^-24 m, normals 2^(e-15) (1 + m/1024)).
function f16Value(h) {
  const sign = h & 0x8000 ? -1 : 1;
  const e = (h >> 10) & 31;
  const m = h & 1023;
  if (e === 31) return m ? NaN : sign * Infinity;
  return sign * (e === 0 ? m * 2 ** -24 : 2 ** (e - 15) * (1 + m / 1024));
}
// The float16 nearest to x, ties to the even mantissa, found by bisection over the ordered positive
// halves (an encoder written from the definition, not from bit tricks).
const POSITIVE = Float64Array.from(range(0x7c00), f16Value); // 0 .. 65504, increasing
function f16Bits(x) {
  if (Number.isNaN(x)) return 0x7e00;
  const sign = x < 0 || Object.is(x, -0) ? 0x8000 : 0;
  const a = Math.abs(x);
  if (a >= 65520) return sign | 0x7c00; // halfway between 65504 and 2^16 rounds up, to Infinity
  let [lo, hi] = [0, POSITIVE.length - 1];
  while (hi - lo > 1) {
    const mid = (lo + hi) >> 1;
    if (POSITIVE[mid] <= a) lo = mid;
    else hi = mid;
  }
  const pick = a - POSITIVE[lo] < POSITIVE[hi] - a ? lo : a - POSITIVE[lo] > POSITIVE[hi] - a ? hi : lo % 2 === 0 ? lo : hi;
  return sign | pick;
}
// bfloat16: the float32 neighbours of x with 16 zero low bits, the nearest in float64, ties to even.
function bf16Bits(x) {
  const u = new Uint32Array(Float32Array.of(x).buffer)[0];
  if (Number.isNaN(x)) return (u >>> 16) | 0x40;
  const f32 = (bits) => new Float32Array(Uint32Array.of(bits >>> 0).buffer)[0];
  const lo = u & 0xffff0000;
  const hi = lo + 0x10000;
  const [dl, dh] = [Math.abs(x - f32(lo)), Math.abs(f32(hi) - x)];
  return (dl < dh ? lo : dl > dh ? hi : (lo >>> 16) % 2 === 0 ? lo : hi) >>> 16;
}

// Values that exercise every rounding case: random, subnormal halves, ties, overflow, signs, specials.
const VALUES = (() => {
  const v = [
    0,
    -0,
    1,
    -1,
    65504,
    65519,
    65520,
    65536,
    1e10,
    -1e10,
    2 ** -24,
    2 ** -25,
    2 ** -26,
    3 * 2 ** -25,
    2 ** -14,
    1e-8,
    1 + 2 ** -11,
    1 + 3 * 2 ** -11,
  ];
  for (let i = 0; i < 4000; i++) v.push(Math.fround(Math.sinh(Math.sin(i * 12.9898) * 14) * (i % 3 ? 1 : 1e-5)));
  for (let i = 0; i < 200; i++) v.push(Math.fround(f16Value(i * 331) + f16Value(i * 331 + 1)) / 2); // halfway points
  return Float32Array.from(v);
})();

for (const pe of [simd, scalar]) {
  describe(`dtypes (${pe.backend})`, () => {
    test('float32 results round to float16 and bfloat16 to nearest even: every value of a sweep', () => {
      const zeros = { data: new Float32Array(VALUES.length).fill(-0), shape: [1, VALUES.length] }; // x + -0 is x, -0 included
      const x = { data: VALUES, shape: [1, VALUES.length] };
      for (const [dtype, encode] of [
        ['float16', f16Bits],
        ['bfloat16', bf16Bits],
      ]) {
        const got = pe.addPositional(x, zeros, { dtype }).data;
        assert.equal(got.BYTES_PER_ELEMENT, 2);
        const bits = new Uint16Array(got.buffer, got.byteOffset, got.length);
        const bad = range(VALUES.length).filter((i) => bits[i] !== encode(VALUES[i]));
        assert.deepEqual(
          bad.slice(0, 5).map((i) => [VALUES[i], bits[i].toString(16), encode(VALUES[i]).toString(16)]),
          [],
          dtype,
        );
      }
      // NaN stays NaN; Infinity stays Infinity
      const specials = { data: Float32Array.of(NaN, Infinity, -Infinity), shape: [1, 3] };
      const h = pe.addPositional(specials, { data: new Float32Array(3), shape: [1, 3] }, { dtype: 'float16' }).data;
      const hb = new Uint16Array(h.buffer, h.byteOffset, 3);
      assert.ok(Number.isNaN(f16Value(hb[0])) && f16Value(hb[1]) === Infinity && f16Value(hb[2]) === -Infinity);
    });

    test('half inputs are read exactly; rope, attention and tables take dtype; out may hold the 16-bit values', () => {
      const n = 4 * 2 * 16;
      const f32 = Float32Array.from(range(n), (i) => f16Value(f16Bits(Math.sin(i) * 3)));
      const halfBits = Uint16Array.from(f32, f16Bits);
      const want = pe.rope({ data: f32, shape: [4, 2, 16] }, { offset: 9 }).data;
      // a float16 tensor (Uint16Array bits) in, float16 out, computed in float32
      const got = pe.rope({ data: halfBits, shape: [4, 2, 16] }, { offset: 9, dtype: 'float16' });
      assert.deepEqual(Array.from(new Uint16Array(got.data.buffer, got.data.byteOffset, n)), Array.from(want, f16Bits));
      // an ONNX Runtime float16 tensor says its type itself; dtype: 'float32' asks for float32 out
      const ort = { data: halfBits, dims: [4, 2, 16], type: 'float16', size: n };
      Object.setPrototypeOf(ort, { constructor: function Tensor() {} });
      assert.deepEqual(pe.rope(ort, { offset: 9, dtype: 'float32' }).data, want);
      // bfloat16 bits
      const bfBits = Uint16Array.from(f32, bf16Bits);
      const bfIn = Float32Array.from(bfBits, (b) => new Float32Array(Uint32Array.of(b << 16).buffer)[0]);
      const bf = pe.rope({ data: bfBits, shape: [4, 2, 16] }, { offset: 9, dtype: 'bfloat16' }).data;
      assert.deepEqual(Array.from(bf), Array.from(pe.rope({ data: bfIn, shape: [4, 2, 16] }, { offset: 9 }).data, bf16Bits));
      // Uint16Array without saying which half float: refused
      assert.throws(
        () => pe.rope({ data: halfBits, shape: [4, 2, 16] }),
        (e) => e instanceof TypeError && /dtype: 'float16' or 'bfloat16'/.test(e.message),
      );
      // tables and attention, into out
      const out = new Uint16Array(3 * 8);
      const t = pe.sinusoidal({ length: 3, dModel: 8, dtype: 'bfloat16', out });
      assert.equal(t.data, out);
      assert.deepEqual(Array.from(out), Array.from(pe.sinusoidal({ length: 3, dModel: 8 }).data, bf16Bits));
      const q = { data: halfBits, shape: [4, 2, 16] };
      const a = pe.attention({ q, k: q, v: q, dtype: 'float16' });
      const a32 = pe.attention({ q: { data: f32, shape: [4, 2, 16] }, k: { data: f32, shape: [4, 2, 16] }, v: { data: f32, shape: [4, 2, 16] } });
      assert.deepEqual(
        Array.from(new Uint16Array(a.output.data.buffer, a.output.data.byteOffset, a.output.data.length)),
        Array.from(a32.output.data, f16Bits),
      );
      assert.throws(
        () => pe.sinusoidal({ length: 3, dModel: 8, dtype: 'float16', out: new Float32Array(24) }),
        (e) => e instanceof TypeError && /Uint16Array/.test(e.message),
      );
      assert.throws(
        () => pe.sinusoidal({ length: 3, dModel: 8, dtype: 'half' }),
        (e) => e instanceof RangeError && /'float32', 'float16', 'bfloat16'/.test(e.message),
      );
      if (typeof globalThis.Float16Array === 'function') {
        const r = pe.sinusoidal({ length: 3, dModel: 8, dtype: 'float16' });
        assert.ok(r.data instanceof globalThis.Float16Array);
      } else assert.ok(pe.sinusoidal({ length: 3, dModel: 8, dtype: 'float16' }).data instanceof Uint16Array);
    });

    test('ids and positions as the runtimes give them: BigInt64Array, Uint32Array, Float64Array, nested arrays, ORT and TF.js-style tensors', () => {
      const table = pe.tokenEmbedding({ vocabSize: 50, dModel: 4 });
      const want = table.lookup([3, 7, 11, 2]);
      for (const ids of [BigInt64Array.from([3n, 7n, 11n, 2n]), Uint32Array.from([3, 7, 11, 2]), Float64Array.from([3, 7, 11, 2]), [3n, 7n, 11n, 2n]])
        assert.deepEqual(table.lookup(ids).data, want.data);
      // tensors keep their shape: [batch, seq] ids -> [batch, seq, dModel]
      const ort = { data: BigInt64Array.from([3n, 7n, 11n, 2n]), dims: [2, 2], type: 'int64' };
      Object.setPrototypeOf(ort, { constructor: function Tensor() {} });
      for (const ids of [
        ort,
        [
          [3, 7],
          [11, 2],
        ],
        { data: Int32Array.from([3, 7, 11, 2]), shape: [2, 2] },
        new (class TfTensor {
          shape = [2, 2];
          dataSync() {
            return Int32Array.from([3, 7, 11, 2]);
          }
        })(),
      ]) {
        const got = table.lookup(ids);
        assert.deepEqual(got.shape, [2, 2, 4]);
        assert.deepEqual(got.data, want.data);
      }
      assert.throws(
        () => table.lookup(BigInt64Array.from([2n ** 60n])),
        (e) => e instanceof RangeError && /beyond 2\^53/.test(e.message),
      );
      table.dispose();
      // positions of the absolute table and of rope alike
      const byNumbers = pe.sinusoidal({ dModel: 8, positions: [4, 5, 6] }).data;
      assert.deepEqual(pe.sinusoidal({ dModel: 8, positions: BigInt64Array.from([4n, 5n, 6n]) }).data, byNumbers);
      assert.deepEqual(pe.sinusoidal({ dModel: 8, positions: { data: BigInt64Array.from([4n, 5n, 6n]), dims: [1, 3] } }).data, byNumbers);
      const x = { data: Float32Array.from(range(3 * 8), Math.sin), shape: [3, 8] };
      assert.deepEqual(pe.rope(x, { positions: BigInt64Array.from([4n, 5n, 6n]) }).data, pe.rope(x, { offset: 4 }).data);
    });
  });
}

// Node 20 has no Float16Array; Deno (the notebooks' kernel, a dev dependency) has. There, dtype
// 'float16' results are Float16Arrays, out may be one, and a Float16Array is a float16 input.
test('float16 results are Float16Arrays where the engine has one (Deno): the sweep, out, and Float16Array inputs', () => {
  const deno = fileURLToPath(new URL('../../node_modules/.bin/deno', import.meta.url));
  const index = new URL('../../src/js/index.js', import.meta.url).href;
  const n = 4 * 2 * 16;
  const f32 = Float32Array.from(range(n), (i) => f16Value(f16Bits(Math.sin(i) * 3))); // values halves hold exactly
  const child = `
    const { load } = await import(${JSON.stringify(index)});
    const input = JSON.parse(await new Response(Deno.stdin.readable).text());
    const values = new Float32Array(new Uint32Array(input.valueBits).buffer); // bits: -0 survives JSON
    const halfBits = input.halfBits;
    const bitsOf = (a) => Array.from(new Uint16Array(a.buffer, a.byteOffset, a.length));
    const report = { engine: typeof Float16Array, engineBits: bitsOf(Float16Array.from(values)) };
    for (const simd of [true, false]) {
      const pe = await load({ simd });
      const x = { data: values, shape: [1, values.length] };
      const zeros = { data: new Float32Array(values.length).fill(-0), shape: [1, values.length] };
      const got = pe.addPositional(x, zeros, { dtype: 'float16' }).data;
      const out = new Float16Array(values.length);
      const into = pe.addPositional(x, zeros, { dtype: 'float16', out }).data;
      const half = new Float16Array(new Uint16Array(halfBits).buffer);
      const rotated = pe.rope({ data: half, shape: [4, 2, 16] }, { offset: 9 }).data;
      report[pe.backend] = {
        type: got.constructor.name,
        bits: bitsOf(got),
        intoOut: into === out,
        outBits: bitsOf(out),
        ropeType: rotated.constructor.name,
        ropeBits: bitsOf(rotated),
      };
    }
    console.log(JSON.stringify(report));`;
  const input = JSON.stringify({ valueBits: Array.from(new Uint32Array(VALUES.buffer)), halfBits: Array.from(f32, f16Bits) });
  const report = JSON.parse(
    execFileSync(deno, ['eval', child], { input, encoding: 'utf8', env: { ...process.env, NO_COLOR: '1', DENO_NO_UPDATE_CHECK: '1' } }),
  );
  assert.equal(report.engine, 'function');
  const want = Array.from(VALUES, f16Bits);
  // the reference encoder and the engine's own Float16Array agree on every value of the sweep
  assert.deepEqual(report.engineBits, want);
  for (const pe of [simd, scalar]) {
    const r = report[pe.backend];
    assert.equal(r.type, 'Float16Array', pe.backend);
    const bad = range(VALUES.length).filter((i) => r.bits[i] !== want[i]);
    assert.deepEqual(
      bad.slice(0, 5).map((i) => [VALUES[i], r.bits[i].toString(16), want[i].toString(16)]),
      [],
      pe.backend,
    );
    assert.ok(r.intoOut, `${pe.backend}: out is the result`);
    assert.deepEqual(r.outBits, want, pe.backend);
    // a Float16Array input is read as float16, and gives a Float16Array
    assert.equal(r.ropeType, 'Float16Array', pe.backend);
    assert.deepEqual(r.ropeBits, Array.from(pe.rope({ data: f32, shape: [4, 2, 16] }, { offset: 9 }).data, f16Bits), pe.backend);
  }
});
