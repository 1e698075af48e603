// Per-call cost of small calls through the JS API and the wasm boundary: the figures a change to the
// boundary must keep (a 64 x 64 sinusoidal table, one row of rope, a small attention, a table lookup),
// and one larger rotation for the per-block cost ([2048, 128]: 4 blocks). Prints the median of many
// timed batches per call and backend (a batch is about 20 ms of calls: 2000 of the small ones).
//   node scripts/bench/calls.mjs [--rounds N]
//   node scripts/bench/calls.mjs --against DIR [--rounds N]: also loads DIR/src/js/index.js (another
//     checkout with its own built src/js/wasm, e.g. the commit before a change) and times the two in
//     alternating batches in this one process, so that a busy machine slows both alike; prints both
//     medians and the median of the per-round ratios (this tree / DIR).
//   --other-first: load DIR's modules before this tree's. Which tree's modules are loaded first shifts
//     the small calls' ratio by up to about 10% either way on a busy machine, so compare a change in
//     both orders (two runs) and take the geometric mean of the two ratios.
//   --only TEXT: only the calls whose name contains TEXT.
import { pathToFileURL } from 'node:url';
import { resolve } from 'node:path';
import { load } from '../../src/js/index.js';

const flag = (name) => {
  const i = process.argv.indexOf(name);
  return i > 0 ? process.argv[i + 1] : undefined;
};
const ROUNDS = Number(flag('--rounds') ?? 41);
const against = flag('--against');
const only = flag('--only') ?? '';
const MAX_BATCH = 2000;
const loadOther = against ? (await import(pathToFileURL(resolve(against, 'src/js/index.js')).href)).load : undefined;

function median(a) {
  const s = [...a].sort((x, y) => x - y);
  return s[s.length >> 1];
}

// The calls, on a posenc object.
function callsOf(pe) {
  const row = { data: new Float32Array(64).map((_, i) => Math.sin(i)), shape: [1, 64] };
  const heads = { data: new Float32Array(32 * 128).map((_, i) => Math.cos(i)), shape: [1, 32, 128] };
  const out64 = new Float32Array(64);
  const q = { data: new Float32Array(8 * 16).map((_, i) => Math.sin(i)), shape: [8, 16] };
  const table = pe.learned({ maxLength: 64, dModel: 64 });
  const long = { data: new Float32Array(2048 * 128).map((_, i) => Math.sin(i)), shape: [2048, 128] };
  return {
    'sinusoidal 64x64': () => pe.sinusoidal({ length: 64, dModel: 64 }),
    'rope one row [1, 64]': () => pe.rope(row, { offset: 100 }),
    'rope one row [1, 64], out': () => pe.rope(row, { offset: 100, out: out64 }),
    'rope [2048, 128]': () => pe.rope(long),
    'rope one row [1, 32, 128], llama3': () =>
      pe.rope(heads, {
        offset: 4096,
        base: 500000,
        scaling: { type: 'llama3', factor: 8, originalMaxPositions: 8192, lowFreqFactor: 1, highFreqFactor: 4 },
      }),
    'ropeCache 64 rows, dim 64': () => pe.ropeCache({ rotaryDim: 64, length: 64 }),
    'attention [8, 16]': () => pe.attention({ q, k: q, v: q, weights: false }),
    'learned lookup 8 ids': () => table.lookup([0, 1, 2, 3, 4, 5, 6, 7]),
  };
}

// Microseconds per call of one batch of n calls.
function batch(f, n) {
  const t0 = performance.now();
  for (let i = 0; i < n; i++) f();
  return ((performance.now() - t0) / n) * 1000;
}
// Calls per batch: about 20 ms of them, at most MAX_BATCH.
function batchSize(f) {
  let t = Infinity;
  for (let i = 0; i < 5; i++) t = Math.min(t, batch(f, 3)); // the first runs are cold
  return Math.max(3, Math.min(MAX_BATCH, Math.round(20000 / t)));
}

for (const simd of [true, false]) {
  const otherFirst = loadOther && process.argv.includes('--other-first');
  const first = otherFirst ? await loadOther({ simd }) : undefined;
  const pe = await load({ simd });
  const mine = callsOf(pe);
  const theirs = loadOther ? callsOf(first ?? (await loadOther({ simd }))) : undefined;
  for (const name of Object.keys(mine).filter((n) => n.includes(only))) {
    const [a, b] = [mine[name], theirs?.[name]];
    const n = batchSize(a);
    batch(a, n); // warm up
    if (b) batch(b, n);
    const samples = [];
    const other = [];
    for (let r = 0; r < ROUNDS; r++) {
      samples.push(batch(a, n));
      if (b) other.push(batch(b, n));
    }
    const label = `${pe.backend.padEnd(12)} ${name.padEnd(36)}`;
    if (!b) console.log(`${label} ${median(samples).toFixed(2)} µs`);
    else {
      const ratio = median(samples.map((s, i) => s / other[i]));
      console.log(`${label} ${median(samples).toFixed(2)} µs, against ${median(other).toFixed(2)} µs: ratio ${ratio.toFixed(3)}`);
    }
  }
}
