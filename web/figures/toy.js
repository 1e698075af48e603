// "Train it yourself": the toy transformer's learning curves and its accuracy at other lengths, one
// line per encoding. The specs draw the `runs` of web/figures/training.js they are given (the page's
// Worker trains them; a run still in progress draws as far as it got) or, without `runs`, train them
// (once per options: trainedModels remembers), as a notebook does.
import * as Plot from '@observablehq/plot';
import { values } from './numeric.js';
import { ENCODING_NAMES, plural } from './spec.js';
import { EVAL_LENGTHS, TOY_ENCODINGS, baselineOf, trainedModels } from './training.js';

// The dashed reference lines of an accuracy panel: chance, and where it differs (copy, count) the best a
// model can do without seeing order. For 'before' they are the same line, drawn once as chance.
function baselineMarks(pe, task, x, length) {
  const { chanceAccuracy: chance, orderBlindAccuracy: blind } = baselineOf(pe, task, length);
  const marks = chanceMarks(chance, x);
  if (Math.abs(blind - chance) > 1e-9)
    marks.push(
      Plot.ruleY([blind], { stroke: '#222', strokeDasharray: '1,3', strokeWidth: 1.5, className: 'order-blind' }),
      Plot.text([blind], { x, y: (d) => d, text: () => `without order: ${pct(blind)}`, textAnchor: 'end', dy: blind > 0.9 ? 12 : -6, fill: '#222' }),
    );
  return marks;
}

const chanceMarks = (chance, x) => [
  Plot.ruleY([chance], { stroke: '#888', strokeDasharray: '4,3' }),
  Plot.text([chance], { x, y: (d) => d, text: () => 'chance', textAnchor: 'end', dy: -6, fill: '#666' }),
];

export const ENCODING_COLOURS = Object.freeze({
  none: '#222222',
  sinusoidal: '#4e79a7',
  learned: '#f28e2c',
  rope: '#59a14f',
  alibi: '#e15759',
  t5: '#b07aa1',
});
const colour = {
  domain: [...TOY_ENCODINGS],
  range: TOY_ENCODINGS.map((e) => ENCODING_COLOURS[e]),
  legend: true,
  label: 'encoding',
  tickFormat: (e) => ENCODING_NAMES[e],
};
const pct = (x) => `${(100 * x).toFixed(1)}%`;
const TASKS = {
  before: "'does A come before B?'",
  copy: "'which token is at position k?'",
  count: "'how many 0s?' (order-free)",
};

const points = (runs) => runs.flatMap((r) => r.history.map((p) => ({ encoding: r.encoding, ...p })));
const last = (run) => run.history.at(-1);

export function trainingCurves(pe, { task = 'before', steps = 2000, seed = 0, causal = false, layers = 2, encodings, runs } = {}) {
  if (encodings) values('trainingCurves', 'encodings', encodings);
  runs ??= trainedModels(pe, { task, steps, seed, causal, layers, ...(encodings && { encodings }) });
  const data = points(runs);
  const { chanceAccuracy: chance, orderBlindAccuracy: blind } = baselineOf(pe, task, 8);
  const accuracy = {
    title: 'held-out accuracy',
    width: 440,
    height: 260,
    options: {
      marginLeft: 46,
      x: { label: 'training step →', domain: [0, steps] },
      y: { label: '↑ accuracy', domain: [0, 1], tickFormat: '%', grid: true },
      color: colour,
      marks: [...baselineMarks(pe, task, steps, 8), Plot.line(data, { x: 'step', y: 'heldOutAccuracy', stroke: 'encoding', strokeWidth: 1.8 })],
    },
  };
  const loss = {
    title: 'training loss (cross-entropy, last 10 batches)',
    width: 440,
    height: 260,
    options: {
      marginLeft: 52,
      x: { label: 'training step →', domain: [0, steps] },
      y: { label: '↑ loss', type: 'log', grid: true, ticks: 6, tickFormat: (d) => (d >= 1e-3 ? `${+d.toPrecision(1)}` : d.toExponential(0)) },
      color: { ...colour, legend: false },
      marks: [
        Plot.line(
          data.filter((d) => d.step > 0 && d.loss > 0),
          { x: 'step', y: 'loss', stroke: 'encoding', strokeWidth: 1.8 },
        ),
      ],
    },
  };
  const done = runs.filter((r) => last(r)?.step >= steps);
  const mode = `${causal ? 'causal' : 'bidirectional'}, ${layers} layer${layers === 1 ? '' : 's'}`;
  const summary = done.length
    ? ` After ${steps} steps: ${done.map((r) => `${ENCODING_NAMES[r.encoding]} ${pct(last(r).heldOutAccuracy)}`).join(', ')}.`
    : runs.length
      ? ' Training…'
      : ' Press Train: the models train in a background thread and their curves grow here.';
  const blindText =
    blind === chance
      ? ''
      : ` Dotted: the best a model can do without seeing order, from the bag of tokens alone (${pct(blind)}${task === 'count' ? ': this task needs no order' : ''}).`;
  const best = done.length ? done.reduce((a, r) => (last(r).heldOutAccuracy > last(a).heldOutAccuracy ? r : a)) : null;
  return {
    panels: runs.length ? [accuracy, loss] : [accuracy],
    takeaway: best
      ? `After ${steps} steps: ${done.map((r) => `${ENCODING_NAMES[r.encoding]} ${pct(last(r).heldOutAccuracy)}`).join(', ')}; without order the best possible is ${pct(blind)} (256 held-out examples: standard error ≤ 3 points).`
      : runs.length
        ? 'Training…'
        : (encodings ?? TOY_ENCODINGS).length > 1
          ? `Press Train: ${(encodings ?? TOY_ENCODINGS).length} small transformers learn ${TASKS[task]}, one per encoding.`
          : `Press Train: a small transformer learns ${TASKS[task]} with ${ENCODING_NAMES[(encodings ?? TOY_ENCODINGS)[0]]} positions.`,
    caption: `The toy transformer (${mode}) learning ${TASKS[task]} with each encoding; dashed: chance (${pct(chance)}).${blindText}${summary}`,
    alt: `Held-out accuracy against training step for ${plural(runs.length, 'encoding')}.${summary}`,
    csv: data,
    runs,
  };
}

