// Wiring: each form's controls -> a figure spec (web/figures/) -> the renderer. Nothing here computes
// a number a figure shows.
import * as abs from './figures/absolute.js';
import * as beyond from './figures/beyond.js';
import { attentionWeights, labOutputs, labSummary, reversal, shuffleFor } from './figures/lab.js';
import { DrawingLimit, PRESETS, inspectConfig, parseConfig } from './figures/inspector.js';
import { clockFaces, rowVector } from './figures/clock.js';
import { inputPipeline } from './figures/pipeline.js';
import * as rel from './figures/relative.js';
import { attentionRecap, injectionOverview } from './figures/story.js';
import { longContext } from './figures/longcontext.js';
import { lengthCurves, trainingCurves } from './figures/toy.js';
import { TOY_ENCODINGS } from './figures/training.js';
import { show, showError } from './figures/render.js';
import { ENCODING_NAMES } from './figures/spec.js';
import { getParam, noteBadURL, onChange, setParam, syncMax, values } from './state.js';

const failed = (id) => (e) => {
  console.warn(e);
  showError(id, `${e.constructor.name}: ${e.message}`);
};
const draw = (id, spec) => show(id, spec);
// The words of a sentence as the lab reads them (none for a sentence it refuses).
const wordsOf = (pe, sentence) => {
  try {
    return pe.permutationLab({ sentence }).tokens;
  } catch {
    return [];
  }
};

// What attention computes: scores and softmax for one query word of the sentence (the page's one
// sentence, which the lab and the score terms read too).
export function recapSection(pe) {
  const select = document.querySelector('[data-control="recapQuery"]');
  const wanted = getParam('recapQuery');
  let first = true;
  onChange(
    'sentence',
    ({ sentence }) => {
      const tokens = wordsOf(pe, sentence);
      if (!tokens.length) {
        // no word to choose: the menu must not keep the last sentence's words
        select.replaceChildren();
        select.disabled = true;
        return showError('attention-recap', 'Attention needs at least one word: type a sentence.');
      }
      select.disabled = false;
      const keep = first && wanted !== null ? wanted : select.value || select.dataset.default;
      select.replaceChildren(...tokens.map((t, i) => new Option(`${i}·${t}`, String(i))));
      if ([...select.options].some((o) => o.value === keep)) select.value = keep;
      else {
        select.value = String(Math.min(1, tokens.length - 1));
        if (first && wanted !== null) noteBadURL([`recapQuery "${wanted}" (not a word of the sentence; using ${select.value})`]);
      }
      first = false;
      draw('attention-recap', attentionRecap(pe, { sentence, query: Number(select.value) }));
    },
    failed('attention-recap'),
  );
}

// The three ways to inject position, side by side.
export function overviewSection(pe) {
  draw('injection-overview', injectionOverview(pe));
}

// The sinusoidal table in slices of rows, a task each (4096 × 1024 is 4M values), and its pe.stats
// combined from the slices' (counts, means and population variances): { table, stats }, or null when
// `wanted()` says a newer request has started meanwhile.
const SLICE_VALUES = 1 << 17;
async function slicedTable(pe, { length, dModel, base, layout }, wanted) {
  const data = new Float32Array(length * dModel);
  const rows = Math.max(1, Math.floor(SLICE_VALUES / dModel));
  let [n, sum, squares, min, max] = [0, 0, 0, Infinity, -Infinity];
  for (let r = 0; r < length; r += rows) {
    const k = Math.min(rows, length - r);
    const part = pe.sinusoidal({ length: k, dModel, base, layout, offset: r, out: data.subarray(r * dModel, (r + k) * dModel) });
    const s = pe.stats(part);
    const m = k * dModel;
    [n, sum, squares] = [n + m, sum + s.mean * m, squares + (s.std ** 2 + s.mean ** 2) * m];
    [min, max] = [Math.min(min, s.min), Math.max(max, s.max)];
    await new Promise((resolve) => setTimeout(resolve));
    if (!wanted()) return null;
  }
  const mean = sum / n;
  return { table: { data, shape: [length, dModel] }, stats: { min, max, mean, std: Math.sqrt(Math.max(0, squares / n - mean * mean)) } };
}

