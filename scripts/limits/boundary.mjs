// The calls at the time budget's boundary, each timed as the first call of a fresh process (its memory
// not yet grown: the operating system's fresh pages are part of the cost) and again in the same
// process (warm), next to src/js/cost.js's estimate for it. The per-value costs of cost.js are
// calibrated so that the fresh figure of every call here stays under LIMITS.maxCallSeconds with a
// margin; this prints the ratio measured / estimated to check it (a ratio above 1 means the model
// underestimates).
//
// Usage: node scripts/limits/boundary.mjs [--backend wasm-scalar|wasm-simd] [--only name,name] [--repeats k]
//   Each call runs in a child process of its own, `--repeats` times (default 2); the best fresh and
//   the best warm CPU seconds are printed.
//        node scripts/limits/boundary.mjs --check --backend b
//   The small-scale check of tests/js/limits.test.js: in one process, each case at the largest size
//   estimated at no more than CHECK_SECONDS, as its function's first call, between two runs of a
//   calibration workload (plain JS, no posenc); prints JSON [{ name, n, seconds, estimate, calibration }].
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const HERE = fileURLToPath(import.meta.url);
const ROOT = path.resolve(path.dirname(HERE), '../..');
const imp = (p) => import(pathToFileURL(path.join(ROOT, p)).href);
const args = process.argv.slice(2);
const value = (name) => {
  const i = args.indexOf(name);
  return i >= 0 ? args[i + 1] : undefined;
};

const tensor = (shape) => {
  const count = shape.reduce((a, b) => a * b, 1);
  const data = new Float32Array(count);
  for (let i = 0; i < count; i++) data[i] = ((i * 2654435761) % 65536) / 32768 - 1;
  return { data, shape };
};
const imageIds = (n) => {
  const ids = new Int32Array(n + 1).fill(151655);
  ids[0] = 151652;
  return { data: ids, shape: [1, n + 1] };
};

