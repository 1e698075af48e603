// trainToy: a toy transformer trained in the wasm core (src/core/toy.hpp) on a task that needs word
// order ('before', 'copy') or not ('count'), with or without a positional encoding. The trainer lives
// in wasm memory; the JS object is a handle, freed by dispose() / [Symbol.dispose] or, when
// forgotten, by a FinalizationRegistry.
import { DEFAULTS, ENUMS, LIMITS } from './contract.js';
import { scope } from './heap.js';
import { Checker } from './validate.js';

const disposeSymbol = Symbol.dispose ?? Symbol.for('Symbol.dispose');
const registry = new FinalizationRegistry(({ mod, handle }) => mod._toyFree(handle));
const ENCODINGS = ENUMS.labEncoding.filter((e) => e !== 'xpos');
const OPTIONS = ['task', 'encoding', 'steps', 'seed', 'length', 'dModel', 'heads', 'layers', 'batch', 'vocab', 'causal', 'learningRate'];

class ToyTrainer {
  #mod;
  #handle;

  constructor(mod, handle, config) {
    this.#mod = mod;
    this.#handle = handle;
    this.config = Object.freeze(config);
    registry.register(this, { mod, handle }, this);
  }

  #live(fn) {
    if (!this.#handle) throw new TypeError(`posenc.trainToy.${fn}: this trainer was disposed`);
    return this.#handle;
  }

  // Trains n more steps (one batch each): { step, loss, trainAccuracy, heldOutAccuracy }.
  step(n = 1) {
    const c = new Checker('trainToy.step');
    const steps = c.int('n', n, { max: LIMITS.toyMaxSteps });
    const mod = this.#mod;
    const h = this.#live('step');
    return scope(mod, 'trainToy.step', (s) => {
      const p = s.alloc(32);
      s.check(mod._toyTrain(h, steps, p));
      const [step, loss, trainAccuracy, heldOutAccuracy] = s.get(Float64Array, p, 4);
      return { step, loss, trainAccuracy, heldOutAccuracy };
    });
  }

  // Trains until config.steps steps are done (none when they are) and reports.
  run() {
    this.#live('run');
    const done = this.step(0).step;
    return this.step(Math.max(0, this.config.steps - done));
  }

  // Held-out accuracy on sequences of another length (a learned table has no rows past its
  // training length: RangeError).
  evaluate(options) {
    const c = new Checker('trainToy.evaluate');
    const o = c.options(options, ['length']);
    const length = c.int('length', o.length, { def: this.config.length, min: LIMITS.toyMinLength, max: LIMITS.toyMaxEvalLength });
    if (this.config.encoding === 'learned' && length > this.config.length)
      throw c.range(
        `length ${length} is longer than the learned table's ${this.config.length} positions: a learned encoding has no rows past the length it was trained at`,
      );
    const mod = this.#mod;
    const h = this.#live('evaluate');
    return scope(mod, 'trainToy.evaluate', (s) => {
      const p = s.alloc(8);
      s.check(mod._toyEvaluate(h, length, p));
      return s.get(Float64Array, p, 1)[0];
    });
  }

  dispose() {
    if (!this.#handle) return;
    registry.unregister(this);
    this.#mod._toyFree(this.#handle);
    this.#handle = 0;
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
    const encoding = c.oneOf('encoding', o.encoding, ENCODINGS, DEFAULTS.toyEncoding);
    const steps = c.int('steps', o.steps, { def: DEFAULTS.toySteps, max: LIMITS.toyMaxSteps });
    const seed = c.int('seed', o.seed, { def: 0, max: Number.MAX_SAFE_INTEGER });
    const length = c.int('length', o.length, { def: DEFAULTS.toyLength, min: LIMITS.toyMinLength, max: LIMITS.toyMaxLength });
    const heads = c.int('heads', o.heads, { def: DEFAULTS.toyHeads, min: 1, max: LIMITS.toyMaxHeads });
    const dModel = c.int('dModel', o.dModel, { def: DEFAULTS.toyDModel, min: LIMITS.toyMinDModel, max: LIMITS.toyMaxDModel });
    if (dModel % (2 * heads)) throw c.range(`dModel must be a multiple of 2 * heads = ${2 * heads}, got ${dModel}`);
    const layers = c.int('layers', o.layers, { def: DEFAULTS.toyLayers, min: 1, max: LIMITS.toyMaxLayers });
    const batch = c.int('batch', o.batch, { def: DEFAULTS.toyBatch, min: 1, max: LIMITS.toyMaxBatch });
    const vocab = c.int('vocab', o.vocab, { def: DEFAULTS.toyVocab, min: LIMITS.toyMinVocab, max: LIMITS.toyMaxVocab });
    const causal = c.bool('causal', o.causal, false);
    const learningRate = c.number('learningRate', o.learningRate, {
      def: DEFAULTS.toyLearningRate,
      min: 0,
      minExclusive: true,
      max: 1,
    });
    const config = { task, encoding, steps, seed, length, dModel, heads, layers, batch, vocab, causal, learningRate };
    const mod = this._mod;
    const handle = scope(mod, 'trainToy', (s) => {
      const slot = s.alloc(4);
      const fields = [ENUMS.toyTask.indexOf(task), ENUMS.labEncoding.indexOf(encoding), length, dModel, heads, layers, batch];
      const pConfig = s.put(Float64Array.from([...fields, vocab, causal ? 1 : 0, learningRate, seed]));
      s.check(mod._toyMake(slot, pConfig));
      return new Uint32Array(mod.HEAPU8.buffer, slot, 1)[0];
    });
    return new ToyTrainer(mod, handle, config);
  },
};