// fn() in a task of its own, its error reported in figure `id`.
const later = (id, fn) =>
  setTimeout(() => {
    try {
      fn();
    } catch (e) {
      failed(id)(e);
    }
  });

export function sinusoidalSection(pe) {
  // The sinusoidal form and the position scrubber drive the same figures: the scrubbed row is marked
  // in the heatmap, the curves and the similarity plot, and drawn as a vector and as clock hands; the
  // shift k turns the clock hands and builds M_k. The table is computed once per setting, in slices,
  // and each figure is drawn in a task of its own.
  const slider = document.querySelector('[data-control="scrub"]');
  let current = { key: '' };
  const redraw = () => {
    const v = values('sinusoidal');
    syncMax(slider); // the slider spans the positions shown
    const { scrub, shiftK } = values('scrub');
    const p = Math.min(scrub, v.length - 1);
    document.querySelector('[data-scrub-value]').textContent = String(p);
    const key = JSON.stringify([v.length, v.dModel, v.base, v.layout]);
    if (current.key !== key) {
      const mine = { key };
      mine.result = slicedTable(pe, v, () => current === mine);
      current = mine;
    }
    const request = current;
    request.result
      .then((r) => r && current === request && draw('sinusoidal-heatmap', abs.sinusoidalHeatmap(pe, { ...v, ...r, highlight: p })))
      .catch(failed('sinusoidal-heatmap'));
    later('dimension-curves', () => draw('dimension-curves', abs.dimensionCurves(pe, { ...v, highlight: p, rowPadding: 0.35 })));
    later('wavelengths', () => draw('wavelengths', abs.wavelengths(pe, v)));
    later('row-vector', () => draw('row-vector', rowVector(pe, { ...v, position: p })));
    later('clock-faces', () => {
      const clock = clockFaces(pe, { dModel: v.dModel, base: v.base, position: p, k: shiftK });
      draw('clock-faces', clock);
      document.querySelector('[data-reveal="clock"]').textContent = reveal(clock, p);
    });
    later('similarity', () => draw('similarity', rel.similarity(pe, { highlight: p, scale: 'sequential' })));
    later('shift-matrix', () => draw('shift-matrix', rel.shiftMatrix(pe, { k: shiftK })));
  };
  onChange(['sinusoidal', 'scrub'], redraw, failed('sinusoidal-heatmap')); // one first draw for both forms
  // The matshow example: seq_len = 100, d = 512, n = 10000.
  document.querySelector('[data-action="matshow"]').addEventListener('click', () => {
    for (const [c, v] of [
      ['length', 100],
      ['dModel', 512],
      ['base', 10000],
      ['layout', 'interleaved'],
    ]) {
      const el = document.querySelector(`[data-control="${c}"]`);
      el.value = String(v);
      el.dispatchEvent(new Event('input'));
    }
  });
  onChange(
    'pipeline',
    ({ pipeLength, pipeDModel, pipeScale }) =>
      draw('input-pipeline', inputPipeline(pe, { length: pipeLength, dModel: pipeDModel, scale: pipeScale === 'on' })),
    failed('input-pipeline'),
  );
  draw('position-sinusoids', abs.positionSinusoids(pe));
  draw('robot-table', abs.robotTable(pe));
}

// The answer to the clock's prediction prompt, from the hands themselves.
function reveal({ hands }, p) {
  const [h0, h1] = hands;
  const near = hands.filter((h) => Math.abs(h.offset) < 0.2).length;
  const of = `${near} of ${hands.length === 1 ? '1 hand' : `${hands.length} hands`} ${near === 1 ? 'is' : 'are'}`;
  return `At p = ${p} the fastest hand has made ${h0.turns.toFixed(2)} turns and is ${Math.abs(h0.offset).toFixed(3)} rad from where it started${h1 ? `, the next ${h1.turns.toFixed(2)} turns (${Math.abs(h1.offset).toFixed(3)} rad off)` : ''}; ${of} within 0.2 rad of their start. When the fast hands come back together and the slow ones have hardly moved, PE(p) is close to PE(0), however far apart the positions are. With few dimensions that happens early: the distinguishability figure below finds the closest pair of an 8-dimensional table exactly this way.`;
}

