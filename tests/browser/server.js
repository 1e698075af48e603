// Serves the built page (web/dist) with `vite preview` on a free loopback port, and drives it in two
// engines with one API, so that each page test is written once and runs in both:
//   - Chromium (Debian's, through playwright-core: no browser download here);
//   - Firefox ESR (Debian's firefox-esr, through puppeteer-core over WebDriver BiDi), behind a small
//     adapter with the names of the Playwright methods the tests use (FirefoxPage below).
// POSENC_BROWSERS=chromium (or firefox) runs one engine only; CHROMIUM_PATH and FIREFOX_PATH locate them.
import { spawn } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, renameSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { after, before, describe } from 'node:test';
import { chromium } from 'playwright-core';
import puppeteer from 'puppeteer-core';

export const root = new URL('../..', import.meta.url).pathname;
export const artifacts = join(root, 'test-artifacts');
mkdirSync(artifacts, { recursive: true });
// The whole page in the screenshots that show it all (test-artifacts/page-default-*.png, page-390-*.png)
// only when POSENC_FULL_SCREENSHOTS=1: a full-page shot of the page costs Chromium 3.6 s of CPU (Firefox
// 1 s), a shot of the window 0.1 s.
export const fullPage = process.env.POSENC_FULL_SCREENSHOTS === '1';

const PATHS = {
  chromium: process.env.CHROMIUM_PATH ?? '/usr/bin/chromium',
  firefox: process.env.FIREFOX_PATH ?? '/usr/bin/firefox-esr',
};
export const ENGINES = (process.env.POSENC_BROWSERS ?? 'chromium,firefox')
  .split(',')
  .map((s) => s.trim())
  .filter(Boolean);
for (const e of ENGINES) if (!(e in PATHS)) throw new Error(`POSENC_BROWSERS: unknown engine "${e}" (chromium, firefox)`);

function freePort() {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
    s.on('error', reject);
  });
}

export async function servePage() {
  const port = await freePort();
  const proc = spawn(
    process.execPath,
    [join(root, 'node_modules/vite/bin/vite.js'), 'preview', 'web', '--port', String(port), '--strictPort', '--host', '127.0.0.1'],
    { cwd: root, stdio: ['ignore', 'pipe', 'pipe'] },
  );
  const url = `http://127.0.0.1:${port}/`;
  for (let i = 0; i < 300; i++) {
    try {
      if ((await fetch(url)).ok) return { url, close: () => proc.kill() };
    } catch {}
    await new Promise((r) => setTimeout(r, 100));
  }
  proc.kill();
  throw new Error('vite preview did not start');
}

