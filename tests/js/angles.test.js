// Every rotating encoding against an exact reduction of its angles, at any finite position.
//
// The reference takes the position p and the frequency w as the exact dyadic rationals their doubles
// are (BigInt mantissa times a power of two), multiplies them exactly, and reduces the product modulo
// 2*pi with 2*pi known to 1200 bits (Machin's formula in BigInt): exact for every product a double can
// hold. The frequencies are ones whose doubles the test knows exactly without calling posenc: 1, 1/4 and
// 4 (base 16 or 1/16 with dModel 4), 2^±498 (base 2^∓996), and 1/factor for RoPE's linear scaling
// (an IEEE division, the same in JavaScript and in the core).
import assert from 'node:assert/strict';
import { afterEach, beforeEach, describe, test } from 'node:test';
import { backends } from './helpers.js';

const [simd, scalar] = await backends();

// ---- the exact reference -----------------------------------------------------------------------------
const FRACTION = 1200n; // fixed-point bits after the binary point

function arctanInverse(x, bits) {
  // atan(1/x) 2^bits = sum (-1)^k 2^bits / ((2k + 1) x^(2k+1))
  let term = (1n << bits) / x;
  let sum = 0n;
  for (let k = 0n; term !== 0n; k++, term /= x * x) sum += (k % 2n ? -term : term) / (2n * k + 1n);
  return sum;
}
// 2*pi 2^FRACTION (to within 1), with 32 guard bits: pi = 16 atan(1/5) - 4 atan(1/239)
const TWO_PI = ((16n * arctanInverse(5n, FRACTION + 32n) - 4n * arctanInverse(239n, FRACTION + 32n)) * 2n) >> 32n;
const PI = TWO_PI / 2n;

// A finite double as [m, e] with v = m 2^e exactly (m a BigInt).
const view = new DataView(new ArrayBuffer(8));
function dyadic(v) {
  view.setFloat64(0, v);
  const hi = view.getUint32(0);
  const bits = (hi >>> 20) & 0x7ff;
  let m = (BigInt(hi & 0xfffff) << 32n) | BigInt(view.getUint32(4));
  if (bits) m |= 1n << 52n;
  return [hi >>> 31 ? -m : m, bits ? bits - 1075 : -1074];
}

// p*w mod 2*pi in (-pi, pi], as a double (to ~1e-18), for the exact product of two doubles.
const cache = new Map();
function exactAngle(p, w) {
  const key = `${p}|${w}`;
  let a = cache.get(key);
  if (a !== undefined) return a;
  const [mp, ep] = dyadic(p);
  const [mw, ew] = dyadic(w);
  const shift = BigInt(ep + ew) + FRACTION;
  let r = shift >= 0n ? (mp * mw) << shift : (mp * mw) >> -shift;
  r %= TWO_PI;
  if (r > PI) r -= TWO_PI;
  if (r < -PI) r += TWO_PI;
  a = Number(r >> (FRACTION - 1000n)) * 2 ** -1000; // correctly rounded
  cache.set(key, a);
  return a;
}

test('the exact reference knows sin(1e22) and 2*pi', () => {
  // sin(1e22) = -0.8522008497671888 (the classic hard case of argument reduction)
  assert.ok(Math.abs(Math.sin(exactAngle(1e22, 1)) - -0.8522008497671888) < 1e-16);
  // 2*pi as a double is 2.4492935982947064e-16 below 2*pi
  assert.ok(Math.abs(exactAngle(2 * Math.PI, 1) / -2.4492935982947064e-16 - 1) < 1e-15);
});

// ---- positions: log-uniform over [1e-3, 1e308], with zero, negative, fractional and hard ones ----------
let seed = 0x9e3779b9;
function uniform() {
  // mulberry32
  seed = (seed + 0x6d2b79f5) | 0;
  let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
  t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
  return ((t ^ (t >>> 14)) >>> 0) / 2 ** 32;
}
const HARD = [
  0,
  1,
  710, // 226 pi + 6e-5
  491701844, // ~156513558 pi
  2 ** 35,
  1e11,
  1e12,
  1e15,
  2 ** 53,
  2 ** 53 - 1,
  1e17,
  1e22,
  1e300,
  6381956970095103 * 2 ** 797, // the double nearest a multiple of pi/2
  Number.MAX_VALUE,
  -1e17,
  -(2 ** 60) - 2 ** 8,
];
const POSITIONS = [...HARD];
while (POSITIONS.length < 10000) {
  const i = POSITIONS.length;
  if (i % 10 === 7)
    POSITIONS.push(uniform() * 10 ** (uniform() * 16)); // fractional, up to 1e16
  else POSITIONS.push((i % 10 === 3 ? -1 : 1) * 10 ** (-3 + 311 * uniform()));
}

