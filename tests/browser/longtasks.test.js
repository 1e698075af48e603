// The long-task budget: at the largest sizes the controls allow, neither loading the page nor any
// interaction blocks the main thread for more than 200 ms on this machine. The run trains the page's
// six toy transformers, so it also checks what they learned (default-training.js; training.test.js checks
// that in the other engines, and the training's other settings, Stop, and train short / test long in all).
//
// A busy machine (other builds and tests on the same two cores) stretches every task's wall time: the
// operating system takes the core away in the middle of a task. So the budget is checked on the main
// thread's CPU time, which load does not stretch: Chromium's trace records each task's thread time
// (`tdur` of its top-level RunTask events). It is compared with a calibration workload (plain JavaScript
// arithmetic, CALIBRATION) run in the same page, whose CPU time comes from the same trace: the ratio
// holds on a faster or slower machine too. The bound, MAX_RATIO, is 200 ms over the calibration's CPU time
// on this machine (12 to 13 ms). The wall times of the Long Tasks API (server.js's recordLongTasks) are
// printed beside them, for people to read.
//
// Chromium only: it has both the trace and the Long Tasks API. Firefox has neither from the test driver,
// and a stand-in that timed the page's callbacks missed the module's evaluation and the layout after each
// task, while a function run by the driver (the calibration) runs several times slower there than the
// page's own code, so its ratios said more about the driver than the page. Every other page test runs in
// both engines, and what the default training learned is checked in Firefox by training.test.js.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { assertDefaultTraining } from './default-training.js';
import { inEachEngine, openPage, recordLongTasks } from './server.js';

const BUDGET_MS = 200;
const MARK = 'posenc-calibration';
// The calibration workload: a million square roots and remainders, 12 to 13 ms of CPU in Chromium on this
// machine, busy or quiet (V8 in Node: 15.8 ms, best of 300). The mark finds it, and the page's main thread,
// in the trace.
const CALIBRATION = (mark) => {
  performance.mark(mark);
  const t0 = performance.now();
  let s = 0;
  for (let i = 1; i < 1e6; i++) s += Math.sqrt(i) % 7;
  globalThis.__calibrationSink = s;
  return performance.now() - t0;
};
// 200 ms of CPU is 16 calibrations here.
const MAX_RATIO = 16;

const median = (v) => [...v].sort((a, b) => a - b)[v.length >> 1];

// The calibration's wall time (for the Worker's training time below, a wall-clock figure), and marks for
// its CPU time in the trace.
async function calibrate(page) {
  const runs = [];
  for (let i = 0; i < 5; i++) runs.push(await page.evaluate(CALIBRATION, MARK));
  return median(runs);
}

// Runs `fn` with Chromium tracing its top-level tasks, and returns what fn returned, with `tasks`: the
// CPU and wall time (ms) of every task of the page's main thread (the thread that ran the calibration
// marks) other than the calibrations, and `calibration`: their median CPU time. One trace at a time per
// browser: only this file traces.
async function traced(browser, fn) {
  await browser.startTracing(undefined, { categories: ['toplevel', 'blink.user_timing'] });
  let value;
  let trace;
  try {
    value = await fn();
  } finally {
    trace = await browser.stopTracing();
  }
  const events = JSON.parse(trace.toString()).traceEvents;
  const marks = events.filter((e) => e.name === MARK);
  assert.ok(marks.length > 0, 'the calibration marks are in the trace');
  const { pid, tid } = marks[0];
  const all = events.filter(
    (e) => e.pid === pid && e.tid === tid && e.ph === 'X' && e.name === 'ThreadControllerImpl::RunTask' && e.tdur !== undefined,
  );
  const isCalibration = (t) => marks.some((m) => m.ts >= t.ts && m.ts <= t.ts + t.dur);
  const calibration = median(all.filter(isCalibration).map((t) => t.tdur / 1000));
  const tasks = all.filter((t) => !isCalibration(t)).map((t) => ({ cpu: t.tdur / 1000, wall: t.dur / 1000 }));
  return { ...value, tasks, calibration };
}