// The score terms of the page's sentence.
export function relativeSection(pe) {
  onChange(
    ['sentence', 'scores'],
    ({ sentence, scoreEncoding }) => {
      if (!wordsOf(pe, sentence).length) return showError('score-terms', 'The score terms need at least one word: type a sentence.');
      draw('score-terms', rel.scoreTerms(pe, { sentence, encoding: scoreEncoding }));
    },
    failed('score-terms'),
  );
}

export function extrapolationSection(pe) {
  onChange('extrapolation', (v) => draw('extrapolation', abs.extrapolation(pe, v)), failed('extrapolation'));
  distinguishability(pe);
}

// Point by point, one frame each, so that the page stays responsive.
async function distinguishability(pe) {
  const { lengths, dims } = abs.DISTINGUISHABILITY;
  const points = [];
  for (const dModel of dims)
    for (const length of lengths)
      for (const encoding of ['sinusoidal', 'learned']) {
        points.push(abs.closestPair(pe, { encoding, dModel, length }));
        await new Promise((r) => setTimeout(r));
      }
  draw('distinguishability', abs.distinguishability(points));
}

export function ropeSection(pe) {
  onChange('rope', ({ ropeDim, ropeBase }) => draw('rope-relative', rel.ropeRelative(pe, { dim: ropeDim, base: ropeBase })), failed('rope-relative'));
  onChange('scaling', ({ factor }) => draw('rope-scaling', rel.ropeScaling(pe, { factor })), failed('rope-scaling'));
  // xPos's scores at 8192 distances × 256 channels take longer than a frame: a Worker computes them.
  let latest = 0;
  onChange('xpos', ({ xposHeadDim, xposScaleBase, xposDistance }) => {
    const params = { headDim: xposHeadDim, scaleBase: xposScaleBase, maxDistance: xposDistance };
    const mine = ++latest;
    compute('xposScores', params)
      .then(({ scale, ...arrays }) => {
        if (mine !== latest) return;
        const scores = { ...arrays, pairScale: () => scale };
        draw('xpos-decay', beyond.xposDecay(pe, { ...params, scores, sides: false, maxPoints: 1600 }));
      })
      .catch(failed('xpos-decay'));
  });
}

// The page's compute Worker (web/compute-worker.js), started on first use: compute(job, params) -> result.
let computeWorker = null;
const waiting = new Map();
let job = 0;
function compute(name, params) {
  if (!computeWorker) {
    computeWorker = new Worker(new URL('./compute-worker.js', import.meta.url), { type: 'module' });
    computeWorker.onmessage = ({ data }) => {
      const { resolve, reject } = waiting.get(data.id);
      waiting.delete(data.id);
      if (data.error) reject(new Error(data.error));
      else resolve(data.result);
    };
  }
  const id = ++job;
  return new Promise((resolve, reject) => {
    waiting.set(id, { resolve, reject });
    computeWorker.postMessage({ id, job: name, params });
  });
}

export function biasSection(pe) {
  onChange(
    'alibi',
    ({ alibiHeads, alibiLength, alibiSymmetric }) =>
      draw('alibi-bias', rel.alibiBias(pe, { heads: alibiHeads, length: alibiLength, symmetric: alibiSymmetric === 'symmetric', scale: 'shared' })),
    failed('alibi-bias'),
  );
  onChange(
    't5',
    ({ t5Buckets, t5MaxDistance }) => draw('t5-buckets', rel.t5Buckets(pe, { numBuckets: t5Buckets, maxDistance: t5MaxDistance })),
    failed('t5-buckets'),
  );
}