// name: [input(n), call(pe, input), n per backend: the largest the search found accepted on 26 November]
export const CASES = {
  ropeCache: [() => null, (pe, _, n) => pe.ropeCache({ length: n, rotaryDim: 128 }), { 'wasm-scalar': 1179648, 'wasm-simd': 1441792 }],
  getRopeIndex: [
    (n) => imageIds(n),
    (pe, ids, n) =>
      pe.mropePositions({
        inputIds: ids,
        imageGridThw: [[1, 2, 2 * n]],
        imageTokenId: 151655,
        videoTokenId: 151656,
        visionStartTokenId: 151652,
        spatialMergeSize: 2,
      }),
    { 'wasm-scalar': 8388608, 'wasm-simd': 8388608 },
  ],
  similarityDot: [(n) => tensor([n, 1]), (pe, t) => pe.similarity(t), { 'wasm-scalar': 10240, 'wasm-simd': 10240 }],
  similarityCosine: [(n) => tensor([n, 1]), (pe, t) => pe.similarity(t, { metric: 'cosine' }), { 'wasm-scalar': 10240, 'wasm-simd': 10240 }],
  similarity512: [(n) => tensor([n, 512]), (pe, t) => pe.similarity(t, { metric: 'cosine' }), { 'wasm-scalar': 2304, 'wasm-simd': 2048 }],
  similarityWide: [(n) => tensor([16, n]), (pe, t) => pe.similarity(t), { 'wasm-scalar': 3670016, 'wasm-simd': 3145728 }],
  nearest512: [(n) => tensor([n, 512]), (pe, t) => pe.nearestDistances(t), { 'wasm-scalar': 2304, 'wasm-simd': 2816 }],
  ropeMrope: [
    (n) => ({ x: tensor([n, 8, 64]), p: { data: Int32Array.from({ length: 3 * n }, (_, i) => (i * 7919) % 4096), shape: [3, n] } }),
    (pe, s) => pe.rope(s.x, { mropeSection: [8, 12, 12], positions: s.p }),
    { 'wasm-scalar': 163840, 'wasm-simd': 286720 },
  ],
  rope: [(n) => tensor([n, 8, 64]), (pe, x) => pe.rope(x), { 'wasm-scalar': 458752, 'wasm-simd': 524288 }],
  sinusoidalPositions: [
    (n) => Float64Array.from({ length: n }, (_, i) => 1e300 * (1 + ((i * 0.6180339887498949) % 1))),
    (pe, positions) => pe.sinusoidal({ positions, dModel: 64 }),
    { 'wasm-scalar': 360448, 'wasm-simd': 393216 },
  ],
  t5Relative: [
    (n) => Int32Array.from({ length: n }, (_, i) => (i * 7919) % (1 << 20)),
    (pe, relativePositions) => pe.t5Buckets({ relativePositions, numBuckets: 4096, maxDistance: 1 << 20 }),
    { 'wasm-scalar': 25165824, 'wasm-simd': 25165824 },
  ],
  learnedNormal: [() => null, (pe, _, n) => pe.learned({ maxLength: n, dModel: 64 }).dispose(), { 'wasm-scalar': 524288, 'wasm-simd': 524288 }],
  learnedXavier: [
    () => null,
    (pe, _, n) => pe.learned({ maxLength: n, dModel: 64, init: 'xavier' }).dispose(),
    { 'wasm-scalar': 3670016, 'wasm-simd': 3342336 },
  ],
  wavelengths: [() => null, (pe, _, n) => pe.wavelengths({ dModel: n }), { 'wasm-scalar': 75497472, 'wasm-simd': 83886080 }],
  lookup: [
    (n) => Int32Array.from({ length: n }, (_, i) => (i * 7919) % 1024),
    (pe, ids) => {
      const t = pe.tokenEmbedding({ vocabSize: 1024, dModel: 64 });
      try {
        return t.lookup(ids);
      } finally {
        t.dispose();
      }
    },
    { 'wasm-scalar': 2752512, 'wasm-simd': 2752512 },
  ],
  attentionStream: [
    (n) => [tensor([n, 1]), tensor([n, 1]), tensor([n, 1])],
    (pe, [q, k, v]) => pe.attention({ q, k, v, weights: false }),
    { 'wasm-scalar': 6400, 'wasm-simd': 11520 },
  ],
};

// The units each case's function budgets (as src/js/rope.js, analysis.js, attention.js count them).
const pairs = (n) => (n * (n - 1)) / 2;
const TERMS = {
  ropeCache: (n) => ({ ropeCacheValue: 2 * n * 64, ropeCacheFrequency: 64 }),
  getRopeIndex: (n) => ({ ropeIndexId: n + 1 }),
  similarityDot: (n) => ({ similarityOutput: n * n, similarityOutputDim: n * n, inputValue: n }),
  similarityCosine: (n) => ({ similarityOutput: n * n, similarityOutputDim: n * n, inputValue: n }),
  similarity512: (n) => ({ similarityOutput: n * n, similarityOutputDim: n * n * 512, inputValue: n * 512 }),
  similarityWide: (n) => ({ similarityOutput: 256, similarityOutputDim: 256 * n, inputValue: 16 * n }),
  nearest512: (n) => ({ nearestPair: pairs(n), nearestPairDim: pairs(n) * 512, inputValue: n * 512 }),
  ropeMrope: (n) => ({ ropeSectionValue: n * 8 * 64 }),
  rope: (n) => ({ ropeValue: n * 8 * 64 }),
  sinusoidalPositions: (n) => ({ sinusoidalValue: n * 64, sinusoidalFrequency: 32, angle: n * 32, wideAngle: n * 32 }),
  t5Relative: (n) => ({ t5Bucket: n }),
  learnedNormal: (n) => ({ normalValue: n * 64 }),
  wavelengths: (n) => ({ wavelength: n / 2 }),
  lookup: (n) => ({ lookupValue: n * 64 }),
  attentionStream: (n) => ({ attentionLogit: n * n, attentionStreamMac: 2 * n * n, attentionKey: n }),
  learnedXavier: (n) => ({ uniformValue: n * 64 }),
};