// The result of a measurement: the longest task by CPU time, as a ratio to the calibration's.
function result(label, { tasks, calibration, wallCalibration, longTasks }) {
  const longest = tasks.reduce((a, b) => (b.cpu > a.cpu ? b : a), { cpu: 0, wall: 0 });
  return { label, longest, calibration, wallCalibration, ratio: longest.cpu / calibration, longTasks };
}

// Runs `action`, waits until `selector`'s text includes `text` and the page has settled, and returns the
// longest task it caused.
async function measure(page, label, action, [selector, text]) {
  const got = await traced(page.context().browser(), async () => {
    const before = await calibrate(page);
    await page.evaluate(() => (window.__longTasks = []));
    await action();
    await page.waitForFunction(([s, t]) => document.querySelector(s)?.textContent.includes(t), [selector, text], { timeout: 120000 });
    await settle(page);
    const longTasks = await page.evaluate(() => window.__longTasks);
    return { longTasks, wallCalibration: Math.max(before, await calibrate(page)) };
  });
  return result(label, got);
}

// measure(), and for a step over MAX_RATIO that can be undone, up to two more measurements after undoing it:
// the best of them (CPU time varies a little from run to run: caches, the garbage collector's timing).
async function measureBest(page, label, action, done) {
  let best = await measure(page, label, action, done);
  for (let i = 0; i < 2 && best.ratio > MAX_RATIO && action.undo; i++) {
    await action.undo();
    await page.waitForTimeout(500); // the page's redraw after a change is debounced by 120 ms
    await settle(page);
    const again = await measure(page, label, action, done);
    console.log(`# ${label}: measured again, ratio ${best.ratio.toFixed(1)} then ${again.ratio.toFixed(1)}`);
    if (again.ratio < best.ratio) best = again;
  }
  return best;
}

// Until no task has been queued for 300 ms (render.js draws figures in tasks of their own after a change).
async function settle(page) {
  let last = -1;
  for (;;) {
    await page.waitForTimeout(300);
    const n = await page.evaluate(() => window.__longTasks.length);
    if (n === last) return;
    last = n;
  }
}

const captionHas = (id, text) => [`[data-figure="${id}"] figcaption`, text];

