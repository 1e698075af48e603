// trainToy: a toy transformer trained in the wasm core has to need positions. The targets are checked
// on the SIMD backend with the default seed; the scalar backend must train every one of those
// configurations to the same bits (every report equal, not merely close), checked on a shorter run: the
// two builds compile the same kernels, so equal bits over 100 steps of every configuration mean equal
// targets at 2000. The SIMD side of that comparison is the targets' own run, read at step 100 (step(100)
// then run() is the same run as run() at once: 'step(n) in pieces is run() at once'). Synchronous calls
// are refused when estimated past LIMITS.maxCallSeconds; run() trains asynchronously, in chunks, and can
// be cancelled; trained at one length, a model is tested at longer ones, with RoPE's scalings at test
// time or in a fine-tune (the extrapolation claims themselves, per seed, are checked in
// tests/js/longcontext.test.js, on the same models).
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { loadLab } from 'posenc/lab';
import { LIMITS } from '../../src/js/contract.js';

const [simd, scalar] = [await loadLab(), await loadLab({ simd: false })];

// Each configuration trained once to its target under SIMD (about 0.4 s each), shared by the tests.
const EARLY = 100; // the steps the scalar backend trains, compared with the SIMD run at that step
const RUNS = {
  none: { task: 'before' },
  sinusoidal: { task: 'before', encoding: 'sinusoidal' },
  learned: { task: 'before', encoding: 'learned' },
  rope: { task: 'before', encoding: 'rope' },
  alibi: { task: 'before', encoding: 'alibi' },
  t5: { task: 'before', encoding: 't5' },
  count: { task: 'count' },
  causal: { task: 'before', causal: true },
  causal1: { task: 'before', causal: true, layers: 1 },
};
const trained = new Map();
const at16 = (tr) => (tr.config.encoding === 'learned' ? null : tr.evaluate({ length: 16 }));
// run(simd, name): { report, at16 } at the target's 2000 steps, and `early`, the same at step EARLY.
// run(scalar, name): { report, at16 } after EARLY steps (trained to config.steps = EARLY by run()).
async function run(pe, name) {
  const key = `${pe.backend}/${name}`;
  if (!trained.has(key)) {
    let outcome;
    if (pe === simd) {
      const tr = pe.trainToy(RUNS[name]);
      const report = tr.step(EARLY);
      const early = { report, at16: at16(tr) };
      outcome = { report: await tr.run(), early };
      outcome.at16 = at16(tr);
      tr.dispose();
    } else {
      const tr = pe.trainToy({ ...RUNS[name], steps: EARLY });
      outcome = { report: await tr.run(), at16: at16(tr) };
      tr.dispose();
    }
    trained.set(key, outcome);
  }
  return trained.get(key);
}

// The largest model the limits allow, the one that took 459 ms a step on the scalar build.
const LARGEST = { task: 'copy', length: 32, dModel: 64, heads: 4, layers: 2, batch: 256, vocab: 64, steps: 1e6 };

// The targets on one backend: the scalar one trains to the same bits (see 'trainToy is deterministic').
{
  const pe = simd;
  describe(`trainToy targets (${pe.backend}, seed 0, 2000 steps)`, () => {
    test("'before' without positions stays at chance; with any encoding it is learned", async () => {
      const none = (await run(pe, 'none')).report;
      assert.equal(none.step, 2000);
      assert.ok(none.heldOutAccuracy <= 0.6, `none: ${none.heldOutAccuracy}`);
      assert.ok(none.loss > 0.6, `none: loss ${none.loss} (chance is ln 2 = 0.693)`);
      for (const encoding of ['sinusoidal', 'learned', 'rope', 'alibi', 't5']) {
        const r = (await run(pe, encoding)).report;
        assert.ok(r.heldOutAccuracy >= 0.95, `${encoding}: ${r.heldOutAccuracy}`);
      }
    });

    test("the order-free control ('count') is learned without positions", async () => {
      const r = (await run(pe, 'count')).report;
      assert.ok(r.heldOutAccuracy >= 0.95, `count: ${r.heldOutAccuracy}`);
    });

    test('a causal mask leaks order: two causal layers learn it without an encoding, one cannot', async () => {
      assert.ok((await run(pe, 'causal')).report.heldOutAccuracy >= 0.95);
      // one layer read at the last token is a softmax over the whole prefix: order-blind again
      assert.ok((await run(pe, 'causal1')).report.heldOutAccuracy <= 0.6);
    });

    test('longer sequences: ALiBi extrapolates, a learned table cannot be asked', async () => {
      const alibi = (await run(pe, 'alibi')).at16;
      assert.ok(alibi >= 0.95, `alibi at 16: ${alibi}`);
      assert.ok((await run(pe, 'sinusoidal')).at16 < alibi);
      const tr = pe.trainToy({ task: 'before', encoding: 'learned', steps: 10 });
      await tr.run();
      assert.throws(
        () => tr.evaluate({ length: 9 }),
        (e) => e instanceof RangeError && /learned/.test(e.message) && /8/.test(e.message),
      );
      assert.ok(tr.evaluate({ length: 6 }) >= 0 && tr.evaluate() === tr.step(0).heldOutAccuracy);
      tr.dispose();
    });
  });
}

