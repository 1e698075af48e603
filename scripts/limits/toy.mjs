// Calibrates trainToy's cost model (src/js/lab/toy.js, COSTS): times training steps and held-out
// evaluations of a spread of model sizes on both wasm backends, fits the nanoseconds per unit of
// work (passUnits, parameterCount) by non-negative least squares on relative errors, and prints the
// fit, how far each measured call was from its estimate, and the table to paste into toy.js (the fit
// scaled up by its largest under-estimate among calls of 50 ms or more, so that none of those ran
// longer than estimated). Timings are CPU times, the fastest of five runs.
// It calls the raw entry points, below the cost checks it calibrates.
//   node scripts/limits/toy.mjs [--quick]     (about 5 minutes; --quick: a third of the configurations)
//   node scripts/limits/toy.mjs --smoke       (two small models, one short run each: that the script runs,
//                                              for tests/js/limits.test.js; its fit means nothing)
import { loadLab } from '../../src/js/lab/index.js';
import { ENUMS, LIMITS } from '../../src/js/contract.js';
import { made, scope } from '../../src/js/heap.js';
import { parameterCount, passUnits } from '../../src/js/lab/toy.js';

const QUICK = process.argv.includes('--quick');
const SMOKE = process.argv.includes('--smoke');
const HELD_OUT = 256;
const PASS_UNITS = Object.keys(passUnits({ dModel: 8, heads: 1, layers: 1, vocab: 4 }, 1, 4));
const TRAIN_UNITS = [...PASS_UNITS, 'param', 'call'];
const EVAL_UNITS = [...PASS_UNITS, 'call'];
const SAFE_FROM_NS = 5e7; // the scale-up covers calls of 50 ms or more (shorter ones are far from the limit)