// { engine, newPage({ width, height }), newContext(), close() } for 'chromium' or 'firefox'
// (tests/js/pack.test.js runs its bundles in this Chromium too). newContext() is a handle with the same
// newPage and close whose pages share nothing with the pages of other handles (Chromium: a browser
// context per page, as newPage's own; Firefox: a user context of its own, opened at its first page):
// the page tests of one file share a browser with other files through it, and close() closes only
// its pages.
export async function launchBrowser(engine = 'chromium') {
  if (!existsSync(PATHS[engine])) throw new Error(`${engine} not found at ${PATHS[engine]} (bash scripts/setup.sh installs it)`);
  if (engine === 'chromium') {
    const browser = await chromium.launch({
      executablePath: PATHS.chromium,
      headless: true,
      args: [
        '--no-sandbox',
        '--disable-gpu',
        '--disable-quic',
        '--no-first-run',
        '--disable-background-networking',
        '--disable-component-update',
        '--disable-sync',
      ], // playwright gives each launch a fresh profile
    });
    const newPage = async ({ width = 1200, height = 900 } = {}) => {
      const page = await browser.newPage({ viewport: { width, height } }); // in a browser context of its own
      // waits poll every 50 ms, as in Firefox below: Playwright's default polls at every animation frame,
      // which keeps Chromium drawing frames all along a wait (0.06 s of CPU per second waited, against
      // 0.002 s at 50 ms; the page tests wait for minutes)
      const waitForFunction = page.waitForFunction.bind(page);
      // and the reads and waits the tests call most look once in one call (runOn, holdsNow), then, when the
      // element is missing or the condition false, are Playwright's own (waits resolve to nothing)
      const pw = Object.fromEntries(['waitForSelector', '$eval', 'textContent', 'inputValue', 'getAttribute'].map((m) => [m, page[m].bind(page)]));
      const evaluate = (src) => page.evaluate(src);
      page.waitForFunction = async (fn, arg, options) => {
        if (!(await holdsNow(evaluate, fn, [arg]))) await waitForFunction(fn, arg, { polling: POLL, ...options });
      };
      page.waitForSelector = async (selector, options = {}) => {
        if (!(await holdsNow(evaluate, shown, [selector, options.state ?? 'visible']))) await pw.waitForSelector(selector, options);
      };
      page.$$eval = async (selector, fn, arg) => (await runOn(evaluate, selector, true, fn, arg)).value;
      const onElement =
        (method, fn) =>
        async (selector, ...args) => {
          const got = await runOn(evaluate, selector, false, fn, args[0]);
          return got.missing ? pw[method](selector, ...args) : got.value;
        };
      page.$eval = async (selector, fn, arg) => {
        const got = await runOn(evaluate, selector, false, fn, arg);
        return got.missing ? pw.$eval(selector, fn, arg) : got.value; // Playwright's error
      };
      page.textContent = onElement('textContent', (el) => el.textContent);
      page.inputValue = onElement('inputValue', (el) => el.value);
      page.getAttribute = onElement('getAttribute', (el, n) => el.getAttribute(n));
      return page;
    };
    return {
      engine,
      newPage,
      newContext: () => {
        const pages = new Set();
        return {
          engine,
          newPage: async (size) => {
            const page = await newPage(size);
            pages.add(page);
            return page;
          },
          close: () => Promise.all([...pages].map((p) => p.context().close())),
        };
      },
      close: () => browser.close(),
    };
  }
  await firefoxTemplate();
  const profile = firefoxProfile();
  const browser = await launchFirefox(profile);
  const pageIn = async (context, { width = 1200, height = 900 } = {}, options) => {
    const page = await context.newPage(options);
    await page.setViewport({ width, height });
    return new FirefoxPage(page);
  };
  return {
    engine,
    newPage: (size) => pageIn(browser, size),
    newContext: () => {
      let context = null;
      return {
        engine,
        // each page in a window of its own: a tab behind another file's runs its timers slowly and
        // draws no frames
        newPage: async (size) => pageIn(await (context ??= browser.createBrowserContext()), size, { type: 'window' }),
        close: async () => (await context)?.close(),
      };
    },
    close: async () => {
      await browser.close();
      rmSync(profile, { recursive: true, force: true });
    },
  };
}

const launchFirefox = (userDataDir) =>
  puppeteer.launch({
    browser: 'firefox',
    executablePath: PATHS.firefox,
    headless: true,
    protocolTimeout: 120000,
    userDataDir,
    extraPrefsFirefox: { 'browser.download.dir': join(artifacts, 'firefox-downloads'), 'browser.download.folderList': 2 },
  });

// A profile for one Firefox: a copy of a template that Firefox has started once and closed (its caches
// built: a launch then costs half the CPU of one on an empty profile, about 4 s less). The template is
// made in build/ by the first launch that finds none (a blank page only: no site's data), then kept.
const PROFILES = join(root, 'build', 'firefox-profiles');
const TEMPLATE = join(PROFILES, 'template');
function firefoxProfile() {
  mkdirSync(PROFILES, { recursive: true });
  const dir = mkdtempSync(join(PROFILES, 'run-'));
  if (existsSync(TEMPLATE)) cpSync(TEMPLATE, dir, { recursive: true });
  return dir;
}
// Makes the template when there is none (once per checkout: build/ keeps it), by one launch of its own;
// renamed into place whole, so that a copy never sees half a profile.
let template = null;
function firefoxTemplate() {
  template ??= (async () => {
    if (existsSync(TEMPLATE)) return;
    const dir = firefoxProfile();
    const browser = await launchFirefox(dir);
    await (await browser.newPage()).goto('about:blank');
    await browser.close();
    try {
      renameSync(dir, TEMPLATE);
    } catch {
      rmSync(dir, { recursive: true, force: true }); // another process made it first
    }
  })();
  return template;
}