inEachEngine(
  'long tasks at the largest sizes',
  (suite) => {
    test(`loading, and every control at its largest: no task over ${BUDGET_MS} ms of the main thread's CPU (${MAX_RATIO} calibrations here)`, async () => {
      // loading: traced from before the page opens to after it has settled, then calibrated in it; a load
      // over the bound is measured again in a new page (up to twice), as measureBest does for the steps
      // below, and the steps go on in the last page opened
      const load = async () => {
        const blank = await suite.browser.newPage({ width: 1200, height: 900 });
        const browser = blank.context().browser();
        await blank.close();
        const got = await traced(browser, async () => {
          const { page, problems } = await openPage(suite.browser, suite.server.url, { init: recordLongTasks });
          await page.waitForSelector('[data-figure="distinguishability"][data-rendered="true"]', { timeout: 120000 });
          await settle(page);
          const longTasks = await page.evaluate(() => window.__longTasks);
          return { page, problems, longTasks, wallCalibration: await calibrate(page) };
        });
        return { page: got.page, problems: got.problems, result: result('loading the page', got) };
      };
      let { page, problems, result: loading } = await load();
      for (let i = 0; i < 2 && loading.ratio > MAX_RATIO; i++) {
        assert.deepEqual(problems, { console: [], pageErrors: [], foreign: [] });
        await page.close();
        const again = await load();
        console.log(`# loading the page: measured again, ratio ${loading.ratio.toFixed(1)} then ${again.result.ratio.toFixed(1)}`);
        ({ page, problems } = again);
        if (again.result.ratio < loading.ratio) loading = again.result;
      }
      const results = [loading];
      // A control's change, with its undo (the value it had before), so that a step can be measured again.
      const control = (set) => (c, v) => {
        const sel = `[data-control="${c}"]`;
        let old;
        const action = async () => {
          old = await page.inputValue(sel);
          await set(sel, v);
        };
        action.undo = () => set(sel, old);
        return action;
      };
      const fill = control((sel, v) => page.fill(sel, v));
      const select = control((sel, v) => page.selectOption(sel, v));
      const steps = [
        ['length 4096', fill('length', '4096'), captionHas('sinusoidal-heatmap', '4096 positions')],
        ['dModel 1024', fill('dModel', '1024'), captionHas('sinusoidal-heatmap', '1024 dimensions')],
        ['layout split', select('layout', 'split'), captionHas('sinusoidal-heatmap', 'split')],
        ['base 500000', fill('base', '500000'), captionHas('sinusoidal-heatmap', 'base 500000')],
        ['position 4095', fill('scrub', '4095'), captionHas('row-vector', 'Row 4095')],
        ['shift k 1000', fill('shiftK', '1000'), captionHas('shift-matrix', 'Moving any position 1000 steps')],
        ['pipeline 256 tokens', fill('pipeLength', '256'), captionHas('input-pipeline', '256 tokens')],
        ['pipeline d 1024', fill('pipeDModel', '1024'), captionHas('input-pipeline', 'd_model = 1024')],
        ['learned max length 4096', fill('maxLength', '4096'), captionHas('extrapolation', '4096 rows')],
        ['position asked 100000', fill('position', '100000'), captionHas('extrapolation', 'position 100000')],
        ['ALiBi 16 heads', fill('alibiHeads', '16'), captionHas('alibi-bias', '(16 heads)')],
        ['ALiBi length 64', fill('alibiLength', '64'), captionHas('alibi-bias', '64 positions')],
        ['T5 128 buckets', fill('t5Buckets', '128'), captionHas('t5-buckets', '128 buckets')],
        ['T5 max distance 1000', fill('t5MaxDistance', '1000'), captionHas('t5-buckets', 'maxDistance 1000')],
        ['RoPE head 256', fill('ropeDim', '256'), captionHas('rope-relative', 'head dim 256')],
        ['factor 64', fill('factor', '64'), captionHas('rope-scaling', '×64')],
        ['inspector: Phi-3', select('ropePreset', 'Phi-3 mini 128k'), captionHas('rope-inspector', 'longrope')],
        ['xPos distance 8192', fill('xposDistance', '8192'), captionHas('xpos-decay', 'At distance 8192')],
        ['xPos head 256', fill('xposHeadDim', '256'), captionHas('xpos-decay', '256 channels')],
        ['xPos scale base 16', fill('xposScaleBase', '16'), captionHas('xpos-decay', 'scale base 16)')],
        ['M-RoPE video 4 frames', fill('mropeT', '4'), captionHas('mrope-streams', '4 × 4 × 6 video')],
        ['M-RoPE 8 × 8 grid', fill('mropeH', '8'), captionHas('mrope-streams', '4 × 8 × 6 video')],
        ['M-RoPE 8 × 8 × 8', fill('mropeW', '8'), captionHas('mrope-streams', '4 × 8 × 8 video')],
        ['M-RoPE 16 text tokens before', fill('mropeTextBefore', '16'), captionHas('mrope-streams', 'for 16 text tokens')],
        ['M-RoPE 16 text tokens after', fill('mropeTextAfter', '16'), captionHas('mrope-streams', 'and 16 text tokens')],
        ['patch grid, dot product', select('patchMetric', 'dot'), captionHas('patch-grid', 'dot product of')],
      ];
      const sentence = Array.from({ length: 200 }, (_, i) => String.fromCharCode(97 + (i % 26))).join(' ');
      steps.push(
        ['a 400-character sentence (200 words)', fill('sentence', sentence), captionHas('permutation-lab', sentence.slice(0, 60))],
        [
          'shuffle it',
          Object.assign(() => page.click('[data-action="shuffle"]'), { undo: () => {} }),
          ['[data-figure="permutation-lab"]', 'Shuffled'],
        ],
        ['encoding RoPE', select('encoding', 'rope'), captionHas('permutation-lab', 'encoding RoPE')],
      );
      for (const [label, action, done] of steps) results.push(await measureBest(page, label, action, done));
      // A run in the Worker (the page only draws its curves): running it again is the same run from the start,
      // nothing to undo, so a run over the bound is measured again like the steps. The action returns once the
      // run has started (until then the status still reads "Trained ..."), seen by an observer in the page: a
      // short run can end before a poll would see it running.
      const run = (button, status) =>
        Object.assign(
          async () => {
            await page.evaluate((sel) => {
              const el = document.querySelector(sel);
              window.__runStarted = false;
              new MutationObserver((_, observer) => {
                if (el.textContent.startsWith('Trained')) return;
                window.__runStarted = true;
                observer.disconnect();
              }).observe(el, { childList: true, characterData: true, subtree: true });
            }, status);
            await page.click(`[data-action="${button}"]`);
            await page.waitForFunction(() => window.__runStarted);
          },
          { undo: () => {} },
        );
      // six toy transformers, at the default 2000 steps: the page asks the Worker for 40 points per curve
      // whatever the steps (sections.js), so the 20000 the control allows draws the same figures, with ten
      // times the Worker's work (some 100 s of CPU)
      const train = await measureBest(page, 'train six models', run('train', '[data-train-status]'), ['[data-train-status]', 'Trained six models']);
      results.push(train);
      // train short, test long in the Worker (15 models, 36 rows of results drawn as they come), at 8
      // tokens, 100 steps and 3 seeds: the page draws the same figure whatever the steps, the seeds (a mean
      // and a range per row and length) and the training length (four lengths on a log axis), while the
      // Worker's work grows with each (16 tokens, 8 seeds: 100 s of CPU)
      const long = [
        ['train short, test long at 8 tokens', select('lcLength', '8'), captionHas('long-context', 'asked at 16, 32, 64')],
        ['train short, test long, 100 steps', fill('lcSteps', '100'), captionHas('long-context', 'trained 100 steps')],
        ['train short, test long: run', run('train-long', '[data-long-status]'), ['[data-long-status]', 'Trained and tested']],
      ];
      for (const [label, action, done] of long) results.push(await measureBest(page, label, action, done));
      console.log(`# ${suite.engine}: ${await page.textContent('[data-long-status]')}`);
      const status = await page.textContent('[data-train-status]');
      const seconds = Number(/in ([\d.]+) s/.exec(status)[1]);
      console.log(`# ${suite.engine}: ${status}`);
      console.log(`# training: ${((1000 * seconds) / 6 / train.wallCalibration).toFixed(0)} calibrations a run (bound 400)`);
      for (const r of results)
        console.log(
          `# ${r.label}: longest task ${r.longest.cpu.toFixed(0)} ms of CPU (${r.longest.wall.toFixed(0)} ms wall), calibration ` +
            `${r.calibration.toFixed(1)} ms of CPU, ratio ${r.ratio.toFixed(1)}; Long Tasks API (wall, ms): [${r.longTasks.join(', ')}]`,
        );
      const worst = results.reduce((a, b) => (b.ratio > a.ratio ? b : a));
      console.log(
        `# ${suite.engine}: the longest task is ${worst.longest.cpu.toFixed(0)} ms of CPU (${worst.label}), ${worst.ratio.toFixed(1)} calibrations (bound ${MAX_RATIO}: ${BUDGET_MS} ms here)`,
      );
      await assertDefaultTraining(page, suite.engine);
      // 2000 steps of six models: 0.6 s a run on a quiet machine, 55 to 70 calibrations (under the whole
      // of npm test too); the bound is six times that (the Worker's wasm and the page's JavaScript slow down
      // differently under load)
      assert.ok((1000 * seconds) / 6 / train.wallCalibration <= 400, `${seconds} s for six runs: over 400 calibrations a run`);
      const over = results
        .filter((r) => r.ratio > MAX_RATIO)
        .map((r) => `${r.label}: ${r.longest.cpu.toFixed(0)} ms of CPU = ${r.ratio.toFixed(1)} × ${r.calibration.toFixed(1)} ms`);
      assert.deepEqual(over, []);
      assert.deepEqual(problems, { console: [], pageErrors: [], foreign: [] });
      await page.close();
    });
  },
  { only: ['chromium'] },
);
