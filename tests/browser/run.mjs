// Every page test file (tests/browser/*.test.js) in one process, with one page server, one Chromium and
// one Firefox for all of them (server.js shares them per process), instead of one of each per file:
//   node --test tests/browser/run.mjs
// Each file's blocks still open their pages in browser contexts of their own, as when the file runs on
// its own (node --test tests/browser/plots.test.js). Two files run at a time, in the order of their
// names, as `node --test --test-concurrency=2 tests/browser/*.test.js` would run them.
import { readdirSync } from 'node:fs';
import { describe } from 'node:test';
import { collectSuites, holdShared } from './server.js';

const FILES_AT_ONCE = 2;

const here = new URL('.', import.meta.url);
const files = readdirSync(here)
  .filter((f) => f.endsWith('.test.js'))
  .sort();
const suites = [];
for (const file of files) {
  const blocks = collectSuites();
  await import(new URL(file, here));
  suites.push([file, blocks]);
}
collectSuites(false);

describe('page tests', { concurrency: FILES_AT_ONCE }, () => {
  holdShared();
  for (const [file, blocks] of suites) describe(file, { concurrency: 1 }, () => blocks.forEach((register) => register()));
});