// One call into the page (`evaluate`: the driver's, for a script's source) for a DOM read or a wait's first
// look. The drivers' own methods take several: puppeteer's $$eval over WebDriver BiDi fetches a handle per
// element before calling the function (0.14 s of Firefox's CPU for the page's 25 figures, against 0.003 s
// here), its $eval and Playwright's textContent, inputValue etc. first wait for the element (Firefox
// 0.03 s a call, Chromium 0.01 s), and a wait sets up a poller even when its condition already holds.
// `fn` runs as the drivers would run it (its source, with its arguments as JSON, in the page).
const literal = (a) => (a === undefined ? 'undefined' : JSON.stringify(a));
// { value: fn(element or elements, arg) }, or { missing: true } when no element matches (one, not all).
function runOn(evaluate, selector, all, fn, arg) {
  const els = all ? `[...document.querySelectorAll(${JSON.stringify(selector)})]` : `document.querySelector(${JSON.stringify(selector)})`;
  return evaluate(`(async (els) => els === null ? { missing: true } : { value: await (${fn})(els, ${literal(arg)}) })(${els})`);
}
// Playwright's element states, as a predicate run in the page (both engines' waitForSelector): 'attached',
// 'detached', 'visible' (a box of some size, not visibility:hidden) and 'hidden' (not visible).
const shown = (selector, state) => {
  const el = document.querySelector(selector);
  const box = el?.getBoundingClientRect();
  const visible = !!el && box.width > 0 && box.height > 0 && getComputedStyle(el).visibility !== 'hidden';
  return { attached: !!el, detached: !el, visible, hidden: !visible }[state];
};
// Whether fn(...args) holds now (false if it throws: the wait that follows reports it).
async function holdsNow(evaluate, fn, args) {
  try {
    return !!(await evaluate(`(${fn})(${args.map(literal).join(', ')})`));
  } catch {
    return false;
  }
}

// Chromium through Playwright and Firefox through puppeteer, seen through the Playwright methods the
// tests call. Waits poll every 50 ms (puppeteer's default, requestAnimationFrame, stalls in hidden frames).
const POLL = 50;
class FirefoxPage {
  constructor(page) {
    this.page = page;
    this.keyboard = page.keyboard;
  }
  on(event, fn) {
    if (event === 'console') this.page.on('console', (m) => fn({ type: () => m.type(), text: () => m.text() }));
    else if (event === 'pageerror') this.page.on('pageerror', (e) => fn(e));
    else if (event === 'request') this.page.on('request', (r) => fn({ url: () => r.url() }));
    else throw new Error(`FirefoxPage.on: ${event}`);
  }
  addInitScript(fn) {
    return this.page.evaluateOnNewDocument(fn);
  }
  goto(url) {
    return this.page.goto(url);
  }
  url() {
    return this.page.url();
  }
  title() {
    return this.page.title();
  }
  content() {
    return this.page.content();
  }
  close() {
    return this.page.close();
  }
  screenshot(options) {
    return this.page.screenshot(options);
  }
  setViewportSize({ width, height }) {
    return this.page.setViewport({ width, height });
  }
  evaluate(fn, arg) {
    return this.page.evaluate(fn, arg);
  }
  $(selector) {
    return this.page.$(selector);
  }
  // DOM reads and waits: one call into the page when the element is there or the condition holds (runOn).
  #run(selector, all, fn, arg) {
    return runOn((src) => this.page.evaluate(src), selector, all, fn, arg);
  }
  async $$eval(selector, fn, arg) {
    return (await this.#run(selector, true, fn, arg)).value;
  }
  async $eval(selector, fn, arg) {
    const got = await this.#run(selector, false, fn, arg);
    if (got.missing) throw new Error(`$eval: no element matches ${selector}`);
    return got.value;
  }
  // `fn` on the element once there is one (Playwright's auto-waiting: for an element attached to the page).
  async #onElement(selector, fn, arg) {
    let got = await this.#run(selector, false, fn, arg);
    if (got.missing) {
      await this.waitForSelector(selector, { state: 'attached' });
      got = await this.#run(selector, false, fn, arg);
    }
    return got.value;
  }
  waitForTimeout(ms) {
    return new Promise((r) => setTimeout(r, ms));
  }
  // Waits first look once (holdsNow); they resolve to nothing (no handle).
  #holds(fn, args) {
    return holdsNow((src) => this.page.evaluate(src), fn, args);
  }
  async waitForFunction(fn, arg, { timeout = 30000 } = {}) {
    if (await this.#holds(fn, [arg])) return;
    await this.page.waitForFunction(fn, { polling: POLL, timeout }, arg);
  }
  // Playwright's states (shown): 'visible' (the default), 'hidden', 'attached', 'detached'.
  async waitForSelector(selector, { state = 'visible', timeout = 30000 } = {}) {
    if (await this.#holds(shown, [selector, state])) return;
    await this.page.waitForFunction(shown, { polling: POLL, timeout }, selector, state);
  }
  fill(selector, value) {
    return this.#onElement(
      selector,
      (el, v) => {
        el.focus();
        // the native setter, as a user's typing would (a framework's own setter is not involved here)
        Object.getOwnPropertyDescriptor(Object.getPrototypeOf(el), 'value').set.call(el, v);
        el.dispatchEvent(new Event('input', { bubbles: true }));
      },
      value,
    );
  }
  selectOption(selector, value) {
    return this.#onElement(
      selector,
      (el, v) => {
        el.value = v;
        el.dispatchEvent(new Event('input', { bubbles: true }));
        el.dispatchEvent(new Event('change', { bubbles: true }));
      },
      value,
    );
  }
  async click(selector) {
    await this.waitForSelector(selector);
    await this.page.click(selector);
  }
  dispatchEvent(selector, type) {
    return this.#onElement(selector, (el, t) => el.dispatchEvent(new Event(t, { bubbles: true })), type);
  }
  textContent(selector) {
    return this.#onElement(selector, (el) => el.textContent);
  }
  inputValue(selector) {
    return this.#onElement(selector, (el) => el.value);
  }
  getAttribute(selector, name) {
    return this.#onElement(selector, (el, n) => el.getAttribute(n), name);
  }
  isVisible(selector) {
    return this.page.evaluate((s) => {
      const el = document.querySelector(s);
      return !!el && el.getClientRects().length > 0 && getComputedStyle(el).visibility !== 'hidden';
    }, selector);
  }
  locator(selector) {
    const page = this.page;
    return {
      nth: (n) => ({
        evaluate: async (fn, arg) => (await page.$$(selector))[n].evaluate(fn, arg),
        click: async ({ position } = {}) => {
          const el = (await page.$$(selector))[n];
          await el.scrollIntoView();
          const box = await el.boundingBox();
          await page.mouse.click(box.x + (position?.x ?? box.width / 2), box.y + (position?.y ?? box.height / 2));
        },
      }),
    };
  }
}