// Positions beyond text: the patch grid (a click on a patch sets the row and column controls), M-RoPE's
// streams and bands.
export function beyondTextSection(pe) {
  onChange(
    'patches',
    ({ patchRow, patchCol, patchMetric }) =>
      draw('patch-grid', beyond.patchGrid(pe, { row: patchRow, col: patchCol, metric: patchMetric, sides: false })),
    failed('patch-grid'),
  );
  document.querySelector('[data-figure="patch-grid"]').addEventListener('pick', ({ detail }) => {
    for (const [c, v] of [
      ['patchRow', detail.y],
      ['patchCol', detail.x],
    ]) {
      const el = document.querySelector(`[data-control="${c}"]`);
      el.value = String(v);
      el.dispatchEvent(new Event('input'));
    }
  });
  onChange(
    'mrope',
    (v) =>
      draw(
        'mrope-streams',
        beyond.mropeStreams(pe, { textBefore: v.mropeTextBefore, grid: [v.mropeT, v.mropeH, v.mropeW], textAfter: v.mropeTextAfter }),
      ),
    failed('mrope-streams'),
  );
}

// The shuffle lab. The permutation lives in the URL (perm=2,0,1,...); one that does not fit the
// sentence is dropped with a note.
export function labSection(pe) {
  const metric = document.querySelector('[data-metric="equivariance-error"]');
  const tokensOf = (sentence) => {
    try {
      return pe.permutationLab({ sentence }).tokens;
    } catch {
      return [];
    }
  };
  let permutation = getParam('perm')?.split(',').map(Number) ?? null;
  const valid = (p, n) => p && p.length === n && p.every((v) => Number.isInteger(v) && v >= 0 && v < n) && new Set(p).size === n;
  if (permutation && !valid(permutation, tokensOf(values('sentence').sentence).length)) {
    noteBadURL([`perm "${getParam('perm')}" (not an order of the sentence's words; using a shuffle)`]);
    permutation = null;
    setParam('perm', null);
  }
  const run = () => {
    const { sentence, encoding } = values(['sentence', 'lab']);
    const tokens = tokensOf(sentence);
    if (tokens.length === 0) {
      metric.textContent = '—';
      delete metric.dataset.value;
      for (const id of ['permutation-lab', 'attention-weights', 'lab-outputs', 'reversal'])
        showError(id, 'The lab needs at least one word: type a sentence.');
      return;
    }
    if (!valid(permutation, tokens.length)) permutation = shuffleFor(tokens) ?? [...tokens.keys()];
    const r = pe.permutationLab({ sentence, encoding, permutation });
    metric.textContent = r.equivarianceError.toExponential(2);
    metric.dataset.value = String(r.equivarianceError);
    const summary = labSummary(r);
    draw('permutation-lab', summary);
    draw('attention-weights', attentionWeights(pe, { lab: r }));
    draw('lab-outputs', labOutputs(pe, { lab: r, sides: false }));
    setTimeout(() => draw('reversal', reversal(pe, { sentence, tokens: r.tokens, causal: true }))); // six more runs of the layer: a task of their own
  };
  const choose = (p) => {
    permutation = p;
    setParam('perm', p.join(','));
    run();
  };
  document.querySelector('[data-action="shuffle"]').addEventListener('click', () => {
    const tokens = tokensOf(values('sentence').sentence);
    if (tokens.length) choose(shuffleFor(tokens) ?? [...tokens.keys()]);
    else run();
  });
  document.querySelector('[data-action="reverse"]').addEventListener('click', () => {
    const n = tokensOf(values('sentence').sentence).length;
    if (n) choose([...Array(n).keys()].reverse());
    else run();
  });
  document.querySelector('[data-control="sentence"]').addEventListener('input', () => {
    permutation = null;
    setParam('perm', null);
  });
  onChange(['sentence', 'lab'], run, failed('permutation-lab'));
}

