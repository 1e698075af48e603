// Executes every notebook in web/notebooks/ top to bottom with Jupyter's Deno kernel (through
// scripts/notebooks.sh --out, which installs the kernelspec if needed), into a temporary folder: the
// committed notebooks are never modified. Then checks that
//   - no cell raised, every code cell produced output, and every figure is one PNG (no SVG copy);
//   - the key numbers each notebook prints (`name = value` lines, from report()) agree with the
//     package computed here in Node;
//   - the outputs committed with the notebooks are the ones a fresh run produces (text outputs), so
//     the notebooks on the code host are not stale;
//   - the exercises ship as stubs: with them every check cell prints ✗ naming the case it tried; with
//     the worked solutions of tests/notebooks/solutions.js run in place of the stubs, every check
//     prints ✓ (the run adds each solution and its check again after the stub's check);
//   - every code cell can be run again on its own: the run executes each code cell twice in a row
//     (hidden copies of the notebooks, next to them so that their relative imports resolve), and the
//     second run of a cell must succeed with the same text outputs as the first;
//   - every figure of the committed notebook, drawn again from the spec, params and options its PNG
//     names (redraw.mjs, in the notebook's fresh kernel, as the run's first cell), is the same PNG
//     (tests/notebooks/specs.test.js checks that those specs are the page's). The models it trains are
//     remembered by their options (web/figures/training.js), so the notebook's cells do not train them again.
// Skipped, with a message, only when `jupyter nbconvert` is not installed.
import assert from 'node:assert/strict';
import { Buffer } from 'node:buffer';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { loadLab } from 'posenc/lab';
import { exactRow, float32RecipeRow } from '../../web/figures/absolute.js';
import { CONFIGS } from '../../web/figures/hf-configs.js';
import { maxAbsDiff, mulberry32 } from '../../web/figures/numeric.js';
import { ENCODINGS } from '../../web/figures/spec.js';
import { xposScores } from '../../web/figures/beyond.js';
import { shuffleFor } from '../../web/figures/lab.js';
import { LONG_ROWS, trainShortTestLong } from '../../web/figures/longcontext.js';
import { codeOf, figureImports, figuresOf } from './records.js';
import { SOLUTIONS } from './solutions.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const DIR = join(ROOT, 'web/notebooks');
const NOTEBOOKS = readdirSync(DIR)
  .filter((f) => f.endsWith('.ipynb') && !f.startsWith('.'))
  .sort();
const TWICE = (name) => `.twice-${name}`; // the copy with every code cell doubled
const AGAIN = '-again'; // the id suffix of a cell's second run
const SOLVED = '-solved'; // the id suffix of an exercise cell run with its worked solution, and of its check after it
const FLUSH_STATS = 'posenc-flush-stats'; // the id of the cell the run appends to read lib/flush.js's counts
const REDRAW = 'posenc-redraw'; // the id of the cell the run puts first to draw the committed figures again
const EXERCISE = /^\/\/ Exercise (\d+)\b/; // the first line of an exercise's stub cell; its check is the next code cell
const jupyter = spawnSync('jupyter', ['nbconvert', '--version'], { encoding: 'utf8' });
const skip =
  jupyter.status === 0
    ? false
    : 'jupyter nbconvert is not installed (scripts/setup.sh installs jupyter-nbconvert, python3-nbclient, python3-ipykernel)';

const pe = await loadLab(); // the core's functions and the lab's (permutationLab, trainToy)
const text = (x) => (Array.isArray(x) ? x.join('') : (x ?? ''));

// Every `name = value` line of every text/plain output, as a Map (names are unique per notebook).
function reported(nb) {
  const values = new Map();
  for (const cell of nb.cells)
    for (const out of cell.outputs ?? [])
      for (const line of text(out.data?.['text/plain']).split('\n')) {
        const m = /^(.+?) = (-?[\d.]+(?:e[-+]?\d+)?)$/.exec(line);
        if (m) values.set(m[1], Number(m[2]));
      }
  return values;
}

// What each notebook must report, from the package (and web/figures/) evaluated here in Node. A number
// means "equal to 7 significant digits" (what report() prints); a function is a check of its own.
const same = (want) => (got) => Math.abs(got - want) <= 1e-6 * Math.max(Math.abs(want), 1e-30) + 1e-12;
const below = (limit) => (got) => got < limit;