// Records what the page downloads (render.js saves through a.click() on an <a download>): each click
// appends { name, type, size, text | dataURL } to window.__downloads instead of saving a file, in
// both engines alike.
const captureDownloads = () => {
  window.__downloads = [];
  const blobs = new Map(); // object URL -> its blob (the page's CSP lets no script fetch blob: URLs)
  const createObjectURL = URL.createObjectURL;
  URL.createObjectURL = (blob) => {
    const url = createObjectURL(blob);
    blobs.set(url, blob);
    return url;
  };
  const click = HTMLAnchorElement.prototype.click;
  HTMLAnchorElement.prototype.click = function () {
    const blob = blobs.get(this.href);
    if (!this.download || !blob) return click.call(this);
    const [name, text] = [this.download, !blob.type.startsWith('image/png')];
    window.__downloads.push(
      new Promise((resolve) => {
        const reader = new FileReader();
        reader.onload = () => resolve({ name, type: blob.type, size: blob.size, [text ? 'text' : 'dataURL']: reader.result });
        if (text) reader.readAsText(blob);
        else reader.readAsDataURL(blob);
      }),
    );
  };
};

// Clicks `selector` and returns the file it downloads ({ name, type, size, text or dataURL }).
export async function download(page, selector) {
  const n = await page.evaluate(() => window.__downloads.length);
  await page.click(selector);
  await page.waitForFunction((k) => window.__downloads.length > k, n, { timeout: 30000 });
  return page.evaluate((k) => window.__downloads[k], n);
}

// Runs a script's source in the page, whatever its Content-Security-Policy (axe-core).
// (the source is evaluated by the driver as a script of its own: an eval() in the page would be refused).
export function inject(page, source) {
  return page.evaluate(`${source}\n;0`);
}

// Opens the page and records console errors, page errors and every request that leaves its origin.
// Options: width/height of the viewport, init (a script run before the page's own), ready (false: do
// not wait for the page to say it is ready).
export async function openPage(browser, url, { width = 1200, height = 900, init, ready = true } = {}) {
  const page = await browser.newPage({ width, height });
  await page.addInitScript(captureDownloads);
  if (init) await page.addInitScript(init);
  const problems = { console: [], pageErrors: [], foreign: [] };
  const origin = new URL(url).origin;
  page.on('console', (m) => m.type() === 'error' && problems.console.push(m.text()));
  page.on('pageerror', (e) => problems.pageErrors.push(e.message));
  page.on('request', (r) => {
    const u = new URL(r.url());
    if (!['data:', 'blob:'].includes(u.protocol) && u.origin !== origin) problems.foreign.push(r.url());
  });
  await page.goto(url);
  if (ready) await page.waitForSelector('body[data-ready="true"]', { timeout: 60000 });
  return { page, problems };
}

