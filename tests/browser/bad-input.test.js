// Bad input on the page: a link with bad values, out-of-range numbers, an empty or repetitive sentence,
// and every value of every control: each gets a visible note or message and the page keeps working, with
// no uncaught error.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { inEachEngine, openPage, pageAtDefaults } from './server.js';

// Gives several controls one value each, at once, as a reader would (the value typed or picked, then its
// input and change events), then waits until the page has taken every one (its redraw runs right after the
// URL is written) and has drawn it (no change to the document for 150 ms: figures draw in tasks of their
// own after a change). One call into the page per round.
const setAtOnce = (page, pairs) =>
  page.evaluate(async (round) => {
    const sleep = () => new Promise((r) => setTimeout(r, 50));
    const els = round.map(([n, v]) => [n, v, document.querySelector(`[data-control="${n}"]`)]);
    const taken = ([n, , el]) => {
      const v = new URLSearchParams(location.search).get(n);
      return v === el.value || (v === null && el.value === el.defaultValue);
    };
    let changed = 0;
    const watch = new MutationObserver(() => changed++);
    watch.observe(document.body, { subtree: true, childList: true, attributes: true, characterData: true });
    for (const [, v, el] of els) {
      el.focus();
      if (el.tagName === 'SELECT') el.value = v;
      else Object.getOwnPropertyDescriptor(Object.getPrototypeOf(el), 'value').set.call(el, v); // the native setter, as typing
      el.dispatchEvent(new Event('input', { bubbles: true }));
      el.dispatchEvent(new Event('change', { bubbles: true }));
    }
    const t0 = performance.now();
    const late = () => performance.now() - t0 > 30000;
    for (let waiting = els; waiting.length; waiting = waiting.filter((e) => !taken(e))) {
      if (late()) throw new Error(`${waiting.map(([n, v]) => `${n} = "${v}"`).join(', ')} not taken in 30 s`);
      await sleep();
    }
    for (let quiet = 0, seen = -1; quiet < 3; quiet = changed === seen ? quiet + 1 : 0, seen = changed) {
      if (late()) throw new Error(`the page still changes 30 s after ${round.map(([n, v]) => `${n} = "${v}"`).join(', ')}`);
      await sleep();
    }
    watch.disconnect();
  }, pairs);
const noErrors = (problems) => assert.deepEqual({ console: problems.console, pageErrors: problems.pageErrors }, { console: [], pageErrors: [] });
const caption = (page, id) => page.textContent(`[data-figure="${id}"] figcaption`);
const labText = (page) => page.textContent('[data-figure="permutation-lab"]');