// The largest error over rows of [sin, cos] pairs: got(r, i) -> [sin, cos] of position rowPos(r) at
// frequency w[i]; returns { error, where }.
function worst(rows, w, rowPos, got) {
  let error = 0;
  let where = '';
  for (let r = 0; r < rows; r++) {
    const p = rowPos(r);
    for (let i = 0; i < w.length; i++) {
      const a = exactAngle(p, w[i]);
      const [s, c] = got(r, i);
      const e = Math.max(Math.abs(s - Math.sin(a)), Math.abs(c - Math.cos(a)));
      if (!(e <= error)) {
        error = e;
        where = `position ${p}, frequency ${w[i]}: got (${s}, ${c}), exact (${Math.sin(a)}, ${Math.cos(a)})`;
      }
    }
  }
  return { error, where };
}
const TOLERANCE = 1e-6;
// Fails beyond TOLERANCE; reports the worst error as the test's diagnostic.
let worstSeen = 0;
function assertExact({ error, where }) {
  assert.ok(error <= TOLERANCE, `error ${error} at ${where}`);
  worstSeen = Math.max(worstSeen, error);
}

// Frequency sets the test knows exactly: sinusoidal dModel 4 with these bases has w = [1, base^(-1/2)].
const BASES = [
  { base: 16, w: [1, 0.25] },
  { base: 1 / 16, w: [1, 4] },
  { base: 2 ** 996, w: [1, 2 ** -498] },
  { base: 2 ** -996, w: [1, 2 ** 498] },
];
// Positions whose angles stay within double's range at every frequency of w.
const finiteFor = (w) => POSITIONS.filter((p) => w.every((f) => Number.isFinite(p * f)));
const OFFSET_LENGTH = 3;
const offsetsFor = (w) => finiteFor(w).filter((p) => w.every((f) => Number.isFinite((Math.abs(p) + OFFSET_LENGTH) * f)));