const cpu = (fn) => {
  const c = process.cpuUsage();
  const r = fn();
  const { user, system } = process.cpuUsage(c);
  return [(user + system) / 1e6, r];
};

async function child(backend, name, n) {
  const { load } = await imp('src/js/index.js');
  const pe = await load({ simd: backend === 'wasm-simd' });
  const [make, call] = CASES[name];
  const input = make(n);
  const [fresh] = cpu(() => call(pe, input, n));
  const [warm] = cpu(() => call(pe, input, n));
  const { estimateSeconds } = await imp('src/js/cost.js');
  process.stdout.write(JSON.stringify({ fresh, warm, estimate: estimateSeconds(backend, TERMS[name](n)) }));
}

// A fixed workload of plain JS whose CPU time tells how fast this process runs now (a busy machine
// slows it as it slows the calls), and its time on the reference machine, quiet (best of 20).
export const CALIBRATION_SECONDS = 0.08;
export function calibration() {
  const c = process.cpuUsage();
  let s = 0;
  for (let i = 0; i < 2e6; i++) s += Math.sqrt(i) * Math.sin(i);
  const { user, system } = process.cpuUsage(c);
  if (s === 42) console.log(s); // keeps the loop
  return (user + system) / 1e6;
}

export const CHECK_SECONDS = 0.3;
async function check(backend) {
  const { load } = await imp('src/js/index.js');
  const { estimateSeconds } = await imp('src/js/cost.js');
  const pe = await load({ simd: backend === 'wasm-simd' });
  const out = [];
  for (const name of value('--only')?.split(',') ?? Object.keys(CASES)) {
    const [make, call, sizes] = CASES[name];
    let n = sizes[backend];
    while (estimateSeconds(backend, TERMS[name](n)) > CHECK_SECONDS) n = Math.floor(n / 1.25);
    const input = make(n);
    const before = calibration();
    const [seconds] = cpu(() => call(pe, input, n));
    const after = calibration();
    out.push({ name, n, seconds, estimate: estimateSeconds(backend, TERMS[name](n)), calibration: Math.min(before, after) });
  }
  process.stdout.write(JSON.stringify(out));
}

async function main() {
  if (args.includes('--child')) return child(value('--backend'), value('--case'), Number(value('--n')));
  if (args.includes('--check')) return check(value('--backend'));
  const backends = value('--backend') ? [value('--backend')] : ['wasm-scalar', 'wasm-simd'];
  const only = value('--only')?.split(',') ?? Object.keys(CASES);
  const repeats = Number(value('--repeats') ?? 2);
  for (const b of backends)
    for (const name of only) {
      const n = Number(value('--n') ?? CASES[name][2][b]);
      let fresh = Infinity;
      let warm = Infinity;
      let error;
      let estimate;
      for (let i = 0; i < repeats; i++) {
        const r = spawnSync(process.execPath, [HERE, '--child', '--backend', b, '--case', name, '--n', String(n)], { encoding: 'utf8' });
        if (r.status !== 0) {
          error = r.stderr.split('\n').find((l) => /Error/.test(l)) ?? r.stderr.slice(-300);
          break;
        }
        const j = JSON.parse(r.stdout);
        fresh = Math.min(fresh, j.fresh);
        warm = Math.min(warm, j.warm);
        estimate = j.estimate;
      }
      console.log(
        error
          ? `${b} ${name} n=${n}: ${error.trim()}`
          : `${b} ${name} n=${n}: fresh ${fresh.toFixed(2)} s, warm ${warm.toFixed(2)} s, estimate ${estimate.toFixed(2)} s, fresh/estimate ${(fresh / estimate).toFixed(2)}`,
      );
    }
}

if (process.argv[1] && path.resolve(process.argv[1]) === HERE) await main();