for (const pe of [simd, scalar]) {
  describe(`trainToy's synchronous calls are bounded (${pe.backend})`, () => {
    test('a million steps of the largest model is refused at once, with what to do instead', () => {
      const tr = pe.trainToy(LARGEST);
      assert.throws(
        () => tr.step(1e6),
        (e) =>
          e instanceof RangeError &&
          /^posenc\.trainToy\.step: 1000000 training steps of this model would run for about \d+ s on this backend; a call may run for at most about 2 s \(LIMITS\.maxCallSeconds\): train at most \d+ steps per call, or await run\(\)/.test(
            e.message,
          ),
      );
      const most = Number(/at most (\d+) steps per call/.exec(assertThrowsMessage(() => tr.step(1e6)))[1]);
      assert.ok(most >= 1 && most < 20, `at most ${most} steps`);
      assert.throws(() => tr.step(most + 1), RangeError);
      assert.equal(tr.step(0).step, 0, 'nothing was trained');
      tr.dispose();
    });

    test('a step or an evaluation too large for one call says so', () => {
      const tr = pe.trainToy(LARGEST);
      assert.throws(
        () => tr.step(8, { length: 128 }),
        (e) =>
          e instanceof RangeError &&
          /8 training steps/.test(e.message) &&
          // one such step fits on SIMD (about 1.5 s), not on the scalar build
          (pe.backend === 'wasm-simd' ? /train at most 1 step per call/ : /train a smaller batch, dModel or length/).test(e.message),
      );
      const small = pe.trainToy({ task: 'before', length: 16 });
      assert.equal(small.step(50).step, 50, 'the usual sizes pass');
      assert.ok(small.evaluate({ length: LIMITS.toyMaxEvalLength }) >= 0);
      small.dispose();
      tr.dispose();
    });
  });
}

function assertThrowsMessage(fn) {
  try {
    fn();
  } catch (e) {
    return e.message;
  }
  throw new Error('did not throw');
}