// The RoPE config inspector: a preset fills the text; any edit is parsed and inspected, and a problem
// (bad JSON, an unknown rope_scaling field, an impossible value) is reported in place, with the
// figure emptied (a model's summary must never sit under another config's error). Once the text is
// edited the preset menu says so.
const CUSTOM = '';
export function inspectorSection(pe) {
  const select = document.querySelector('[data-control="ropePreset"]');
  const text = document.querySelector('[data-config-json]');
  const error = document.querySelector('[data-inspector-error]');
  for (const name of Object.keys(PRESETS)) select.append(new Option(name, name));
  const custom = select.appendChild(new Option('your own config (edited)', CUSTOM));
  custom.disabled = true;
  const presetText = (name) => JSON.stringify(PRESETS[name], null, 2);
  const inspect = () => {
    const { config, error: bad } = parseConfig(text.value);
    let message = bad;
    if (config)
      try {
        draw('rope-inspector', inspectConfig(pe, config));
      } catch (e) {
        message = e instanceof DrawingLimit ? `Not drawn: ${e.message}` : `posenc cannot read this config: ${e.message}`;
      }
    if (message) draw('rope-inspector', { lines: [['', 'Nothing to show until the config above reads.', 'note']], caption: `No figure: ${message}` });
    if (select.value !== CUSTOM && text.value !== presetText(select.value)) select.value = CUSTOM;
    error.hidden = !message;
    error.textContent = message ?? '';
  };
  const wanted = new URLSearchParams(location.search).get('ropePreset');
  if (wanted !== null && !(wanted in PRESETS)) noteBadURL([`ropePreset "${wanted}" (not a preset; using ${Object.keys(PRESETS)[0]})`]);
  select.value = wanted in PRESETS ? wanted : Object.keys(PRESETS)[0];
  onChange('inspector', ({ ropePreset }) => {
    if (ropePreset === CUSTOM) return;
    text.value = presetText(ropePreset);
    inspect();
  });
  let timer;
  text.addEventListener('input', () => {
    clearTimeout(timer);
    timer = setTimeout(inspect, 200);
  });
}

// A button that runs one job in a Worker of its own (web/toy-worker.js): a click starts it, or stops
// the one running; a changed setting in `section` stops it and calls `reset`. `start({ id, worker, stop,
// fail })` wires the job's messages and posts it; `idle` runs whenever the job stops.
function workerButton({ section, figure, button, status, label, idle, reset, start }) {
  let worker = null;
  let request = 0;
  const stop = () => {
    worker?.terminate();
    worker = null;
    button.textContent = label;
    idle();
  };
  const fail = (message) => {
    stop();
    status.textContent = `Training failed: ${message}`;
  };
  onChange(
    section,
    () => {
      if (worker) status.textContent = 'Stopped: the settings changed.';
      stop();
      reset();
    },
    failed(figure),
  );
  button.addEventListener('click', () => {
    if (worker) {
      stop();
      status.textContent = 'Stopped.';
      return;
    }
    worker = new Worker(new URL('./toy-worker.js', import.meta.url), { type: 'module' });
    button.textContent = 'Stop';
    status.textContent = 'Loading posenc in the worker…';
    worker.onerror = (e) => fail(e.message);
    start({ id: ++request, worker, stop, fail });
  });
}