for (const pe of [simd, scalar]) {
  describe(`exact angles at any finite position (${pe.backend})`, () => {
    beforeEach(() => {
      worstSeen = 0;
    });
    afterEach((t) => t.diagnostic(`worst error ${worstSeen.toExponential(2)}`));

    test('sinusoidal, explicit positions, both layouts, four bases', () => {
      for (const { base, w } of BASES) {
        const positions = finiteFor(w);
        for (const layout of ['interleaved', 'split']) {
          const t = pe.sinusoidal({ dModel: 4, base, layout, positions }).data;
          // interleaved: s0 c0 s1 c1; split: s0 s1 c0 c1
          const at = layout === 'interleaved' ? (r, i) => [t[4 * r + 2 * i], t[4 * r + 2 * i + 1]] : (r, i) => [t[4 * r + i], t[4 * r + 2 + i]];
          assertExact(worst(positions.length, w, (r) => positions[r], at));
        }
      }
      // dModel 2: w = [1] whatever the base, at every position
      const t = pe.sinusoidal({ dModel: 2, positions: POSITIONS }).data;
      assertExact(
        worst(
          POSITIONS.length,
          [1],
          (r) => POSITIONS[r],
          (r) => [t[2 * r], t[2 * r + 1]],
        ),
      );
    });

    test('sinusoidal, offset + row (rounded as a double), both layouts', () => {
      for (const { base, w } of BASES.slice(0, 2)) {
        for (const layout of ['interleaved', 'split']) {
          let error = { error: 0, where: '' };
          for (const offset of offsetsFor(w)) {
            const t = pe.sinusoidal({ length: OFFSET_LENGTH, dModel: 4, base, layout, offset }).data;
            const at = layout === 'interleaved' ? (r, i) => [t[4 * r + 2 * i], t[4 * r + 2 * i + 1]] : (r, i) => [t[4 * r + i], t[4 * r + 2 + i]];
            const e = worst(OFFSET_LENGTH, w, (r) => offset + r, at);
            if (e.error > error.error) error = e;
          }
          assertExact(error);
        }
      }
    });

    test('sinusoidal, long runs of rows (anchored blocks) below, across and above 2^53', () => {
      const w = [1, 0.25];
      for (const offset of [2 ** 53 - 300, 2 ** 53 - 100, 2 ** 53 + 1000, 1e15 + 0.5, -(2 ** 52) - 77, 2 ** 40 + 0.25, 9e15, 1e300]) {
        const t = pe.sinusoidal({ length: 200, dModel: 4, base: 16, offset }).data;
        assertExact(
          worst(
            200,
            w,
            (r) => offset + r,
            (r, i) => [t[4 * r + 2 * i], t[4 * r + 2 * i + 1]],
          ),
        );
      }
    });

    test('rope, explicit positions and offsets, half and interleaved layouts, linear scalings', () => {
      // [seq, 2] rows of (1, 0) rotate to (cos, sin); factor f makes the frequency 1/f exactly
      for (const factor of [1, 3, 7e4, 2 ** 100]) {
        const w = [1 / factor];
        const scaling = factor === 1 ? undefined : { type: 'linear', factor };
        const positions = finiteFor(w);
        const x = { data: new Float32Array(2 * positions.length).map((_, j) => (j % 2 ? 0 : 1)), shape: [positions.length, 2] };
        const t = pe.rope(x, { positions, scaling }).data;
        assertExact(
          worst(
            positions.length,
            w,
            (r) => positions[r],
            (r) => [t[2 * r + 1], t[2 * r]],
          ),
        );
        const y = { data: new Float32Array(2 * OFFSET_LENGTH).map((_, j) => (j % 2 ? 0 : 1)), shape: [OFFSET_LENGTH, 2] };
        let error = { error: 0, where: '' };
        for (const offset of offsetsFor(w).filter((_, k) => k % 4 === 0)) {
          const u = pe.rope(y, { offset, scaling }).data;
          const e = worst(
            OFFSET_LENGTH,
            w,
            (r) => offset + r,
            (r) => [u[2 * r + 1], u[2 * r]],
          );
          if (e.error > error.error) error = e;
        }
        assertExact(error);
      }
      // frequencies above 1 (a scaling factor is at least 1): dim 4, base b has invFreq [1, b^-1/2]
      for (const base of [1e-6, 2 ** -200]) {
        const w = [1, base ** -0.5];
        const positions = finiteFor(w);
        const m = positions.length;
        const t = pe.rope({ data: new Float32Array(4 * m).map((_, j) => (j % 4 < 2 ? 1 : 0)), shape: [m, 4] }, { positions, base }).data;
        assertExact(
          worst(
            m,
            w,
            (r) => positions[r],
            (r, i) => [t[4 * r + 2 + i], t[4 * r + i]],
          ),
        );
      }
      // dim 4, base 16: invFreq [1, 1/4]; half pairs (0, 2), (1, 3); interleaved (0, 1), (2, 3)
      const n = POSITIONS.length;
      const half = pe.rope(
        { data: new Float32Array(4 * n).map((_, j) => (j % 4 < 2 ? 1 : 0)), shape: [n, 4] },
        { positions: POSITIONS, base: 16 },
      ).data;
      assertExact(
        worst(
          n,
          [1, 0.25],
          (r) => POSITIONS[r],
          (r, i) => [half[4 * r + 2 + i], half[4 * r + i]],
        ),
      );
      const inter = pe.rope(
        { data: new Float32Array(4 * n).map((_, j) => (j % 2 ? 0 : 1)), shape: [n, 4] },
        { positions: POSITIONS, base: 16, layout: 'interleaved' },
      ).data;
      assertExact(
        worst(
          n,
          [1, 0.25],
          (r) => POSITIONS[r],
          (r, i) => [inter[4 * r + 2 * i + 1], inter[4 * r + 2 * i]],
        ),
      );
    });

    test('rope at offsets past 2^53: row r is at offset + r as a double, as with explicit positions', () => {
      const seq = 64;
      const x = { data: new Float32Array(seq * 6).map((_, j) => Math.sin(j)), shape: [seq, 6] };
      for (const offset of [2 ** 54, 2 ** 53 - 10, -(2 ** 60) + 0.5 * 2 ** 8, 1e17 + 3]) {
        const positions = Float64Array.from({ length: seq }, (_, r) => offset + r);
        assert.deepEqual(pe.rope(x, { offset, base: 100 }).data, pe.rope(x, { positions, base: 100 }).data, String(offset));
      }
    });

    test('shiftMatrix: M_k holds cos(k w), sin(k w) at any finite k', () => {
      for (const { base, w } of BASES.slice(0, 2)) {
        let error = { error: 0, where: '' };
        for (const k of finiteFor(w)) {
          const m = pe.shiftMatrix({ dModel: 4, base, k }).data;
          // pair i: rows 2i, 2i + 1 of [[c, s], [-s, c]] on the diagonal
          const e = worst(
            1,
            w,
            () => k,
            (_, i) => [m[2 * i * 4 + 2 * i + 1], m[2 * i * 4 + 2 * i]],
          );
          if (e.error > error.error) error = e;
        }
        assertExact(error);
      }
    });

    test('an angle beyond double range is a RangeError naming the position and the frequency', () => {
      const named = (e) =>
        e instanceof RangeError && /^posenc\.\w+: the angle of (position|k =) 1e\+308 at frequency 4 .*beyond double's range/.test(e.message);
      assert.throws(() => pe.sinusoidal({ dModel: 4, base: 1 / 16, positions: [0, 1e308] }), named);
      assert.throws(() => pe.sinusoidal({ length: 2, dModel: 4, base: 1 / 16, offset: 1e308 }), named);
      assert.throws(
        () => pe.shiftMatrix({ dModel: 4, base: 1 / 16, k: 1e308 }),
        (e) => named(e) && /base 0\.0625/.test(e.message),
      );
      const x = { data: new Float32Array([1, 0, 0, 0]), shape: [1, 4] };
      assert.throws(() => pe.rope(x, { positions: [1e308], base: 1 / 16 }), named);
      // the module keeps working, and the largest finite angles are fine
      assert.equal(pe.sinusoidal({ dModel: 2, positions: [Number.MAX_VALUE] }).shape[0], 1);
      assert.throws(() => pe.sinusoidal({ dModel: 4, positions: [Number.MAX_VALUE], base: 2 ** -996 }), RangeError);
    });
  });
}
