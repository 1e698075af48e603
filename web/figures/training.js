// Training the toy transformer (pe.trainToy) for the page's Worker and the notebooks alike: one model
// per encoding, the held-out curve sampled every `every` steps, then the trained models evaluated at
// other sequence lengths. No drawing here (the Worker does not load Plot); web/figures/toy.js draws.

export const TOY_ENCODINGS = Object.freeze(['none', 'sinusoidal', 'learned', 'rope', 'alibi', 't5']);
export const EVAL_LENGTHS = Object.freeze([4, 6, 8, 10, 12, 16, 20, 24, 32]);
// Chance on each task's held-out set: 'before' is a fair coin, 'copy' a guess among 8 tokens, 'count' among 5 counts.
export const CHANCE = Object.freeze({ before: 1 / 2, copy: 1 / 8, count: 1 / 5 });
export const TOY_VOCAB = 8; // trainToy's default vocabulary, which the page and the notebooks train with

// The best held-out accuracy a model that cannot see order can reach on sequences of `length` tokens:
// it sees the bag of tokens (and the readout token), not where each one sits. From the tasks as
// src/core/toy.hpp defines them:
//  - before: A and B are in the bag either way: a coin toss, 1/2;
//  - count: the bag holds the answer: 1;
//  - copy: tokens uniform over the vocabulary; given the bag, the token at position k is each token
//    t with probability count(t) / length, so the best guess is the most frequent token and the
//    accuracy is E[max_t count(t)] / length, computed exactly: P(max <= m) is length! / V^length times
//    the coefficient of x^length in (sum_{j<=m} x^j / j!)^V.
// (This is the number the trainer will report with its runs; once it does, the figures read it from
// there: see baselineOf in toy.js.)
export function orderBlindAccuracy(task, length, vocab = TOY_VOCAB) {
  if (task === 'before') return 1 / 2;
  if (task === 'count') return 1;
  const n = length;
  let factorial = 1;
  for (let j = 2; j <= n; j++) factorial *= j;
  let expectedMax = 0;
  for (let m = 0; m < n; m++) {
    // (sum_{j<=m} x^j/j!)^V, truncated at x^n
    const term = Array.from({ length: n + 1 }, (_, j) => (j <= m ? 1 / gamma(j) : 0));
    let power = [1, ...new Array(n).fill(0)];
    for (let v = 0; v < vocab; v++) {
      const next = new Array(n + 1).fill(0);
      for (let a = 0; a <= n; a++) if (power[a]) for (let b = 0; a + b <= n; b++) next[a + b] += power[a] * term[b];
      power = next;
    }
    expectedMax += 1 - (factorial * power[n]) / vocab ** n; // P(max > m)
  }
  return expectedMax / n;
}
const gamma = (j) => {
  let f = 1;
  for (let i = 2; i <= j; i++) f *= i;
  return f;
};

// Trains one model per encoding; onEvent({ type: 'point' | 'run', encoding, ... }) after every
// `every` steps and after each model (with its accuracy per evaluation length). Returns the runs:
// [{ encoding, history: [{ step, loss, trainAccuracy, heldOutAccuracy }], lengths: [{ length, accuracy }] }].
export function trainModels(
  pe,
  { task = 'before', encodings = TOY_ENCODINGS, steps = 2000, seed = 0, causal = false, layers = 2, every = 50 } = {},
  onEvent = () => {},
) {
  const runs = [];
  for (const encoding of encodings) {
    const tr = pe.trainToy({ task, encoding, steps, seed, causal, layers });
    try {
      const history = [{ ...tr.step(0) }];
      onEvent({ type: 'point', encoding, point: history[0] });
      while (history.at(-1).step < steps) {
        const point = tr.step(Math.min(every, steps - history.at(-1).step));
        history.push(point);
        onEvent({ type: 'point', encoding, point });
      }
      const trained = tr.config.length;
      const lengths = EVAL_LENGTHS.filter((length) => encoding !== 'learned' || length <= trained).map((length) => ({
        length,
        accuracy: tr.evaluate({ length }),
      }));
      const run = { encoding, history, lengths };
      runs.push(run);
      onEvent({ type: 'run', encoding, run });
    } finally {
      tr.dispose();
    }
  }
  return runs;
}

// trainModels without the events, remembered per backend and options: training is deterministic, so
// a notebook's two figures of the same models (curves, lengths) train them once.
const memo = new Map();
export function trainedModels(pe, options = {}) {
  const key = `${pe.backend} ${JSON.stringify(options)}`;
  if (!memo.has(key)) memo.set(key, trainModels(pe, options));
  return memo.get(key);
}
