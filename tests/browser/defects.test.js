// The page's earlier measured defects, one test each: they failed on the page as reviewed and pass now.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { load } from 'posenc';
import { artifacts, download, inEachEngine, inject, openPage } from './server.js';

const require = createRequire(import.meta.url);
const axe = readFileSync(require.resolve('axe-core/axe.min.js'), 'utf8');

// Until the page has taken a control's value (its debounced redraw runs right after the URL is written).
const taken = (page, name) =>
  page.waitForFunction(
    (n) => {
      const el = document.querySelector(`[data-control="${n}"]`);
      const v = new URLSearchParams(location.search).get(n);
      return v === el.value || (v === null && el.value === el.defaultValue);
    },
    name,
    { timeout: 10000 },
  );
const noErrors = (problems) => assert.deepEqual({ console: problems.console, pageErrors: problems.pageErrors }, { console: [], pageErrors: [] });
const caption = (page, id) => page.textContent(`[data-figure="${id}"] figcaption`);
// Plot's own SVGs inside a figure: not legend ramps, not the little swatch squares.
const PLOTS = 'svg[data-panel]';

inEachEngine('earlier defects', (suite) => {
  // One page, loaded once, for the tests that only read it (or click what changes nothing they read).
  let shared;
  const sharedPage = async () => {
    if (!shared) {
      shared = await openPage(suite.browser, suite.server.url);
      await shared.page.waitForSelector('[data-figure="distinguishability"][data-rendered="true"]', { timeout: 60000 });
    }
    return shared;
  };
  after(() => shared?.page.close());

  test('bad URL values fall back to defaults with a visible note; every figure still renders', async () => {
    const { page, problems } = await openPage(
      suite.browser,
      `${suite.server.url}?encoding=bogus&layout=zzz&length=abc&dModel=-5&perm=9,9,x&alibiSymmetric=1`,
    );
    await page.waitForSelector('[data-figure="distinguishability"][data-rendered="true"]', { timeout: 60000 });
    noErrors(problems);
    const note = await page.textContent('[data-url-note]');
    assert.match(note, /encoding/);
    assert.match(note, /layout/);
    assert.match(note, /length/);
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

  test('every SVG download holds the whole plot, not its legend', async () => {
    const { page, problems } = await sharedPage();
    const ids = await page.$$eval('[data-figure]', (els) => els.filter((e) => e.querySelector('svg')).map((e) => e.dataset.figure));
    assert.ok(ids.length >= 14, `${ids.length} figures with an SVG`);
    for (const id of ids) {
      // every line of text (a multi-line label is one <tspan> per line)
      const texts = await page.$$eval(`[data-figure="${id}"] ${PLOTS} text`, (ts) => [
        ...new Set(
          ts.flatMap((t) => (t.querySelector('tspan') ? [...t.querySelectorAll('tspan')] : [t]).map((x) => x.textContent.trim())).filter(Boolean),
        ),
      ]);
      const svg = (await download(page, `[data-figure="${id}"] [data-download="svg"]`)).text;
      assert.match(svg, /^<svg[^>]*xmlns="http:\/\/www.w3.org\/2000\/svg"/, id);
      const [, w, h] = /width="([\d.]+)" height="([\d.]+)"/.exec(svg);
      assert.ok(+w >= 250 && +h >= 150, `${id}: ${w} x ${h}`);
      assert.ok(texts.length > 0, `${id} has no plot text`);
      const escape = (s) => s.replaceAll('&', '&amp;').replaceAll('<', '&lt;').replaceAll('>', '&gt;');
      for (const t of texts.slice(0, 30)) assert.ok(svg.includes(escape(t)), `${id}.svg lacks "${t}"`);
    }
    noErrors(problems);
  });

  test('no uncaught error is reachable from any control', async () => {
    const { page, problems } = await openPage(suite.browser, suite.server.url);
    await page.waitForSelector('[data-figure="distinguishability"][data-rendered="true"]', { timeout: 60000 });
    const controls = await page.$$eval('[data-control]', (els) =>
      els.map((e) => ({
        name: e.dataset.control,
        type: e.type,
        options: e.tagName === 'SELECT' ? [...e.options].filter((o) => !o.disabled).map((o) => o.value) : [],
      })),
    );
    const tries = { number: ['', '-99999999', '99999999', '0.5', '1e-9'], range: ['0', '4095'], text: ['', '   ', '🙂 ,,, !! «»'] };
    for (const c of controls) {
      const sel = `[data-control="${c.name}"]`;
      if (c.options.length) for (const v of c.options) await page.selectOption(sel, v);
      else
        for (const v of tries[c.type] ?? []) {
          await page.fill(sel, v);
          await page.dispatchEvent(sel, 'change');
        }
      await taken(page, c.name);
    }
    for (const v of ['[]', 'null', '{"rope_scaling": 5}', '{"head_dim": 7}', '{"head_dim": 64, "rope_scaling": {"rope_type": "warp"}}'])
      await page.fill('[data-config-json]', v);
    await page.click('[data-action="shuffle"]');
    await page.click('[data-action="reverse"]');
    await page.click('[data-action="matshow"]');
    await page.waitForTimeout(1500);
    noErrors(problems);
    await page.close();
  });

  test('dimension-curves: cosines are dashed, sines solid', async () => {
    const { page } = await sharedPage();
    const dashes = await page.$$eval(`[data-figure="dimension-curves"] ${PLOTS} g[class*="curve-"] path`, (ps) =>
      ps.map((p) => p.closest('[stroke-dasharray]')?.getAttribute('stroke-dasharray') ?? ''),
    );
    assert.equal(dashes.length, 8, `${dashes.length} curves`);
    assert.equal(dashes.filter((d) => /^\d+(\.\d+)?[ ,]+\d+(\.\d+)?$/.test(d)).length, 4, dashes.join(' | '));
    assert.equal(dashes.filter((d) => d === '').length, 4);
  });

  test("distinguishability: the caption's closest pair is computed, ticks are plain numbers", async () => {
    const { page } = await sharedPage();
    const pe = await load();
    const t = pe.sinusoidal({ length: 2048, dModel: 8 });
    const near = pe.nearestDistances(t);
    const closest = Math.min(...near);
    const dist = (i, j) => Math.hypot(...t.data.subarray(i * 8, i * 8 + 8).map((v, c) => v - t.data[j * 8 + c]));
    const neighbours = dist(0, 1);
    const text = await caption(page, 'distinguishability');
    assert.ok(closest < neighbours - 0.1, 'the premise: at d = 8 the closest pair is not two neighbours');
    assert.doesNotMatch(text, /always two neighbours/);
    assert.match(text, new RegExp(closest.toFixed(3).replace('.', '\\.')));
    assert.match(text, new RegExp(neighbours.toFixed(3).replace('.', '\\.')));
    const ticks = await page.$$eval(`[data-figure="distinguishability"] ${PLOTS} g[data-axis] text`, (ts) => ts.map((t) => t.textContent));
    for (const L of [32, 64, 128, 256, 512, 1024, 2048]) assert.ok(ticks.includes(String(L)), `x tick ${L} missing: ${ticks}`);
    assert.equal(ticks.filter((s) => /m$/.test(s)).length, 0, ticks.join(' '));
  });

  test('position-sinusoids: panels in numeric order', async () => {
    const { page } = await sharedPage();
    const labels = await page.$$eval(`[data-figure="position-sinusoids"] ${PLOTS} text`, (ts) =>
      ts
        .filter((t) => /^k = \d+$/.test(t.textContent))
        .map((t) => ({ k: t.textContent, x: t.getBoundingClientRect().x, y: t.getBoundingClientRect().y }))
        .sort((a, b) => a.y - b.y || a.x - b.x)
        .map((t) => t.k),
    );
    assert.deepEqual(labels, ['k = 0', 'k = 4', 'k = 8', 'k = 12']);
  });

  test('number fields show their clamped value and why', async () => {
    const { page, problems } = await openPage(suite.browser, suite.server.url);
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
    noErrors(problems);
    await page.close();
  });

  test('a whitespace-only sentence: a message, no uncaught error from any control', async () => {
    const { page, problems } = await openPage(suite.browser, suite.server.url);
    await page.fill('[data-control="sentence"]', '   ');
    await page.click('[data-action="shuffle"]');
    await page.click('[data-action="reverse"]');
    await page.waitForFunction(() => /at least one word/.test(document.querySelector('[data-figure="permutation-lab"]').textContent));
    await page.fill('[data-control="sentence"]', 'the The');
    await page.click('[data-action="shuffle"]');
    await page.waitForFunction(() => /same sentence|only one order/i.test(document.querySelector('[data-figure="permutation-lab"]').textContent));
    noErrors(problems);
    await page.close();
  });

  test('"The" and "the" are one word: swapping them is no change', async () => {
    const { page } = await openPage(suite.browser, `${suite.server.url}?encoding=sinusoidal&perm=4,1,2,3,0,5`);
    const text = await page.textContent('[data-figure="permutation-lab"]');
    assert.match(text, /same sentence/i);
    assert.doesNotMatch(text, /order is visible/);
    // and Shuffle never picks such a permutation
    for (let i = 0; i < 8; i++) {
      await page.click('[data-action="shuffle"]');
      await page.waitForFunction(() => /Shuffled/.test(document.querySelector('[data-figure="permutation-lab"]').textContent));
      assert.doesNotMatch(await page.textContent('[data-figure="permutation-lab"]'), /same sentence/i);
    }
    await page.close();
  });

  test('no text is clipped: every label lies inside its SVG', async () => {
    const { page } = await sharedPage();
    await page.click('[data-action="benchmark"]');
    await page.waitForSelector('[data-figure="performance"][data-rendered="true"]', { timeout: 60000 });
    const clipped = await page.$$eval('[data-figure] svg text', (ts) =>
      ts
        .filter((t) => t.textContent.trim() && t.getBBox().width > 0)
        .filter((t) => {
          const r = t.getBoundingClientRect();
          const s = t.ownerSVGElement.getBoundingClientRect();
          // 2 px of slack: Firefox's text boxes include the font's whole descent, 1.5 px past the bottom of
          // Plot's x-axis label (the charts' overflow is visible, so those glyphs are not cut)
          return r.left < s.left - 2 || r.right > s.right + 2 || r.top < s.top - 2 || r.bottom > s.bottom + 2;
        })
        .map((t) => `${t.closest('[data-figure]').dataset.figure}: "${t.textContent}"`),
    );
    assert.deepEqual(clipped, []);
  });

  test('control labels stay on one line (d_model)', async () => {
    const { page } = await sharedPage();
    // the centres of the words before the field (a subscript sits a little lower, a new line much lower)
    const broken = await page.$$eval('.controls label', (labels) =>
      labels
        .map((l) => {
          const field = l.querySelector('input, select, textarea');
          const walker = document.createTreeWalker(l, NodeFilter.SHOW_TEXT);
          const centres = [];
          for (let n = walker.nextNode(); n; n = walker.nextNode()) {
            if (field.contains(n) || !n.textContent.trim() || field.compareDocumentPosition(n) & Node.DOCUMENT_POSITION_FOLLOWING) continue;
            const r = document.createRange();
            r.selectNodeContents(n);
            for (const rect of r.getClientRects()) centres.push(rect.top + rect.height / 2);
          }
          return Math.max(...centres) - Math.min(...centres) > 10 ? l.textContent.trim() : null;
        })
        .filter(Boolean),
    );
    assert.deepEqual(broken, []);
  });

  test('rope-scaling: the "none" baseline is neutral, not a method colour', async () => {
    const { page } = await sharedPage();
    // one line per scaling, each drawn as its own mark with class series-<name>
    const strokes = await page.$$eval(`[data-figure="rope-scaling"] ${PLOTS} g[class*="series-"]`, (gs) =>
      Object.fromEntries(gs.map((g) => [/series-(\w+)/.exec(g.getAttribute('class'))[1], getComputedStyle(g.querySelector('path')).stroke])),
    );
    const grey = (c) => {
      const [r, g, b] = c.match(/\d+/g).map(Number);
      return r === g && g === b;
    };
    assert.ok(strokes.none && grey(strokes.none), JSON.stringify(strokes));
    for (const m of ['linear', 'ntk', 'yarn', 'llama3']) assert.ok(strokes[m] && !grey(strokes[m]), `${m}: ${strokes[m]}`);
  });

  test('side-by-side panels start at the same height', async () => {
    const { page } = await sharedPage();
    for (const id of ['attention-weights', 'lab-outputs', 'similarity']) {
      const tops = await page.$$eval(`[data-figure="${id}"] ${PLOTS}`, (ss) => ss.map((s) => Math.round(s.getBoundingClientRect().top)));
      assert.equal(tops.length, 2, id);
      assert.ok(Math.abs(tops[0] - tops[1]) <= 2, `${id}: ${tops}`);
    }
  });

  test('390 px: no text under 9 px, nothing wider than the screen', async () => {
    const { page, problems } = await openPage(suite.browser, suite.server.url, { width: 390, height: 844 });
    await page.waitForSelector('[data-figure="distinguishability"][data-rendered="true"]', { timeout: 60000 });
    const small = await page.$$eval('main text, main p, main td, main th, main figcaption, main label, main button', (els) =>
      els
        .map((el) => {
          const size = parseFloat(getComputedStyle(el).fontSize);
          const svg = el.ownerSVGElement;
          const scale = svg ? svg.getBoundingClientRect().width / (svg.width.baseVal.value || 1) : 1;
          return { text: el.textContent.trim().slice(0, 30), px: size * scale };
        })
        .filter((x) => x.text && x.px < 9),
    );
    assert.deepEqual(small.slice(0, 10), []);
    const wide = await page.$$eval('[data-figure], main > section', (els) =>
      els.filter((e) => e.scrollWidth > e.clientWidth + 1).map((e) => e.dataset.figure ?? e.id),
    );
    assert.deepEqual(wide, []);
    assert.ok((await page.evaluate(() => document.documentElement.scrollWidth)) <= 390);
    await page.screenshot({ path: join(artifacts, `page-390-${suite.engine}.png`), fullPage: true });
    noErrors(problems);
    await page.close();
  });

  test('charts redraw at their container width when the window narrows', async () => {
    const { page } = await openPage(suite.browser, suite.server.url, { width: 1280 });
    await page.waitForSelector('[data-figure="distinguishability"][data-rendered="true"]', { timeout: 60000 });
    const widest = () =>
      page.$$eval('[data-figure]', (figs) =>
        Math.max(0, ...figs.flatMap((f) => [...f.querySelectorAll('svg[data-panel]')].map((s) => +s.getAttribute('width') - f.clientWidth))),
      );
    assert.ok((await widest()) <= 0);
    const before = await page.$eval('[data-figure="sinusoidal-heatmap"] svg[data-panel]', (s) => +s.getAttribute('width'));
    await page.setViewportSize({ width: 520, height: 900 });
    await page.waitForFunction(
      (w) => +document.querySelector('[data-figure="sinusoidal-heatmap"] svg[data-panel]').getAttribute('width') < w,
      before,
    );
    await page.waitForTimeout(500);
    assert.ok((await widest()) <= 0, 'a plot is wider than its figure');
    await page.close();
  });

  test('axe-core: no serious or critical violations; no aria-label on <g>', async () => {
    for (const width of [1280, 390]) {
      const { page } = await openPage(suite.browser, suite.server.url, { width });
      await page.waitForSelector('[data-figure="distinguishability"][data-rendered="true"]', { timeout: 60000 });
      await inject(page, axe);
      const result = await page.evaluate(() => window.axe.run(document, { resultTypes: ['violations'] }));
      const bad = result.violations.filter((v) => ['serious', 'critical'].includes(v.impact)).map((v) => `${v.id} (${v.nodes.length})`);
      assert.deepEqual(bad, [], `at ${width} px`);
      assert.equal(await page.$$eval('g[aria-label]', (gs) => gs.length), 0);
      await page.close();
    }
  });

  test('a skip link, and every figure states its key number in a text alternative', async () => {
    const { page } = await openPage(suite.browser, suite.server.url);
    await page.waitForSelector('[data-figure="distinguishability"][data-rendered="true"]', { timeout: 60000 });
    await page.keyboard.press('Tab');
    const first = await page.evaluate(() => ({ text: document.activeElement.textContent, href: document.activeElement.getAttribute('href') }));
    assert.match(first.text, /skip/i);
    assert.ok(await page.$(first.href), `${first.href} exists`);
    const alts = await page.$$eval('[data-figure]', (els) =>
      els
        .filter((e) => e.querySelector('svg, canvas'))
        .map((e) => ({ id: e.dataset.figure, alt: e.querySelector('[role="img"]')?.getAttribute('aria-label') ?? '' })),
    );
    for (const { id, alt } of alts) assert.match(alt, /\d/, `${id}: "${alt}"`);
    await page.close();
  });

  test('wording: no internal labels, the invariance/equivariance box', async () => {
    const { page } = await sharedPage();
    const text = await page.evaluate(() => document.querySelector('main').innerText);
    assert.doesNotMatch(text, /\bseed \d{3}/i);
    const box = await page.textContent('[data-box="invariance"]');
    assert.match(box, /invarian/i);
    assert.match(box, /equivarian/i);
  });
});