// "Train it yourself": six toy transformers train in a Worker; the curves are redrawn from its progress
// messages at most every 250 ms, so the main thread only ever draws.
export function trainingSection(pe) {
  const button = document.querySelector('[data-action="train"]');
  const status = document.querySelector('[data-train-status]');
  const settings = () => {
    const v = values('training');
    const encodings = v.toyEncoding === 'all' ? [...TOY_ENCODINGS] : [v.toyEncoding];
    return { task: v.toyTask, encodings, steps: v.toySteps, seed: v.toySeed, causal: v.toyMask === 'causal', layers: Number(v.toyLayers) };
  };
  let timer = null; // a pending redraw from progress messages
  const drawRuns = (s, runs) => {
    draw('training-curves', trainingCurves(pe, { ...s, runs }));
    draw('length-curves', lengthCurves(pe, { ...s, runs: runs.filter((r) => r.lengths.length) }));
  };
  workerButton({
    section: 'training',
    figure: 'training-curves',
    button,
    status,
    label: 'Train',
    idle: () => {
      clearTimeout(timer);
      timer = null;
    },
    reset: () => drawRuns(settings(), []),
    start: ({ id, worker, stop, fail }) => {
      const s = settings();
      const runs = new Map();
      const redraw = () => {
        timer = null;
        drawRuns(s, [...runs.values()]);
      };
      worker.onmessage = ({ data }) => {
        if (data.id !== id) return;
        if (data.type === 'error') return fail(data.message);
        if (data.type === 'point') {
          if (!runs.has(data.encoding)) runs.set(data.encoding, { encoding: data.encoding, history: [], lengths: [] });
          runs.get(data.encoding).history.push(data.point);
          status.textContent = `Training ${ENCODING_NAMES[data.encoding]}: step ${data.point.step} of ${s.steps}…`;
        } else if (data.type === 'run') runs.set(data.encoding, data.run);
        else if (data.type === 'done') {
          stop();
          const models = ['one model', 'two models', 'three models', 'four models', 'five models', 'six models'][s.encodings.length - 1];
          status.textContent = `Trained ${models} of ${s.steps} steps in ${(data.ms / 1000).toFixed(1)} s (${data.backend}, in a Web Worker).`;
        }
        if (data.type !== 'point') {
          clearTimeout(timer);
          redraw();
        } else timer ??= setTimeout(redraw, 250);
      };
      worker.postMessage({ id, options: { ...s, every: Math.max(10, Math.round(s.steps / 40)) } });
    },
  });
  setTimeout(() => longContextSection(pe));
}

// "Train short, test long": the experiment runs in a Worker of its own (job 'longcontext'); the page
// keeps the results as they come and redraws the figure each time a row has all its seeds (the status
// line and the progress bar follow the rest).
function longContextSection(pe) {
  const status = document.querySelector('[data-long-status]');
  const progress = document.querySelector('[data-progress="train-long"]');
  const settings = () => {
    const v = values('longcontext');
    return { length: Number(v.lcLength), steps: v.lcSteps, seeds: v.lcSeeds, tuneSteps: v.lcTuneSteps };
  };
  let timer = null;
  workerButton({
    section: 'longcontext',
    figure: 'long-context',
    button: document.querySelector('[data-action="train-long"]'),
    status,
    label: 'Train and test',
    idle: () => {
      clearTimeout(timer);
      timer = null;
      progress.hidden = true;
    },
    reset: () => draw('long-context', longContext(pe, { ...settings(), results: [] })),
    start: ({ id, worker, stop, fail }) => {
      const s = settings();
      const results = [];
      const seedsOf = new Map(); // row -> seeds received
      const redraw = () => {
        timer = null;
        draw('long-context', longContext(pe, { ...s, results: [...results] }));
      };
      progress.hidden = false;
      progress.value = 0;
      worker.onmessage = ({ data }) => {
        if (data.id !== id) return;
        if (data.type === 'error') fail(data.message);
        else if (data.type === 'progress') {
          progress.value = data.done / data.total;
          status.textContent = `Training ${data.label}…`;
        } else if (data.type === 'result') {
          // redrawn once a row has all its seeds (a dozen draws a run, not one per message)
          results.push(...data.results);
          const key = data.results[0]?.key;
          seedsOf.set(key, (seedsOf.get(key) ?? 0) + 1);
          if (seedsOf.get(key) === s.seeds) timer ??= setTimeout(redraw, 250);
        } else if (data.type === 'done') {
          stop();
          redraw();
          status.textContent = `Trained and tested ${s.seeds} seeds of 5 encodings in ${(data.ms / 1000).toFixed(1)} s (${data.backend}, in a Web Worker).`;
        }
      };
      worker.postMessage({ id, job: 'longcontext', options: s });
    },
  });
}
