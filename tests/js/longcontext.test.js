// Train short, test long (web/figures/longcontext.js: the demo page's experiment, the notebooks' and
// scripts/experiments/train-short-test-long.mjs's): the experiment is exactly trainToy's calls made by
// hand, its claims hold over several seeds with margins, and the figure's takeaway is read off the
// numbers it is given.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { loadLab } from 'posenc/lab';
import { LONG_ROWS, longContext, longContextRuns, summarise, trainShortTestLong } from '../../web/figures/longcontext.js';
import { byHand, sortResults } from './longcontext-reference.js';

const lab = await loadLab();

describe('train short, test long', () => {
  test('every row is trainToy trained, cloned, fine-tuned and evaluated by hand, to the same bits', async () => {
    // one seed past the defaults, every kind of row, tiny models: the bookkeeping is what is checked
    const options = { length: 8, steps: 60, seeds: 1, firstSeed: 7, tuneSteps: 20, rows: ['sinusoidal', 'rope+ntk', 'ft', 'ft+yarn'] };
    const { results, lengths } = trainShortTestLong(lab, options);
    assert.deepEqual(lengths, [8, 16, 32, 64]);
    assert.deepEqual(sortResults(results), await byHand(lab, options));
    assert.ok(!results.some((r) => r.key === 'ft+yarn' && r.length === 8), 'a model fine-tuned with a scaling is not asked unscaled');
  });

  test('progress counts every training step; the generator can be left between any two events', () => {
    // asked at 2× only: the evaluations at longer lengths are not what is counted here
    const options = { length: 8, steps: 100, seeds: 3, tuneSteps: 50, rows: ['none', 'ft'], multiples: [2] };
    const events = [...longContextRuns(lab, options)];
    const progress = events.filter((e) => e.type === 'progress');
    assert.equal(progress.at(-1).done, progress.at(-1).total);
    assert.equal(progress.at(-1).total, 3 * (100 + 100 + 50)); // none, rope, rope's fine-tune: 3 seeds
    assert.deepEqual(
      progress.map((e) => e.done),
      [...progress.map((e) => e.done)].sort((a, b) => a - b),
    );
    assert.equal(events.filter((e) => e.type === 'result').length, 6);
    // the status line names the models as the figure's legend does ('none' trains the 'no positions' row)
    const labels = new Set(progress.map((e) => e.label.split(',')[0]));
    assert.deepEqual([...labels], ['no positions', 'RoPE', 'RoPE fine-tuned']);
    const it = longContextRuns(lab, options);
    it.next();
    assert.deepEqual(it.return('stopped'), { value: 'stopped', done: true }); // the finally blocks free the models
    assert.throws(
      () => trainShortTestLong(lab, { length: 32 }),
      (e) => e instanceof RangeError && /^longContext: length/.test(e.message),
    );
    assert.throws(
      () => trainShortTestLong(lab, { rows: ['learned'] }),
      (e) => e instanceof RangeError && /unknown row 'learned'/.test(e.message),
    );
  });

  // 'before' at 16 tokens, 500 steps (the page's default), seeds 0-2, asked at 64 (4×).
  test('at 4× the training length ALiBi and RoPE with PI or YaRN beat plain RoPE and sinusoidal; no positions stays at its baseline', () => {
    const options = { length: 16, steps: 500, seeds: 3, rows: ['none', 'sinusoidal', 'rope', 'alibi', 'rope+linear', 'rope+yarn'], multiples: [4] };
    const { results } = trainShortTestLong(lab, options);
    const at = (key, length) => summarise(results).find((s) => s.key === key && s.length === length);
    const blind = longContext(lab, { ...options, results }).caption;
    const why = summarise(results)
      .map((s) => `${s.key}@${s.length} ${s.mean.toFixed(3)} [${s.min}, ${s.max}]`)
      .join('; ');
    for (const key of ['sinusoidal', 'rope', 'alibi', 'rope+linear', 'rope+yarn']) assert.ok(at(key, 16).min >= 0.85, `${key} learns at 16: ${why}`);
    const far = (key) => at(key, 64);
    for (const good of ['alibi', 'rope+linear', 'rope+yarn'])
      for (const bad of ['rope', 'sinusoidal']) {
        assert.ok(far(good).mean >= far(bad).mean + 0.2, `${good} over ${bad} at 64: ${why}`);
        assert.ok(far(good).min > far(bad).max, `${good}'s worst seed over ${bad}'s best at 64: ${why}`);
      }
    // and for each seed on its own: ALiBi extrapolates, RoPE does not, RoPE with position interpolation
    // does (the margins held for seeds 0-4: ALiBi at 64 0.77-0.96, RoPE 0.24-0.55, RoPE + PI 0.94-1)
    for (let seed = 0; seed < 3; seed++) {
      const of = (key) => results.find((r) => r.key === key && r.seed === seed && r.length === 64).accuracy;
      const [a, r, pi] = [of('alibi'), of('rope'), of('rope+linear')];
      const perSeed = `seed ${seed}: alibi ${a}, rope ${r}, rope + PI ${pi}`;
      assert.ok(a >= 0.75 && a >= r + 0.2, perSeed);
      assert.ok(r <= 0.6, perSeed);
      assert.ok(pi >= 0.9 && pi >= r + 0.3, perSeed);
    }
    const baseline = lab.trainToy({ task: 'before', steps: 0 });
    const orderBlind = baseline.baseline({ length: 64 }).orderBlindAccuracy;
    baseline.dispose();
    assert.equal(orderBlind, 0.5);
    for (const length of [16, 64]) assert.ok(Math.abs(at('none', length).mean - orderBlind) <= 0.06, `none at ${length}: ${why}`);
    assert.match(blind, /order-blind baseline \(50%\)/);
  });
});

