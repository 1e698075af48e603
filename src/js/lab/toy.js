// trainToy: a toy transformer trained in the wasm core (src/core/toy.hpp) on a task that needs word
// order ('before', 'copy') or not ('count'), with or without a positional encoding. The trainer lives
// in wasm memory; the JS object is a handle, freed by dispose() / [Symbol.dispose] or, when
// forgotten, by a FinalizationRegistry.
//
// Every synchronous call (step, evaluate) estimates its run time from the model's sizes first and is
// refused past LIMITS.maxCallSeconds (src/js/cost.js); run() trains any number of steps
// asynchronously, in chunks of about CHUNK_SECONDS, and can be cancelled.
import { DEFAULTS, ENUMS, LIMITS } from '../contract.js';
import { checkCost, MAX_CALL_SECONDS } from '../cost.js';
import { readScaling } from '../config.js';
import { encodingOption } from './lab.js';
import { disown, disposeSymbol, made, owns, scope } from '../heap.js';
import { Checker, describe } from '../validate.js';

const OPTIONS = ['task', 'encoding', 'steps', 'seed', 'length', 'dModel', 'heads', 'layers', 'batch', 'vocab', 'causal', 'learningRate'];
const HELD_OUT = LIMITS.toyHeldOut; // held-out examples per evaluation
const CHUNK_SECONDS = 0.05; // run(): estimated work between two yields to the event loop

// Nanoseconds per unit of work, measured on each backend by scripts/limits/toy.mjs (which prints
// this table; re-run it after changing the kernels), scaled up so that no measured call of 50 ms or
// more ran longer than estimated. A pass over n examples of T = length + 1 tokens (passUnits) does
// `mac` multiply-adds in the projections and the readout, `attentionMac` in the per-head attention
// products, `score` attention weights (softmax, biases), `value` activation values (embedding,
// residual adds, rotations) and `block` per-head products; a training step is a forward and a
// backward pass over the batch (the train* costs) and Adam over `param` parameters, an evaluation
// a forward pass over the 256 held-out examples (the eval* costs); `call` is per call.
// Two terms from the boundary search (scripts/limits/search.mjs --only ToyTrainer.step) rather than the
// fit: `trainStep`, the fixed work of a step whatever the model's size (131072 steps of the smallest
// model ran 2.16 s scalar, 180224 ran 2.4 s SIMD, where the fit said 2 s; set so that the boundary's first
// calls run in about 1.8 s), and `firstCall`, the factor of
// a training call that is the trainer's first in the process, its whole run in V8's baseline code (one
// step at length 52 with yarn: 2.36 s the first time, 1.62 s after; the smallest model's 131072 steps:
// 3.06 s, 2.16 s; SIMD: 1.2 at most): applied to every training call, as the core's first-call costs are.
const COSTS = Object.freeze({
  'wasm-simd': Object.freeze({
    trainMac: 0.0465,
    trainAttentionMac: 0.272,
    trainScore: 29.9,
    trainValue: 27,
    trainBlock: 1190,
    param: 6.05,
    trainStep: 3000,
    firstCall: 1.2,
    call: 118000,
    evalMac: 0.0147,
    evalAttentionMac: 0.0111,
    evalScore: 27.2,
    evalValue: 11.3,
    evalBlock: 375,
  }),
  'wasm-scalar': Object.freeze({
    trainMac: 0.878,
    trainAttentionMac: 1.25,
    trainScore: 53,
    trainValue: 59.1,
    trainBlock: 2000,
    param: 8.6,
    trainStep: 6000,
    firstCall: 1.5,
    call: 162000,
    evalMac: 0.279,
    evalAttentionMac: 0.361,
    evalScore: 29.8,
    evalValue: 19.6,
    evalBlock: 494,
  }),
});

// The units of one pass over n examples of `length` tokens (exported for scripts/limits/toy.mjs).
// The last layer computes the readout row's query alone (its keys and values for all T rows).
export function passUnits({ dModel: d, heads, layers, vocab }, n, length) {
  const T = length + 1;
  const classes = vocab + 1; // at most: copy has vocab classes, count 5, before 2
  const full = layers - 1; // layers whose every row is a query
  return {
    mac: full * 4 * n * T * d * d + 2 * n * (T + 1) * d * d + n * d * classes,
    attentionMac: full * 2 * n * T * T * d + 2 * n * T * d,
    score: full * n * heads * T * T + n * heads * T,
    value: layers * n * T * d + n * d,
    block: layers * n * heads,
  };
}