// The page server and the browsers of this process, one of each for all the describe blocks that run
// in it (those of one test file, or of all of them under run.mjs): each started by the first block that
// needs it and stopped after the last lets it go.
function refCounted(start) {
  let users = 0;
  let running = null;
  return {
    acquire() {
      users++;
      running ??= start();
      return running;
    },
    async release() {
      if (--users > 0 || !running) return;
      const r = running;
      running = null;
      await (await r.catch(() => null))?.close();
    },
  };
}
const shared = {
  server: refCounted(servePage),
  ...Object.fromEntries(ENGINES.map((e) => [e, refCounted(() => launchBrowser(e))])),
};

// Keeps the page server and every engine's browser running from before the first test of the
// enclosing describe block to after its last (run.mjs: between two files, when no block holds them).
export function holdShared() {
  const all = Object.values(shared);
  before(() => Promise.all(all.map((s) => s.acquire())));
  after(() => Promise.all(all.map((s) => s.release())));
}

// One page at the default URL for a suite's tests that only read it (or restore what they change):
// opened and rendered before them, closed after them; `opened({ page, problems })` hands it over.
export function pageAtDefaults(suite, opened) {
  let page;
  before(async () => {
    const p = await openPage(suite.browser, suite.server.url);
    page = p.page;
    await page.waitForSelector('[data-figure="distinguishability"][data-rendered="true"]', { timeout: 60000 });
    opened(p);
  });
  after(() => page?.close());
}

// The page server and a browser of `engine` for a describe block, from before its tests to after them:
// suite.browser opens the block's pages in browser contexts of its own (launchBrowser's newContext), in
// the browser the process shares.
export function pageSuite(engine = 'chromium') {
  const suite = { engine };
  before(async () => {
    const [server, browser] = await Promise.all([shared.server.acquire(), shared[engine].acquire()]);
    suite.server = server;
    suite.browser = browser.newContext();
  });
  after(async () => {
    await suite.browser?.close();
    await Promise.all([shared.server.release(), shared[engine].release()]);
  });
  return suite;
}

// run.mjs runs every test file in one process: it calls collectSuites() before importing each, so
// that the file's inEachEngine blocks are kept in the list returned, and registers them later itself
// (inside a describe block of its own, which runs two files at a time: each block below sets the
// concurrency of its tests, which would otherwise inherit that 2). Off (null) otherwise.
let collected = null;
export function collectSuites(on = true) {
  collected = on ? [] : null;
  return collected;
}

// The tests of `fn(suite)` once per engine, each engine in a describe block of its own name with its
// own browser context (one browser per engine and process). The engines run one after the other, or
// with { concurrent: true } at the same time (each engine's tests still one at a time, in order): for
// the tests that wait on the page more than they compute, not for those that time it. { only: [...] }
// limits the block to those engines (of the ones POSENC_BROWSERS runs), for a check only they can make.
export function inEachEngine(title, fn, { concurrent = false, only = null } = {}) {
  if (collected) {
    collected.push(() => inEachEngine(title, fn, { concurrent, only }));
    return;
  }
  const engines = ENGINES.filter((e) => !only || only.includes(e));
  if (!concurrent || engines.length < 2) {
    for (const engine of engines) describe(`${title} (${engine})`, { concurrency: 1 }, () => fn(pageSuite(engine)));
    return;
  }
  describe(title, { concurrency: engines.length }, () => {
    for (const engine of engines) describe(`${title} (${engine})`, { concurrency: 1 }, () => fn(pageSuite(engine)));
  });
}

// An init script for openPage: records the main thread's long tasks (over 50 ms) in window.__longTasks
// through Chromium's Long Tasks API, installed before the page's own scripts run.
export const recordLongTasks = () => {
  window.__longTasks = [];
  new PerformanceObserver((list) => {
    for (const e of list.getEntries()) window.__longTasks.push(Math.round(e.duration));
  }).observe({ type: 'longtask', buffered: true });
};
