// "Train short, test long": toy transformers (posenc/lab's trainToy) trained on 'does A come before B?'
// at one length and asked at 2×, 4× and 8× that length, over several seeds. RoPE is also asked with
// each long-context scaling applied at test time (factor = test length / training length, the original
// length being the training length), and after a short fine-tune at 2× the length (plain, or with
// linear or YaRN scaling). A learned table is left out: it has no rows past its training length, so it
// cannot be asked at all.
//
// Two halves: the experiment (longContextRuns: pure, no drawing, run by the page's Worker, the notebooks
// and scripts/experiments/train-short-test-long.mjs alike) and the figure spec (longContext), which draws
// the results it is given (partial while training) or, without them, trains them itself.
import * as Plot from '@observablehq/plot';
import { param } from './numeric.js';

export const LONG_ENCODINGS = Object.freeze(['none', 'sinusoidal', 'rope', 'alibi', 't5']);
export const LONG_MULTIPLES = Object.freeze([2, 4, 8]);

// The rows of the experiment: a model (encoding; fine-tuned at 2× the length or not, with a scaling or
// not) and the RoPE scaling it is asked with at test time (`atTest`: a type, its factor the test length
// over the training length; none at the training length itself).
export const LONG_ROWS = Object.freeze(
  [
    { key: 'none', label: 'no positions', encoding: 'none', group: 'encodings' },
    { key: 'sinusoidal', label: 'sinusoidal', encoding: 'sinusoidal', group: 'encodings' },
    { key: 'rope', label: 'RoPE', encoding: 'rope', group: 'encodings' },
    { key: 'alibi', label: 'ALiBi', encoding: 'alibi', group: 'encodings' },
    { key: 't5', label: 'T5', encoding: 't5', group: 'encodings' },
    { key: 'rope+linear', label: 'RoPE + PI (linear)', encoding: 'rope', atTest: 'linear', group: 'test time' },
    { key: 'rope+ntk', label: 'RoPE + NTK', encoding: 'rope', atTest: 'ntk', group: 'test time' },
    { key: 'rope+yarn', label: 'RoPE + YaRN', encoding: 'rope', atTest: 'yarn', group: 'test time' },
    { key: 'rope+llama3', label: 'RoPE + Llama 3', encoding: 'rope', atTest: 'llama3', group: 'test time' },
    { key: 'ft', label: 'RoPE fine-tuned', encoding: 'rope', fineTune: 'none', group: 'fine-tune' },
    { key: 'ft+linear', label: 'fine-tuned + linear', encoding: 'rope', fineTune: 'linear', atTest: 'linear', group: 'fine-tune' },
    { key: 'ft+yarn', label: 'fine-tuned + YaRN', encoding: 'rope', fineTune: 'yarn', atTest: 'yarn', group: 'fine-tune' },
  ].map(Object.freeze),
);
const rowOf = new Map(LONG_ROWS.map((r) => [r.key, r]));

// The options with their defaults: the script's (1000 steps, 5 seeds); the page asks for fewer.
export function longContextConfig({
  task = 'before',
  length = 16,
  steps = 1000,
  seeds = 5,
  firstSeed = 0,
  tuneSteps = 100,
  rows = LONG_ROWS.map((r) => r.key),
  multiples = LONG_MULTIPLES,
} = {}) {
  for (const key of rows) if (!rowOf.has(key)) throw new RangeError(`longContext: unknown row '${key}' (rows: ${[...rowOf.keys()].join(', ')})`);
  const longest = length * Math.max(...multiples);
  if (!Number.isInteger(length) || length < 4 || length > 32 || !(longest <= 128))
    throw new RangeError(
      `longContext: length must be an integer from 4 to 32 whose largest multiple (${multiples.join(', ')}) is at most 128 tokens, got ${length}`,
    );
  param('longContext', 'steps', steps, { min: 1, max: 1e6 });
  param('longContext', 'seeds', seeds, { min: 1, max: 100 });
  param('longContext', 'firstSeed', firstSeed, { max: 1e9 });
  param('longContext', 'tuneSteps', tuneSteps, { min: 1, max: 1e6 });
  return { task, length, steps, seeds, firstSeed, tuneSteps, rows: [...rows], multiples: [...multiples] };
}

