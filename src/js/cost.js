// How long a call may run. A call whose work is not bounded by its output's size limit in time
// (attention, the pairwise analyses, training; the rotation tables, whose angles at explicit positions
// or very wide rows cost far more than a value each; wavelengths' powers) estimates its run time from
// its sizes before it starts, with per-unit costs measured on each backend, and is refused when the
// estimate exceeds LIMITS.maxCallSeconds: no synchronous call the limits accept blocks a page or a
// server for long. Long work goes in smaller calls (blocks of queries, fewer rows) or, for training,
// in the asynchronous, cancellable run(). docs/LIMITS.md has the figures; scripts/limits/search.mjs
// checks every public function at its limits.
import { LIMITS } from './contract.js';

export const MAX_CALL_SECONDS = LIMITS.maxCallSeconds;

// Nanoseconds per unit of work, per backend, measured on the project's reference machine (2 cores,
// Node 20) and rounded up (docs/LIMITS.md). A call's first run in a process is its slowest: V8 runs
// a wasm function in its baseline code (Liftoff, 2 to 3 times slower in the kernels) until it has run
// for a while, and a running call never switches to the optimised code; and memory grown from the
// operating system's fresh pages costs about a nanosecond a byte more. The units of calls that do
// their work in one long core call (ropeCache, similarity, nearestDistances, t5Buckets' positions,
// M-RoPE) are set from such first calls at the budget's edge (scripts/limits/boundary.mjs), with a
// margin of 1.1: their boundary calls run in about 1.8 s at most, and faster when warm.
//   attentionLogit: one logit computed and softmaxed, streaming (weights: false);
//   attentionWeight: the same when the weights are kept (written, copied out);
//   attentionMac: one multiply-add of q.k or of weights.v when the weights are kept (at d = 512; on the
//     SIMD build the streaming path's, attentionStreamMac, is 0.4 of it: it reads k and v once);
//   attentionKey: one key row of one head (a query over 2.3e7 keys ran 4.1 s the first time on the
//     scalar build where the logits and multiply-adds said 1.7 s);
//   attentionExactLogit, attentionExactMac: the same for a row computed again in double, when its
//     logits (or its sums of exp * v) overflow float32;
//   and inputValue (below) for each value of q, k, v and the bias: very wide rows (d = 294912, seq 64)
//     cost their copy into fresh memory, not their multiply-adds
//     (these: first calls in fresh processes, docs/LIMITS.md "Attention's costs at model shapes");
//   nearestPair, nearestPairDim: a pair of rows compared by nearestDistances, and per dimension
//     (nearestPairDimWide instead for rows of more than WIDE_ROW values, which no longer stay in
//     cache: 1.9 ns per pair-dimension at d = 8192 on both builds warm, 5.2 ns in a first call);
//   similarityOutput, similarityOutputDim: one element of the similarity matrix, and per dimension
//     (these three groups: scripts/limits/analysis.mjs);
//   sinusoidalValue, ropeValue, ropeCacheValue: one value of consecutive rows (angle addition);
//   ropeSectionValue: one value of rope() with mropeSection (three passes, one call per batch entry);
//   sinusoidalWideValue, ropeCacheWideValue: the same in rows of more than WIDE_FREQUENCIES
//     frequencies (their tables no longer fit in cache);
//   sinusoidalFrequency, ropeCacheFrequency: one frequency's tables, set up once per call;
//   ropeBlockFrequency: one frequency set up again by each core call (a block of rows of one entry;
//     what makes very wide heads slow);
//   angle: one angle of a row at an explicit, non-consecutive position, reduced on its own;
//   wideAngle: the extra cost of such an angle beyond 2^35, reduced by Payne-Hanek;
//   wavelength: one value of wavelengths() (a power);
//   normalValue: one value of learned()'s 'normal' init (scalar: the measured 49 ns x 1.12, not 1.25,
//     so that a 2^25-value table, 1.5 s, stays allowed);
//   uniformValue: one value of learned()'s 'xavier' init and of tokenEmbedding()'s (a uniform draw:
//     2^28 values ran 2.1 s scalar, 2.3 s SIMD as first calls, quiet);
//   lookupValue: one value of LearnedEmbedding.lookup / TokenEmbedding.lookup;
//   addValue: one value of addPositional (x and p copied into fresh wasm memory, the sum copied out:
//     x, p [2621440, 64] ran 0.9 s warm and 2.6 s as a first call, scalar; 2.3 s SIMD);
//   alibiMaskedValue: one value of alibiBias with an attentionMask (a row of key positions per batch
//     entry: [2, 8, 4096, 4096] ran 2.1 s as a first call, scalar, 1.5 s SIMD; the plain form, 1.5 s
//     at 2.5e8 values, stays bounded by the size limit);
//   ropeIndexId: one token id of mropePositions' get_rope_index form (computed in JS);
//   inputValue: one value of a large input read and copied into fresh wasm memory (similarity and
//     nearestDistances of few, very long rows: their work is no longer in the pairs)
//     (these: scripts/limits/tables.mjs);
//   t5Bucket: one bucket of t5Buckets({ relativePositions }) (a logarithm each; the queryLength form
//     reads a table per distance): 47 ns measured by scripts/limits/search.mjs at 1.7e8 positions
//     on the scalar build, 7.8 s.
// The trainer's costs are in src/js/lab/toy.js (scripts/limits/toy.mjs).
export const WIDE_FREQUENCIES = 2 ** 17;
export const WIDE_ROW = 2048;
export const COSTS = Object.freeze({
  'wasm-simd': Object.freeze({
    attentionLogit: 4.5,
    attentionWeight: 12,
    attentionMac: 0.2,
    attentionStreamMac: 0.08,
    attentionKey: 160,
    attentionExactLogit: 14,
    attentionExactMac: 1.2,
    nearestPair: 5.2,
    nearestPairDim: 0.86,
    nearestPairDimWide: 8,
    similarityOutput: 15.5,
    similarityOutputDim: 0.78,
    sinusoidalValue: 5.5,
    sinusoidalWideValue: 33,
    sinusoidalFrequency: 69,
    ropeValue: 7,
    ropeSectionValue: 12,
    ropeBlockFrequency: 59,
    ropeCacheValue: 10,
    ropeCacheWideValue: 33,
    ropeCacheFrequency: 64,
    angle: 25,
    wideAngle: 116,
    wavelength: 47,
    normalValue: 58,
    uniformValue: 9.3,
    lookupValue: 11,
    addValue: 15,
    alibiMaskedValue: 6,
    ropeIndexId: 230,
    inputValue: 27,
    t5Bucket: 75,
  }),
  'wasm-scalar': Object.freeze({
    attentionLogit: 15,
    attentionWeight: 19,
    attentionMac: 0.45,
    attentionStreamMac: 0.45,
    attentionKey: 120,
    attentionExactLogit: 18,
    attentionExactMac: 1.6,
    nearestPair: 14,
    nearestPairDim: 1.3,
    nearestPairDimWide: 8,
    similarityOutput: 18,
    similarityOutputDim: 0.65,
    sinusoidalValue: 5.9,
    sinusoidalWideValue: 31,
    sinusoidalFrequency: 72,
    ropeValue: 8.1,
    ropeSectionValue: 20,
    ropeBlockFrequency: 60,
    ropeCacheValue: 13,
    ropeCacheWideValue: 31,
    ropeCacheFrequency: 63,
    angle: 48,
    wideAngle: 110,
    wavelength: 52,
    normalValue: 55,
    uniformValue: 8.5,
    lookupValue: 11,
    addValue: 17,
    alibiMaskedValue: 8.5,
    ropeIndexId: 230,
    inputValue: 22,
    t5Bucket: 75,
  }),
});

