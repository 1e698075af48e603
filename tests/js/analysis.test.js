// The analyses: similarity, the shift matrix and nearest distances against float64 formulas; and at
// their edges: NaN and Infinity in stats, the largest similarity matrix the limits allow, inputs of
// many dimensions (which must not be copied whole into double), and the small-d kernels (several rows
// per SIMD batch) against float64 brute force.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { describe, test } from 'node:test';
import { promisify } from 'node:util';
import { LIMITS } from '../../src/js/contract.js';
import { estimateSeconds } from '../../src/js/cost.js';
import { backends, maxAbsDiff, range } from './helpers.js';

const [simd, scalar] = await backends();
const run = promisify(execFile);
const PACKAGE_URL = new URL('../../src/js/index.js', import.meta.url).href;

// Deterministic normal-ish floats (sum of uniforms).
function randomTable(rows, d, seed) {
  let s = seed >>> 0;
  const u = () => (s = (Math.imul(s, 1664525) + 1013904223) >>> 0) / 2 ** 32;
  return { data: Float32Array.from({ length: rows * d }, () => u() + u() + u() - 1.5), shape: [rows, d] };
}

for (const pe of [simd, scalar]) {
  describe(`analyses at the edges (${pe.backend})`, () => {
    test('stats against a float64 loop', () => {
      const data = Float32Array.from(range(1001).map((i) => Math.sin(i) * 3));
      const s = pe.stats({ data, shape: [7, 143] });
      const mean = data.reduce((a, b) => a + b, 0) / data.length;
      const std = Math.sqrt(data.reduce((a, b) => a + (b - mean) ** 2, 0) / data.length);
      assert.ok(Math.abs(s.mean - mean) < 1e-12 && Math.abs(s.std - std) < 1e-12);
      assert.equal(s.min, Math.min(...data));
      assert.equal(s.max, Math.max(...data));
      assert.deepEqual(pe.stats(data), s);
    });

    test('stats: NaN makes min, max, mean and std NaN whatever its place (as NumPy)', () => {
      for (const values of [[1, NaN], [NaN, 1], [NaN], [3, 1, NaN, 2], [NaN, -Infinity], [Infinity, NaN]]) {
        const s = pe.stats(new Float32Array(values));
        for (const key of ['min', 'max', 'mean', 'std']) assert.ok(Number.isNaN(s[key]), `${key} of [${values}] is ${s[key]}`);
      }
    });

    test('stats: Infinity keeps IEEE semantics (np.min, np.max, np.mean, np.std)', () => {
      assert.deepEqual(pe.stats(new Float32Array([1, Infinity])), { min: 1, max: Infinity, mean: Infinity, std: NaN });
      assert.deepEqual(pe.stats(new Float32Array([-Infinity, 2])), { min: -Infinity, max: 2, mean: -Infinity, std: NaN });
      assert.deepEqual(pe.stats(new Float32Array([-Infinity, Infinity])), { min: -Infinity, max: Infinity, mean: NaN, std: NaN });
      assert.deepEqual(pe.stats(new Float32Array([2, 4, 4, 4, 5, 5, 7, 9])), { min: 2, max: 9, mean: 5, std: 2 });
    });

    test('nearestDistances and similarity with small d match float64 brute force across their blocks', () => {
      for (const [rows, d] of [
        [1000, 1],
        [203, 2],
        [77, 3],
        [130, 8],
        [9, 64],
      ]) {
        const t = randomTable(rows, d, rows + d);
        // a duplicate row: distance exactly 0 for both
        t.data.copyWithin((rows - 1) * d, 4 * d, 5 * d);
        const x = Float64Array.from(t.data);
        const want = new Float64Array(rows).fill(Infinity);
        for (let i = 0; i < rows; i++)
          for (let j = i + 1; j < rows; j++) {
            let s = 0;
            for (let c = 0; c < d; c++) s += (x[i * d + c] - x[j * d + c]) ** 2;
            want[i] = Math.min(want[i], s);
            want[j] = Math.min(want[j], s);
          }
        const got = pe.nearestDistances(t);
        for (let i = 0; i < rows; i++) assert.equal(got[i], Math.fround(Math.sqrt(want[i])), `rows ${rows}, d ${d}, row ${i}`);
        assert.equal(got[4], 0);
        const dot = pe.similarity(t).data;
        for (let i = 0; i < rows; i += 7)
          for (let j = 0; j < rows; j++) {
            let s = 0;
            for (let c = 0; c < d; c++) s += x[i * d + c] * x[j * d + c];
            assert.ok(
              Math.abs(dot[i * rows + j] - s) <= 6e-8 * Math.abs(s) + 1e-12,
              `rows ${rows}, d ${d}: (${i}, ${j}) ${dot[i * rows + j]} vs ${s}`,
            );
          }
      }
    });
  });
}