// Parameters Adam updates (toy.cpp's Layout), with at most vocab + 1 classes.
export function parameterCount({ encoding, length, dModel: d, heads, layers, vocab }) {
  const positions = encoding === 'learned' ? (length + 1) * d : 0;
  const t5 = encoding === 't5' ? heads * DEFAULTS.numBuckets : 0; // toy.cpp's buckets per head
  return (vocab + length + 1) * d + positions + layers * (4 * d * d + t5) + (d + 1) * (vocab + 1);
}

const UNITS = ['mac', 'attentionMac', 'score', 'value', 'block'];
const costName = (prefix, unit) => prefix + unit[0].toUpperCase() + unit.slice(1);

// Estimated seconds of a training step at `length`, of an evaluation there, and of a call's
// overhead, on `backend`.
function toySeconds(backend, config, length = config.length) {
  const k = COSTS[backend];
  const train = passUnits(config, config.batch, length);
  const held = passUnits(config, HELD_OUT, length);
  let step = k.trainStep + k.param * parameterCount(config);
  let evaluate = 0;
  for (const u of UNITS) {
    step += k[costName('train', u)] * train[u];
    evaluate += k[costName('eval', u)] * held[u];
  }
  return { step: (k.firstCall * step) / 1e9, evaluate: evaluate / 1e9, call: k.call / 1e9 };
}

// Resolves after other tasks had their turn (a macrotask: timers, messages, I/O), without the
// 1-4 ms clamp of nested timeouts.
function yieldToEventLoop() {
  if (typeof setImmediate === 'function') return new Promise((resolve) => setImmediate(resolve));
  return new Promise((resolve) => {
    const { port1, port2 } = new MessageChannel();
    port1.onmessage = () => {
      port1.close();
      resolve();
    };
    port2.postMessage(null);
  });
}

// RoPE frequencies as the raw entry points take them: [address, count, attention factor] (none: base 10000's).
// Where a raw call trains or evaluates (src/bindings/lab.cpp SettingArgs): RoPE's frequencies, when
// given, put into wasm memory.
const settingArgs = (s, { length, rotary }) =>
  rotary
    ? { length, invFreq: s.put(rotary.invFreq), nFreq: rotary.invFreq.length, attentionFactor: rotary.attentionFactor }
    : { length, invFreq: 0, nFreq: 0, attentionFactor: 1 };

class ToyTrainer {
  #pe;
  #mod;
  #handle;
  #running = false;

  constructor(pe, handle, config) {
    this.#pe = pe;
    this.#mod = pe._lab;
    this.#handle = handle;
    this.config = Object.freeze(config);
    owns(this, handle);
  }

  #live(fn) {
    if (!this.#handle) throw new TypeError(`posenc.trainToy.${fn}: this trainer was disposed`);
    return this.#handle;
  }

  // length and scaling of step/evaluate's options -> { length, rotary }.
  #setting(c, o) {
    const { config } = this;
    const length = c.int('length', o.length, { def: config.length }); // its range: the core's rule
    return { length, rotary: this.#rotary(c, o.scaling, length) };
  }

