// A search for the longest call each public function accepts. For every function of the package
// (load()'s and loadLab()'s methods, the LearnedEmbedding, TokenEmbedding and ToyTrainer methods,
// ropeConfig) a few shape families are parameterised by one size n: n doubles until the call is
// refused (a RangeError: a size limit, the time estimate of src/js/cost.js, or out of memory), then
// a few bisection steps narrow the gap between the last accepted and the first refused n. Every
// accepted call is timed once (CPU time of this process, user + system, so that other processes
// sharing the machine add little; wall time too in --json). The table gives, per family, the largest
// accepted arguments and the seconds of that call on each backend, and flags every accepted call
// over LIMITS.maxCallSeconds: the promise of docs/LIMITS.md is that there is none on the scalar build.
//
// Usage: node scripts/limits/search.mjs [--quick] [--json [file]] [--only name,name] [--backend wasm-simd|wasm-scalar]
//        node scripts/limits/search.mjs --merge scalar.json simd.json [--json file]
//   --quick: at most a few small doublings per family, no bisection (every function runs; well under a
//            minute: the CI check in tests/js/limits.test.js); --json: the table as JSON (to `file`, or
//            to stdout after the table); --only: the families of these functions; --backend: one backend;
//            --merge: one table from the --json files of single-backend runs (run side by side).
// Each backend runs in a child process of its own (its wasm memory freed before the next).
import { spawnSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const HERE = fileURLToPath(import.meta.url);
const ROOT = path.resolve(path.dirname(HERE), '../..');
const imp = (p) => import(pathToFileURL(path.join(ROOT, p)).href);
const { LIMITS } = await imp('src/js/contract.js');

const args = process.argv.slice(2);
const flag = (name) => args.includes(name);
const value = (name) => {
  const i = args.indexOf(name);
  return i >= 0 && i + 1 < args.length && !args[i + 1].startsWith('--') ? args[i + 1] : undefined;
};
const QUICK = flag('--quick');
// The largest accepted call of each family timed again as the first call of a fresh process (below).
const FRESH = !flag('--no-fresh');
const ONLY = value('--only')?.split(',');
const BACKENDS = ['wasm-scalar', 'wasm-simd'];
const BISECT_STEPS = QUICK ? 0 : 3;
const QUICK_DOUBLINGS = 2;
// An accepted call past this many seconds stops the doubling (the promise is already broken there).
const GIVE_UP_SECONDS = 10;

// Public names the search does not time, and why (tests/js/limits.test.js checks that every other
// public function has a family below).
export const NOT_SEARCHED = {
  load: 'asynchronous (instantiates a module)',
  loadLab: 'asynchronous (instantiates a module)',
  simdSupported: 'no arguments',
  'ToyTrainer.run': 'asynchronous: trains in chunks of about 50 ms and yields between them',
  'LearnedEmbedding.dispose': 'frees a table',
  'TokenEmbedding.dispose': 'frees a table',
  'ToyTrainer.dispose': 'frees a trainer',
};

// ---- inputs -------------------------------------------------------------------------------------

// The time spent building inputs (in the helpers below, called inside a family's run) is not the
// call's: timed() subtracts it.
const BUILDING = { cpu: 0, wall: 0 };
const building =
  (fn) =>
  (...a) => {
    const c0 = process.cpuUsage();
    const t0 = performance.now();
    try {
      return fn(...a);
    } finally {
      const { user, system } = process.cpuUsage(c0);
      BUILDING.cpu += (user + system) / 1e6;
      BUILDING.wall += (performance.now() - t0) / 1000;
    }
  };

// Deterministic floats in [-scale, scale): a block of 65536 values tiled (cheap at 2^28 values).
const floats = building((count, scale = 1, seed = 1) => {
  const block = new Float32Array(Math.min(count, 65536));
  let s = seed >>> 0;
  for (let i = 0; i < block.length; i++) {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    block[i] = (s / 2 ** 31 - 1) * scale;
  }
  const out = new Float32Array(count);
  for (let i = 0; i < count; i += block.length) out.set(block.subarray(0, Math.min(block.length, count - i)), i);
  return out;
});
const tensor = (shape, scale, seed) => ({
  data: floats(
    shape.reduce((a, b) => a * b, 1),
    scale,
    seed,
  ),
  shape,
});
// n distinct doubles of magnitude about `scale` (not consecutive: every row takes the exact reduction).
const spread = building((n, scale) => {
  const out = new Float64Array(n);
  for (let i = 0; i < n; i++) out[i] = scale * (1 + ((i * 0.6180339887498949) % 1));
  return out;
});
const ints = building((n, mod) => {
  const out = new Int32Array(n);
  for (let i = 0; i < n; i++) out[i] = (i * 7919) % mod;
  return out;
});
// An attention mask [2, n] with every 7th key padded.
const mask = building((n) => {
  const data = new Int32Array(2 * n);
  for (let i = 0; i < data.length; i++) data[i] = i % 7 ? 1 : 0;
  return { data, shape: [2, n] };
});
// get_rope_index's ids [1, n + 1]: a vision start token, then n image tokens.
const imageIds = building((n) => {
  const ids = new Int32Array(n + 1).fill(151655);
  ids[0] = 151652;
  return { data: ids, shape: [1, n + 1] };
});
const sentence = building((n) => Array.from({ length: n }, (_, i) => `w${i}`).join(' '));

const HF_DYNAMIC = { type: 'dynamic', factor: 4, originalMaxPositions: 2048 };
const longrope = building((dim) => ({
  type: 'longrope',
  factor: 16,
  originalMaxPositions: 4096,
  shortFactor: Array.from({ length: dim / 2 }, (_, i) => 1 + i / dim),
  longFactor: Array.from({ length: dim / 2 }, (_, i) => 2 + i / dim),
}));
const SCALINGS = {
  linear: { type: 'linear', factor: 4 },
  ntk: { type: 'ntk', factor: 4 },
  dynamic: HF_DYNAMIC,
  yarn: { type: 'yarn', factor: 16, originalMaxPositions: 4096 },
  llama3: { type: 'llama3', factor: 8, originalMaxPositions: 8192 },
  longrope: longrope(64),
};

// A toy trainer at the largest model the limits allow (lengths up to toyMaxEvalLength); --quick: a small one.
const BIG_TOY = QUICK
  ? { task: 'copy', encoding: 'rope', dModel: 16, heads: 2, layers: 1, batch: 8, length: 8, vocab: 8 }
  : { task: 'copy', encoding: 'rope', dModel: 64, heads: 4, layers: 2, batch: 256, length: 32, vocab: 64 };
const BIG_TOY_ARGS = `d ${BIG_TOY.dModel} h ${BIG_TOY.heads} L ${BIG_TOY.layers} batch ${BIG_TOY.batch} len ${BIG_TOY.length}`;
// The permutation lab's width: its largest (--quick: narrower).
const LAB_D = QUICK ? 64 : LIMITS.maxLabDModel;

// ---- families -----------------------------------------------------------------------------------
// fn: the public name; family: what n is; start: the first n; run(pe, n): the call (its result is
// dropped); args(n): the arguments, for the table; setup(pe) / teardown(state): objects a method needs.

const F = [];
const family = (fn, name, start, run, argsOf, extra = {}) => F.push({ fn, family: name, start, run, args: argsOf, ...extra });

// absolute
family(
  'sinusoidal',
  'length n, dModel 64',
  1024,
  (pe, n) => pe.sinusoidal({ length: n, dModel: 64 }),
  (n) => `length ${n}, dModel 64`,
);
family(
  'sinusoidal',
  'dModel n, length 16',
  1024,
  (pe, n) => pe.sinusoidal({ length: 16, dModel: n }),
  (n) => `length 16, dModel ${n}`,
);
family(
  'sinusoidal',
  'offset 2^52, length n, float16',
  1024,
  (pe, n) => pe.sinusoidal({ length: n, dModel: 64, offset: 2 ** 52, dtype: 'float16' }),
  (n) => `offset 2^52, length ${n}, dModel 64, float16`,
);
family(
  'sinusoidal',
  'n explicit positions ~1e300, dModel 64',
  64,
  (pe, n, s) => pe.sinusoidal({ positions: s.positions(n), dModel: 64 }),
  (n) => `${n} positions ~1e300, dModel 64`,
  {
    setup: () => ({ positions: (n) => spread(n, 1e300) }),
  },
);
family(
  'sinusoidal',
  'n explicit positions ~1e9 (Cody-Waite), dModel 64',
  1024,
  (pe, n, s) => pe.sinusoidal({ positions: s.positions(n), dModel: 64 }),
  (n) => `${n} positions ~1e9, dModel 64`,
  {
    setup: () => ({ positions: (n) => spread(n, 1e9) }),
  },
);
family(
  'sinusoidal2d',
  'height = width = n, dModel 64',
  32,
  (pe, n) => pe.sinusoidal2d({ height: n, width: n, dModel: 64 }),
  (n) => `${n} x ${n}, dModel 64`,
);
family(
  'wavelengths',
  'dModel n',
  1024,
  (pe, n) => pe.wavelengths({ dModel: n }),
  (n) => `dModel ${n}`,
);
for (const init of ['normal', 'xavier', 'sinusoidal', 'zeros'])
  family(
    'learned',
    `maxLength n, dModel 64, init ${init}`,
    1024,
    (pe, n) => pe.learned({ maxLength: n, dModel: 64, init }).dispose(),
    (n) => `maxLength ${n}, dModel 64, ${init}`,
  );
family(
  'tokenEmbedding',
  'vocabSize n, dModel 64',
  1024,
  (pe, n) => pe.tokenEmbedding({ vocabSize: n, dModel: 64 }).dispose(),
  (n) => `vocabSize ${n}, dModel 64`,
);
family(
  'ropeConfig',
  'head_dim n, longrope factors',
  64,
  (pe, n, s) => s.ropeConfig(s.config(n)),
  (n) => `head_dim ${n}, longrope`,
  {
    setup: async () => {
      const { ropeConfig } = await imp('src/js/index.js');
      const config = building((n) => ({
        head_dim: n,
        rope_theta: 1e4,
        max_position_embeddings: 131072,
        original_max_position_embeddings: 4096,
        rope_scaling: { rope_type: 'longrope', short_factor: longrope(n).shortFactor, long_factor: longrope(n).longFactor },
      }));
      return { ropeConfig, config };
    },
  },
);

const withTable = (make) => ({ setup: (pe) => ({ table: make(pe) }), teardown: (s) => s.table.dispose() });
family(
  'LearnedEmbedding.lookup',
  'n positions, table 1024 x 64',
  1024,
  (pe, n, s) => s.table.lookup(ints(n, 1024)),
  (n) => `${n} positions, table [1024, 64]`,
  withTable((pe) => pe.learned({ maxLength: 1024, dModel: 64 })),
);
family(
  'LearnedEmbedding.resize',
  'newMaxLength n, interpolate, table 1024 x 64',
  1024,
  (pe, n, s) => s.table.resize(n, 'interpolate').dispose(),
  (n) => `${n} rows, interpolate, from [1024, 64]`,
  withTable((pe) => pe.learned({ maxLength: 1024, dModel: 64 })),
);
family(
  'LearnedEmbedding.resize',
  'newMaxLength n, tile, table 1024 x 64',
  1024,
  (pe, n, s) => s.table.resize(n, 'tile').dispose(),
  (n) => `${n} rows, tile, from [1024, 64]`,
  withTable((pe) => pe.learned({ maxLength: 1024, dModel: 64 })),
);
family(
  'TokenEmbedding.lookup',
  'n ids, vocabulary 1024 x 64',
  1024,
  (pe, n, s) => s.table.lookup(ints(n, 1024)),
  (n) => `${n} ids, table [1024, 64]`,
  withTable((pe) => pe.tokenEmbedding({ vocabSize: 1024, dModel: 64 })),
);
family(
  'addPositional',
  'x [n, 64] + p [n, 64]',
  1024,
  (pe, n) => pe.addPositional(tensor([n, 64]), tensor([n, 64], 1, 2)),
  (n) => `x [${n}, 64], p [${n}, 64]`,
);
family(
  'stats',
  'n values',
  65536,
  (pe, n) => pe.stats(tensor([n])),
  (n) => `${n} values`,
);

// rope
const ropeX = (n) => tensor([n, 8, 64]);
family(
  'rope',
  'x [n, 8 heads, 64]',
  128,
  (pe, n) => pe.rope(ropeX(n)),
  (n) => `x [${n}, 8, 64]`,
);
family(
  'rope',
  'x [16, 1, n] (head dim n)',
  1024,
  (pe, n) => pe.rope(tensor([16, 1, n])),
  (n) => `x [16, 1, ${n}]`,
);
family(
  'rope',
  'x [n, 8, 64], offset 2^60',
  128,
  (pe, n) => pe.rope(ropeX(n), { offset: 2 ** 60 }),
  (n) => `x [${n}, 8, 64], offset 2^60`,
);
family(
  'rope',
  'x [n, 1, 64], n explicit positions ~1e300',
  64,
  (pe, n) => pe.rope(tensor([n, 1, 64]), { positions: spread(n, 1e300) }),
  (n) => `x [${n}, 1, 64], positions ~1e300`,
);
family(
  'rope',
  'x [n, 8, 64], xpos query',
  128,
  (pe, n) => pe.rope(ropeX(n), { xpos: { scaleBase: 512 }, role: 'query' }),
  (n) => `x [${n}, 8, 64], xpos`,
);
for (const [type, scaling] of Object.entries(SCALINGS))
  family(
    'rope',
    `x [n, 8, 64], ${type} scaling`,
    128,
    (pe, n) => pe.rope(ropeX(n), { scaling }),
    (n) => `x [${n}, 8, 64], ${type}`,
  );
family(
  'rope',
  'x [n, 8, 64], mropeSection, positions [3, n]',
  128,
  (pe, n) => pe.rope(ropeX(n), { mropeSection: [8, 12, 12], positions: { data: ints(3 * n, 4096), shape: [3, n] } }),
  (n) => `x [${n}, 8, 64], mrope [8, 12, 12]`,
);
family(
  'rope',
  'x [n, 8, 64], dtype float16',
  128,
  (pe, n) => pe.rope(ropeX(n), { dtype: 'float16' }),
  (n) => `x [${n}, 8, 64], float16`,
);
family(
  'ropeFrequencies',
  'dim n',
  1024,
  (pe, n) => pe.ropeFrequencies({ dim: n }),
  (n) => `dim ${n}`,
);
family(
  'ropeFrequencies',
  'dim n, yarn',
  1024,
  (pe, n) => pe.ropeFrequencies({ dim: n, scaling: SCALINGS.yarn }),
  (n) => `dim ${n}, yarn`,
);
family(
  'ropeFrequencies',
  'dim n, longrope',
  1024,
  (pe, n) => pe.ropeFrequencies({ dim: n, scaling: longrope(n) }),
  (n) => `dim ${n}, longrope`,
);
family(
  'ropeCache',
  'length n, rotaryDim 128',
  1024,
  (pe, n) => pe.ropeCache({ length: n, rotaryDim: 128 }),
  (n) => `length ${n}, rotaryDim 128`,
);
family(
  'ropeCache',
  'rotaryDim n, length 16, layout half',
  1024,
  (pe, n) => pe.ropeCache({ length: 16, rotaryDim: n, layout: 'half' }),
  (n) => `length 16, rotaryDim ${n}, half`,
);
family(
  'ropeCache',
  'n explicit positions ~1e300, rotaryDim 128',
  64,
  (pe, n) => pe.ropeCache({ positions: spread(n, 1e300), rotaryDim: 128 }),
  (n) => `${n} positions ~1e300, rotaryDim 128`,
);
family(
  'mropePositions',
  'segments: text n, image [1, n, n]',
  16,
  (pe, n) => pe.mropePositions([{ text: n }, { image: [1, n, n] }, { text: n }]),
  (n) => `text ${n}, image [1, ${n}, ${n}], text ${n}`,
);
family(
  'mropePositions',
  'get_rope_index: ids [1, n] with an image of n tokens',
  1024,
  (pe, n) =>
    pe.mropePositions({
      inputIds: imageIds(n),
      imageGridThw: [[1, 2, 2 * n]],
      imageTokenId: 151655,
      videoTokenId: 151656,
      visionStartTokenId: 151652,
      spatialMergeSize: 2,
    }),
  (n) => `ids [1, ${n + 1}], image grid [1, 2, ${2 * n}]`,
);

// relative
family(
  'alibiSlopes',
  'numHeads n',
  16,
  (pe, n) => pe.alibiSlopes(n),
  (n) => `numHeads ${n}`,
);
family(
  'alibiBias',
  'numHeads 8, query = key length n',
  64,
  (pe, n) => pe.alibiBias({ numHeads: 8, queryLength: n }),
  (n) => `8 heads, ${n} x ${n}`,
);
family(
  'alibiBias',
  'numHeads n, length 64',
  16,
  (pe, n) => pe.alibiBias({ numHeads: n, queryLength: 64 }),
  (n) => `${n} heads, 64 x 64`,
);
family(
  'alibiBias',
  'attentionMask [2, n], numHeads 8',
  64,
  (pe, n) => pe.alibiBias({ numHeads: 8, attentionMask: mask(n) }),
  (n) => `8 heads, mask [2, ${n}]`,
);
family(
  't5Buckets',
  'query = key length n',
  64,
  (pe, n) => pe.t5Buckets({ queryLength: n }),
  (n) => `${n} x ${n}`,
);
family(
  't5Buckets',
  'n relativePositions, 4096 buckets',
  4096,
  (pe, n) => pe.t5Buckets({ relativePositions: ints(n, 1 << 20), numBuckets: 4096, maxDistance: 1 << 20 }),
  (n) => `${n} relative positions`,
);
family(
  'relativePositions',
  'length n, maxRelative 128',
  64,
  (pe, n) => pe.relativePositions({ length: n, maxRelative: 128 }),
  (n) => `length ${n}`,
);

// attention
const attn = (pe, { seq, seqK = seq, heads = [], d, dv = d, scale = 1, ...o }) => {
  const shapeQ = heads.length ? [seq, heads[0], d] : [seq, d];
  const shapeK = heads.length ? [seqK, heads[1], d] : [seqK, d];
  const shapeV = heads.length ? [seqK, heads[1], dv] : [seqK, dv];
  return pe.attention({ q: tensor(shapeQ, scale, 1), k: tensor(shapeK, scale, 2), v: tensor(shapeV, 1, 3), ...o });
};
family(
  'attention',
  'seq n, d 1, weights false',
  256,
  (pe, n) => attn(pe, { seq: n, d: 1, weights: false }),
  (n) => `q, k, v [${n}, 1], weights false`,
);
family(
  'attention',
  'seq n, d 1, weights true',
  256,
  (pe, n) => attn(pe, { seq: n, d: 1 }),
  (n) => `q, k, v [${n}, 1]`,
);
family(
  'attention',
  'seq n, d 64, causal, weights false',
  256,
  (pe, n) => attn(pe, { seq: n, d: 64, causal: true, weights: false }),
  (n) => `[${n}, 64], causal, weights false`,
);
family(
  'attention',
  'seq n, d 64, causal',
  256,
  (pe, n) => attn(pe, { seq: n, d: 64, causal: true }),
  (n) => `[${n}, 64], causal`,
);
family(
  'attention',
  'seq 64, d n (large d)',
  1024,
  (pe, n) => attn(pe, { seq: 64, d: n }),
  (n) => `[64, ${n}]`,
);
family(
  'attention',
  'seq 1 query, n keys, d 1',
  4096,
  (pe, n) => attn(pe, { seq: 1, seqK: n, d: 1 }),
  (n) => `q [1, 1], k, v [${n}, 1]`,
);
family(
  'attention',
  'seq n, d 64, bias [n, n]',
  256,
  (pe, n) => attn(pe, { seq: n, d: 64, bias: tensor([n, n]) }),
  (n) => `[${n}, 64], bias [${n}, ${n}]`,
);
family(
  'attention',
  'grouped heads: q [n, 8, 64], k, v [n, 2, 64], weights false',
  64,
  (pe, n) => attn(pe, { seq: n, heads: [8, 2], d: 64, weights: false }),
  (n) => `q [${n}, 8, 64], k, v [${n}, 2, 64], weights false`,
);
family(
  'attention',
  'logits beyond float32 (q = k ~ 1e20): seq n, d 8',
  256,
  (pe, n) => attn(pe, { seq: n, d: 8, scale: 1e20 }),
  (n) => `[${n}, 8], |q|, |k| ~ 1e20`,
);

// analysis
family(
  'similarity',
  'rows n, d 1, dot',
  256,
  (pe, n) => pe.similarity(tensor([n, 1])),
  (n) => `[${n}, 1], dot`,
);
family(
  'similarity',
  'rows n, d 1, cosine',
  256,
  (pe, n) => pe.similarity(tensor([n, 1]), { metric: 'cosine' }),
  (n) => `[${n}, 1], cosine`,
);
family(
  'similarity',
  'rows n, d 512, cosine',
  64,
  (pe, n) => pe.similarity(tensor([n, 512]), { metric: 'cosine' }),
  (n) => `[${n}, 512], cosine`,
);
family(
  'similarity',
  'rows 16, d n',
  4096,
  (pe, n) => pe.similarity(tensor([16, n])),
  (n) => `[16, ${n}], dot`,
);
family(
  'nearestDistances',
  'rows n, d 1',
  256,
  (pe, n) => pe.nearestDistances(tensor([n, 1])),
  (n) => `[${n}, 1]`,
);
family(
  'nearestDistances',
  'rows n, d 512',
  64,
  (pe, n) => pe.nearestDistances(tensor([n, 512])),
  (n) => `[${n}, 512]`,
);
family(
  'nearestDistances',
  'rows 16, d n',
  4096,
  (pe, n) => pe.nearestDistances(tensor([16, n])),
  (n) => `[16, ${n}]`,
);
family(
  'nearestDistances',
  'rows n, d 8192 (rows wider than the cache)',
  16,
  (pe, n) => pe.nearestDistances(tensor([n, 8192])),
  (n) => `[${n}, 8192]`,
);
family(
  'similarity',
  'rows n, d 8192',
  16,
  (pe, n) => pe.similarity(tensor([n, 8192])),
  (n) => `[${n}, 8192], dot`,
);
family(
  'shiftMatrix',
  'dModel n, k 1e300',
  64,
  (pe, n) => pe.shiftMatrix({ dModel: n, k: 1e300 }),
  (n) => `dModel ${n}, k 1e300`,
);

// posenc/lab
family(
  'permutationLab',
  `n tokens, dModel ${LAB_D}`,
  16,
  (pe, n) => pe.permutationLab({ sentence: sentence(n), dModel: LAB_D, encoding: 'rope' }),
  (n) => `${n} tokens, dModel ${LAB_D}, rope`,
);
family(
  'permutationLab',
  'dModel n, 512 tokens, t5',
  16,
  (pe, n) => pe.permutationLab({ sentence: sentence(512), dModel: n, encoding: 't5' }),
  (n) => `512 tokens, dModel ${n}, t5`,
);
family(
  'permutationLab',
  'sentence of n characters',
  1024,
  (pe, n) => pe.permutationLab({ sentence: 'x'.repeat(n) }),
  (n) => `${n} characters (1 token)`,
);
family(
  'scoreTerms',
  `n tokens, dModel ${LAB_D}`,
  16,
  (pe, n) => pe.scoreTerms({ sentence: sentence(n), dModel: LAB_D, encoding: 'learned' }),
  (n) => `${n} tokens, dModel ${LAB_D}, learned`,
);
family(
  'scoreTerms',
  'dModel n, 512 tokens',
  16,
  (pe, n) => pe.scoreTerms({ sentence: sentence(512), dModel: n }),
  (n) => `512 tokens, dModel ${n}`,
);
family(
  'trainToy',
  'dModel n (heads 4, layers 2, batch 256, length 32)',
  8,
  (pe, n) => pe.trainToy({ ...BIG_TOY, dModel: n }).dispose(),
  (n) => `dModel ${n}, the largest other sizes`,
);
const withToy = (options = BIG_TOY) => ({ setup: (pe) => ({ toy: pe.trainToy(options) }), teardown: (s) => s.toy.dispose() });
family(
  'ToyTrainer.step',
  'n steps, the largest model',
  1,
  (pe, n, s) => s.toy.step(n),
  (n) => `${n} steps, ${BIG_TOY_ARGS}`,
  withToy(),
);
family(
  'ToyTrainer.step',
  '1 step at length n, the largest model, yarn',
  BIG_TOY.length,
  (pe, n, s) => s.toy.step(1, { length: n, scaling: SCALINGS.yarn }),
  (n) => `1 step at length ${n}, yarn`,
  withToy(),
);
family(
  'ToyTrainer.step',
  'n steps, the smallest model',
  1,
  (pe, n, s) => s.toy.step(n),
  (n) => `${n} steps, d 8 h 1 L 1 batch 1 len 4`,
  withToy({ task: 'before', dModel: 8, heads: 1, layers: 1, batch: 1, length: 4, vocab: 4 }),
);
family(
  'ToyTrainer.evaluate',
  'length n, the largest model',
  BIG_TOY.length,
  (pe, n, s) => s.toy.evaluate({ length: n }),
  (n) => `length ${n}, ${BIG_TOY_ARGS}`,
  withToy(),
);
family(
  'ToyTrainer.evaluate',
  'length n, t5, 1 head, the largest other sizes',
  BIG_TOY.length,
  (pe, n, s) => s.toy.evaluate({ length: n }),
  (n) => `length ${n}, t5, 1 head`,
  withToy({ ...BIG_TOY, encoding: 't5', heads: 1 }),
);
for (const task of ['before', 'copy', 'count'])
  family(
    'ToyTrainer.baseline',
    `length n, ${task}, vocab 64`,
    32,
    (pe, n, s) => s.toy.baseline({ length: n }),
    (n) => `length ${n}, ${task}`,
    withToy({ ...BIG_TOY, task }),
  );
family(
  'ToyTrainer.clone',
  'dModel n, the largest other sizes',
  8,
  (pe, n, s) => s.clone(n),
  (n) => `dModel ${n} (with trainToy, the trainer cloned)`,
  {
    setup: (pe) => ({
      clone: (n) => {
        const t = pe.trainToy({ ...BIG_TOY, dModel: n });
        try {
          t.clone().dispose();
        } finally {
          t.dispose();
        }
      },
    }),
  },
);

export const FAMILIES = F;

// ---- the search ---------------------------------------------------------------------------------

// The CPU and wall seconds of fn(), less the time its input helpers took.
function timed(fn) {
  BUILDING.cpu = BUILDING.wall = 0;
  const c0 = process.cpuUsage();
  const t0 = performance.now();
  fn();
  const wall = (performance.now() - t0) / 1000;
  const { user, system } = process.cpuUsage(c0);
  return { cpu: Math.max(0, (user + system) / 1e6 - BUILDING.cpu), wall: Math.max(0, wall - BUILDING.wall) };
}

function kindOf(message) {
  if (/would run for about/.test(message)) return 'time';
  if (/out of (wasm )?memory|allocation failed/i.test(message)) return 'memory';
  return 'limit';
}

// One call at n: { ok, cpu, wall } or { ok: false, kind, message }; other errors are the family's bugs.
function attempt(pe, f, state, n) {
  try {
    return { ok: true, ...timed(() => f.run(pe, n, state)) };
  } catch (e) {
    if (e instanceof RangeError) return { ok: false, kind: kindOf(e.message), message: e.message };
    return { ok: false, kind: 'error', message: `${e?.constructor?.name}: ${e?.message}` };
  }
}

async function searchFamily(pe, f) {
  const state = f.setup ? await f.setup(pe) : undefined;
  let best; // the largest accepted n and its call
  let refused; // the smallest refused n and why
  let over = 0; // accepted calls over the budget
  const record = (n, r) => {
    if (r.ok) {
      if (r.cpu > MAX) over++;
      if (!best || n > best.n) best = { n, ...r };
    } else if (!refused || n < refused.n) refused = { n, ...r };
  };
  try {
    let n = f.start;
    for (let i = 0; ; i++) {
      const r = attempt(pe, f, state, n);
      record(n, r);
      if (!r.ok || r.cpu > GIVE_UP_SECONDS || (QUICK && i >= QUICK_DOUBLINGS)) break;
      n *= 2;
    }
    if (best && refused && refused.kind !== 'error')
      for (let i = 0; i < BISECT_STEPS && refused.n - best.n > 1; i++) {
        const m = Math.floor((best.n + refused.n) / 2);
        record(m, attempt(pe, f, state, m));
      }
  } finally {
    if (f.teardown) f.teardown(state);
  }
  return {
    fn: f.fn,
    family: f.family,
    n: best?.n ?? null,
    args: best ? f.args(best.n) : null,
    cpu: best?.cpu ?? null,
    wall: best?.wall ?? null,
    over,
    refusedAt: refused?.n ?? null,
    refusedArgs: refused ? f.args(refused.n) : null,
    refusal: refused ? { kind: refused.kind, message: refused.message.slice(0, 300) } : null,
    stoppedLong: !refused && best?.cpu > GIVE_UP_SECONDS,
  };
}

const MAX = LIMITS.maxCallSeconds;
// A family's figure: the slower of its search's call and the same call first in a fresh process.
const worst = (r) => (r && r.cpu !== null ? Math.max(r.cpu, r.fresh ?? 0) : null);

// --one i --n n: family i's call at n as the first call of this process (after its setup): the
// module's code still runs in V8's baseline tier (Liftoff: each wasm function is optimised only
// after it has run for a while, and a running call never switches), and its memory still grows
// from the operating system's fresh pages. That is the slowest the call runs; the search's own
// figure is that of a process that has made the family's smaller calls before.
async function one(backend, i, n) {
  const { loadLab } = await imp('src/js/lab/index.js');
  const pe = await loadLab({ simd: backend === 'wasm-simd' });
  const f = FAMILIES[i];
  const state = f.setup ? await f.setup(pe) : undefined;
  const r = attempt(pe, f, state, n);
  process.stdout.write(JSON.stringify(r));
}

function firstCall(backend, i, n) {
  const r = spawnSync(process.execPath, [HERE, '--one', String(i), '--n', String(n), '--backend', backend], {
    encoding: 'utf8',
    maxBuffer: 1 << 20,
  });
  if (r.status !== 0) return { ok: false, kind: 'error', message: r.stderr.slice(-300) };
  return JSON.parse(r.stdout);
}

async function child(backend) {
  const { loadLab } = await imp('src/js/lab/index.js');
  const pe = await loadLab({ simd: backend === 'wasm-simd' });
  if (pe.backend !== backend) throw new Error(`asked for ${backend}, loaded ${pe.backend}`);
  const rows = [];
  for (const [i, f] of FAMILIES.entries()) {
    if (ONLY && !ONLY.includes(f.fn)) continue;
    const row = { index: i, ...(await searchFamily(pe, f)) };
    rows.push(row);
    const t = row.cpu === null ? '-' : row.cpu.toFixed(3);
    process.stderr.write(
      `${backend} ${row.fn} [${row.family}]: n ${row.n} ${t} s; refused at ${row.refusedAt} (${row.refusal?.kind ?? 'none'})${worst(row) > MAX ? '  OVER' : ''}\n`,
    );
  }
  process.stdout.write(JSON.stringify(rows));
}

// Each family's largest accepted call again as the first call of a fresh process, once the search's
// process has exited. While it lived it held up to 2 GiB of wasm memory (which never shrinks), and on
// this virtual machine memory beyond what the guest has recently used is provided page by page by the
// host: addPositional of two [2621440, 64] tensors ran its first call in 7.2 s of CPU (8.8 s of it
// the kernel's) beside a process holding 4 GB, and in 1.5 s without one. The first call measures V8's
// baseline tier and the module's own memory growth, not the measuring process's footprint.
function firstCalls(backend, rows) {
  for (const row of rows) {
    if (row.n === null) continue;
    const r = firstCall(backend, row.index, row.n);
    row.fresh = r.ok ? r.cpu : null;
    if (r.ok && r.cpu > MAX) row.over++;
    if (!r.ok) row.freshFailure = r.message;
    process.stderr.write(
      `${backend} ${row.fn} [${row.family}]: n ${row.n}, first call ${row.fresh?.toFixed(3) ?? row.freshFailure}${worst(row) > MAX ? '  OVER' : ''}\n`,
    );
  }
}

function table(result) {
  const { rows } = result;
  const lines = [];
  const num = (s) => (s === null || s === undefined ? '-' : s.toFixed(s < 0.01 ? 4 : 3));
  const fmt = (x) => (x?.fresh != null ? `${num(x.cpu)} / ${num(x.fresh)}` : num(x?.cpu));
  lines.push(`posenc limits search${result.quick ? ' (--quick: small sizes only)' : ''}: ${result.date}, ${result.machine}, load ${result.load}`);
  for (const b of result.backends) if (b.includes(':')) lines.push(`  ${b}`);
  lines.push(
    `budget: LIMITS.maxCallSeconds = ${result.maxCallSeconds} s; seconds are CPU seconds of the largest accepted call (in the search / as the first call of a fresh process)`,
  );
  lines.push('');
  lines.push('| function | family | largest accepted (scalar) | scalar s | simd s | first refused (scalar) | refused by |');
  lines.push('|---|---|---|---:|---:|---|---|');
  for (const r of rows) {
    const s = r['wasm-scalar'];
    const v = r['wasm-simd'];
    const flagOver = (x) => (x && worst(x) > result.maxCallSeconds ? ' **OVER**' : '');
    lines.push(
      `| ${r.fn} | ${r.family} | ${s?.args ?? v?.args ?? '-'} | ${fmt(s)}${flagOver(s)} | ${fmt(v)}${flagOver(v)} | ${s?.refusedArgs ?? (s?.stoppedLong ? 'none: stopped growing' : 'none')} | ${s?.refusal?.kind ?? '-'} |`,
    );
  }
  lines.push('');
  for (const b of BACKENDS) {
    const all = rows.map((r) => r[b] && { ...r[b], fn: r.fn, family: r.family, s: worst(r[b]) }).filter((x) => x && x.s !== null);
    if (!all.length) continue;
    const top = all.reduce((a, x) => (x.s > a.s ? x : a));
    const over = all.filter((x) => x.s > result.maxCallSeconds);
    lines.push(
      `${b}: longest accepted call ${top.s.toFixed(2)} s: ${top.fn}, ${top.args}; ${over.length} accepted call(s) over ${result.maxCallSeconds} s`,
    );
    for (const x of over) lines.push(`  OVER ${b}: ${x.fn} [${x.family}] ${x.args}: ${x.s.toFixed(2)} s`);
  }
  const errors = rows.flatMap((r) =>
    BACKENDS.filter((b) => r[b]?.refusal?.kind === 'error').map((b) => `${b} ${r.fn} [${r.family}]: ${r[b].refusal.message}`),
  );
  for (const e of errors) lines.push(`ERROR (not a RangeError): ${e}`);
  lines.push(`functions searched: ${[...new Set(rows.map((r) => r.fn))].join(', ')}`);
  return lines.join('\n');
}

async function main() {
  if (flag('--child')) return child(value('--backend'));
  if (flag('--one')) return one(value('--backend'), Number(value('--one')), Number(value('--n')));
  if (flag('--merge')) {
    // --merge a.json b.json: one table from single-backend runs (--backend x --json file)
    const files = args.slice(args.indexOf('--merge') + 1).filter((a) => !a.startsWith('--'));
    const results = files.map((f) => JSON.parse(readFileSync(f, 'utf8')));
    const rows = results[0].rows.map((row, i) => Object.assign({}, ...results.map((r) => r.rows[i])));
    const merged = { ...results[0], rows, backends: results.map((r) => `${r.backends.join(', ')}: ${r.date}, load ${r.load}`) };
    console.log(table(merged));
    if (value('--json')) writeFileSync(value('--json'), JSON.stringify(merged, null, 1) + '\n');
    return;
  }
  const backends = value('--backend') ? [value('--backend')] : BACKENDS;
  const byBackend = {};
  const loadBefore = os.loadavg();
  for (const b of backends) {
    const passOn = args.filter(
      (a, i) => a !== '--json' && !(args[i - 1] === '--json' && !a.startsWith('--')) && a !== '--backend' && args[i - 1] !== '--backend',
    );
    const r = spawnSync(process.execPath, [HERE, ...passOn, '--child', '--backend', b], {
      encoding: 'utf8',
      maxBuffer: 1 << 26,
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    if (r.status !== 0) throw new Error(`the ${b} search failed (status ${r.status}, signal ${r.signal})`);
    byBackend[b] = JSON.parse(r.stdout);
    if (FRESH && !QUICK) firstCalls(b, byBackend[b]);
  }
  const first = byBackend[backends[0]];
  const rows = first.map((row, i) => ({ fn: row.fn, family: row.family, ...Object.fromEntries(backends.map((b) => [b, byBackend[b][i]])) }));
  const result = {
    date: new Date().toISOString().slice(0, 16).replace('T', ' ') + ' UTC',
    machine: `${os.cpus().length} cores (${os.cpus()[0]?.model.trim()}), Node ${process.versions.node}`,
    load: `${loadBefore.map((x) => x.toFixed(1)).join(' ')} before, ${os
      .loadavg()
      .map((x) => x.toFixed(1))
      .join(' ')} after (1, 5, 15 min)`,
    backends,
    quick: QUICK,
    maxCallSeconds: LIMITS.maxCallSeconds,
    rows,
  };
  console.log(table(result));
  if (flag('--json')) {
    const file = value('--json');
    if (file) writeFileSync(file, JSON.stringify(result, null, 1) + '\n');
    else console.log(JSON.stringify(result, null, 1));
  }
  const over = rows.some((r) => worst(r['wasm-scalar']) > LIMITS.maxCallSeconds);
  const errors = rows.some((r) => backends.some((b) => r[b]?.refusal?.kind === 'error'));
  process.exitCode = errors ? 2 : over ? 1 : 0;
}

if (process.argv[1] && path.resolve(process.argv[1]) === HERE) await main();