// The lengths asked: the training length, then its multiples (default 2×, 4×, 8×).
export const lengthsOf = (length, multiples = LONG_MULTIPLES) => [length, ...multiples.map((m) => m * length)];

// A RoPE scaling of `type` stretching `from` to `to` tokens (none when they are equal).
const scaling = (type, from, to) => (type && to !== from ? { type, factor: to / from } : undefined);

// The experiment, step by step: a generator of events, so that a Worker can post progress and a
// driver can stop between any two. Events:
//   { type: 'progress', done, total, label }   done/total counts training steps (fine-tunes included)
//   { type: 'result', results: [{ key, seed, length, accuracy }] }   one row for one seed, every length
// Each encoding and seed trains once (in chunks of `chunk` steps, each a trainToy step() call), and
// every row built on that model is measured before it is freed. A model fine-tuned with a scaling never
// ran at the training length unscaled: that length is left out for it.
export function* longContextRuns(pe, options = {}, { chunk = 50 } = {}) {
  const c = longContextConfig(options);
  const lengths = lengthsOf(c.length, c.multiples);
  const rows = c.rows.map((k) => rowOf.get(k));
  const encodings = LONG_ENCODINGS.filter((e) => rows.some((r) => r.encoding === e));
  const tunes = (e) => rows.filter((r) => r.encoding === e && r.fineTune).length;
  const total = c.seeds * encodings.reduce((s, e) => s + c.steps + tunes(e) * c.tuneSteps, 0);
  let done = 0;
  for (const encoding of encodings)
    for (let seed = c.firstSeed; seed < c.firstSeed + c.seeds; seed++) {
      const base = pe.trainToy({ task: c.task, encoding, length: c.length, steps: c.steps, seed });
      try {
        for (let step = 0; step < c.steps;) {
          const n = Math.min(chunk, c.steps - step);
          base.step(n);
          step += n;
          done += n;
          yield { type: 'progress', done, total, label: `${rowOf.get(encoding).label}, seed ${seed}: step ${step} of ${c.steps}` };
        }
        for (const row of rows.filter((r) => r.encoding === encoding)) {
          let model = base;
          if (row.fineTune) {
            model = base.clone();
            const tuneLength = 2 * c.length;
            for (let step = 0; step < c.tuneSteps;) {
              const n = Math.min(chunk, c.tuneSteps - step);
              model.step(n, { length: tuneLength, scaling: scaling(row.fineTune === 'none' ? undefined : row.fineTune, c.length, tuneLength) });
              step += n;
              done += n;
              yield { type: 'progress', done, total, label: `${row.label}, seed ${seed}: fine-tune step ${step} of ${c.tuneSteps}` };
            }
          }
          try {
            const results = [];
            for (const length of lengths) {
              if (row.fineTune && row.fineTune !== 'none' && length === c.length) continue;
              results.push({ key: row.key, seed, length, accuracy: model.evaluate({ length, scaling: scaling(row.atTest, c.length, length) }) });
            }
            yield { type: 'result', results };
          } finally {
            if (model !== base) model.dispose();
          }
        }
      } finally {
        base.dispose();
      }
    }
}

// The whole experiment at once (a notebook, the script, a test): { config, lengths, results }.
// onEvent sees every event as it comes.
export function trainShortTestLong(pe, options = {}, onEvent = () => {}) {
  const results = [];
  for (const event of longContextRuns(pe, options)) {
    if (event.type === 'result') results.push(...event.results);
    onEvent(event);
  }
  const config = longContextConfig(options);
  return { config, lengths: lengthsOf(config.length, config.multiples), results };
}

// The mean, min and max over seeds of each row at each length, in LONG_ROWS order:
// [{ key, label, group, length, mean, min, max, seeds }].
export function summarise(results) {
  const cells = new Map();
  for (const r of results) {
    const id = `${r.key} ${r.length}`;
    if (!cells.has(id)) cells.set(id, { key: r.key, length: r.length, values: [] });
    cells.get(id).values.push(r.accuracy);
  }
  const order = (key) => LONG_ROWS.findIndex((r) => r.key === key);
  return [...cells.values()]
    .sort((a, b) => order(a.key) - order(b.key) || a.length - b.length)
    .map(({ key, length, values }) => ({
      key,
      label: rowOf.get(key).label,
      group: rowOf.get(key).group,
      length,
      mean: values.reduce((s, v) => s + v, 0) / values.length,
      min: Math.min(...values),
      max: Math.max(...values),
      seeds: values.length,
    }));
}