describe('the figure', () => {
  const options = { length: 8, steps: 100, seeds: 3, tuneSteps: 50 };
  // Made-up accuracies: the takeaway must follow them, whatever they say.
  const made = (accuracyOf) =>
    LONG_ROWS.flatMap((r) =>
      [0, 1, 2].flatMap((seed) =>
        [8, 16, 32, 64]
          .filter((length) => !(length === 8 && r.fineTune && r.fineTune !== 'none'))
          .map((length) => ({ key: r.key, seed, length, accuracy: accuracyOf(r.key, length, seed) })),
      ),
    );

  test('the takeaway is read off the numbers at 4× the training length', () => {
    const spec = longContext(lab, {
      ...options,
      results: made((key, length) => (length < 32 ? 1 : key === 't5' ? 0.9 + 0.01 : key === 'rope' ? 0.52 : 0.7)),
    });
    assert.equal(spec.takeaway, 'At 32 tokens (4× the training length): T5 91% stays above 85%; RoPE 52% is near the order-blind 50%.');
    const other = longContext(lab, {
      ...options,
      results: made((key, length, seed) => (length < 32 ? 1 : key === 'alibi' ? 0.88 + seed / 100 : 0.55)),
    });
    assert.match(
      other.takeaway,
      /^At 32 tokens \(4× the training length\): ALiBi 89% stays above 85%; sinusoidal 55%, RoPE 55%, T5 55% and 7 more are near the order-blind 50%\.$/,
    );
    const FAR = { alibi: 0.87, 'rope+linear': 0.96, 'ft+linear': 0.99, 'ft+yarn': 0.98, rope: 0.46, sinusoidal: 0.44 };
    const groups = longContext(lab, { ...options, results: made((key, length) => (length < 32 ? 1 : (FAR[key] ?? 0.7))) });
    assert.equal(
      groups.takeaway,
      'At 32 tokens (4× the training length): ALiBi 87%, RoPE + PI (linear) 96%, fine-tuned + linear 99% and 1 more stay above 85%; sinusoidal 44%, RoPE 46% are near the order-blind 50%.',
      'the best of each group first',
    );
    const worst = longContext(lab, { ...options, results: made((key, length) => (length < 32 || /ft|linear/.test(key) ? 1 : 0.5)) });
    assert.ok(worst.takeaway.length <= 200, worst.takeaway);
    assert.match(worst.takeaway, /stay above 85%; .* and \d more are near the order-blind 50%\.$/);
    assert.match(other.caption, /Mean accuracy at 8\/16\/32\/64 tokens: .*ALiBi 100\/100\/89\/89% \(min 100\/100\/88\/88, max 100\/100\/90\/90\)/);
    assert.equal(other.csv.length, made(() => 0).length);
    assert.equal(other.panels.length, 3);
  });

  test('before training, the axes and a prompt; while training, no conclusion yet', () => {
    const empty = longContext(lab, { ...options, results: [] });
    assert.match(empty.takeaway, /^Press Train/);
    assert.equal(empty.panels.length, 3);
    const partial = longContext(lab, { ...options, results: made(() => 1).filter((r) => r.key === 'none') });
    assert.equal(partial.takeaway, 'Training…');
    assert.equal(partial.panels.length, 1);
  });
});
