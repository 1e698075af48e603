// Training the toy transformer (pe.trainToy) for the page's Worker and the notebooks alike: one model
// per encoding, the held-out curve sampled every `every` steps, then the trained models evaluated at
// other sequence lengths. No drawing here (the Worker does not load Plot); web/figures/toy.js draws.

export const TOY_ENCODINGS = Object.freeze(['none', 'sinusoidal', 'learned', 'rope', 'alibi', 't5']);
export const EVAL_LENGTHS = Object.freeze([4, 6, 8, 10, 12, 16, 20, 24, 32]);

// What a task allows without learning order, as the trainer reports it (trainToy's baseline()):
// { chanceAccuracy, orderBlindAccuracy } at `length` tokens. Chance is a uniform guess ('before' a
// fair coin, 'copy' one of 8 tokens, 'count' one of 5 counts); order-blind is the best any model that
// sees only the bag of tokens can reach (1/2 for 'before', 1 for 'count', about a third for 'copy').
// `pe` is posenc/lab's instance; the numbers depend only on the task and length, so they are kept.
const baselineMemo = new Map();
export function baselineOf(pe, task, length = 8) {
  const key = `${task} ${length}`;
  if (!baselineMemo.has(key)) {
    const tr = pe.trainToy({ task, steps: 0 });
    try {
      baselineMemo.set(key, tr.baseline({ length }));
    } finally {
      tr.dispose();
    }
  }
  return baselineMemo.get(key);
}

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