// trainShortTestLong's results, remembered per backend and options (all of them, with their defaults):
// a notebook's figure and table train once, and a cell run again does not train again.
const memo = new Map();
export function longContextResults(pe, options = {}) {
  const key = `${pe.backend} ${JSON.stringify(longContextConfig(options))}`;
  if (!memo.has(key)) memo.set(key, trainShortTestLong(pe, options).results);
  return memo.get(key);
}

// The baselines at each length, as the trainer reports them (they depend only on the task and the
// length, so they are kept): [{ length, chanceAccuracy, orderBlindAccuracy }].
const baselineMemo = new Map();
export function baselines(pe, task, lengths) {
  const key = `${task} ${lengths}`;
  if (!baselineMemo.has(key)) {
    const tr = pe.trainToy({ task, steps: 0 });
    try {
      baselineMemo.set(
        key,
        lengths.map((length) => ({ length, ...tr.baseline({ length }) })),
      );
    } finally {
      tr.dispose();
    }
  }
  return baselineMemo.get(key);
}

export const ROW_COLOURS = Object.freeze({
  none: '#222222',
  sinusoidal: '#4e79a7',
  rope: '#59a14f',
  alibi: '#e15759',
  t5: '#b07aa1',
  'rope+linear': '#f28e2c',
  'rope+ntk': '#9c755f',
  'rope+yarn': '#76b7b2',
  'rope+llama3': '#edc948',
  ft: '#8cd17d',
  'ft+linear': '#f28e2c',
  'ft+yarn': '#76b7b2',
});

const pct = (x) => `${Math.round(100 * x)}%`;
const GROUPS = [
  ['encodings', 'as trained'],
  ['test time', 'RoPE, scaled at test time'],
  ['fine-tune', 'RoPE, fine-tuned at 2×'],
];

