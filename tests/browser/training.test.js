// "Train it yourself": six toy transformers train in a Web Worker, and the curves show what the README's
// table says: without positions 'before' stays at chance, every encoding learns it, ALiBi extrapolates.
// "Train short, test long" runs in the same Worker, and its numbers are posenc's in Node, bit for bit.
// The default run (six models, 2000 steps: the README's table, one curve per encoding; default-training.js)
// is checked here in the engines without the long-task budget; Chromium's is checked in longtasks.test.js,
// which trains it anyway to time the main thread's tasks meanwhile (training it twice there doubled the
// page tests' heaviest work).
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { loadLab } from 'posenc/lab';
import { byHand, sortResults } from '../js/longcontext-reference.js';
import { assertDefaultTraining } from './default-training.js';
import { artifacts, download, inEachEngine, openPage } from './server.js';

// Train short, test long at its smallest: 8 tokens (asked at 16, 32, 64), 100 steps, 3 seeds, fine-tunes
// of 50 steps; computed once here in Node from trainToy's own calls, for both engines.
const SMALL = { length: 8, steps: 100, seeds: 3, tuneSteps: 50 };
const SMALL_URL = `?lcLength=${SMALL.length}&lcSteps=${SMALL.steps}&lcSeeds=${SMALL.seeds}&lcTuneSteps=${SMALL.tuneSteps}#train-long-title`;
let reference = null;
const inNode = () => (reference ??= loadLab().then((lab) => byHand(lab, SMALL)));
const longStatus = (page, pattern, timeout = 30000) =>
  page.waitForFunction((p) => new RegExp(p).test(document.querySelector('[data-long-status]').textContent), pattern.source, { timeout });

// Sets controls as a reader would and waits until the page has taken them (the debounced redraw runs
// right after the URL is written).
async function set(page, controls) {
  for (const [name, value] of Object.entries(controls)) {
    const sel = `[data-control="${name}"]`;
    if ((await page.$eval(sel, (e) => e.tagName)) === 'SELECT') await page.selectOption(sel, value);
    else {
      await page.fill(sel, value);
      await page.dispatchEvent(sel, 'change');
    }
  }
  await page.waitForFunction(
    (c) =>
      Object.entries(c).every(
        ([n, v]) => (new URLSearchParams(location.search).get(n) ?? document.querySelector(`[data-control="${n}"]`).defaultValue) === v,
      ),
    controls,
  );
}