// Chance, and the order-blind best at each evaluation length, for the copy task's length panel.
function copyReferences(pe, x) {
  const blind = EVAL_LENGTHS.map((length) => ({ length, accuracy: baselineOf(pe, 'copy', length).orderBlindAccuracy }));
  return [
    ...chanceMarks(baselineOf(pe, 'copy').chanceAccuracy, x),
    Plot.line(blind, { x: 'length', y: 'accuracy', stroke: '#222', strokeDasharray: '1,3', strokeWidth: 1.5, className: 'order-blind' }),
    Plot.text([blind.at(-1)], { x: 'length', y: 'accuracy', text: () => 'without order', textAnchor: 'end', dy: -6, fill: '#222' }),
  ];
}

export function lengthCurves(pe, { task = 'before', steps = 2000, seed = 0, causal = false, layers = 2, encodings, runs } = {}) {
  runs ??= trainedModels(pe, { task, steps, seed, causal, layers, ...(encodings && { encodings }) });
  const trainLength = 8; // trainToy's default length, which the page and the notebooks train at
  const data = runs.flatMap((r) => r.lengths.map((p) => ({ encoding: r.encoding, ...p })));
  const all = runs.flatMap((r) => r.lengths.map((p) => p.length));
  const maxLength = Math.max(32, ...all);
  const at = (r, length) => r.lengths.find((p) => p.length === length)?.accuracy;
  const longest = Math.max(0, ...all);
  const described = runs
    .map((r) => {
      const a = at(r, longest);
      return `${ENCODING_NAMES[r.encoding]} ${a === undefined ? `— (no rows past ${trainLength})` : pct(a)}`;
    })
    .join(', ');
  return {
    panels: [
      {
        title: 'held-out accuracy by sequence length (same trained weights)',
        width: 640,
        height: 260,
        options: {
          marginLeft: 46,
          x: { label: 'tokens per sequence →', domain: [0, maxLength], ticks: [4, 8, 12, 16, 20, 24, 28, 32] },
          y: { label: '↑ accuracy', domain: [0, 1], tickFormat: '%', grid: true },
          color: colour,
          marks: [
            // copy's order-blind best falls with the length (a longer sequence repeats its commonest token
            // less often): a line across the lengths; the other tasks' references are the training panel's
            ...(task === 'copy' ? copyReferences(pe, maxLength) : baselineMarks(pe, task, maxLength)),
            Plot.ruleX([trainLength], { stroke: '#222', strokeDasharray: '2,3' }),
            // at the foot of the rule, below chance, where the accuracy lines do not run
            Plot.text([trainLength], { x: (d) => d, y: 0, text: () => 'trained here', dx: 4, dy: -8, textAnchor: 'start', fill: '#444' }),
            Plot.line(data, { x: 'length', y: 'accuracy', stroke: 'encoding', strokeWidth: 1.8 }),
            Plot.dot(data, { x: 'length', y: 'accuracy', fill: 'encoding', r: 2.5 }),
          ],
        },
      },
    ],
    takeaway: runs.length
      ? `Trained on ${trainLength} tokens, asked about up to ${longest}: ${described}.`
      : 'After training, each model is asked about shorter and longer sequences than it saw.',
    caption: runs.length
      ? `The trained models asked about longer (and shorter) sequences than the ${trainLength} tokens they saw. At ${longest} tokens: ${described}. The learned table stops where its rows do.`
      : 'After training, each model is asked about sequences of 4 to 32 tokens: the extrapolation question asked of the sinusoidal and learned tables above.',
    alt: runs.length
      ? `Accuracy against sequence length per encoding; at ${longest} tokens: ${described}.`
      : 'Accuracy from 0 to 100% against sequence lengths of 4 to 32 tokens: empty until the models are trained.',
    csv: data,
    runs,
  };
}