for (const pe of [simd, scalar]) {
  describe(`similarity, shift matrix, distinguishability (${pe.backend})`, () => {
    test('dot similarity of a sinusoidal table depends only on the offset', () => {
      const t = pe.sinusoidal({ length: 40, dModel: 32 });
      const s = pe.similarity(t).data;
      const w = range(16).map((i) => 10000 ** ((-2 * i) / 32));
      for (let i = 0; i < 40; i++)
        for (let j = 0; j < 40; j++) assert.ok(Math.abs(s[i * 40 + j] - w.reduce((a, wk) => a + Math.cos((j - i) * wk), 0)) < 1e-4);
      const cos = pe.similarity(t, { metric: 'cosine' }).data;
      for (let i = 0; i < 40; i++) assert.ok(Math.abs(cos[i * 41] - 1) < 1e-6);
    });

    test('M_k maps PE(p) to PE(p + k)', () => {
      for (const [k, p] of [
        [1, 0],
        [5, 17],
        [-3, 100],
        [1000, 123456],
      ]) {
        const M = pe.shiftMatrix({ dModel: 16, k }).data;
        const x = pe.sinusoidal({ dModel: 16, positions: [p] }).data;
        const y = pe.sinusoidal({ dModel: 16, positions: [p + k] }).data;
        const mx = range(16).map((r) => range(16).reduce((a, c) => a + M[r * 16 + c] * x[c], 0));
        assert.ok(maxAbsDiff(mx, y) < 1e-5, `k=${k} p=${p}`);
      }
    });

    test('nearest distances against brute force', () => {
      const t = pe.sinusoidal({ length: 30, dModel: 8 });
      const nd = pe.nearestDistances(t);
      for (let i = 0; i < 30; i++) {
        let best = Infinity;
        for (let j = 0; j < 30; j++) if (j !== i) best = Math.min(best, Math.hypot(...range(8).map((c) => t.data[i * 8 + c] - t.data[j * 8 + c])));
        assert.ok(Math.abs(nd[i] - best) < 1e-5);
      }
    });
  });
}

// Largest inputs, in a child process (a fresh wasm memory, released afterwards).
async function child(code) {
  const { stdout } = await run(process.execPath, ['--input-type=module', '-e', code], { timeout: 300000, maxBuffer: 1 << 20 });
  return JSON.parse(stdout.trim().split('\n').at(-1));
}