inEachEngine('train it yourself', (suite) => {
  // Two pages, each loaded once: the toy transformers' (the first three tests, in this order: each sets
  // what it trains), then train short / test long at 390 px (the last two).
  let toy = null;
  let long = null;
  after(async () => {
    await toy?.page.close();
    await long?.page.close();
  });

  test('the settings travel in the URL; causal attention learns order without an encoding (the model without one alone)', async () => {
    toy = await openPage(suite.browser, `${suite.server.url}?toyMask=causal&toyEncoding=none&toySteps=600#train`);
    const { page, problems } = toy;
    await page.waitForSelector('[data-figure="training-curves"][data-rendered="true"]', { timeout: 60000 });
    assert.match(await page.textContent('[data-figure="training-curves"] figcaption'), /Press Train/);
    assert.equal(await page.inputValue('[data-control="toyMask"]'), 'causal');
    await page.click('[data-action="train"]');
    await page.waitForFunction(() => /^Trained one model of 600 steps/.test(document.querySelector('[data-train-status]').textContent), null, {
      timeout: 90000,
    });
    await page.waitForFunction(() => /After 600 steps/.test(document.querySelector('[data-figure="training-curves"] figcaption').textContent));
    const caption = await page.textContent('[data-figure="training-curves"] figcaption');
    assert.match(caption, /causal, 2 layers/);
    const none = Number(/none ([\d.]+)%/.exec(caption)[1]);
    assert.ok(none >= 95, caption);
    assert.deepEqual(problems.pageErrors, []);
  });

  test('one encoding alone', async () => {
    const { page, problems } = toy;
    await set(page, { toyMask: 'bidirectional', toyEncoding: 'alibi', toySteps: '300' });
    await page.waitForFunction(() => /Press Train/.test(document.querySelector('[data-figure="training-curves"] figcaption').textContent));
    await page.click('[data-action="train"]');
    await page.waitForFunction(() => /^Trained one model of 300 steps/.test(document.querySelector('[data-train-status]').textContent), null, {
      timeout: 60000,
    });
    await page.waitForFunction(() =>
      /After 300 steps: ALiBi [\d.]+%\./.test(document.querySelector('[data-figure="training-curves"] figcaption').textContent),
    );
    assert.deepEqual(problems.pageErrors, []);
  });

  test('accuracy by length: the dashed chance line is labelled; "trained here" crosses no accuracy line', async () => {
    const { page } = toy;
    await page.waitForFunction(() => /^Trained on 8 tokens/.test(document.querySelector('[data-figure="length-curves"] .takeaway').textContent));
    const texts = await page.$$eval('[data-figure="length-curves"] svg[data-panel] text', (ts) => ts.map((t) => t.textContent));
    assert.ok(texts.includes('chance'), texts.join(' | '));
    // points along every coloured line of the panel, in the page's coordinates, against the label's box
    const hits = await page.$eval('[data-figure="length-curves"] svg[data-panel]', (svg) => {
      const label = [...svg.querySelectorAll('text')].find((t) => t.textContent === 'trained here').getBoundingClientRect();
      const out = [];
      for (const path of svg.querySelectorAll('g[stroke] path, path[stroke]')) {
        if (path.closest('[aria-label="line"]') === null) continue;
        const m = path.getScreenCTM();
        for (let s = 0, n = path.getTotalLength(); s <= n; s += 1) {
          const p = path.getPointAtLength(s).matrixTransform(m);
          if (p.x >= label.left && p.x <= label.right && p.y >= label.top && p.y <= label.bottom) out.push([Math.round(p.x), Math.round(p.y)]);
        }
      }
      return out;
    });
    assert.deepEqual(hits.slice(0, 5), []);
  });

  test('Stop ends training; changing a setting stops it too', async () => {
    const { page, problems } = toy;
    await set(page, { toyEncoding: 'rope', toySteps: '20000' });
    await page.click('[data-action="train"]');
    // the status names the model as the legend does
    await page.waitForFunction(() => /^Training RoPE: step \d+ of 20000/.test(document.querySelector('[data-train-status]').textContent), null, {
      timeout: 30000,
    });
    assert.equal(await page.textContent('[data-action="train"]'), 'Stop');
    // the curves grow while training (a run of a few hundred steps may end before a frame shows them)
    await page.waitForFunction(() => /Training/.test(document.querySelector('[data-figure="training-curves"] figcaption').textContent), null, {
      timeout: 30000,
    });
    await page.click('[data-action="train"]');
    assert.equal(await page.textContent('[data-train-status]'), 'Stopped.');
    await page.click('[data-action="train"]');
    await page.waitForFunction(() => /step \d+ of 20000/.test(document.querySelector('[data-train-status]').textContent), null, { timeout: 30000 });
    await page.selectOption('[data-control="toyTask"]', 'count');
    await page.waitForFunction(() => document.querySelector('[data-train-status]').textContent === 'Stopped: the settings changed.');
    await page.waitForFunction(() =>
      /how many 0s.*Press Train/.test(document.querySelector('[data-figure="training-curves"] figcaption').textContent),
    );
    assert.deepEqual(problems.pageErrors, []);
  });

  test("train short, test long at 390 px: the numbers are posenc's in Node for the same settings, bit for bit", async () => {
    await toy?.page.close(); // one page open at a time (Firefox runs a background tab's timers slowly)
    toy = null;
    long = await openPage(suite.browser, `${suite.server.url}${SMALL_URL}`, { width: 390, height: 844 });
    const { page, problems } = long;
    await page.waitForSelector('[data-figure="long-context"][data-rendered="true"]', { timeout: 60000 });
    assert.equal(await page.inputValue('[data-control="lcSteps"]'), String(SMALL.steps));
    assert.match(
      await page.textContent('[data-figure="long-context"] figcaption'),
      /Press Train: models trained at 8 tokens are asked at 16, 32, 64/,
    );
    await page.click('[data-action="train-long"]');
    await longStatus(page, /^Trained and tested 3 seeds/, 180000);
    await page.waitForFunction(() => /^At 32 tokens/.test(document.querySelector('[data-figure="long-context"] .takeaway').textContent));
    const [header, ...lines] = (await download(page, '[data-figure="long-context"] [data-download="csv"]')).text.split('\n');
    assert.equal(header, 'row,model,seed,length,accuracy');
    const got = sortResults(
      lines.map((line) => {
        const [key, , seed, length, accuracy] = line.split(',');
        return { key, seed: Number(seed), length: Number(length), accuracy: Number(accuracy) };
      }),
    );
    assert.deepEqual(got, await inNode());
    // three panels, each with the order-blind line and its models' bands; nothing wider than the screen
    assert.equal(await page.$$eval('[data-figure="long-context"] .panel', (p) => p.length), 3);
    assert.equal(await page.$$eval('[data-figure="long-context"] .order-blind', (p) => p.length), 3);
    const wide = await page.$$eval('[data-figure="long-context"], #train', (els) =>
      els.filter((e) => e.scrollWidth > e.clientWidth + 1).map((e) => e.id || 'figure'),
    );
    assert.deepEqual(wide, []);
    assert.match(await page.textContent('[data-figure="long-context"] figcaption'), /learned table .* cannot be asked at all/);
    await page.screenshot({ path: join(artifacts, `page-train-long-390-${suite.engine}.png`), fullPage: false });
    assert.deepEqual(problems, { console: [], pageErrors: [], foreign: [] });
  });

  test('train short, test long: Stop cancels it, a changed setting too, and the settings travel in the URL', async () => {
    const { page, problems } = long;
    await set(page, { lcSteps: '5000' });
    await page.waitForFunction(() => /^Press Train/.test(document.querySelector('[data-figure="long-context"] figcaption').textContent));
    await page.click('[data-action="train-long"]');
    await longStatus(page, /^Training no positions, seed 0: step \d+ of 5000/);
    assert.equal(await page.textContent('[data-action="train-long"]'), 'Stop');
    assert.equal(await page.$eval('[data-progress="train-long"]', (p) => p.hidden), false);
    await page.click('[data-action="train-long"]');
    assert.equal(await page.textContent('[data-long-status]'), 'Stopped.');
    assert.equal(await page.$eval('[data-progress="train-long"]', (p) => p.hidden), true);
    await page.click('[data-action="train-long"]');
    await longStatus(page, /step \d+ of 5000/);
    await page.fill('[data-control="lcSeeds"]', '4');
    await longStatus(page, /^Stopped: the settings changed\.$/);
    await page.waitForFunction(() => new URLSearchParams(location.search).get('lcSeeds') === '4');
    assert.match(await page.textContent('[data-figure="long-context"] figcaption'), /^Press Train/);
    assert.deepEqual(problems.pageErrors, []);
  });
});

inEachEngine(
  'train it yourself: the default run',
  (suite) => {
    test("six models of 2000 steps learn what the README's table says", async () => {
      const { page, problems } = await openPage(suite.browser, `${suite.server.url}#train`);
      await page.waitForSelector('[data-figure="training-curves"][data-rendered="true"]', { timeout: 60000 });
      await page.click('[data-action="train"]');
      await page.waitForFunction(() => /^Trained six models of 2000 steps/.test(document.querySelector('[data-train-status]').textContent), null, {
        timeout: 300000,
      });
      await assertDefaultTraining(page, suite.engine);
      assert.deepEqual(problems, { console: [], pageErrors: [], foreign: [] });
      await page.close();
    });
  },
  { only: ['firefox'] }, // Chromium's: longtasks.test.js
);