function expectations(name) {
  const e = {};
  if (name.startsWith('01')) {
    const tokens = pe.permutationLab({}).tokens; // The cat sat on the mat: "The" (0) and "the" (4) are one word
    const lab = (encoding, permutation) => pe.permutationLab({ encoding, permutation }).equivarianceError;
    for (const encoding of ENCODINGS) {
      e[`equivarianceError(${encoding})`] = same(lab(encoding));
      // compared by tokens: the reversal, and the reversal with the two "the" swapped, read the same
      e[`reversal equivarianceError(${encoding})`] = same(Math.min(lab(encoding, [5, 4, 3, 2, 1, 0]), lab(encoding, [5, 0, 3, 2, 1, 4])));
    }
    e['equivarianceError(none)'] = below(1e-5);
    e['reversal equivarianceError(none)'] = below(1e-5);
    e['reversal equivarianceError(alibi)'] = below(1e-5);
    e['pooledDifference(none)'] = below(1e-5);
    e['recomputed equivarianceError(none)'] = same(pe.permutationLab({}).equivarianceError);
    // 720 orderings, 360 sentences: every ordering reads as one other (swap "The" and "the")
    e['sentences it cannot see (none)'] = same(360);
    e['sentences it cannot see (alibi)'] = same(2);
    for (const encoding of ['sinusoidal', 'learned', 'rope', 'xpos', 't5']) e[`sentences it cannot see (${encoding})`] = same(1);
    // The 200 shuffles of the figure (seed 7): the ones that read as the reversal are what ALiBi misses.
    const random = mulberry32(7);
    const shuffles = Array.from({ length: 200 }, () => shuffleFor(tokens, random));
    const readsAsReversal = (p) => p.every((from, i) => tokens[from].toLowerCase() === tokens[5 - i].toLowerCase());
    e['shuffles missed by an encoding'] = same(shuffles.filter(readsAsReversal).length);
    e['largest error without an encoding (200 shuffles)'] = below(1e-6);
    e['smallest error of a shuffle an encoding sees'] = (v) => v > 1e-3;
    e['orders of magnitude between them'] = (v) => v > 4 && v < 6; // what the text says: about 10^5
    e['max |bias - reversed bias| (symmetric ALiBi, head 1)'] = same(0);
    e['max |sum of the four terms - total|'] = below(1e-5);
    e['max diagonal spread of P_i·P_j'] = below(1e-5);
    e['max diagonal spread of the position–position term'] = (v) => v > 0.1;
    e['max |attention - pe.attention|'] = below(1e-6);
    e['max |f(PX) - P f(X)|'] = below(1e-12);
    e['max |mean f(PX) - mean f(X)|'] = below(1e-12);
    // The toy model, over the three seeds the notebook trains: its conclusions must hold for each
    // (trainToy is deterministic; tests/js/toy.test.js pins the runs).
    for (const seed of [0, 1, 2]) {
      e[`heldOutAccuracy(none, seed ${seed})`] = (v) => v >= 0.4 && v <= 0.6; // a coin toss
      for (const encoding of ['sinusoidal', 'learned', 'rope', 'alibi', 't5']) e[`heldOutAccuracy(${encoding}, seed ${seed})`] = (v) => v >= 0.95;
      // at 32 tokens: ALiBi and RoPE "well above chance (at least 70%)", sinusoidal and T5 "near chance (at most about 60%)"
      for (const encoding of ['alibi', 'rope']) e[`accuracy at 32 tokens(${encoding}, seed ${seed})`] = (v) => v >= 0.7;
      for (const encoding of ['sinusoidal', 't5']) e[`accuracy at 32 tokens(${encoding}, seed ${seed})`] = (v) => v <= 0.62;
      e[`heldOutAccuracy(causal, 2 layers, no encoding, seed ${seed})`] = (v) => v >= 0.95;
      e[`heldOutAccuracy(causal, 1 layer, no encoding, seed ${seed})`] = (v) => v <= 0.6;
    }
  } else if (name.startsWith('02')) {
    const heat = pe.stats(pe.sinusoidal({ length: 500, dModel: 64 }));
    e['robot table: max |posenc - float64|'] = below(1e-7);
    e['heatmap min'] = same(heat.min);
    e['heatmap max'] = same(heat.max);
    e['heatmap mean'] = same(heat.mean);
    e['heatmap std'] = same(heat.std);
    e['wavelength of pair 0 (2π)'] = same(2 * Math.PI);
    e['wavelength of the last pair (d = 512)'] = same(pe.wavelengths({ dModel: 512 })[255]);
    e['ratio between neighbours, min'] = same(10000 ** (2 / 512));
    e['ratio between neighbours, max'] = same(10000 ** (2 / 512));
    for (const k of [7, 100, -3]) e[`shift identity residual (d=64, k=${k})`] = below(1e-6);
    e['similarity: max spread along a diagonal'] = below(1e-4);
    const k1 = Math.sqrt(pe.wavelengths({ dModel: 64 }).reduce((s, w) => s + 2 - 2 * Math.cos((2 * Math.PI) / w), 0));
    e['‖PE(p+1) − PE(p)‖ from the formula (d=64)'] = same(k1);
    e['sinusoidal nearest distance, min over 4096 rows'] = (v) => Math.abs(v - k1) < 1e-5;
    e['tiled table rows with a duplicate at length 1024'] = same(1);
    e['six-line encoding vs pe.sinusoidal (500 × 64): max difference'] = below(1e-6);
    e['float32 recipe max error at position 1e6 (d=512)'] = same(maxAbsDiff(float32RecipeRow(1e6, 512), exactRow(1e6, 512)));
    e['posenc max error at position 1e6 (d=512)'] = same(maxAbsDiff(pe.sinusoidal({ dModel: 512, positions: [1e6] }).data, exactRow(1e6, 512)));
    e['posenc max error up to position 1e9 (d=512)'] = below(1e-6);
    e['float32 recipe max error at position 1e9 (d=512)'] = (v) => v > 0.5;
    // the intuitions: each number from its own computation here
    let sum = 0;
    for (let p = 0; p < 100; p++) sum += exactRow(p, 512).reduce((a, b) => a + b, 0);
    e['100 × 512 mean'] = (v) => Math.abs(v - sum / 51200) < 1e-6;
    e['mean |cos(word, position)| (d = 512)'] = (v) => v > 0.5 / Math.sqrt(512) && v < 1.5 / Math.sqrt(512); // of order 1/√d
    e['1/sqrt(512)'] = same(1 / Math.sqrt(512));
    e['base 16, d = 8: wavelength ratio between pairs'] = same(2); // ω_i = 16^(−2i/8) = 2^(−i)
    e['aliased frequency'] = same(2 * Math.PI * 0.9 - 2 * Math.PI);
    e['max |samples − alias samples|'] = below(1e-6);
    e['max |PE(p)·PE(p+k) − PE(p)·PE(p−k)|'] = below(1e-5);
    e['max |M_5 − M_−5|'] = (v) => v > 1;
    // one clock copied 32 times: ‖row(3) − row(47)‖ = √32 · ‖(sin 3, cos 3) − (sin 47, cos 47)‖
    e['wrong rows: ‖row(3) − row(47)‖ (d = 64)'] = same(Math.sqrt(32) * Math.hypot(Math.sin(3) - Math.sin(47), Math.cos(3) - Math.cos(47)));
    e['right rows: ‖PE(3) − PE(47)‖ (d = 64)'] = same(Math.hypot(...exactRow(3, 64).map((x, j) => x - exactRow(47, 64)[j])));
    e['wrong slice: max difference between the positions of one sentence'] = same(0);
    // What a learned table costs: the parameter tensors of Hugging Face's BertModel (bert-base-uncased) and
    // GPT2Model (gpt2) listed by shape, counted here; the totals are those the papers round (110M; 124M).
    const count = (shapes) => shapes.reduce((s, shape) => s + shape.reduce((a, b) => a * b, 1), 0);
    const d = 768;
    const bertLayer = [[d, d], [d], [d, d], [d], [d, d], [d], [d, d], [d], [d], [d], [3072, d], [3072], [d, 3072], [d], [d], [d]];
    const bert = count([[30522, d], [512, d], [2, d], [d], [d], ...Array(12).fill(bertLayer).flat(), [d, d], [d]]);
    const gpt2Layer = [[d], [d], [d, 3 * d], [3 * d], [d, d], [d], [d], [d], [d, 4 * d], [4 * d], [4 * d, d], [d]];
    const gpt2 = count([[50257, d], [1024, d], ...Array(12).fill(gpt2Layer).flat(), [d], [d]]);
    assert.ok(Math.abs(bert - 110e6) < 1e6 && Math.abs(gpt2 - 124e6) < 1e6, `${bert}, ${gpt2}`);
    e['learned table parameters (BERT-base, 512 × 768)'] = same(512 * 768);
    e['BERT-base parameters'] = same(bert);
    e['learned table share of BERT-base (%)'] = same((100 * 512 * 768) / bert);
    e['learned table parameters (GPT-2 small, 1024 × 768)'] = same(1024 * 768);
    e['GPT-2 small parameters'] = same(gpt2);
    e['learned table share of GPT-2 small (%)'] = same((100 * 1024 * 768) / gpt2);
    e['right slice: max difference between the positions of one sentence'] = (v) => v > 0.5;
  } else if (name.startsWith('03')) {
    e['max |turn(q, m) − pe.rope(q, m)| for m = 0 … 50'] = below(1e-5);
    e['max |score(m, n) − score(m − n, 0)|'] = below(1e-12);
    e['Shaw: max |index − (clip(j − i, −3, 3) + 3)|'] = same(0);
    e['Shaw: distinct vectors'] = same(7);
    e['max |M_{-m} q − rope_interleaved(q, m)| over m = 0 … 99'] = below(1e-6);
    const llama3 = CONFIGS['Llama 3.1 8B'].rope_scaling; // posenc reads config.json's spelling
    const factors = {
      none: undefined,
      linear: { type: 'linear', factor: 8 },
      ntk: { type: 'ntk', factor: 8 },
      yarn: { type: 'yarn', factor: 8, originalMaxPositions: 8192 },
      llama3,
    };
    for (const [n, scaling] of Object.entries(factors))
      e[`attention factor (${n})`] = same(pe.ropeFrequencies({ dim: 128, base: 500000, scaling }).attentionFactor);
    e['attention factor (yarn)'] = same(0.1 * Math.log(8) + 1);
    e['max |reorder(rope_half(x)) − rope_interleaved(reorder(x))|'] = below(1e-6);
    e['RoPE scores: max spread along a diagonal'] = below(1e-4);
    e['RoPE scores: max |scores(m + 10000, n + 10000) − scores(m, n)|'] = below(1e-4);
    e['Llama 3.1 pairs'] = same(64);
    e['longest wavelength'] = same((2 * Math.PI) / pe.ropeFrequencies({ dim: 128, base: 500000 }).invFreq[63]);
    e['interpolated llama3 pairs'] = (v) => v > 0;
    e['max |rope(x, 64000, llama3) − rope(x, 8000)| on those pairs'] = below(1e-5);
    e['longrope attention factor'] = same(pe.ropeFrequencies({ config: CONFIGS['Phi-3 mini 128k'] }).attentionFactor);
    e['sqrt(1 + ln 32 / ln 4096)'] = same(Math.sqrt(1 + Math.log(32) / Math.log(4096)));
    e['short list: max |θ original / (θ · short_factor) − 1|'] = below(1e-6);
    e['long list: max |θ original / (θ · long_factor) − 1|'] = below(1e-6);
    const t5 = pe.t5Buckets({ queryLength: 401 }); // row 0: offsets 0 .. 400; row 400: offsets -400 .. 0
    for (const offset of [0, -1, -200]) e[`t5 bucket of offset ${offset}`] = same(t5.data[400 * 401 + 400 + offset]);
    for (const offset of [1, 20, 200]) e[`t5 bucket of offset +${offset}`] = same(t5.data[offset]);
    // Where the last bucket starts, from HF's _relative_position_bucket (modeling_t5.py) written out here:
    // max_exact + floor(log(n / max_exact) / log(max_distance / max_exact) * (buckets - max_exact)), capped.
    const hfBucket = (n, buckets) => {
      const exact = buckets / 2;
      return n < exact ? n : Math.min(buckets - 1, exact + Math.floor((Math.log(n / exact) / Math.log(128 / exact)) * (buckets - exact)));
    };
    const firstLast = (buckets) => Array.from({ length: 400 }, (_, i) => i + 1).find((n) => hfBucket(n, buckets) === buckets - 1);
    e['t5 last bucket from (bidirectional, after the query)'] = same(firstLast(16));
    e['t5 last bucket from (bidirectional, before the query)'] = same(firstLast(16));
    e['t5 last bucket from (causal)'] = same(firstLast(32));
    // Train short, test long: the same models trained here (the notebook's options), each row's mean and
    // worst seed from the accuracies of every seed, and the conclusions of the notebook's text on the
    // notebook's own numbers: at 8× the training length, the worst seed of ALiBi, of RoPE with linear or
    // YaRN scaling and of RoPE fine-tuned with linear scaling is above the best seed of plain RoPE,
    // sinusoidal and T5, and those three stay near a coin toss on average.
    const runs = trainShortTestLong(pe, { length: 8, steps: 300, seeds: 3, tuneSteps: 60 }).results;
    const accuracies = (key, length) => runs.filter((r) => r.key === key && r.length === length).map((r) => r.accuracy);
    const mean = (xs) => xs.reduce((s, x) => s + x, 0) / xs.length;
    const plain = ['rope', 'sinusoidal', 't5'];
    const plainBest = Math.max(...plain.flatMap((key) => accuracies(key, 64)));
    const holds = ['alibi', 'rope+linear', 'rope+yarn', 'ft+linear'];
    for (const { key } of LONG_ROWS) {
      assert.equal(accuracies(key, 64).length, 3, `${key}: three seeds at 64 tokens`);
      e[`mean accuracy at 32 tokens (${key})`] = same(mean(accuracies(key, 32)));
      e[`mean accuracy at 64 tokens (${key})`] = (v) => same(mean(accuracies(key, 64)))(v) && (!plain.includes(key) || v < 0.6);
      e[`worst seed at 64 tokens (${key})`] = (v) => same(Math.min(...accuracies(key, 64)))(v) && (!holds.includes(key) || v > plainBest);
    }
    e['best seed at 64 tokens of plain RoPE, sinusoidal or T5'] = same(plainBest);
  } else if (name.startsWith('04')) {
    e['sinusoidal2d rows (cls + 14·14)'] = same(197);
    e['sinusoidal2d channels'] = same(768);
    e['cls row max |value|'] = same(0);
    e['column half vs patch (0, column), max difference'] = same(0);
    e['row half vs patch (row, 0), max difference'] = same(0);
    const ids = pe.mropePositions([{ text: 3 }, { image: [1, 4, 6] }, { text: 2 }]);
    e['tokens (3 text + 1×4×6 image + 2 text)'] = same(ids.shape[1]);
    e['text resumes at'] = same(ids.data[27]); // the first token after the image, temporal stream
    // Qwen2-VL's sections [16, 24, 24], each frequency's two channels (rotate_half)
    e['channels turned by the temporal id'] = same(32);
    e['channels turned by the height id'] = same(48);
    e['channels turned by the width id'] = same(48);
    e['max |pe.rope − cos/sin of the ids|'] = below(1e-6);
    const grid = pe.sinusoidal2d({ height: 14, width: 14, dModel: 768 });
    const image = pe.mropePositions([{ image: [1, 14, 14] }]);
    const rotated = pe.rope(
      { data: new Float32Array(196 * 128).fill(1), shape: [196, 128] },
      { positions: image, mropeSection: [16, 24, 24], base: 1e6 },
    );
    const cosine = (t, a, b) => {
      const d = t.shape[1];
      const dot = (x, y) => t.data.subarray(x * d, x * d + d).reduce((s, v, c) => s + v * t.data[y * d + c], 0);
      return dot(a, b) / Math.sqrt(dot(a, a) * dot(b, b));
    };
    const at = 4 * 14 + 6;
    const near = (want) => (got) => Math.abs(got - want) < 2e-6; // float32 similarity vs float64 here
    e['sin-cos cosine, (4, 6) to (4, 7)'] = near(cosine(grid, at, at + 1));
    e['sin-cos cosine, (4, 6) to (5, 6)'] = near(cosine(grid, at, at + 14));
    e['M-RoPE cosine, (4, 6) to (4, 7)'] = near(cosine(rotated, at, at + 1));
    e['M-RoPE cosine, (4, 6) to (5, 6)'] = near(cosine(rotated, at, at + 14));
    e['sin-cos: max spread over patch pairs with the same offset'] = below(1e-5);
    e['M-RoPE: max spread over patch pairs with the same offset'] = below(1e-5);
    // q = k = (1, …, 1): q·k/d = (2/d) Σ ζ_i^(Δ/512) cos(Δ θ_i), largest |·| over the next 64 distances
    const score = (delta, decay) => {
      let sum = 0;
      for (let i = 0; i < 32; i++) sum += 2 * (decay ? ((2 * i + 25.6) / 89.6) ** (delta / 512) : 1) * Math.cos(delta * 10000 ** (-i / 32));
      return sum / 64;
    };
    const envelope = (decay) => Math.max(...Array.from({ length: 64 }, (_, k) => Math.abs(score(4096 + k, decay))));
    const curves = xposScores(pe, { headDim: 64, scaleBase: 512, maxDistance: 4096 });
    e['xPos envelope at distance 4096'] = (v) => same(curves.xposEnvelope[4096])(v) && Math.abs(v - envelope(true)) < 1e-5;
    e['RoPE envelope at distance 4096'] = (v) => same(curves.ropeEnvelope[4096])(v) && Math.abs(v - envelope(false)) < 1e-5;
    e['xPos scale of pair 0 at distance 4096'] = (v) => Math.abs(v / (25.6 / 89.6) ** 8 - 1) < 1e-5;
    e['xPos scale of pair 31 at distance 4096'] = (v) => Math.abs(v / (87.6 / 89.6) ** 8 - 1) < 1e-5;
    e['xPos: max |q·k(1000 + Δ, 1000) − q·k(Δ, 0)| / d'] = below(1e-5);
  }
  return e;
}

