// The npm packages the notebooks use, and nothing else: the bare imports of the notebooks, of lib/ and of the
// page's figure specs they draw (web/figures/), plus Deno, their kernel. scripts/jupyter.sh installs this
// folder's package.json and package-lock.json instead of the repository's (which brings bundlers, linters
// and browser drivers the notebooks never load), at the versions of the repository's package-lock.json:
// both files are cut out of it here, so the two locks cannot disagree.
//
//   node web/notebooks/npm/lock.mjs          rewrites package.json and package-lock.json from ../../../package-lock.json
//   node web/notebooks/npm/lock.mjs --check  exits 1 (naming the difference) when they are not what it would write
//
// tests/notebooks/deps.test.js runs --check, and checks that every bare import of the notebooks is listed.
import { readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

export const PACKAGES = Object.freeze(['deno', '@observablehq/plot', 'linkedom', '@resvg/resvg-wasm']);

const here = (f) => fileURLToPath(new URL(f, import.meta.url));
const ROOT_LOCK = here('../../../package-lock.json');

// npm's lookup: a dependency of the package at `from` is the nearest node_modules/<name> up its path.
function locate(packages, from, name) {
  for (let dir = from; ;) {
    const path = `${dir ? `${dir}/` : ''}node_modules/${name}`;
    if (packages[path]) return path;
    if (!dir) return null;
    const cut = dir.lastIndexOf('/node_modules/');
    dir = cut < 0 ? '' : dir.slice(0, cut);
  }
}

// { manifest, lock }: the packages above and everything they depend on (optional platform binaries
// included, as the root lock lists them), each entry copied from the root lock unchanged.
export function notebookLock(rootLock = JSON.parse(readFileSync(ROOT_LOCK, 'utf8'))) {
  const all = rootLock.packages;
  const kept = {};
  const visit = (path) => {
    if (kept[path]) return;
    const { dev, devOptional, ...entry } = all[path]; // dev: a flag of the root manifest, not of this one
    kept[path] = entry;
    const deps = { ...entry.dependencies, ...entry.optionalDependencies };
    for (const [name, meta] of Object.entries(entry.peerDependenciesMeta ?? {})) if (!meta.optional) deps[name] = true;
    for (const name of Object.keys(deps)) {
      const found = locate(all, path, name);
      if (found) visit(found);
      else if (!(name in (entry.optionalDependencies ?? {}))) throw new Error(`notebook lock: ${path} needs ${name}, which the root lock lacks`);
    }
    if (devOptional || (dev && entry.optional)) kept[path].optional = true;
  };
  const dependencies = {};
  for (const name of PACKAGES) {
    const path = `node_modules/${name}`;
    if (!all[path]) throw new Error(`notebook lock: the root lock has no ${path}`);
    dependencies[name] = all[path].version; // exact: the version of the root lock
    visit(path);
  }
  const manifest = {
    name: 'posenc-notebooks',
    private: true,
    description: "The npm packages posenc's notebooks use (written by lock.mjs from the repository's package-lock.json)",
    dependencies,
  };
  const sorted = Object.fromEntries(
    Object.keys(kept)
      .sort()
      .map((k) => [k, kept[k]]),
  );
  const lock = {
    name: manifest.name,
    lockfileVersion: rootLock.lockfileVersion,
    requires: true,
    packages: { '': { name: manifest.name, dependencies }, ...sorted },
  };
  return { manifest, lock };
}

const FILES = { manifest: here('package.json'), lock: here('package-lock.json') };
const json = (x) => `${JSON.stringify(x, null, 2)}\n`;

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const want = notebookLock();
  if (process.argv.includes('--check')) {
    let ok = true;
    for (const [k, file] of Object.entries(FILES)) {
      let have = '';
      try {
        have = readFileSync(file, 'utf8');
      } catch {}
      if (have !== json(want[k])) {
        console.error(`${file} is not what web/notebooks/npm/lock.mjs writes from package-lock.json: run it`);
        ok = false;
      }
    }
    process.exit(ok ? 0 : 1);
  }
  for (const [k, file] of Object.entries(FILES)) writeFileSync(file, json(want[k]));
  console.log(`notebook lock: ${Object.keys(want.lock.packages).length - 1} packages`);
}