inEachEngine(
  'bad input',
  (suite) => {
    // One page at the defaults for the tests that start there, in this order: the number fields, the
    // sentence, then every control (which leaves the page anywhere).
    let page;
    let problems;
    pageAtDefaults(suite, (p) => ({ page, problems } = p));

    test('bad URL values fall back to defaults with a visible note; every figure still renders', async () => {
      const { page, problems } = await openPage(
        suite.browser,
        `${suite.server.url}?encoding=bogus&layout=zzz&length=abc&dModel=-5&perm=9,9,x&alibiSymmetric=1&scrub=abc&t5Buckets=128&t5MaxDistance=50`,
      );
      await page.waitForSelector('[data-figure="distinguishability"][data-rendered="true"]', { timeout: 60000 });
      noErrors(problems);
      const note = await page.textContent('[data-url-note]');
      assert.match(note, /encoding/);
      assert.match(note, /layout/);
      assert.match(note, /length/);
      assert.match(note, /scrub "abc"/); // the position slider's value too
      assert.match(note, /t5MaxDistance "50" \(it must be greater than 128 buckets \/ 2 = 64\)/); // a minimum set by another field
      assert.equal(await page.inputValue('[data-control="t5MaxDistance"]'), '65');
      assert.ok(await page.isVisible('[data-url-note]'));
      assert.equal(await page.inputValue('[data-control="layout"]'), 'interleaved');
      assert.equal(await page.inputValue('[data-control="encoding"]'), 'none');
      assert.match(await page.textContent('[data-status]'), /Ready/);
      const empty = await page.$$eval('[data-figure]', (els) => els.filter((e) => e.dataset.rendered !== 'true').map((e) => e.dataset.figure));
      assert.deepEqual(
        empty.filter((id) => id !== 'performance'),
        [],
      );
      assert.match(await page.textContent('[data-figure="permutation-lab"]'), /Shuffled/);
      await page.close();
    });

    test('"The" and "the" are one word: swapping them is no change', async () => {
      const { page } = await openPage(suite.browser, `${suite.server.url}?encoding=sinusoidal&perm=4,1,2,3,0,5`);
      const text = await labText(page);
      assert.match(text, /same sentence/i);
      assert.doesNotMatch(text, /order is visible/);
      // and Shuffle never picks such a permutation
      for (let i = 0; i < 8; i++) {
        await page.click('[data-action="shuffle"]');
        await page.waitForFunction(() => /Shuffled/.test(document.querySelector('[data-figure="permutation-lab"]').textContent));
        assert.doesNotMatch(await labText(page), /same sentence/i);
      }
      await page.close();
    });

    test('number fields show their clamped value and why', async () => {
      const set = async (control, value) => {
        await page.fill(`[data-control="${control}"]`, value);
        await page.dispatchEvent(`[data-control="${control}"]`, 'change');
      };
      await set('length', '0');
      await page.waitForFunction(() => /\b1 position\b/.test(document.querySelector('[data-figure="sinusoidal-heatmap"] figcaption').textContent));
      assert.equal(await page.inputValue('[data-control="length"]'), '1');
      assert.match(await page.textContent('[data-note-for="length"]'), /minimum.*1/i);
      assert.doesNotMatch(await caption(page, 'sinusoidal-heatmap'), /\b1 positions/);
      await set('length', '1e9');
      await page.waitForFunction(() => document.querySelector('[data-control="length"]').value === '4096');
      assert.match(await page.textContent('[data-note-for="length"]'), /maximum.*4096/i);
      await set('length', '');
      await page.waitForFunction(() => document.querySelector('[data-control="length"]').value === '500');
      assert.match(await page.textContent('[data-note-for="length"]'), /default/i);
      await set('length', '300');
      await page.waitForFunction(() => document.querySelector('[data-note-for="length"]').textContent === '');
      // a minimum that follows another field: T5's maximum distance must pass the buckets that hold one
      // distance each (half the buckets, causal), so more buckets raise it, and the figure draws
      await set('t5MaxDistance', '21');
      await set('t5Buckets', '128');
      await page.waitForFunction(() => document.querySelector('[data-control="t5MaxDistance"]').value === '65');
      assert.match(await page.textContent('[data-note-for="t5MaxDistance"]'), /greater than 128 buckets \/ 2 = 64/);
      await page.waitForFunction(() => /maxDistance 65\b/.test(document.querySelector('[data-figure="t5-buckets"] figcaption').textContent));
      assert.doesNotMatch(await caption(page, 't5-buckets'), /Error/);
      await set('t5Buckets', '32');
      await set('t5MaxDistance', '128');
      await page.waitForFunction(() => /maxDistance 128\b/.test(document.querySelector('[data-figure="t5-buckets"] figcaption').textContent));
      noErrors(problems);
    });

    test('a whitespace-only sentence: a message, no uncaught error from any control', async () => {
      await page.fill('[data-control="sentence"]', '   ');
      await page.click('[data-action="shuffle"]');
      await page.click('[data-action="reverse"]');
      await page.waitForFunction(() => /at least one word/.test(document.querySelector('[data-figure="permutation-lab"]').textContent));
      await page.fill('[data-control="sentence"]', 'the The');
      await page.click('[data-action="shuffle"]');
      await page.waitForFunction(() => /same sentence|only one order/i.test(document.querySelector('[data-figure="permutation-lab"]').textContent));
      noErrors(problems);
    });

    test('degenerate sentences: an empty one gets a message in every figure that reads it; one word or one repeated word has only one order', async () => {
      await page.fill('[data-control="sentence"]', '');
      await page.waitForFunction(() => /at least one word/.test(document.querySelector('[data-figure="score-terms"]').textContent));
      assert.doesNotMatch(await page.textContent('[data-figure="score-terms"]'), /Error:|posenc\./);
      await page.waitForFunction(() => /at least one word/.test(document.querySelector('[data-figure="attention-recap"]').textContent));
      // the query menu holds no word of an earlier sentence
      assert.deepEqual(await page.$$eval('[data-control="recapQuery"] option', (os) => os.map((o) => o.textContent)), []);
      for (const sentence of ['I', 'a a a a']) {
        await page.fill('[data-control="sentence"]', sentence);
        await page.click('[data-action="shuffle"]');
        await page.waitForFunction((s) => document.querySelector('[data-figure="permutation-lab"]').textContent.includes(`Original: ${s}`), sentence);
        await page.waitForFunction(() => /only one order/.test(document.querySelector('[data-figure="permutation-lab"]').textContent));
        const text = await labText(page);
        // one message: no "shuffle again" next to "only one order", no word about cased words it does not have
        assert.doesNotMatch(text, /shuffle again/i, text);
        assert.doesNotMatch(text, /"The" and "the"/, text);
        assert.equal(
          await page.$$eval('[data-figure="permutation-lab"] p', (ps) => ps.filter((p) => /only one order/.test(p.textContent)).length),
          1,
          text,
        );
      }
      await page.fill('[data-control="sentence"]', 'The cat sat on the mat');
      await page.waitForFunction(() => document.querySelectorAll('[data-control="recapQuery"] option').length === 6);
      noErrors(problems);
    });

    test('no uncaught error is reachable from any control', async () => {
      const controls = await page.$$eval('[data-control]', (els) =>
        els.map((e) => ({
          name: e.dataset.control,
          type: e.type,
          options: e.tagName === 'SELECT' ? [...e.options].filter((o) => !o.disabled).map((o) => o.value) : [],
        })),
      );
      const tries = { number: ['', '-99999999', '99999999', '0.5', '1e-9'], range: ['0', '4095'], text: ['', '   ', '🙂 ,,, !! «»'] };
      // Round r gives every control its r-th value (those with fewer values are done): the figures of a
      // form redraw once a round, with a new value of each of its controls, rather than once a value.
      const lists = controls.map((c) => [c.name, c.options.length ? c.options : (tries[c.type] ?? [])]);
      const rounds = Math.max(...lists.map(([, vs]) => vs.length));
      for (let r = 0; r < rounds; r++)
        await setAtOnce(
          page,
          lists.filter(([, vs]) => r < vs.length).map(([n, vs]) => [n, vs[r]]),
        );
      for (const v of ['[]', 'null', '{"rope_scaling": 5}', '{"head_dim": 7}', '{"head_dim": 64, "rope_scaling": {"rope_type": "warp"}}'])
        await page.fill('[data-config-json]', v);
      await page.click('[data-action="shuffle"]');
      await page.click('[data-action="reverse"]');
      await page.click('[data-action="matshow"]');
      // until the matshow example is drawn and the tasks that follow it (each figure draws in a task of its
      // own) have run: the browser is idle
      await page.waitForFunction(() => {
        const t = document.querySelector('[data-figure="sinusoidal-heatmap"] figcaption').textContent;
        return t.includes('100 positions') && t.includes('512 dimensions');
      });
      await page.evaluate(() => new Promise((resolve) => requestIdleCallback(resolve, { timeout: 5000 })));
      noErrors(problems);
    });
  },
  { concurrent: true },
);
