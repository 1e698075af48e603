// Per-unit run times of the tables (src/js/cost.js COSTS): first the rotations, sinusoidal, rope and ropeCache,
// on both wasm backends. Each function's time is modelled as
//   value * (values written) + frequency * (frequencies) + blockFrequency * (row blocks * frequencies)
//   + angle * (angles of non-consecutive rows) + wideAngle * (those angles beyond 2^35)
// (and per value: wavelengths, learned's normal init, the embedding lookups; get_rope_index per id), where consecutive rows cost `value` each (angle
// addition), a call sets up per-frequency tables once (`frequency`: sinusoidal, ropeCache) or per
// block of rows the JS hands to the core (`blockFrequency`: what makes very wide rows slow), rows at
// explicit, non-consecutive positions reduce each angle on their own (`angle`, Cody-Waite) and angles
// beyond 2^35 take Payne-Hanek's exact reduction (`wideAngle`, on top of `angle`). A narrow table,
// one and sixteen very wide rows, and explicit positions near 1e6 and 1e300 isolate the units. Times are CPU seconds of this process, the best
// of REPEATS runs; the table to paste into cost.js is the measurement times MARGIN, rounded up.
//
// Usage: node scripts/limits/tables.mjs [--quick]   (about a minute; --quick: smaller calls)
import { load } from '../../src/js/index.js';
import { blockRowsOf } from '../../src/js/heap.js';

const QUICK = process.argv.includes('--quick');
const REPEATS = QUICK ? 1 : 3;
const MARGIN = 1.25;
const S = QUICK ? 1 / 8 : 1; // scales the calls' sizes
const ROPE_BLOCK_BYTES = 1 << 18; // src/js/rope.js

function cpu(fn, repeats = REPEATS) {
  let best = Infinity;
  for (let i = 0; i < repeats; i++) {
    const c = process.cpuUsage();
    fn();
    const { user, system } = process.cpuUsage(c);
    best = Math.min(best, (user + system) * 1000); // ns
  }
  return best;
}
const spread = (n, scale) => Float64Array.from({ length: n }, (_, i) => scale * (1 + ((i * 0.6180339887498949) % 1)));
const x = (shape) => ({ data: new Float32Array(shape.reduce((a, b) => a * b, 1)).fill(0.5), shape });

// Per function: `value` (a narrow table of consecutive rows), `setup` (very wide rows: the
// per-frequency costs, as calls of `rows` rows; `frequency` once per call, `blockFrequency` per
// block, the other unit fitted from the first result) and `angle` (explicit positions).
const rows = Math.round(2 ** 19 * S);
const wide = Math.round(2 ** 22 * S); // columns: far past WIDE (src/js/cost.js)
const explicit = Math.round(2 ** 16 * S);
const ropeCalls = (n) => Math.ceil(n / blockRowsOf(n, wide, Float32Array, ROPE_BLOCK_BYTES)) + 1; // as src/js/rope.js counts them
const FUNCTIONS = {
  sinusoidal: {
    value: (pe) => ({ run: () => pe.sinusoidal({ length: rows, dModel: 64 }), values: rows * 64 }),
    // one row: the call's setup (frequency); more rows: wideValue per value of rows past WIDE columns
    setup: (pe, n, d = wide) => ({ run: () => pe.sinusoidal({ length: n, dModel: d }), values: n * d, frequency: d / 2 }),
    angle: (pe, scale) => {
      const positions = spread(explicit, scale);
      return { run: () => pe.sinusoidal({ positions, dModel: 64 }), values: explicit * 64, angles: explicit * 32 };
    },
  },
  rope: {
    value: (pe) => {
      const t = x([rows, 1, 64]);
      return { run: () => pe.rope(t), values: rows * 64 };
    },
    // every core call sets up its frequencies: blockFrequency per call
    setup: (pe, n) => {
      const t = x([n, 1, wide]);
      return { run: () => pe.rope(t), values: n * wide, blockFrequency: ropeCalls(n) * (wide / 2) };
    },
    angle: (pe, scale) => {
      const t = x([explicit, 1, 64]);
      const positions = spread(explicit, scale);
      return { run: () => pe.rope(t, { positions }), values: explicit * 64, angles: explicit * 32 };
    },
  },
  ropeCache: {
    value: (pe) => ({ run: () => pe.ropeCache({ length: rows / 2, rotaryDim: 128 }), values: (rows / 2) * 128 }),
    // one core call: `frequency` once; more rows: wideValue per value of rows past WIDE columns
    setup: (pe, n, d = wide) => ({ run: () => pe.ropeCache({ length: n, rotaryDim: d }), values: n * d, frequency: d / 2 }),
    angle: (pe, scale) => {
      const positions = spread(explicit, scale);
      return { run: () => pe.ropeCache({ positions, rotaryDim: 64 }), values: explicit * 64, angles: explicit * 32 };
    },
  },
};