describe('trainToy.run is asynchronous and cancellable', () => {
  test('it resolves to the report of training the same steps synchronously, after chunks with progress', async () => {
    const a = simd.trainToy({ task: 'before', encoding: 'rope', steps: 400 });
    const b = simd.trainToy({ task: 'before', encoding: 'rope', steps: 400 });
    let ticked = false;
    setImmediate(() => (ticked = true));
    const progress = [];
    const promise = a.run({ onProgress: (r) => progress.push({ ...r, ticked }) });
    assert.ok(promise instanceof Promise);
    const report = await promise;
    assert.deepEqual(report, b.step(400));
    assert.ok(progress.length >= 3, `${progress.length} chunks`);
    assert.deepEqual({ ...progress.at(-1), ticked: undefined }, { ...report, ticked: undefined });
    for (let i = 1; i < progress.length; i++) assert.ok(progress[i].step > progress[i - 1].step);
    assert.equal(progress[0].ticked, false, 'the first chunk runs at once');
    assert.equal(progress.at(-1).ticked, true, 'other tasks ran between chunks');
    assert.deepEqual(await a.run(), a.step(0), 'a finished run trains no more');
    a.dispose();
    b.dispose();
  });

  test('without setImmediate (browsers, Workers) it yields through a MessageChannel', { timeout: 60000 }, async () => {
    const { setImmediate: saved } = globalThis;
    globalThis.setImmediate = undefined;
    try {
      const tr = simd.trainToy({ task: 'before', steps: 200 });
      let ticked = false;
      setTimeout(() => (ticked = true), 0);
      let chunks = 0;
      const report = await tr.run({ onProgress: () => chunks++ });
      assert.ok(chunks >= 2 && ticked, `${chunks} chunks, timer ran: ${ticked}`);
      assert.equal(report.step, 200);
      tr.dispose();
    } finally {
      globalThis.setImmediate = saved;
    }
  });

  test('an aborted signal rejects with its reason: at once, or before the next chunk', async () => {
    const tr = simd.trainToy(LARGEST);
    const aborted = AbortSignal.abort();
    await assert.rejects(tr.run({ signal: aborted }), (e) => e === aborted.reason && e.name === 'AbortError');
    assert.equal(tr.step(0).step, 0);
    tr.dispose();

    // 400 steps: several chunks (each about CHUNK_SECONDS of work, 64 steps of this model)
    const small = simd.trainToy({ task: 'before', steps: 400 });
    const controller = new AbortController();
    let first;
    await assert.rejects(
      small.run({
        signal: controller.signal,
        onProgress: (r) => {
          first ??= r.step;
          controller.abort(new Error('enough'));
        },
      }),
      /enough/,
    );
    assert.ok(first > 0 && first < 400);
    assert.equal(small.step(0).step, first, 'no chunk after the abort');
    const timer = new AbortController();
    setTimeout(() => timer.abort(), 0);
    await assert.rejects(small.run({ signal: timer.signal }), (e) => e.name === 'AbortError');
    assert.ok(small.step(0).step < 400);
    assert.equal((await small.run()).step, 400, 'and it can go on');
    small.dispose();
  });

  test('disposed mid-run, it rejects with a TypeError; bad options and a second run are refused', async () => {
    // 400 steps: several chunks, so that the first run is still running when the second starts
    const tr = simd.trainToy({ task: 'before', steps: 400 });
    await assert.rejects(
      tr.run({ onProgress: () => tr.dispose() }),
      (e) => e instanceof TypeError && /^posenc\.trainToy\.run: this trainer was disposed/.test(e.message),
    );
    const t = simd.trainToy({ task: 'before', steps: 400 });
    await assert.rejects(t.run({ signal: {} }), (e) => e instanceof TypeError && /signal must be an AbortSignal, got an object/.test(e.message));
    await assert.rejects(t.run({ onProgress: 5 }), (e) => e instanceof TypeError && /onProgress must be a function, got 5/.test(e.message));
    await assert.rejects(t.run({ onprogress: () => {} }), (e) => e instanceof TypeError && /did you mean onProgress/.test(e.message));
    const first = t.run();
    await assert.rejects(t.run(), (e) => e instanceof TypeError && /already running/.test(e.message));
    await first;
    await assert.rejects(
      t.run({
        onProgress: () => {
          throw new Error('from onProgress');
        },
      }),
      /from onProgress/,
    );
    assert.equal((await t.run()).step, 400, 'still usable');
    t.dispose();
  });
});