// Angle terms of `rows` rows at positions at(0), at(1), ... (explicit positions, or an offset): rows
// that are not consecutive integers within 2^53 (where angle addition is exact) reduce every angle
// p * w_i on its own ('angle'), those beyond 2^35 again by Payne-Hanek ('wideAngle'); `repeat` times
// over. The frequencies are w_i = base^(-i * step), i < count (the unscaled ones: scalings only
// lower them, so the count of wide angles is an upper bound).
export function angleTerms(rows, at, { base, step, count }, repeat = 1) {
  if (rows === 0 || count === 0) return {};
  const p0 = at(0);
  let consecutive = Math.abs(p0) + rows <= 2 ** 53;
  for (let i = 1; i < rows && consecutive; i++) consecutive = at(i) === p0 + i;
  if (consecutive) return {};
  // |p| * base^(-i step) > 2^35  <=>  i * step * ln(base) < ln(|p| / 2^35)
  const slope = step * Math.log(base);
  let wide = 0;
  for (let r = 0; r < rows; r++) {
    const room = Math.log(Math.abs(at(r))) - 35 * Math.LN2;
    if (slope > 0) wide += Math.min(count, Math.max(0, Math.ceil(room / slope)));
    else if (slope < 0) wide += Math.min(count, Math.max(0, count - Math.max(0, Math.floor(room / slope) + 1)));
    else wide += room > 0 ? count : 0;
  }
  return { angle: repeat * rows * count, wideAngle: repeat * wide };
}

// The estimated seconds of `terms` ({ unitName: count }) on `backend`.
export function estimateSeconds(backend, terms) {
  const table = COSTS[backend];
  let ns = 0;
  for (const [unit, count] of Object.entries(terms)) if (count) ns += table[unit] * count;
  return ns / 1e9;
}

const seconds = (s) => (s >= 100 ? `${Math.round(s)}` : s >= 10 ? s.toFixed(0) : s.toFixed(1));

// Refuses a call estimated at more than MAX_CALL_SECONDS; `what` names the work, `hint` says how to
// split it.
export function checkCost(c, what, estimate, hint = '') {
  if (!(estimate <= MAX_CALL_SECONDS))
    throw c.range(
      `${what} would run for about ${seconds(estimate)} s on this backend; a call may run for at most about ${MAX_CALL_SECONDS} s (LIMITS.maxCallSeconds)${hint ? `: ${hint}` : ''}`,
    );
  return estimate;
}
