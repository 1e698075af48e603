// How long a call may run. A call whose work grows faster than its output (attention, the pairwise
// analyses, training) estimates its run time from its sizes before it starts, with per-unit costs
// measured on each backend (the scripts in scripts/limits/ print them), and is refused when the estimate
// exceeds LIMITS.maxCallSeconds: no synchronous call the limits accept blocks a page or a server
// for long. Long work goes in smaller calls (blocks of queries, fewer rows) or, for training, in
// the asynchronous, cancellable run().
import { LIMITS } from './contract.js';

export const MAX_CALL_SECONDS = LIMITS.maxCallSeconds;

// Nanoseconds per unit of work, per backend, measured on the project's reference machine (2 cores,
// Node 20) by scripts/limits/ and rounded up (docs/LIMITS.md):
//   attentionLogit: one logit computed and softmaxed, streaming (weights: false);
//   attentionWeight: the same when the weights are kept (written, copied out);
//   attentionMac: one multiply-add of q.k or of weights.v;
//   nearestPair, nearestPairDim: a pair of rows compared by nearestDistances, and per dimension;
//   similarityOutput, similarityOutputDim: one element of the similarity matrix, and per dimension.
export const COSTS = Object.freeze({
  'wasm-simd': Object.freeze({
    attentionLogit: 14,
    attentionWeight: 55,
    attentionMac: 0.25,
    nearestPair: 1.7,
    nearestPairDim: 0.27,
    similarityOutput: 4.5,
    similarityOutputDim: 0.155,
  }),
  'wasm-scalar': Object.freeze({
    attentionLogit: 45,
    attentionWeight: 70,
    attentionMac: 0.7,
    nearestPair: 4.6,
    nearestPairDim: 0.42,
    similarityOutput: 3.0,
    similarityOutputDim: 0.36,
  }),
});

// The estimated seconds of `terms` ({ unitName: count }) on `backend`.
export function estimateSeconds(backend, terms) {
  const table = COSTS[backend];
  let ns = 0;
  for (const [unit, count] of Object.entries(terms)) ns += table[unit] * count;
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