// A figure spec: accuracy against test length, one panel per group of rows (RoPE unscaled repeated in
// the RoPE panels as the reference), the mean over seeds as a line and their min–max as a band, the
// order-blind baseline dotted, the training length marked. `results` as longContextRuns gives them
// (possibly partial); without them the experiment runs here.
export function longContext(pe, { results, ...options } = {}) {
  const c = longContextConfig(options);
  results ??= longContextResults(pe, options);
  const lengths = lengthsOf(c.length, c.multiples);
  const summary = summarise(results);
  const base = baselines(pe, c.task, lengths);
  const blind = base.map((b) => ({ length: b.length, accuracy: b.orderBlindAccuracy }));
  const at = (key, length) => summary.find((s) => s.key === key && s.length === length);
  const x = {
    label: 'test length (tokens) →',
    type: 'log',
    base: 2,
    domain: [lengths[0] / 1.15, lengths.at(-1) * 1.15],
    ticks: lengths,
    tickFormat: (d) => String(d),
  };
  const panels = GROUPS.flatMap(([group, title]) => {
    const keys = c.rows.filter((k) => rowOf.get(k).group === group);
    if (group !== 'encodings' && keys.length && c.rows.includes('rope')) keys.unshift('rope');
    const data = summary.filter((s) => keys.includes(s.key));
    if (!keys.length || (results.length && !data.length)) return [];
    const colour = { domain: keys.map((k) => rowOf.get(k).label), range: keys.map((k) => ROW_COLOURS[k]), legend: true };
    return [
      {
        title,
        width: 300,
        height: 260,
        options: {
          marginLeft: 42,
          marginRight: 14,
          x,
          y: { label: '↑ accuracy', domain: [0, 1], tickFormat: '%', grid: true },
          color: colour,
          marks: [
            Plot.ruleX([c.length], { stroke: '#222', strokeDasharray: '2,3' }),
            Plot.text([c.length], { x: (d) => d, y: 0.04, text: () => 'trained', dx: 4, textAnchor: 'start', fill: '#444' }),
            Plot.line(blind, { x: 'length', y: 'accuracy', stroke: '#222', strokeDasharray: '1,3', strokeWidth: 1.5, className: 'order-blind' }),
            Plot.areaY(data, { x: 'length', y1: 'min', y2: 'max', z: 'label', fill: 'label', fillOpacity: 0.15 }),
            Plot.line(data, { x: 'length', y: 'mean', z: 'label', stroke: 'label', strokeWidth: 1.8 }),
            Plot.dot(data, {
              x: 'length',
              y: 'mean',
              fill: 'label',
              r: 2.5,
              title: (d) => `${d.label} at ${d.length}: ${pct(d.mean)} (${pct(d.min)}–${pct(d.max)} over ${d.seeds} seeds)`,
            }),
          ],
        },
      },
    ];
  });
  const far = c.multiples.includes(4) ? 4 * c.length : lengths.at(-1); // the takeaway's length
  const blindFar = blind.find((b) => b.length === far).accuracy;
  const complete = c.rows.every((k) => at(k, far)?.seeds === c.seeds);
  const cellsFar = c.rows.map((k) => at(k, far)).filter(Boolean);
  const settings = `'does A come before B?', trained ${c.steps} steps at ${c.length} tokens, ${c.seeds} seeds (${c.firstSeed}–${c.firstSeed + c.seeds - 1}), fine-tunes ${c.tuneSteps} steps at ${2 * c.length}`;
  let takeaway;
  if (!results.length) takeaway = `Press Train: models trained at ${c.length} tokens are asked at ${lengths.slice(1).join(', ')}.`;
  else if (!complete) takeaway = 'Training…';
  else {
    const ranked = [...cellsFar].sort((a, b) => b.mean - a.mean);
    // held: the best of each group first (as trained, scaled at test time, fine-tuned), then the others
    const above = ranked.filter((s) => s.mean >= 0.85);
    const firsts = GROUPS.map(([g]) => above.find((s) => s.group === g)).filter(Boolean);
    const held = [...firsts, ...above.filter((s) => !firsts.includes(s))];
    const lost = cellsFar.filter((s) => s.mean - blindFar <= 0.1 && s.key !== 'none').sort((a, b) => a.mean - b.mean);
    // the best held and the worst lost, as many of each as one line of 200 characters holds (at least one)
    const list = (cells, most) =>
      cells
        .slice(0, most)
        .map((s) => `${s.label} ${pct(s.mean)}`)
        .join(', ') + (cells.length > most ? ` and ${cells.length - most} more` : '');
    const line = (h, l) =>
      `At ${far} tokens (${far / c.length}× the training length): ` +
      (held.length ? `${list(held, h)} ${held.length === 1 ? 'stays' : 'stay'} above 85%` : `nothing stays above 85% (best: ${list(ranked, 1)})`) +
      (lost.length ? `; ${list(lost, l)} ${lost.length === 1 ? 'is' : 'are'} near the order-blind ${pct(blindFar)}.` : '.');
    let [h, l] = [3, 3];
    while (line(h, l).length > 200 && h + l > 2) [h, l] = h >= l && h > 1 ? [h - 1, l] : [h, l - 1];
    takeaway = line(h, l);
  }
  const table = c.rows
    .filter((k) => summary.some((s) => s.key === k))
    .map((k) => {
      const cells = lengths.map((length) => at(k, length));
      const span = (f) => cells.map((s) => (s ? Math.round(100 * f(s)) : '—')).join('/');
      return `${rowOf.get(k).label} ${span((s) => s.mean)}% (min ${span((s) => s.min)}, max ${span((s) => s.max)})`;
    })
    .join('; ');
  return {
    panels,
    takeaway,
    caption:
      `Held-out accuracy (256 examples per length) of toy transformers on ${settings}; RoPE scalings at test time use factor = test length / ${c.length}. ` +
      `Lines: the mean over seeds; bands: their min–max; dotted: the order-blind baseline (${pct(blindFar)}), the best any model blind to order can do. ` +
      `A learned table is not in the figure: it has no rows past ${c.length}, so it cannot be asked at all. ` +
      (results.length ? `Mean accuracy at ${lengths.join('/')} tokens: ${table}.` : ''),
    alt: results.length
      ? `Accuracy against test length (${lengths.join(', ')} tokens) per model. ${takeaway}`
      : `Empty axes of accuracy against test lengths ${lengths.join(', ')}: press Train to fill them.`,
    csv: results.map((r) => ({ row: r.key, model: rowOf.get(r.key).label, seed: r.seed, length: r.length, accuracy: r.accuracy })),
  };
}