// A deterministic spread of configurations: every encoding and task, the corners of each size, and
// lengths past the training length (fine-tuning and evaluation go up to toyMaxEvalLength).
function configurations() {
  let state = 12345;
  const rand = () => (state = (state * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
  const pick = (a) => a[Math.floor(rand() * a.length)];
  const out = [
    { dModel: 64, heads: 4, layers: 2, batch: 256, length: 32, vocab: 64, at: [32, 64, 128] },
    { dModel: 8, heads: 1, layers: 1, batch: 1, length: 4, vocab: 4, at: [4, 128] },
    { dModel: 16, heads: 2, layers: 2, batch: 16, length: 8, vocab: 8, at: [8, 16, 32] },
    { dModel: 64, heads: 4, layers: 2, batch: 16, length: 16, vocab: 8, at: [16, 128] },
  ];
  for (let i = 0; i < 36; i++) {
    const dModel = pick([8, 16, 24, 32, 48, 64]);
    const heads = pick([1, 2, 4].filter((h) => dModel % (2 * h) === 0));
    const length = pick([4, 6, 8, 12, 16, 24, 32]);
    out.push({
      dModel,
      heads,
      layers: pick([1, 2]),
      batch: pick([1, 4, 16, 32, 64, 128, 256]),
      length,
      vocab: pick([4, 8, 16, 64]),
      at: [length, pick([16, 32, 64, 96, 128].filter((l) => l >= length))],
    });
  }
  return (SMOKE ? out.slice(1, 3) : QUICK ? out.filter((_, i) => i % 3 === 0) : out).map((c, i) => ({
    task: ENUMS.toyTask[i % 3],
    encoding: ['none', 'sinusoidal', 'rope', 'alibi', 't5', 'learned'][i % 6],
    causal: i % 4 === 1,
    learningRate: 0.003,
    seed: i,
    ...c,
  }));
}

// The raw entry points of the lab module (src/bindings/lab.cpp): the trainer is an embind object.
function make(pe, c) {
  const mod = pe._lab;
  return made(
    mod,
    'trainToy',
    mod._toyMake({
      task: ENUMS.toyTask.indexOf(c.task),
      encoding: ENUMS.labEncoding.indexOf(c.encoding),
      ...Object.fromEntries(['length', 'dModel', 'heads', 'layers', 'batch', 'vocab', 'causal', 'learningRate', 'seed'].map((k) => [k, c[k]])),
    }),
  );
}
const at = (length) => ({ length, invFreq: 0, nFreq: 0, attentionFactor: 1 });
const train = (pe, h, steps, length) =>
  scope(pe._lab, 'trainToy.step', (s) => s.check(h.train({ steps, ...at(length), heldOut: false, report: s.alloc(32) })));
const evaluate = (pe, h, length) => scope(pe._lab, 'trainToy.evaluate', (s) => s.check(h.evaluate({ ...at(length), accuracy: s.alloc(8) })));

// The fastest of `repeats` runs, in nanoseconds of this process's CPU time (user + system): what a
// call costs on an idle machine, even while other processes share it.
function time(fn, repeats) {
  let best = Infinity;
  for (let i = 0; i < repeats; i++) {
    const t0 = process.cpuUsage();
    fn();
    const { user, system } = process.cpuUsage(t0);
    best = Math.min(best, (user + system) * 1000);
  }
  return best;
}

// Non-negative least squares on relative errors (rows scaled by 1 / measured): the best feasible
// solution over every subset of free units (a handful of units: 2^n least-squares solves).
function fit(rows, units) {
  const n = units.length;
  let best = { err: Infinity };
  for (let mask = 1; mask < 2 ** n; mask++) {
    const free = units.map((_, i) => i).filter((i) => mask & (1 << i));
    const A = rows.map((r) => free.map((i) => r.x[units[i]] / r.ns));
    const m = free.length;
    const ata = Array.from({ length: m }, (_, i) => Array.from({ length: m }, (_, j) => A.reduce((s, a) => s + a[i] * a[j], 0)));
    const atb = Array.from({ length: m }, (_, i) => A.reduce((s, a) => s + a[i], 0));
    const sol = solve(ata, atb);
    if (!sol || sol.some((v) => !(v >= 0))) continue;
    const k = Object.fromEntries(units.map((u) => [u, 0]));
    free.forEach((i, j) => (k[units[i]] = sol[j]));
    const err = rows.reduce((s, r) => s + (estimate(k, r.x) / r.ns - 1) ** 2, 0);
    if (err < best.err) best = { err, k };
  }
  return best.k;
}

function solve(a, b) {
  const n = b.length;
  const m = a.map((row, i) => [...row, b[i]]);
  for (let c = 0; c < n; c++) {
    let p = c;
    for (let r = c + 1; r < n; r++) if (Math.abs(m[r][c]) > Math.abs(m[p][c])) p = r;
    if (Math.abs(m[p][c]) < 1e-12) return null;
    [m[c], m[p]] = [m[p], m[c]];
    for (let r = 0; r < n; r++) {
      if (r === c) continue;
      const f = m[r][c] / m[c][c];
      for (let k = c; k <= n; k++) m[r][k] -= f * m[c][k];
    }
  }
  return m.map((row, i) => row[n] / row[i]);
}

const estimate = (k, x) => Object.entries(x).reduce((s, [u, v]) => s + k[u] * v, 0);
const round = (v) => (v === 0 ? 0 : Number(v.toPrecision(3)));

for (const simd of [true, false]) {
  const pe = await loadLab({ simd });
  const trainRows = [];
  const evalRows = [];
  for (const c of configurations()) {
    const h = make(pe, c);
    try {
      for (const length of c.at) {
        if (c.encoding === 'learned' && length > c.length) continue;
        const u = passUnits(c, HELD_OUT, length);
        evalRows.push({ c, length, x: { ...u, call: 1 }, ns: time(() => evaluate(pe, h, length), SMOKE ? 1 : 5) });
        const single = time(() => train(pe, h, 1, length), 1);
        const steps = Math.max(1, Math.min(200, Math.round((SMOKE ? 5e6 : 5e7) / single)));
        const repeats = SMOKE ? 1 : single > 1e9 ? 2 : 5;
        const x = Object.fromEntries(Object.entries(passUnits(c, c.batch, length)).map(([k, v]) => [k, steps * v]));
        x.param = steps * parameterCount(c);
        x.call = 1;
        trainRows.push({ c, length, steps, x, ns: time(() => train(pe, h, steps, length), repeats) });
      }
    } finally {
      h.delete();
    }
  }
  const report = (name, rows, units, prefix) => {
    const k = fit(rows, units);
    const ratios = rows.map((r) => r.ns / estimate(k, r.x));
    const safety = Math.max(...ratios.filter((_, i) => rows[i].ns >= SAFE_FROM_NS));
    const sorted = [...ratios].sort((a, b) => a - b);
    console.log(
      `\n${pe.backend} ${name}: ${rows.length} calls, measured / fitted: min ${sorted[0].toFixed(2)}, median ${sorted[rows.length >> 1].toFixed(2)}, max ${sorted.at(-1).toFixed(2)}; scaled up by ${safety.toFixed(2)} (the largest at 50 ms or more)`,
    );
    console.log(`  fitted ns per unit: ${units.map((u) => `${u} ${round(k[u])}`).join(', ')}`);
    const worst = rows
      .map((r, i) => ({ r, ratio: ratios[i] }))
      .sort((a, b) => b.ratio - a.ratio)
      .slice(0, 3);
    for (const { r, ratio } of worst)
      console.log(
        `  worst: ${ratio.toFixed(2)} x, ${(r.ns / 1e6).toFixed(1)} ms: ${r.c.encoding} d ${r.c.dModel} h ${r.c.heads} L ${r.c.layers} batch ${r.c.batch} length ${r.length}${r.steps ? ` x ${r.steps} steps` : ''}`,
      );
    const largest = rows.reduce((a, r) => (r.ns > a.ns ? r : a));
    console.log(
      `  longest measured: ${(largest.ns / 1e6).toFixed(0)} ms (estimated ${((estimate(k, largest.x) * safety) / 1e6).toFixed(0)} ms after scaling)`,
    );
    return Object.fromEntries(units.map((u) => [u === 'call' || u === 'param' ? u : prefix + u[0].toUpperCase() + u.slice(1), round(k[u] * safety)]));
  };
  const max = { dModel: LIMITS.toyMaxDModel, heads: LIMITS.toyMaxHeads, layers: LIMITS.toyMaxLayers, vocab: LIMITS.toyMaxVocab };
  const trainK = report('training steps', trainRows, TRAIN_UNITS, 'train');
  const evalK = report('evaluations', evalRows, EVAL_UNITS, 'eval');
  const table = { ...trainK, ...evalK, call: Math.max(trainK.call, evalK.call) };
  console.log(`\n  '${pe.backend}': Object.freeze(${JSON.stringify(table).replace(/"/g, '').replace(/,/g, ', ').replace(/:/g, ': ')}),`);
  const step = passUnits(max, LIMITS.toyMaxBatch, LIMITS.toyMaxLength);
  const ms = PASS_UNITS.reduce((sum, u) => sum + table[`train${u[0].toUpperCase()}${u.slice(1)}`] * step[u], 0) / 1e6;
  console.log(`  (the largest model's step, batch ${LIMITS.toyMaxBatch} x ${LIMITS.toyMaxLength} tokens: about ${ms.toFixed(0)} ms before Adam)`);
}
