// Serves the built page (web/dist) with `vite preview` on a free loopback port, and launches
// Debian's Chromium through playwright-core (TOOLCHAIN.md: no browser download here).
import { spawn } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { after, before } from 'node:test';
import { chromium } from 'playwright-core';

export const root = new URL('../..', import.meta.url).pathname;
export const artifacts = join(root, 'test-artifacts');
mkdirSync(artifacts, { recursive: true });

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
    {
      cwd: root,
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  const url = `http://127.0.0.1:${port}/`;
  for (let i = 0; i < 100; i++) {
    try {
      if ((await fetch(url)).ok) return { url, close: () => proc.kill() };
    } catch {}
    await new Promise((r) => setTimeout(r, 100));
  }
  proc.kill();
  throw new Error('vite preview did not start');
}

export async function launchBrowser() {
  return chromium.launch({
    executablePath: process.env.CHROMIUM_PATH ?? '/usr/bin/chromium',
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
}

// Opens the page and records console errors, page errors and every request that leaves its origin.
// Options: width/height of the viewport, bypassCSP (to inject axe-core), init (a script run before the page's own).
export async function openPage(browser, url, { width = 1200, height = 900, bypassCSP = false, init } = {}) {
  const page = await browser.newPage({ viewport: { width, height }, bypassCSP });
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
  await page.waitForSelector('body[data-ready="true"]', { timeout: 30000 });
  return { page, problems };
}

// One page server and one browser for a test file, started before its tests and closed after.
export function pageSuite() {
  const suite = {};
  before(async () => {
    suite.server = await servePage();
    suite.browser = await launchBrowser();
  });
  after(async () => {
    await suite.browser?.close();
    suite.server?.close();
  });
  return suite;
}

// An init script for openPage: records the main thread's long tasks in window.__longTasks (installed
// before the page's own scripts run).
export const recordLongTasks = () => {
  window.__longTasks = [];
  new PerformanceObserver((list) => {
    for (const e of list.getEntries()) window.__longTasks.push(Math.round(e.duration));
  }).observe({ type: 'longtask', buffered: true });
};
