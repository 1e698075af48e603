// Train short, test long: toy models trained on 'before' at 16 tokens, tested at 16, 32, 64 and 128
// tokens, RoPE with each long-context scaling at test time (factor L/16, the original length being 16)
// or after a short fine-tune at 32 tokens. Prints the mean held-out accuracy over seeds as a Markdown
// table (the README's), with the min-max over seeds on stderr. The experiment is the demo page's
// (web/figures/longcontext.js), with more steps and seeds. About 5 minutes under wasm SIMD.
//   node scripts/experiments/train-short-test-long.mjs [--seeds 5] [--steps 1000] [--length 16] [--scalar]
import { loadLab } from '../../src/js/lab/index.js';
import { LONG_ROWS, lengthsOf, summarise, trainShortTestLong } from '../../web/figures/longcontext.js';

const arg = (name, fallback) => {
  const i = process.argv.indexOf(name);
  return i < 0 ? fallback : Number(process.argv[i + 1]);
};
const options = { length: arg('--length', 16), steps: arg('--steps', 1000), seeds: arg('--seeds', 5), tuneSteps: 100 };
const lab = await loadLab({ simd: !process.argv.includes('--scalar') });
const tune = `${options.tuneSteps} steps at ${2 * options.length}`;
const LABELS = {
  none: 'no positions',
  sinusoidal: 'sinusoidal',
  rope: 'RoPE, no scaling',
  'rope+linear': 'RoPE + linear (position interpolation) at test time',
  'rope+ntk': 'RoPE + NTK at test time',
  'rope+yarn': 'RoPE + YaRN at test time',
  'rope+llama3': 'RoPE + Llama 3 at test time',
  ft: `RoPE, fine-tuned ${tune}, no scaling`,
  'ft+linear': `RoPE, fine-tuned at ${2 * options.length} with linear`,
  'ft+yarn': `RoPE, fine-tuned at ${2 * options.length} with YaRN`,
  alibi: 'ALiBi',
  t5: 'T5',
};
const ORDER = ['none', 'sinusoidal', 'rope', 'rope+linear', 'rope+ntk', 'rope+yarn', 'rope+llama3', 'ft', 'ft+linear', 'ft+yarn', 'alibi', 't5'];
if (ORDER.length !== LONG_ROWS.length) throw new Error('a row of web/figures/longcontext.js has no label here');

const started = performance.now();
let last = 0;
const { results } = trainShortTestLong(lab, options, (event) => {
  if (event.type === 'progress' && performance.now() - last > 5000) {
    last = performance.now();
    console.error(`${Math.round((100 * event.done) / event.total)}%: ${event.label}`);
  }
});
const summary = summarise(results);
const lengths = lengthsOf(options.length);
const cell = (key, length, f) => {
  const s = summary.find((c) => c.key === key && c.length === length);
  return s ? f(s) : '—'; // a model fine-tuned with a scaling never ran at the training length unscaled
};
console.log(`| model | ${lengths.map((l) => `@${l}`).join(' | ')} |`);
console.log(`|---|${lengths.map(() => '---|').join('')}`);
for (const key of ORDER) console.log(`| ${LABELS[key]} | ${lengths.map((l) => cell(key, l, (s) => `${Math.round(100 * s.mean)}%`)).join(' | ')} |`);
console.error('min-max over seeds:');
for (const key of ORDER)
  console.error(`  ${LABELS[key]}: ${lengths.map((l) => cell(key, l, (s) => `${Math.round(100 * s.min)}-${Math.round(100 * s.max)}%`)).join(', ')}`);
console.error(`${lab.backend}, seeds 0-${options.seeds - 1}, ${((performance.now() - started) / 1000).toFixed(0)} s`);
