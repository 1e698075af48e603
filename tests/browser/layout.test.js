// Layout and accessibility: keyboard and screen-reader access (a skip link, text alternatives, axe-core),
// no clipped or broken labels, aligned panels, charts that follow the window's width, and a 390 px phone
// screen.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { artifacts, fullPage, inEachEngine, inject, openPage } from './server.js';

const require = createRequire(import.meta.url);
const axe = readFileSync(require.resolve('axe-core/axe.min.js'), 'utf8');
const noErrors = (problems) => assert.deepEqual({ console: problems.console, pageErrors: problems.pageErrors }, { console: [], pageErrors: [] });
const PLOTS = 'svg[data-panel]';

// axe-core's serious and critical violations on the page as it is.
async function axeViolations(page) {
  await inject(page, axe);
  const result = await page.evaluate(() => window.axe.run(document, { resultTypes: ['violations'] }));
  return result.violations.filter((v) => ['serious', 'critical'].includes(v.impact)).map((v) => `${v.id} (${v.nodes.length})`);
}

// The pairs of texts in one plot whose boxes overlap, rotated tick labels aside (their upright boxes
// overlap while the slanted words do not): an axis title over a tick label was one. Measured in Chromium,
// whose text boxes are the glyphs' line (12 px for 10 px type); Firefox's span the font's whole ascent and
// descent (15 px), so labels a few pixels apart touch there. Where the labels go is Plot's, the same in both.
const overlappingLabels = async (page, engine) =>
  engine !== 'chromium'
    ? []
    : page.$$eval('[data-figure] svg[data-panel]', (svgs) =>
        svgs.flatMap((svg) => {
          const boxes = [...svg.querySelectorAll('text')]
            .filter((t) => t.textContent.trim() && !t.closest('[transform*="rotate"]'))
            .map((t) => ({ text: t.textContent.trim(), r: t.getBoundingClientRect() }))
            .filter(({ r }) => r.width > 0);
          const found = [];
          for (const [i, a] of boxes.entries())
            for (const b of boxes.slice(i + 1)) {
              const x = Math.min(a.r.right, b.r.right) - Math.max(a.r.left, b.r.left);
              const y = Math.min(a.r.bottom, b.r.bottom) - Math.max(a.r.top, b.r.top);
              if (x > 1 && y > 1) found.push(`${svg.closest('[data-figure]').dataset.figure}: "${a.text}" over "${b.text}"`);
            }
          return found;
        }),
      );

inEachEngine(
  'layout and accessibility',
  (suite) => {
    // The phone page (390 px), then the desktop page (1280 px), one open at a time (Firefox runs a
    // background tab's timers slowly), each loaded once. The tests run in this order: the phone's, axe at
    // both widths, then on the desktop page the keyboard first (nothing focused yet), the narrowing last.
    let opened = null;
    async function pageAt(width) {
      if (opened?.width !== width) {
        await opened?.page.close();
        opened = null;
        const size = width === 390 ? { width, height: 844 } : { width };
        opened = { width, ...(await openPage(suite.browser, suite.server.url, size)) };
        await opened.page.waitForSelector('[data-figure="distinguishability"][data-rendered="true"]', { timeout: 60000 });
      }
      return opened;
    }
    after(() => opened?.page.close());

    test('390 px: no text under 9 px, nothing wider than the screen, no caption names a panel by its side, no two labels of a chart overlap', async () => {
      const { page, problems } = await pageAt(390);
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
      // the panels stack there, so no caption may name a panel by its side
      const sides = await page.$$eval('figcaption', (cs) =>
        cs.map((c) => c.textContent).filter((t) => /\b(left|right)\s*(:|panel|map|plot)|\((left|right)\)|\bRight:|\bLeft:/i.test(t)),
      );
      assert.deepEqual(sides, []);
      assert.deepEqual(await overlappingLabels(page, suite.engine), []);
      await page.screenshot({ path: join(artifacts, `page-390-${suite.engine}.png`), fullPage });
      noErrors(problems);
    });

    test('axe-core: no serious or critical violations; no aria-label on <g>', async () => {
      for (const width of [390, 1280]) {
        const { page } = await pageAt(width);
        assert.deepEqual(await axeViolations(page), [], `at ${width} px`);
        assert.equal(await page.$$eval('g[aria-label]', (gs) => gs.length), 0);
      }
    });

    test('a skip link, and every figure states its key number in a text alternative', async () => {
      const { page } = await pageAt(1280);
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
    });

    test('no text is clipped: every label lies inside its SVG', async () => {
      const { page } = await pageAt(1280);
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

    test('no two labels of a chart overlap (1280 px; the 390 px page is checked above)', async () => {
      const { page } = await pageAt(1280);
      assert.deepEqual(await overlappingLabels(page, suite.engine), []);
    });

    test('control labels stay on one line (d_model)', async () => {
      const { page } = await pageAt(1280);
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

    test('side-by-side panels start at the same height; a row of panels without a colour legend keeps no empty band for one', async () => {
      const { page } = await pageAt(1280);
      for (const id of ['attention-weights', 'lab-outputs', 'similarity']) {
        const tops = await page.$$eval(`[data-figure="${id}"] ${PLOTS}`, (ss) => ss.map((s) => Math.round(s.getBoundingClientRect().top)));
        assert.equal(tops.length, 2, id);
        assert.ok(Math.abs(tops[0] - tops[1]) <= 2, `${id}: ${tops}`);
      }
      // every figure's rows of panels (the panels that start at one height): an empty legend slot only
      // beside a panel of its row that has a legend
      const emptyRows = await page.$$eval('[data-figure] .panels', (figures) =>
        figures.flatMap((panels) => {
          const rows = new Map();
          for (const p of panels.querySelectorAll(':scope > .panel')) {
            const top = Math.round(p.getBoundingClientRect().top);
            rows.set(top, [...(rows.get(top) ?? []), p]);
          }
          return [...rows.values()]
            .filter((row) => row.some((p) => p.querySelector('.panel-legend')) && !row.some((p) => p.querySelector('.panel-legend svg')))
            .map(
              (row) =>
                `${panels.closest('[data-figure]').dataset.figure}: ${row.map((p) => p.querySelector('.panel-title')?.textContent).join(', ')}`,
            );
        }),
      );
      assert.deepEqual(emptyRows, []);
      const slots = await page.$$eval('[data-figure="score-terms"] .panel', (ps) => ps.map((p) => !!p.querySelector('.panel-legend')));
      assert.deepEqual(slots, [true, true, true, false, false], 'score terms: the legend row, then the row without one');
    });

    test('charts redraw at their container width when the window narrows', async () => {
      const { page, problems } = await pageAt(1280);
      // how far the widest plot of any figure overflows it (<= 0: every plot fits)
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
      // then every other chart: each plot back inside its figure (a chart that keeps its width times out here)
      await page.waitForFunction(
        () =>
          [...document.querySelectorAll('[data-figure]')].every((f) =>
            [...f.querySelectorAll('svg[data-panel]')].every((s) => +s.getAttribute('width') <= f.clientWidth),
          ),
        null,
        { timeout: 10000 },
      );
      assert.ok((await widest()) <= 0, 'a plot is wider than its figure');
      noErrors(problems);
    });
  },
  { concurrent: true },
);