  // A RoPE scaling's frequencies for one head ({ invFreq: Float64Array, attentionFactor }), from
  // pe.ropeFrequencies (its checks, names and semantics), with originalMaxPositions = the training
  // length and seqLength = `length` unless given; undefined when there is none or it changes nothing.
  #rotary(c, scaling, length) {
    if (scaling === undefined || scaling === null) return undefined;
    const { encoding, dModel, heads } = this.config;
    if (encoding !== 'rope') throw c.type(`scaling applies to the 'rope' encoding only; this trainer's encoding is '${encoding}'`);
    // read as every RoPE call reads a scaling (config.js), the trainer's lengths as its defaults
    const read = readScaling(c, scaling, 'scaling', { originalMaxPositions: this.config.length, seqLength: length });
    if (read.type === 'none') return undefined;
    if (read.base !== undefined && read.base !== DEFAULTS.base)
      throw c.type(`scaling.rope_theta is ${read.base}, but the toy model's base is ${DEFAULTS.base}`);
    const s = { ...read }; // posenc's camelCase form, for ropeFrequencies
    delete s.hf;
    delete s.where;
    delete s.base;
    const dim = dModel / heads;
    let scaled;
    let plain;
    try {
      scaled = this.#pe.ropeFrequencies({ dim, scaling: s });
      plain = this.#pe.ropeFrequencies({ dim });
    } catch (e) {
      if (e instanceof TypeError || e instanceof RangeError)
        throw new e.constructor(e.message.replace(/^posenc\.ropeFrequencies:/, `posenc.${c.fn}:`));
      throw e;
    }
    const { invFreq, attentionFactor } = scaled;
    if (attentionFactor === 1 && invFreq.every((w, i) => w === plain.invFreq[i])) return undefined;
    return { invFreq: Float64Array.from(invFreq), attentionFactor };
  }

  // The estimated seconds of `steps` steps at `length` (with the held-out evaluation when `held`).
  #seconds(steps, length, held) {
    const t = toySeconds(this.#pe.backend, this.config, length);
    return { ...t, total: steps * t.step + (held ? t.evaluate : 0) + t.call };
  }

  // The raw training call: `steps` steps as `setting` says, the held-out accuracy measured when `held`.
  #train(fn, steps, setting, held) {
    const mod = this.#mod;
    const h = this.#live(fn);
    return scope(mod, `trainToy.${fn}`, (s) => {
      const p = s.alloc(32);
      s.check(h.train({ steps, ...settingArgs(s, setting), heldOut: held, report: p }));
      const [step, loss, trainAccuracy, heldOutAccuracy] = s.get(Float64Array, p, 4);
      return { step, loss, trainAccuracy, heldOutAccuracy };
    });
  }

  // Trains n more steps (one batch each), on sequences of `length` tokens with an optional RoPE
  // `scaling` (fine-tuning at another length): { step, loss, trainAccuracy, heldOutAccuracy }, the
  // held-out accuracy measured where it trained. Refused when estimated past LIMITS.maxCallSeconds.
  step(n = 1, options) {
    const c = new Checker('trainToy.step');
    const steps = c.int('n', n);
    const setting = this.#setting(c, c.options(options, ['length', 'scaling']));
    this.#live('step');
    const t = this.#seconds(steps, setting.length, true);
    const fit = Math.floor((MAX_CALL_SECONDS - t.evaluate - t.call) / t.step);
    const sync =
      fit >= 1
        ? `at most ${fit} step${fit === 1 ? '' : 's'} per call`
        : `a smaller batch, dModel${setting.length > this.config.length ? ' or length' : ''}`;
    const usual = setting.length === this.config.length && !setting.rotary;
    checkCost(
      c,
      `${steps} training step${steps === 1 ? '' : 's'} of this model`,
      t.total,
      `train ${sync}${usual && fit >= 1 ? ', or await run() (it trains in chunks)' : ''}`,
    );
    return this.#train('step', steps, setting, true);
  }

  // Trains until config.steps steps are done (none when they are), asynchronously: in chunks of
  // about CHUNK_SECONDS of estimated work, yielding to the event loop between chunks. Resolves to
  // the final { step, loss, trainAccuracy, heldOutAccuracy }; onProgress(report) after each chunk;
  // rejects with signal.reason once `signal` aborts (checked before each chunk). The same bits as
  // step(config.steps - done).
  async run(options) {
    const c = new Checker('trainToy.run');
    const o = c.options(options, ['signal', 'onProgress']);
    const { signal, onProgress } = o;
    if (signal !== undefined && (typeof signal !== 'object' || signal === null || typeof signal.aborted !== 'boolean'))
      throw c.type(`signal must be an AbortSignal, got ${describe(signal)}`);
    if (onProgress !== undefined && typeof onProgress !== 'function') throw c.type(`onProgress must be a function, got ${describe(onProgress)}`);
    this.#live('run');
    if (this.#running) throw c.type('this trainer is already running; await the first run() before starting another');
    this.#running = true;
    try {
      const setting = { length: this.config.length, rotary: undefined };
      const t = this.#seconds(1, setting.length, true);
      const reporting = onProgress !== undefined;
      const chunk = Math.max(1, Math.floor((CHUNK_SECONDS - (reporting ? t.evaluate : 0)) / t.step));
      for (;;) {
        if (signal?.aborted) throw signal.reason;
        const left = Math.max(0, this.config.steps - this.#train('run', 0, setting, false).step);
        const steps = Math.min(chunk, left);
        const report = this.#train('run', steps, setting, reporting || steps === left);
        onProgress?.(report);
        if (steps === left) return report;
        await yieldToEventLoop();
      }
    } finally {
      this.#running = false;
    }
  }

  // Held-out accuracy on sequences of another length (up to LIMITS.toyMaxEvalLength; a learned
  // table has no rows past its training length: RangeError), for 'rope' with an optional test-time
  // `scaling` (pe.ropeFrequencies' scaling object). Refused when estimated past LIMITS.maxCallSeconds.
  evaluate(options) {
    const c = new Checker('trainToy.evaluate');
    const setting = this.#setting(c, c.options(options, ['length', 'scaling']));
    const mod = this.#mod;
    const h = this.#live('evaluate');
    const t = this.#seconds(0, setting.length, true);
    checkCost(c, `evaluating this model at length ${setting.length}`, t.total, 'evaluate at a shorter length, or train a smaller model');
    return scope(mod, 'trainToy.evaluate', (s) => {
      const p = s.alloc(8);
      s.check(h.evaluate({ ...settingArgs(s, setting), accuracy: p }));
      return s.get(Float64Array, p, 1)[0];
    });
  }

  // The accuracies to read a task's numbers against at a length (default the training length):
  // chanceAccuracy, the best constant guess; orderBlindAccuracy, the best any model that sees the
  // tokens but not their order can reach (before 1/2, count 1, copy E[most frequent token's count]
  // / length, about 1/3 at 8 tokens of 8), exact for the task's distribution.
  baseline(options) {
    const c = new Checker('trainToy.baseline');
    const o = c.options(options, ['length']);
    const length = c.int('length', o.length, { def: this.config.length });
    const mod = this.#mod;
    const h = this.#live('baseline');
    return scope(mod, 'trainToy.baseline', (s) => {
      const p = s.alloc(16);
      s.check(h.baseline({ length, out: p }));
      const [chanceAccuracy, orderBlindAccuracy] = s.get(Float64Array, p, 2);
      return { chanceAccuracy, orderBlindAccuracy };
    });
  }

  // A copy of this trainer in its current state (its own wasm memory; dispose it too): both go on
  // to train to the same bits, e.g. one base model fine-tuned several ways.
  clone() {
    const h = this.#live('clone');
    const mod = this.#mod;
    return new ToyTrainer(this.#pe, made(mod, 'trainToy.clone', h.clone()), this.config);
  }

  dispose() {
    if (!this.#handle) return;
    disown(this, this.#handle);
    this.#handle = undefined;
  }
  [disposeSymbol]() {
    this.dispose();
  }
  get disposed() {
    return !this.#handle;
  }
}

export const toy = {
  trainToy(options) {
    const c = new Checker('trainToy');
    const o = c.options(options, OPTIONS);
    const task = c.oneOf('task', o.task, ENUMS.toyTask);
    const encoding = encodingOption(c, o.encoding, ENUMS.toyEncoding, DEFAULTS.toyEncoding);
    const steps = c.int('steps', o.steps, { def: DEFAULTS.toySteps, max: LIMITS.toyMaxSteps });
    const seed = c.int('seed', o.seed, { def: 0, max: Number.MAX_SAFE_INTEGER });
    // the ranges of the sizes and of learningRate, and dModel a multiple of 2 * heads: the core's rules
    const length = c.int('length', o.length, { def: DEFAULTS.toyLength });
    const heads = c.int('heads', o.heads, { def: DEFAULTS.toyHeads });
    const dModel = c.int('dModel', o.dModel, { def: DEFAULTS.toyDModel });
    const layers = c.int('layers', o.layers, { def: DEFAULTS.toyLayers });
    const batch = c.int('batch', o.batch, { def: DEFAULTS.toyBatch });
    const vocab = c.int('vocab', o.vocab, { def: DEFAULTS.toyVocab });
    const causal = c.bool('causal', o.causal, false);
    const learningRate = c.number('learningRate', o.learningRate, { def: DEFAULTS.toyLearningRate });
    const config = { task, encoding, steps, seed, length, dModel, heads, layers, batch, vocab, causal, learningRate };
    const mod = this._lab;
    const handle = made(
      mod,
      'trainToy',
      mod._toyMake({
        task: ENUMS.toyTask.indexOf(task),
        encoding: ENUMS.labEncoding.indexOf(encoding),
        length,
        dModel,
        heads,
        layers,
        batch,
        vocab,
        causal,
        learningRate,
        seed,
      }),
    );
    return new ToyTrainer(this, handle, config);
  },
};