const result = {};
for (const simd of [false, true]) {
  const pe = await load({ simd });
  const costs = {};
  for (const [name, f] of Object.entries(FUNCTIONS)) {
    const v = f.value(pe);
    const value = cpu(v.run) / v.values;
    // the per-frequency units from one very wide row (its values at the narrow cost), then the cost
    // of each value of eight such rows (the frequency tables no longer fit in cache: wideValue)
    const c = { value, frequency: 0, blockFrequency: 0, wideValue: 0 };
    const one = f.setup(pe, 1);
    const unit = one.frequency ? 'frequency' : 'blockFrequency';
    c[unit] = Math.max(0, (cpu(one.run) - value * one.values) / one[unit]);
    const eight = f.setup(pe, 8);
    const t8 = cpu(eight.run);
    if (one.frequency) {
      // and the widest rows, 2^24 values, once: the first call of that size (as a user's), in a fresh
      // stretch of memory; the larger of the two readings
      const widest = f.setup(pe, 2, 2 ** 24);
      const once = cpu(widest.run, 1);
      c.wideValue = Math.max(value, (t8 - c.frequency * eight.frequency) / eight.values, (once - c.frequency * widest.frequency) / widest.values);
    } else c.blockFrequency = Math.max(c.blockFrequency, (t8 - value * eight.values) / eight.blockFrequency);
    const a = f.angle(pe, 1e6);
    c.angle = Math.max(0, (cpu(a.run) - value * a.values) / a.angles);
    const w = f.angle(pe, 1e300);
    c.wideAngle = Math.max(0, (cpu(w.run) - value * w.values) / w.angles - c.angle);
    costs[name] = c;
    console.log(
      `${pe.backend.padEnd(11)} ${name.padEnd(10)} value ${value.toFixed(2)} ns, wideValue ${c.wideValue.toFixed(2)} ns, frequency ${c.frequency.toFixed(1)} ns, blockFrequency ${c.blockFrequency.toFixed(1)} ns, ` +
        `angle ${c.angle.toFixed(1)} ns, wideAngle ${c.wideAngle.toFixed(1)} ns`,
    );
  }
  // the other tables' values: wavelengths, the normal init, lookups, get_rope_index's ids (in JS)
  const m = Math.round(2 ** 24 * S);
  const wavelength = cpu(() => pe.wavelengths({ dModel: 2 * m })) / m;
  const normalValue = cpu(() => pe.learned({ maxLength: m / 64, dModel: 64 }).dispose()) / m;
  const table = pe.learned({ maxLength: 1024, dModel: 64, init: 'zeros' });
  const ids = Int32Array.from({ length: m / 64 }, (_, i) => (i * 7919) % 1024);
  const lookupValue = cpu(() => table.lookup(ids)) / m;
  table.dispose();
  const text = { data: new Int32Array(m / 8).fill(7), shape: [1, m / 8] };
  const ropeIndexId = cpu(() => pe.mropePositions({ inputIds: text, imageTokenId: 1, videoTokenId: 2, visionStartTokenId: 3 })) / (m / 8);
  // an input of 2^26 values read (stats: the copy into wasm memory and one pass)
  const input = { data: new Float32Array(4 * m).fill(0.5), shape: [4 * m] };
  const inputValue = cpu(() => pe.stats(input)) / (4 * m);
  console.log(
    `${pe.backend.padEnd(11)} input ${inputValue.toFixed(2)} ns/value, wavelengths ${wavelength.toFixed(2)} ns/value, learned normal ${normalValue.toFixed(2)} ns/value, ` +
      `lookup ${lookupValue.toFixed(2)} ns/value, mropePositions ${ropeIndexId.toFixed(2)} ns/id`,
  );
  // one pair of angle costs for the three (the same reduction kernel): the largest
  const up = (v) => Number((v * MARGIN).toPrecision(2));
  const angle = Math.max(...Object.values(costs).map((c) => c.angle));
  const wideAngle = Math.max(...Object.values(costs).map((c) => c.wideAngle));
  result[pe.backend] = {
    sinusoidalValue: up(costs.sinusoidal.value),
    sinusoidalWideValue: up(costs.sinusoidal.wideValue),
    sinusoidalFrequency: up(costs.sinusoidal.frequency),
    ropeValue: up(costs.rope.value),
    ropeBlockFrequency: up(costs.rope.blockFrequency),
    ropeCacheValue: up(costs.ropeCache.value),
    ropeCacheWideValue: up(costs.ropeCache.wideValue),
    ropeCacheFrequency: up(costs.ropeCache.frequency),
    angle: up(angle),
    wideAngle: up(wideAngle),
    wavelength: up(wavelength),
    normalValue: up(normalValue),
    lookupValue: up(lookupValue),
    ropeIndexId: up(ropeIndexId),
    inputValue: up(inputValue),
  };
}
console.log(`\nfor src/js/cost.js COSTS (measured x ${MARGIN}, 2 significant digits):`);
for (const [backend, t] of Object.entries(result))
  console.log(`  '${backend}': ${JSON.stringify(t).replace(/"/g, '').replace(/,/g, ', ').replace(/:/g, ': ')}`);