describe('trainToy: train short, test long', () => {
  test("scaling is RoPE's, checked as ropeFrequencies checks it; other encodings are a TypeError", async () => {
    const sin = simd.trainToy({ task: 'before', encoding: 'sinusoidal', steps: 0 });
    for (const call of [
      () => sin.evaluate({ length: 16, scaling: { type: 'linear', factor: 2 } }),
      () => sin.step(1, { scaling: { type: 'linear', factor: 2 } }),
    ])
      assert.throws(call, (e) => e instanceof TypeError && /'rope' encoding only; this trainer's encoding is 'sinusoidal'/.test(e.message));
    sin.dispose();
    const rope = simd.trainToy({ task: 'before', encoding: 'rope', length: 16, steps: 0 });
    assert.throws(
      () => rope.evaluate({ length: 32, scaling: { type: 'linear', factor: 0 } }),
      (e) => e instanceof RangeError && /^posenc\.trainToy\.evaluate: scaling\.factor/.test(e.message),
    );
    assert.throws(
      () => rope.step(1, { length: 32, scaling: { type: 'stretch', factor: 2 } }),
      (e) => e instanceof RangeError && /^posenc\.trainToy\.step: scaling\.type must be one of/.test(e.message),
    );
    assert.throws(
      () => rope.evaluate({ scaling: 2 }),
      (e) => e instanceof TypeError && /scaling must be an object, got 2/.test(e.message),
    );
    assert.throws(() => rope.evaluate({ length: 129 }), RangeError);
    assert.equal(rope.step(0).step, 0);
    rope.dispose();
  });

  test('a scaling that changes nothing is no scaling; the defaults are the training length and the length evaluated', () => {
    const tr = simd.trainToy({ task: 'before', encoding: 'rope', length: 16, steps: 200 });
    tr.step(200);
    for (const length of [16, 64]) {
      const plain = tr.evaluate({ length });
      for (const scaling of [{ type: 'linear', factor: 1 }, { type: 'none' }, { rope_type: 'default' }, null])
        assert.equal(tr.evaluate({ length, scaling }), plain, JSON.stringify(scaling));
    }
    const at = (length, scaling) => tr.evaluate({ length, scaling });
    const yarn = at(64, { type: 'yarn', factor: 4 });
    assert.equal(yarn, at(64, { type: 'yarn', factor: 4, originalMaxPositions: 16 }));
    assert.notEqual(yarn, at(64, { type: 'yarn', factor: 4, originalMaxPositions: 64 }));
    // dynamic NTK at 4x the original length with factor 1 is static NTK with factor 4
    const dynamic = at(64, { type: 'dynamic', factor: 1 });
    assert.equal(dynamic, at(64, { type: 'ntk', factor: 4 }));
    assert.equal(dynamic, at(64, { type: 'dynamic', factor: 1, seqLength: 64 }));
    assert.equal(at(64, { rope_type: 'linear', factor: 4 }), at(64, { type: 'linear', factor: 4 }));
    tr.dispose();
  });

  test('fine-tuning at a longer length: the report is measured there; a learned table cannot', () => {
    const tr = simd.trainToy({ task: 'before', encoding: 'rope', length: 16, steps: 100 });
    tr.step(100);
    const copy = tr.clone();
    const scaling = { type: 'linear', factor: 2 };
    const r = tr.step(20, { length: 32, scaling });
    assert.equal(r.step, 120);
    assert.equal(r.heldOutAccuracy, tr.evaluate({ length: 32, scaling }));
    assert.deepEqual(copy.step(20, { length: 32, scaling }), r, 'a clone trains to the same bits, on its own');
    copy.dispose();
    assert.throws(
      () => copy.clone(),
      (e) => e instanceof TypeError && /disposed/.test(e.message),
    );
    tr.dispose();
    const learned = simd.trainToy({ task: 'before', encoding: 'learned', length: 16, steps: 0 });
    assert.throws(
      () => learned.step(1, { length: 17 }),
      (e) => e instanceof RangeError && /^posenc\.trainToy\.step: length 17 is longer than the learned table's 16 positions/.test(e.message),
    );
    learned.dispose();
  });
  // Trained at 16 tokens and tested at 64 (ALiBi extrapolates, RoPE does not, RoPE with position
  // interpolation does), per seed: tests/js/longcontext.test.js, which trains those very models.
});

describe('trainToy baselines', () => {
  // E[max count] / length for `length` tokens uniform over `vocab`, as an exact rational: the number of
  // sequences whose counts are all <= m, for each m, by a dynamic program over the vocabulary in BigInt.
  function orderBlind(length, vocab) {
    const choose = [[1n]]; // Pascal's triangle
    for (let n = 1; n <= length; n++)
      choose.push(Array.from({ length: n + 1 }, (_, k) => (k === 0 || k === n ? 1n : choose[n - 1][k - 1] + choose[n - 1][k])));
    const atMost = (m) => {
      let ways = [1n, ...Array(length).fill(0n)]; // ways[n]: sequences of n positions over the values so far
      for (let v = 0; v < vocab; v++) {
        const next = Array(length + 1).fill(0n);
        for (let n = 0; n <= length; n++) for (let c = 0; c <= Math.min(m, n); c++) next[n] += ways[n - c] * choose[n][c];
        ways = next;
      }
      return ways[length];
    };
    let sum = 0n;
    for (let m = 1; m <= length; m++) sum += BigInt(m) * (atMost(m) - atMost(m - 1));
    const total = BigInt(vocab) ** BigInt(length) * BigInt(length);
    return Number((sum * 10n ** 18n) / total) / 1e18;
  }

  test('chance and the order-blind ceiling of each task, exact', () => {
    const of = (options, length) => {
      const tr = simd.trainToy({ steps: 0, ...options });
      const b = tr.baseline(length === undefined ? undefined : { length });
      tr.dispose();
      return b;
    };
    assert.deepEqual(of({ task: 'before' }), { chanceAccuracy: 0.5, orderBlindAccuracy: 0.5 });
    assert.deepEqual(of({ task: 'count' }, 100), { chanceAccuracy: 0.2, orderBlindAccuracy: 1 });
    for (const [length, vocab] of [
      [8, 8],
      [16, 8],
      [32, 64],
      [40, 16],
      [5, 4],
    ]) {
      const b = of({ task: 'copy', vocab, length: Math.min(length, LIMITS.toyMaxLength) }, length);
      assert.equal(b.chanceAccuracy, 1 / vocab);
      assert.ok(Math.abs(b.orderBlindAccuracy - orderBlind(length, vocab)) < 1e-12, `${length} of ${vocab}: ${b.orderBlindAccuracy}`);
    }
    assert.ok(Math.abs(of({ task: 'copy' }).orderBlindAccuracy - 0.3246541) < 1e-7, 'about 1/3 at the defaults');
  });

  test("'copy' without positions learns up to the order-blind ceiling, not past it", async () => {
    const tr = simd.trainToy({ task: 'copy' });
    const { heldOutAccuracy } = await tr.run();
    const { chanceAccuracy, orderBlindAccuracy: p } = tr.baseline();
    const sd = Math.sqrt((p * (1 - p)) / 256);
    assert.ok(heldOutAccuracy > 2 * chanceAccuracy && heldOutAccuracy <= p + 3 * sd, `${heldOutAccuracy} (ceiling ${p})`);
    assert.throws(() => tr.baseline({ length: 3 }), RangeError);
    assert.throws(() => tr.baseline({ length: '8' }), TypeError);
    tr.dispose();
  });
});

describe('trainToy is deterministic', () => {
  test('both backends train every configuration of the targets to the same bits', async () => {
    for (const name of Object.keys(RUNS)) {
      const { early } = await run(simd, name);
      assert.equal(early.report.step, EARLY);
      assert.deepEqual(await run(scalar, name), early, name);
    }
  });

  test('both backends fine-tune and evaluate with a RoPE scaling to the same bits', () => {
    const outcome = (pe) => {
      const tr = pe.trainToy({ task: 'copy', encoding: 'rope', length: 12, steps: 0, seed: 5 });
      tr.step(60);
      const tuned = tr.step(20, { length: 24, scaling: { type: 'yarn', factor: 2 } });
      const at = ['linear', 'ntk', 'dynamic', 'yarn', 'llama3'].map((type) => tr.evaluate({ length: 48, scaling: { type, factor: 4 } }));
      tr.dispose();
      return { tuned, at };
    };
    assert.deepEqual(outcome(scalar), outcome(simd));
  });

  test('the same seed repeats a run; another seed does not', async () => {
    const report = async (seed) => {
      const tr = simd.trainToy({ task: 'copy', encoding: 'rope', steps: 100, seed });
      const r = await tr.run();
      tr.dispose();
      return r;
    };
    const seven = await report(7);
    assert.deepEqual(await report(7), seven);
    assert.notDeepEqual(await report(8), seven);
  });

  test('step(n) in pieces is run() at once', async () => {
    const a = simd.trainToy({ task: 'before', encoding: 't5', steps: 60 });
    const b = simd.trainToy({ task: 'before', encoding: 't5', steps: 60 });
    for (let i = 0; i < 6; i++) a.step(10);
    assert.deepEqual(a.step(0), await b.run());
    assert.equal((await b.run()).step, 60, 'run() past steps trains no more');
    a.dispose();
    b.dispose();
  });
});

describe('trainToy API', () => {
  test('config has every default filled in', () => {
    const tr = simd.trainToy({ task: 'copy' });
    assert.deepEqual(tr.config, {
      task: 'copy',
      encoding: 'none',
      steps: 2000,
      seed: 0,
      length: 8,
      dModel: 16,
      heads: 2,
      layers: 2,
      batch: 16,
      vocab: 8,
      causal: false,
      learningRate: 0.003,
    });
    const r = tr.step(0);
    assert.equal(r.step, 0);
    assert.ok(r.heldOutAccuracy >= 0 && r.heldOutAccuracy <= 1);
    tr.dispose();
  });

  test('bad options are TypeErrors or RangeErrors naming them', () => {
    assert.throws(
      () => simd.trainToy({}),
      (e) => e instanceof TypeError && /task must be one of 'before', 'copy', 'count', got undefined/.test(e.message),
    );
    assert.throws(
      () => simd.trainToy({ task: 'sort' }),
      (e) => e instanceof RangeError && /task/.test(e.message),
    );
    assert.throws(
      () => simd.trainToy({ task: 'before', encoding: 'xpos' }),
      (e) => e instanceof RangeError && /encoding/.test(e.message),
    );
    assert.throws(
      () => simd.trainToy({ task: 'before', heads: 3 }),
      (e) => e instanceof RangeError && /dModel must be a multiple of 2 \* heads = 6/.test(e.message),
    );
    assert.throws(
      () => simd.trainToy({ task: 'before', lenght: 8 }),
      (e) => e instanceof TypeError && /did you mean length/.test(e.message),
    );
    assert.throws(() => simd.trainToy({ task: 'before', learningRate: 0 }), RangeError);
    const tr = simd.trainToy({ task: 'before' });
    assert.throws(() => tr.step(-1), RangeError);
    assert.throws(() => tr.step(1.5), RangeError);
    assert.throws(
      () => tr.step(1, { lenght: 9 }),
      (e) => e instanceof TypeError && /did you mean length/.test(e.message),
    );
    assert.throws(() => tr.evaluate({ length: 129 }), RangeError);
    assert.throws(() => tr.evaluate({ size: 9 }), TypeError);
    tr.dispose();
  });

  // (memory.test.js runs trainToy among its 10,000 calls with malloc's own count)
  test('dispose frees the trainer; a disposed trainer is a TypeError; memory stays flat', async () => {
    const heap = () => simd._mod.HEAPU8.length;
    const tr = simd.trainToy({ task: 'before' });
    tr.step(1);
    tr.dispose();
    tr.dispose();
    assert.ok(tr.disposed);
    assert.throws(
      () => tr.step(1),
      (e) => e instanceof TypeError && /disposed/.test(e.message),
    );
    assert.throws(() => tr.evaluate(), TypeError);
    assert.throws(() => tr.baseline(), TypeError);
    await assert.rejects(tr.run(), TypeError);
    const before = heap();
    for (let i = 0; i < 50; i++) {
      const t = simd.trainToy({ task: 'copy', encoding: i % 2 ? 'learned' : 'rope', length: 12, steps: 3 });
      t.step(2);
      await t.run();
      const c = t.clone();
      c.evaluate({ length: 12, scaling: i % 2 ? undefined : { type: 'yarn', factor: 2 } });
      c.baseline({ length: 40 });
      c.dispose();
      t[Symbol.dispose ?? Symbol.for('Symbol.dispose')]();
    }
    assert.equal(heap(), before);
  });
});
