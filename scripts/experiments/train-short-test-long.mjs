// Train short, test long: toy models trained on 'before' at 16 tokens, tested at 16, 32, 64 and 128
// tokens, RoPE with each long-context scaling at test time (factor L/16, the original length being 16)
// or after a short fine-tune at 32 tokens. Prints the mean held-out accuracy over seeds as a Markdown
// table (the README's). About 5 minutes under wasm SIMD.
//   node scripts/experiments/train-short-test-long.mjs [--seeds 5] [--scalar]
import { loadLab } from '../../src/js/lab/index.js';

const arg = (name, fallback) => {
  const i = process.argv.indexOf(name);
  return i < 0 ? fallback : Number(process.argv[i + 1]);
};
const SEEDS = arg('--seeds', 5);
const lab = await loadLab({ simd: !process.argv.includes('--scalar') });
const TRAIN = { task: 'before', length: 16, steps: 1000 };
const LENGTHS = [16, 32, 64, 128];
const FINE_TUNE = { steps: 100, length: 32 };
const scaled = (type) => (length) => (length === TRAIN.length ? undefined : { type, factor: length / TRAIN.length });

// rows: [label, encoding, scaling at test time (a function of the length), fine-tune scaling type or null]
const rows = [
  ['no positions', 'none'],
  ['sinusoidal', 'sinusoidal'],
  ['RoPE, no scaling', 'rope'],
  ['RoPE + linear (position interpolation) at test time', 'rope', scaled('linear')],
  ['RoPE + NTK at test time', 'rope', scaled('ntk')],
  ['RoPE + YaRN at test time', 'rope', scaled('yarn')],
  ['RoPE + Llama 3 at test time', 'rope', scaled('llama3')],
  [`RoPE, fine-tuned ${FINE_TUNE.steps} steps at ${FINE_TUNE.length}, no scaling`, 'rope', undefined, 'none'],
  [`RoPE, fine-tuned at ${FINE_TUNE.length} with linear`, 'rope', scaled('linear'), 'linear'],
  [`RoPE, fine-tuned at ${FINE_TUNE.length} with YaRN`, 'rope', scaled('yarn'), 'yarn'],
  ['ALiBi', 'alibi'],
  ['T5', 't5'],
];

const trained = new Map(); // encoding -> trainers per seed, trained once
async function models(encoding) {
  if (!trained.has(encoding)) {
    const list = [];
    for (let seed = 0; seed < SEEDS; seed++) {
      const tr = lab.trainToy({ ...TRAIN, encoding, seed });
      await tr.run();
      list.push(tr);
    }
    trained.set(encoding, list);
  }
  return trained.get(encoding);
}

const started = performance.now();
console.log(`| model | ${LENGTHS.map((l) => `@${l}`).join(' | ')} |`);
console.log(`|---|${LENGTHS.map(() => '---|').join('')}`);
for (const [label, encoding, atTest = () => undefined, fineTune] of rows) {
  const sums = LENGTHS.map(() => 0);
  for (const base of await models(encoding)) {
    let tr = base;
    if (fineTune) {
      tr = base.clone();
      const scaling = fineTune === 'none' ? undefined : { type: fineTune, factor: FINE_TUNE.length / TRAIN.length };
      tr.step(FINE_TUNE.steps, { length: FINE_TUNE.length, scaling });
    }
    LENGTHS.forEach((length, i) => (sums[i] += tr.evaluate({ length, scaling: atTest(length) })));
    if (tr !== base) tr.dispose();
  }
  // a model fine-tuned with a scaling never ran at 16 unscaled: that cell is left out
  const cells = sums.map((s, i) => (fineTune && fineTune !== 'none' && LENGTHS[i] === TRAIN.length ? '—' : `${Math.round((100 * s) / SEEDS)}%`));
  console.log(`| ${label} | ${cells.join(' | ')} |`);
}
for (const list of trained.values()) for (const tr of list) tr.dispose();
console.error(`${lab.backend}, seeds 0-${SEEDS - 1}, ${((performance.now() - started) / 1000).toFixed(0)} s`);
