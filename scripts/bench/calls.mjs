// Per-call cost of small calls through the JS API and the wasm boundary: the figures a change to the
// boundary must keep (a 64 x 64 sinusoidal table, one row of rope, a small attention, a table lookup).
// Prints the median of many timed batches per call and backend; run it before and after a change, on
// an idle machine, and compare.   node scripts/bench/calls.mjs [--rounds N]
import { load } from '../../src/js/index.js';

const arg = process.argv.indexOf('--rounds');
const ROUNDS = arg > 0 ? Number(process.argv[arg + 1]) : 41;
const BATCH = 2000;

function median(a) {
  const s = [...a].sort((x, y) => x - y);
  return s[s.length >> 1];
}

for (const simd of [true, false]) {
  const pe = await load({ simd });
  const backend = pe.backend;
  const row = { data: new Float32Array(64).map((_, i) => Math.sin(i)), shape: [1, 64] };
  const heads = { data: new Float32Array(32 * 128).map((_, i) => Math.cos(i)), shape: [1, 32, 128] };
  const out64 = new Float32Array(64);
  const q = { data: new Float32Array(8 * 16).map((_, i) => Math.sin(i)), shape: [8, 16] };
  const table = pe.learned({ maxLength: 64, dModel: 64 });
  const calls = {
    'sinusoidal 64x64': () => pe.sinusoidal({ length: 64, dModel: 64 }),
    'rope one row [1, 64]': () => pe.rope(row, { offset: 100 }),
    'rope one row [1, 64], out': () => pe.rope(row, { offset: 100, out: out64 }),
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
  for (const [name, f] of Object.entries(calls)) {
    for (let i = 0; i < BATCH; i++) f(); // warm up
    const samples = [];
    for (let r = 0; r < ROUNDS; r++) {
      const t0 = performance.now();
      for (let i = 0; i < BATCH; i++) f();
      samples.push(((performance.now() - t0) / BATCH) * 1000);
    }
    console.log(`${backend.padEnd(12)} ${name.padEnd(36)} ${median(samples).toFixed(2)} µs`);
  }
  table.dispose();
}
