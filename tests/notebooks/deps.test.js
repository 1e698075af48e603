// The npm packages scripts/jupyter.sh installs for the notebooks (web/notebooks/npm/): exactly the ones the
// notebooks load, at the versions of the repository's package-lock.json.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { builtinModules } from 'node:module';
import { dirname, join, resolve } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { PACKAGES, notebookLock } from '../../web/notebooks/npm/lock.mjs';
import { NOTEBOOKS, codeOf, notebooks } from './records.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const read = (f) => JSON.parse(readFileSync(join(ROOT, f), 'utf8'));
const SPECIFIER = /(?:^|[\s;])(?:import|export)\s[^'"]*?from\s*'([^']+)'|import\(\s*'([^']+)'\s*\)/g;
const specifiers = (code) => [...code.replace(/^\s*\/\/.*$/gm, '').matchAll(SPECIFIER)].map((m) => m[1] ?? m[2]); // comments left out
const packageOf = (s) =>
  s
    .split('/')
    .slice(0, s.startsWith('@') ? 2 : 1)
    .join('/');

// The bare imports of the notebooks' code and of every module it reaches through relative imports
// (lib/, the page's figure specs, posenc's own src/js through the 'posenc' self-reference).
function bareImports() {
  const bare = new Set();
  const seen = new Set();
  const exportsOf = read('package.json').exports;
  const follow = (file) => {
    if (seen.has(file)) return;
    seen.add(file);
    scan(readFileSync(file, 'utf8'), dirname(file));
  };
  const scan = (code, dir) => {
    for (const s of specifiers(code)) {
      if (s.startsWith('.')) follow(resolve(dir, s));
      else if (s === 'posenc' || s.startsWith('posenc/')) follow(join(ROOT, exportsOf[s === 'posenc' ? '.' : `./${s.slice(7)}`].default));
      else if (!s.startsWith('node:') && !builtinModules.includes(s)) bare.add(packageOf(s));
    }
  };
  for (const { nb } of notebooks()) scan(codeOf(nb), NOTEBOOKS);
  return { bare, seen };
}

test('web/notebooks/npm lists every package the notebooks import, and Deno, and nothing else', () => {
  const { bare, seen } = bareImports();
  assert.ok(
    [...seen].some((f) => f.endsWith('/web/notebooks/lib/display.js')) && [...seen].some((f) => f.endsWith('/src/js/index.js')),
    'the scan reached lib/ and posenc',
  );
  assert.deepEqual([...bare].sort(), PACKAGES.filter((p) => p !== 'deno').sort());
  assert.deepEqual(Object.keys(read('web/notebooks/npm/package.json').dependencies).sort(), [...PACKAGES].sort());
});

test("web/notebooks/npm's package.json and package-lock.json are cut from package-lock.json (else: node web/notebooks/npm/lock.mjs)", () => {
  const { manifest, lock } = notebookLock();
  assert.deepEqual(read('web/notebooks/npm/package.json'), manifest);
  assert.deepEqual(read('web/notebooks/npm/package-lock.json'), lock);
  const root = read('package-lock.json').packages;
  for (const [path, entry] of Object.entries(lock.packages)) {
    if (!path) continue;
    assert.equal(entry.version, root[path]?.version, `${path}: the version of package-lock.json`);
    assert.equal(entry.integrity, root[path].integrity, `${path}: the integrity of package-lock.json`);
  }
  for (const [name, version] of Object.entries(manifest.dependencies)) assert.equal(version, root[`node_modules/${name}`].version, name);
});