// The largest sizes run on the SIMD build; the scalar build, which compiles the same blocked kernels
// (the same blocks, chunks and allocations: only the batch width differs), runs them at a quarter or
// less of the size, still over many blocks and chunks: its arithmetic is what differs, not its memory.
describe('the largest analyses the limits allow', () => {
  // One child process per backend runs every case below, each case an async function of its size
  // returning what it found (the SIMD child holds a wasm memory of over 1 GiB, grown once for all of
  // them): { case: { backend: result } }, computed once for the tests that read it.
  const cases = {};
  let results;
  const resultsOf = async (name) => {
    results ??= (async () => {
      const out = {};
      for (const [backend, simd] of [
        ['wasm-simd', true],
        ['wasm-scalar', false],
      ]) {
        const calls = Object.entries(cases).map(
          ([n, { body, sizes }]) => `res[${JSON.stringify(n)}] = await (async () => {${body(sizes[backend])}})();`,
        );
        const found = await child(
          `import { load } from ${JSON.stringify(PACKAGE_URL)};\nconst pe = await load({ simd: ${simd} });\nconst res = {};\n${calls.join('\n')}\nconsole.log(JSON.stringify(res));`,
        );
        for (const [n, r] of Object.entries(found)) (out[n] ??= {})[backend] = r;
      }
      return out;
    })();
    return (await results)[name];
  };
  const perBackend = (name, body, sizes) => {
    cases[name] = { body, sizes };
    return () => resultsOf(name);
  };

  // similarity of [n, 1]: the size limit allows n = 16384 (2^28 outputs); the time budget (fresh
  // memory for a 1 GiB result and its copy) may refuse it first. The largest n it accepts, as
  // analysis.js estimates the call (src/js/cost.js).
  const columnFits = (backend, n) =>
    estimateSeconds(backend, { similarityOutput: n * n, similarityOutputDim: n * n, inputValue: n }) <= LIMITS.maxCallSeconds;
  const largestColumn = (backend) => {
    let n = 16384;
    while (!columnFits(backend, n)) n--;
    return n;
  };
  const similarityOfColumn = perBackend(
    'column',
    (n) => `
      const n = ${n};
      const res = {};
      // below the size limit's 16384, the refusals of [16384, 1] and [n + 1, 1] (refused before they start)
      if (n < 16384)
        for (const m of new Set([16384, n + 1]))
          try {
            pe.similarity({ data: new Float32Array(m), shape: [m, 1] });
            res['refused' + m] = 'accepted';
          } catch (e) {
            res['refused' + m] = String(e);
          }
      const t = Float32Array.from({ length: n }, (_, i) => Math.fround(Math.sin(i) * 1000));
      const s = new Float32Array(n * n);
      // both metrics share the blocks; cosine (a pass for the norms first) on one backend
      for (const metric of pe.backend === 'wasm-simd' ? ['dot', 'cosine'] : ['dot']) {
        let bad = 0, checked = 0;
        try {
          pe.similarity({ data: t, shape: [n, 1] }, { metric, out: s });
          // d = 1: the double product of two floats is exact, so each output is it rounded once
          for (let k = 0; k < s.length; k += ${n >= 8192 ? 3989 : 631}, checked++) {
            const i = Math.floor(k / n), j = k % n;
            const want = metric === 'dot' ? Math.fround(t[i] * t[j]) : Math.sign(t[i]) * Math.sign(t[j]);
            if (s[k] !== want) bad++;
          }
          res[metric] = { bad, checked };
        } catch (e) {
          res[metric] = { error: String(e) };
        }
      }
      return res;
    `,
    { 'wasm-simd': largestColumn('wasm-simd'), 'wasm-scalar': largestColumn('wasm-scalar') },
  );
  test('similarity of the largest [n, 1] the limits accept (up to 2^28 outputs, 1 GiB) in blocks, exact to float rounding; past it, the time or size limit refuses', async () => {
    const r = await similarityOfColumn();
    const TIME =
      /^RangeError: posenc\.similarity: .*would run for about [\d.]+ s on this backend; a call may run for at most about 2 s \(LIMITS\.maxCallSeconds\)/;
    for (const [backend, metrics] of [
      ['wasm-simd', ['dot', 'cosine']],
      ['wasm-scalar', ['dot']],
    ]) {
      const n = largestColumn(backend);
      assert.ok(n >= 8192, `${backend}: the budget accepts only [${n}, 1]`);
      if (n < 16384) {
        assert.match(r[backend].refused16384, TIME, `${backend}: [16384, 1]`);
        assert.match(r[backend][`refused${n + 1}`], TIME, `${backend}: [${n + 1}, 1]`);
      }
      for (const metric of metrics) {
        const x = r[backend][metric];
        assert.equal(x.error, undefined, `${backend} ${metric}: ${x.error}`);
        assert.ok(x.checked > 16000 && x.bad === 0, `${backend} ${metric}: ${x.bad} of ${x.checked} sampled outputs differ`);
      }
    }
  });

  // [2, d] up to the size limit's d = 2^27 (1 GiB): both analyses at the largest d the time budget
  // accepts for both (as analysis.js estimates them: the input read dominates), rounded down to 24
  // significant bits so that the dot products below stay exact in float32.
  const WIDE = 2 ** 27;
  const wideFits = (backend, d) =>
    estimateSeconds(backend, { nearestPair: 1, nearestPairDimWide: d, inputValue: 2 * d }) <= LIMITS.maxCallSeconds &&
    estimateSeconds(backend, { similarityOutput: 4, similarityOutputDim: 4 * d, inputValue: 2 * d }) <= LIMITS.maxCallSeconds;
  const largestWide = (backend) => {
    let lo = 1,
      hi = WIDE + 1; // wideFits(lo), !wideFits(hi)
    if (wideFits(backend, WIDE)) return WIDE;
    while (hi - lo > 1) {
      const m = Math.floor((lo + hi) / 2);
      if (wideFits(backend, m)) lo = m;
      else hi = m;
    }
    const step = 2 ** Math.max(0, Math.ceil(Math.log2(lo)) - 24);
    return Math.floor(lo / step) * step;
  };
  const wideSizes = { 'wasm-simd': largestWide('wasm-simd'), 'wasm-scalar': largestWide('wasm-scalar') };
  const wideRows = perBackend(
    'wide',
    (d) => `
      const rows = 2, d = ${d};
      const res = {};
      // below the size limit, [2, 2^27] is refused before it starts (by the time budget, the test checks)
      if (d < ${WIDE}) {
        const big = { data: new Float32Array(2 * ${WIDE}), shape: [2, ${WIDE}] };
        for (const f of ['nearestDistances', 'similarity'])
          try { pe[f](big); res['refused ' + f] = 'accepted'; } catch (e) { res['refused ' + f] = String(e); }
      }
      // row r is (r + 1) * (+1, -1, -1, +1, -1, -1, ...): distance sqrt(d), dot products (r + 1)(q + 1) d (exact),
      // cosines 1; each row written by doubling its first period
      const data = new Float32Array(rows * d);
      for (let r = 0; r < rows; r++) {
        const row = data.subarray(r * d, (r + 1) * d);
        row.set([r + 1, -(r + 1), -(r + 1)]);
        for (let n = 3; n < d; n *= 2) row.copyWithin(n, 0, Math.min(n, d - n));
      }
      const t = { data, shape: [rows, d] };
      try { res.nearest = Array.from(pe.nearestDistances(t)); } catch (e) { res.nearest = String(e); }
      try { res.dot = Array.from(pe.similarity(t).data); } catch (e) { res.dot = String(e); }
      // cosine shares the blocks (a pass for the norms first): on one backend
      if (pe.backend === 'wasm-simd')
        try { res.cosine = Array.from(pe.similarity(t, { metric: 'cosine' }).data); } catch (e) { res.cosine = String(e); }
      return res;
    `,
    wideSizes,
  );
  test('[2, d], rows of many dimensions up to 2^27 (1 GiB): distances and similarity without a copy in double, at the largest d the time budget accepts', async () => {
    const r = await wideRows();
    const TIME =
      /^RangeError: posenc\.(nearestDistances|similarity): .*would run for about [\d.]+ s on this backend; a call may run for at most about 2 s \(LIMITS\.maxCallSeconds\)/;
    for (const backend of ['wasm-simd', 'wasm-scalar']) {
      const x = r[backend];
      const d = wideSizes[backend];
      assert.ok(d >= 2 ** 24, `${backend}: the budget accepts only [2, ${d}]`);
      if (d < WIDE) for (const f of ['nearestDistances', 'similarity']) assert.match(x[`refused ${f}`], TIME, `${backend}: ${f} of [2, 2^27]`);
      const distance = Math.fround(Math.sqrt(d));
      assert.deepEqual(x.nearest, [distance, distance], `${backend}: ${x.nearest}`);
      assert.deepEqual(x.dot, [d, 2 * d, 2 * d, 4 * d], `${backend}: ${x.dot}`);
      if (backend === 'wasm-simd') assert.ok(Array.isArray(x.cosine) && x.cosine.every((v) => Math.abs(v - 1) <= 1e-6), `${backend}: ${x.cosine}`);
    }
  });
});
