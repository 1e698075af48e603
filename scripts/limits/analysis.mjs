// Per-unit run times of the pairwise analyses, the figures src/js/cost.js budgets calls with:
// nanoseconds per pair of rows for nearestDistances (rows (rows - 1) / 2 pairs) and per output
// element for similarity (rows^2 elements, 'dot' and 'cosine'), on both wasm backends, at
// d = 1, 2, 8, 64, 512, plus a fit ns = a + b d per unit (the largest a and b that the
// measurements need, so the fit never underestimates them).
//
// Usage: node scripts/limits/analysis.mjs [--quick] [--json]
//   --quick: smaller inputs (a rough figure in a few seconds); --json: print the table as JSON too.
// The best of several repetitions is kept (the machine's noise only ever adds time). Run it on an idle
// machine; every call is timed alone, with its output buffer allocated once (out).
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const { load } = await import(pathToFileURL(path.join(ROOT, 'src/js/index.js')).href);

const args = process.argv.slice(2);
const quick = args.includes('--quick');
const DIMS = [1, 2, 8, 64, 512];
const REPEATS = quick ? 2 : 6;
const LARGE_ROWS = 10000; // within the budget at the fitted costs (src/js/cost.js)
// Work per timed call, in pair-dimensions (about 0.1 to 0.5 s on the SIMD backend).
const WORK = quick ? 1e7 : 2e8;

// Deterministic uniform [-1, 1) floats.
function table(rows, d, seed = 1) {
  const data = new Float32Array(rows * d);
  let s = seed >>> 0;
  for (let i = 0; i < data.length; i++) {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    data[i] = s / 2 ** 31 - 1;
  }
  return { data, shape: [rows, d] };
}

function best(fn) {
  fn(); // warm-up: compilation tiers, memory growth
  let t = Infinity;
  for (let r = 0; r < REPEATS; r++) {
    const t0 = performance.now();
    fn();
    t = Math.min(t, performance.now() - t0);
  }
  return t * 1e6; // ns
}

// Rows for a call of about WORK pair-dimensions (at least 16 pair-dimension equivalents per pair:
// small d costs its per-pair overhead), capped by the output size of similarity.
const rowsFor = (d, maxRows) => Math.max(64, Math.min(maxRows, Math.round(Math.sqrt((2 * WORK) / (d + 16)))));

const results = {};
for (const simd of [true, false]) {
  const pe = await load({ simd });
  const row = (results[pe.backend] = {});
  for (const d of DIMS) {
    const nr = rowsFor(d, 1 << 14);
    const tn = table(nr, d);
    const outN = new Float32Array(nr);
    const pairs = (nr * (nr - 1)) / 2;
    const nearest = best(() => pe.nearestDistances(tn, { out: outN })) / pairs;
    const sr = rowsFor(d, quick ? 1024 : 4096);
    const ts = table(sr, d, 2);
    const outS = new Float32Array(sr * sr);
    const dot = best(() => pe.similarity(ts, { metric: 'dot', out: outS })) / (sr * sr);
    const cosine = best(() => pe.similarity(ts, { metric: 'cosine', out: outS })) / (sr * sr);
    row[d] = { nearestPair: nearest, similarityElement: { dot, cosine }, rows: { nearest: nr, similarity: sr } };
    if (d === 1) {
      // and a large similarity matrix at d = 1 (0.4 GiB), once: the first call of that size, whose
      // fresh memory (a new result) costs more per output than the warm, cache-sized calls above
      // (printed only: the budget covers warm calls; docs/LIMITS.md, fresh memory). CPU time of this
      // process (user + system: the kernel zeroing fresh pages).
      const big = table(LARGE_ROWS, 1, 3);
      for (const metric of ['dot', 'cosine']) {
        const c0 = process.cpuUsage();
        pe.similarity(big, { metric });
        const { user, system } = process.cpuUsage(c0);
        const ns = ((user + system) * 1e3) / LARGE_ROWS ** 2;
        console.log(`${pe.backend.padEnd(11)} d=  1: similarity ${metric} at ${LARGE_ROWS} rows, once: ${ns.toFixed(3)} ns/element`);
      }
    }
    console.log(
      `${pe.backend.padEnd(11)} d=${String(d).padStart(3)}: nearestDistances ${nearest.toFixed(3).padStart(8)} ns/pair (${nr} rows); ` +
        `similarity dot ${dot.toFixed(3).padStart(8)}, cosine ${cosine.toFixed(3).padStart(8)} ns/element (${sr} rows)`,
    );
  }
}

// nearestDistances of rows wider than WIDE_ROW values (src/js/cost.js): the rows of a block no longer
// stay in cache, and each pair-dimension costs several times more (nearestPairDimWide, per dimension)
const wide = {};
for (const simd of [true, false]) {
  const pe = await load({ simd });
  const rows = quick ? 64 : 256;
  let worst = 0;
  for (const d of [8192, 32768]) {
    const t = table(rows, d, 4);
    const pairs = (rows * (rows - 1)) / 2;
    const ns = best(() => pe.nearestDistances(t)) / (pairs * d);
    worst = Math.max(worst, ns);
    console.log(`${pe.backend.padEnd(11)} d=${d}: nearestDistances ${ns.toFixed(3)} ns/pair-dimension (${rows} rows)`);
  }
  wide[pe.backend] = worst;
}

// ns = a + b d, with b from the two largest d (the per-dimension cost) and a the largest remainder
// over every d (so a + b d covers each measurement).
function fit(points) {
  const [[d1, t1], [d2, t2]] = points.slice(-2);
  const b = Math.max(0, (t2 - t1) / (d2 - d1));
  const a = Math.max(...points.map(([d, t]) => t - b * d));
  return { a, b };
}
console.log('\nfits, ns = a + b * d (covering every measurement):');
for (const [backend, row] of Object.entries(results)) {
  const units = {
    nearestPair: DIMS.map((d) => [d, row[d].nearestPair]),
    similarityDot: DIMS.map((d) => [d, row[d].similarityElement.dot]),
    similarityCosine: DIMS.map((d) => [d, row[d].similarityElement.cosine]),
  };
  for (const [unit, points] of Object.entries(units)) {
    const { a, b } = fit(points);
    console.log(`${backend.padEnd(11)} ${unit.padEnd(16)} a = ${a.toFixed(3)} ns, b = ${b.toFixed(4)} ns per dimension`);
  }
}
for (const [backend, ns] of Object.entries(wide)) console.log(`${backend.padEnd(11)} nearestPairDimWide = ${ns.toFixed(3)} ns (rows past WIDE_ROW)`);
if (args.includes('--json')) console.log(JSON.stringify(results, null, 2));