describe('notebooks (Jupyter, Deno kernel)', { skip }, () => {
  let out;
  const executed = {};
  const solvedChecks = {}; // name -> the check cells run after the worked solutions
  const flushes = {}; // name -> lib/flush.js's flushStats at the end of the run
  const redrawn = {}; // name -> [[a committed figure, its PNG drawn again]]

  const again = {}; // name -> [[the cell's outputs, its second run's outputs, its index]]
  const removeCopies = () => NOTEBOOKS.forEach((name) => rmSync(join(DIR, TWICE(name)), { force: true }));
  before(() => {
    out = mkdtempSync(join(tmpdir(), 'posenc-notebooks-'));
    removeCopies();
    try {
      for (const name of NOTEBOOKS) {
        const nb = JSON.parse(readFileSync(join(DIR, name), 'utf8'));
        // the committed figures that name a spec the notebook imports, to be drawn again first
        const imported = figureImports(codeOf(nb));
        const asked = figuresOf(nb).filter((f) => imported[f.spec]);
        redrawn[name] = asked;
        writeFileSync(
          join(out, `${name}.redraw.json`),
          JSON.stringify(asked.map((f) => ({ file: imported[f.spec], spec: f.spec, params: JSON.parse(f.params), options: JSON.parse(f.options) }))),
        );
        const twice = (c) => [c, { ...c, id: `${c.id}${AGAIN}` }];
        let exercise = null; // the stub cell waiting for its check
        nb.cells = nb.cells.flatMap((c) => {
          if (c.cell_type !== 'code') return [c];
          const n = EXERCISE.exec(text(c.source))?.[1];
          if (n) {
            assert.ok(SOLUTIONS[name]?.[n], `${name}: no worked solution for exercise ${n} in tests/notebooks/solutions.js`);
            exercise = { ...c, id: `${c.id}${SOLVED}`, source: SOLUTIONS[name][n] };
            return twice(c);
          }
          if (!exercise) return twice(c);
          const solved = [...twice(exercise), ...twice({ ...c, id: `${c.id}${SOLVED}` })];
          exercise = null;
          return [...twice(c), ...solved];
        });
        nb.cells.unshift({
          cell_type: 'code',
          id: REDRAW,
          metadata: {},
          execution_count: null,
          outputs: [],
          source: `await (await import(${JSON.stringify(pathToFileURL(join(ROOT, 'tests/notebooks/redraw.mjs')).href)})).redrawFiles(${JSON.stringify(
            join(out, `${name}.redraw.json`),
          )}, ${JSON.stringify(join(out, `${name}.redrawn.json`))});`,
        });
        // last, how the run's flushes ended (lib/flush.js): each confirmed by the kernel, or a fallback pause
        nb.cells.push({
          cell_type: 'code',
          id: FLUSH_STATS,
          metadata: {},
          execution_count: null,
          outputs: [],
          source: "import { flushStats } from './lib/flush.js';\nawait show(`flushStats ${JSON.stringify(flushStats)}`);",
        });
        writeFileSync(join(DIR, TWICE(name)), JSON.stringify(nb));
      }
      const run = spawnSync('bash', [join(ROOT, 'scripts/notebooks.sh'), '--out', out, ...NOTEBOOKS.map((n) => join(DIR, TWICE(n)))], {
        cwd: ROOT,
        encoding: 'utf8',
      });
      assert.equal(run.status, 0, `scripts/notebooks.sh --out failed:\n${run.stdout}\n${run.stderr}`);
    } finally {
      removeCopies();
    }
    for (const name of NOTEBOOKS) {
      const nb = JSON.parse(readFileSync(join(out, TWICE(name)), 'utf8'));
      again[name] = nb.cells.flatMap((c, i) => (c.id.endsWith(AGAIN) ? [[nb.cells[i - 1].outputs, c.outputs, i]] : []));
      const stats = nb.cells.find((c) => c.id === FLUSH_STATS);
      flushes[name] = JSON.parse(/^flushStats (.*)$/m.exec(stats.outputs.map((o) => text(o.data?.['text/plain'])).join('\n'))?.[1] ?? 'null');
      const redrawCell = nb.cells.find((c) => c.id === REDRAW);
      assert.deepEqual(
        redrawCell.outputs.filter((o) => o.output_type === 'error').map((o) => o.evalue),
        [],
        `${name}: redrawing its figures raised`,
      );
      const pngs = JSON.parse(readFileSync(join(out, `${name}.redrawn.json`), 'utf8'));
      assert.equal(pngs.length, redrawn[name].length);
      redrawn[name] = redrawn[name].map((f, n) => [f, pngs[n]]);
      executed[name] = {
        ...nb,
        cells: nb.cells.filter((c) => !c.id.endsWith(AGAIN) && !c.id.endsWith(SOLVED) && c.id !== FLUSH_STATS && c.id !== REDRAW),
      };
      solvedChecks[name] = nb.cells.filter((c) => c.id.endsWith(SOLVED) && !EXERCISE.test(text(c.source)));
    }
  });
  after(() => out && rmSync(out, { recursive: true, force: true }));

  test('there are four notebooks', () => assert.equal(NOTEBOOKS.length, 4, NOTEBOOKS.join(', ')));

  for (const name of NOTEBOOKS) {
    describe(basename(name, '.ipynb'), () => {
      test('runs top to bottom: no errors, every code cell has output, figures inline', () => {
        const nb = executed[name];
        assert.equal(nb.metadata.kernelspec.name, 'deno');
        const code = nb.cells.filter((c) => c.cell_type === 'code');
        code.forEach((cell, i) => {
          const errors = cell.outputs.filter((o) => o.output_type === 'error');
          assert.deepEqual(errors, [], `code cell ${i + 1} raised`);
          // The Deno kernel can report a cell finished before its outputs are sent; lib/display.js
          // works around it. An empty cell here means outputs were lost.
          assert.ok(cell.outputs.length > 0 || !/\b(show|print|report)\(/.test(text(cell.source)), `code cell ${i + 1} lost its outputs`);
          for (const o of cell.outputs)
            assert.ok(
              !(o.output_type === 'stream' && o.name === 'stdout'),
              `code cell ${i + 1} printed to the console (use print/report: console output is unreliable in the Deno kernel)`,
            );
        });
        // every figure once, as a PNG with its size: no SVG (hidden from untrusted notebooks, emptied by nbconvert 6)
        const images = code.flatMap((c, i) => c.outputs.filter((o) => o.data?.['image/png'] || o.data?.['image/svg+xml']).map((o) => [i, o]));
        assert.ok(images.length >= 5, `${images.length} figures`);
        for (const [i, o] of images) {
          assert.equal(o.data['image/svg+xml'], undefined, `code cell ${i + 1}: a figure stored as SVG`);
          const png = Buffer.from(text(o.data['image/png']), 'base64');
          assert.equal(png.subarray(1, 4).toString('latin1'), 'PNG', `code cell ${i + 1}: not a PNG`);
          assert.ok(
            png.readUInt32BE(16) >= 100 && png.readUInt32BE(20) >= 50,
            `code cell ${i + 1}: PNG ${png.readUInt32BE(16)} x ${png.readUInt32BE(20)}`,
          );
        }
      });

      const verdictsOf = (cells) =>
        cells.flatMap((c) =>
          (c.outputs ?? []).flatMap((o) =>
            text(o.data?.['text/plain'])
              .split('\n')
              .filter((l) => /^[✓✗] /.test(l)),
          ),
        );
      test('its exercises ship as stubs: each check says ✗ and names the case it tried', () => {
        const verdicts = verdictsOf(executed[name].cells);
        assert.equal(verdicts.length, 3, verdicts.join('\n'));
        verdicts.forEach((l, i) => assert.match(l, new RegExp(`^✗ exercise ${i + 1}, case .+: threw \\w*Error: `), l));
      });

      test('with the worked solutions of tests/notebooks/solutions.js each check says ✓', () => {
        const verdicts = verdictsOf(solvedChecks[name]);
        assert.equal(verdicts.length, 3, verdicts.join('\n'));
        verdicts.forEach((l, i) => assert.match(l, new RegExp(`^✓ exercise ${i + 1}: `), l));
      });

      test("every output was confirmed published by the kernel before its cell ended (lib/flush.js's flush)", () => {
        assert.ok(flushes[name], 'the flush statistics were not printed');
        assert.equal(flushes[name].paused, 0, `${flushes[name].paused} flushes fell back to a pause`);
        assert.ok(flushes[name].confirmed >= 10, `${flushes[name].confirmed} confirmed flushes`);
      });

      test('its key numbers agree with the package', () => {
        const values = reported(executed[name]);
        const want = expectations(name);
        assert.ok(Object.keys(want).length > 5);
        for (const [key, check] of Object.entries(want)) {
          assert.ok(values.has(key), `"${key} = ..." was not printed; printed: ${[...values.keys()].join(' | ')}`);
          assert.ok(check(values.get(key)), `${key} = ${values.get(key)}: does not agree with the package`);
        }
      });

      test('every code cell runs again on its own, with the same outputs', () => {
        for (const [first, second, i] of again[name]) {
          assert.deepEqual(
            second.filter((o) => o.output_type === 'error').map((o) => o.evalue),
            [],
            `cell ${i}: running it again raised`,
          );
          const texts = (outputs) => outputs.map((o) => text(o.data?.['text/plain'] ?? o.text));
          assert.deepEqual(texts(second), texts(first), `cell ${i}: a second run prints something else`);
        }
        assert.ok(again[name].length >= 5);
      });

      test('drawing each committed figure again with its spec and params gives the same PNG', () => {
        assert.ok(redrawn[name].length >= 5, `${redrawn[name].length} figures drawn again`);
        for (const [f, png] of redrawn[name]) {
          assert.equal(png?.error, undefined, `${name}, cell ${f.cell}: ${f.spec}(${f.params}) could not be drawn again: ${png?.error}`);
          assert.ok(png === f.png, `${name}, cell ${f.cell}: ${f.spec}(${f.params}) draws a different figure now (else: bash scripts/notebooks.sh)`);
        }
      });

      test('the committed outputs are those of a fresh run (else: bash scripts/notebooks.sh)', () => {
        const outputs = (nb) => nb.cells.map((c) => (c.outputs ?? []).map((o) => text(o.data?.['text/plain'] ?? o.text)));
        const committed = JSON.parse(readFileSync(join(DIR, name), 'utf8'));
        assert.deepEqual(
          outputs(committed),
          outputs(executed[name]),
          `${name}: committed outputs are stale; run bash scripts/notebooks.sh and commit`,
        );
      });
    });
  }
});
