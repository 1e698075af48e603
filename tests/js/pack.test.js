// Isolated npm smoke test: pack the package, install the tarball into an empty folder, and use it as
// a user would: from Node, Deno and Bun, and bundled with no configuration by Vite, webpack, esbuild
// and Rollup (each bundle run in Node, or in headless Chromium for browser targets, on every run).
// A bundle, with the warnings and errors its bundler reported, is kept in build/bundles/<name>, keyed by
// a hash of everything it is made from: the tarball's bytes, this file (the apps and the bundlers'
// options), package-lock.json and the installed version of each bundler, and Node's version. While the
// key is the same the bundler would be given the same inputs: the kept bundle and messages are
// checked and run, and the bundler is not run again.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { tmpdir } from 'node:os';
import { extname, join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { after, before, describe, test } from 'node:test';
import { launchBrowser } from '../browser/server.js';

const root = new URL('../..', import.meta.url).pathname;
const work = mkdtempSync(join(tmpdir(), 'posenc-pack-'));
after(() => rmSync(work, { recursive: true, force: true }));

const npm = (args, cwd) => execFileSync('npm', [...args, '--no-audit', '--no-fund', '--loglevel=error'], { cwd, encoding: 'utf8' });
const gzipped = (path) => gzipSync(readFileSync(path), { level: 9 }).length;

// The app every runtime and bundler runs: both backends, one value checked against Math.sin. It
// prints a JSON line in Node, Deno and Bun, and sets <body data-result> in a browser.
const appSource = (entry) => `import { load } from '${entry}';
async function main() {
  const [pe, scalar] = [await load(), await load({ simd: false })];
  const v = [pe, scalar].map((p) => p.sinusoidal({ length: 4, dModel: 4, base: 100 }).data[4]);
  return { backends: [pe.backend, scalar.backend], archs: [pe.simdArch, scalar.simdArch], v };
}
const show = (key, value) =>
  typeof document === 'undefined' ? console.log(JSON.stringify({ [key]: value })) : (document.body.dataset[key] = JSON.stringify(value));
main().then((r) => show('result', r), (e) => show('error', String(e && e.message)));
`;

function checkResult(r, where) {
  assert.equal(r.error, undefined, `${where}: ${r.error}`);
  assert.deepEqual(r.result.backends, ['wasm-simd', 'wasm-scalar'], where);
  assert.deepEqual(r.result.archs, ['wasm', 'emulated'], where);
  for (const v of r.result.v) assert.ok(Math.abs(v - Math.sin(1)) < 1e-7, `${where}: ${v}`);
}

const project = join(work, 'app');
let tarball;
let info;

describe('npm pack', () => {
  before(() => {
    [info] = JSON.parse(npm(['pack', '--json', '--pack-destination', work], root));
    tarball = join(work, info.filename);
  });

  test('ships only what users need, and the wasm + glue stay small', (t) => {
    const files = info.files.map((f) => f.path).sort();
    for (const f of [
      'package.json',
      'README.md',
      'LICENSE',
      'src/js/index.js',
      'src/js/index.d.ts',
      'src/js/inline.js',
      'src/js/inline.d.ts',
      'src/js/loader.js',
      'src/js/wasm/posenc-simd.wasm',
      'src/js/wasm/posenc-simd.mjs',
      'src/js/wasm/posenc-simd.inline.js',
      'src/js/wasm/posenc-scalar.wasm',
      'src/js/wasm/posenc-scalar.mjs',
      'src/js/wasm/posenc-scalar.inline.js',
      'src/js/lab/index.js',
      'src/js/lab/index.d.ts',
      'src/js/wasm/posenc-lab-simd.wasm',
      'src/js/wasm/posenc-lab-scalar.wasm',
    ])
      assert.ok(files.includes(f), `tarball lacks ${f}`);
    const docs = [
      'package.json',
      'README.md',
      'LICENSE',
      'CHANGELOG.md',
      'CONTRIBUTING.md',
      'docs/BENCHMARKS.md',
      'docs/LIMITS.md',
      'docs/screenshot-lab.png',
    ];
    assert.ok(
      files.every((f) => docs.includes(f) || f.startsWith('src/js/')),
      files.join(', '),
    );
    // every relative link of the README resolves inside the tarball (npm shows the README without the repository)
    const readme = readFileSync(join(root, 'README.md'), 'utf8');
    const links = [...readme.matchAll(/\]\(([^)#\s]+)(#[^)]*)?\)/g)].map((m) => m[1]).filter((l) => !/^[a-z]+:/.test(l));
    // documents ship; links into the repository's sources (the notebooks, 3 MB with their outputs) must at least exist
    const isDoc = (l) => l.endsWith('.md') || l.startsWith('docs/');
    assert.deepEqual(
      links.filter((l) => isDoc(l) && !files.includes(l)),
      [],
      'README links to documents the tarball lacks',
    );
    assert.deepEqual(
      links.filter((l) => !existsSync(join(root, l))),
      [],
      'README links to files the repository lacks',
    );
    for (const flavour of ['simd', 'scalar']) {
      // each module is budgeted at 60 KiB gzip (Node's zlib at level 9, which comes out a few hundred bytes
      // larger than the gzip -9 command's): the core and the lab (posenc/lab: the teaching models and the
      // toy transformer's forward and backward passes) both sit close under it; the sizes and the margins
      // are printed below
      const lab = gzipped(join(root, `src/js/wasm/posenc-lab-${flavour}.wasm`));
      assert.ok(lab <= 60 * 1024, `${flavour}: the lab's wasm is ${lab} bytes gzipped, over the 60 KB budget`);
      const wasm = gzipped(join(root, `src/js/wasm/posenc-${flavour}.wasm`));
      const glue = gzipped(join(root, `src/js/wasm/posenc-${flavour}.mjs`));
      const total = wasm + glue;
      assert.ok(total <= 150 * 1024, `${flavour}: wasm + glue = ${total} bytes gzipped, over 150 KB`);
      assert.ok(wasm <= 60 * 1024, `${flavour}: the wasm is ${wasm} bytes gzipped, over the 60 KB budget`);
      // base64 costs about a third more than the binary after gzip (README: "Bundlers")
      const inline = gzipped(join(root, `src/js/wasm/posenc-${flavour}.inline.js`));
      assert.ok(inline <= 1.45 * wasm, `${flavour}: inline ${inline} bytes gzipped vs ${wasm} for the .wasm`);
      const under = (bytes, budget) => `${bytes} B (${(bytes / 1024).toFixed(2)} KiB), ${budget - bytes} B under ${budget / 1024} KiB`;
      t.diagnostic(
        `${flavour}, gzip level 9: core wasm ${under(wasm, 60 * 1024)}; lab wasm ${under(lab, 60 * 1024)}; ` +
          `glue ${glue} B; wasm + glue ${under(total, 150 * 1024)}; inline ${inline} B, ${(inline / wasm).toFixed(3)}x the .wasm (at most 1.45x)`,
      );
    }
  });

  test('installs into an empty project and computes from Node', () => {
    mkdirSync(join(project, 'src'), { recursive: true });
    writeFileSync(join(project, 'package.json'), JSON.stringify({ name: 'app', private: true }));
    npm(['install', '--offline', tarball], project);
    writeFileSync(join(project, 'main.mjs'), appSource('posenc'));
    writeFileSync(join(project, 'inline.mjs'), appSource('posenc/inline'));
    writeFileSync(
      join(project, 'lab-load.mjs'),
      "import { loadLab } from 'posenc/lab';\nloadLab().then(() => console.log('{}'), (e) => console.log(JSON.stringify({ error: e.message })));\n",
    );
    for (const app of ['main.mjs', 'inline.mjs'])
      checkResult(JSON.parse(execFileSync('node', [app], { cwd: project, encoding: 'utf8' })), `node ${app}`);
    // posenc/lab: the teaching module, beside the core
    writeFileSync(
      join(project, 'lab.mjs'),
      `import { loadLab } from 'posenc/lab';
const lab = await loadLab();
const r = lab.permutationLab({ encoding: 'none', permutation: [5, 4, 3, 2, 1, 0] });
console.log(JSON.stringify({ backend: lab.backend, error: r.equivarianceError, table: lab.sinusoidal({ length: 2, dModel: 2 }).data[3] }));`,
    );
    const lab = JSON.parse(execFileSync('node', ['lab.mjs'], { cwd: project, encoding: 'utf8' }));
    assert.equal(lab.backend, 'wasm-simd');
    assert.ok(lab.error < 1e-6, `no positions: shuffled outputs are the original's, shuffled (error ${lab.error})`);
    assert.equal(lab.table, Math.fround(Math.cos(1)));
  });

  // Node 18, the oldest `engines` allows: the npm package `node` ships its binary (installed once into build/node18).
  test('and from Node 18', () => {
    const prefix = join(root, 'build/node18');
    const node18 = join(prefix, 'node_modules/.bin/node');
    if (!existsSync(node18)) npm(['install', '--prefix', prefix, 'node@18.20.8'], root);
    assert.match(execFileSync(node18, ['--version'], { encoding: 'utf8' }), /^v18\./);
    for (const app of ['main.mjs', 'inline.mjs'])
      checkResult(JSON.parse(execFileSync(node18, [app], { cwd: project, encoding: 'utf8' })), `node 18 ${app}`);
  });

  const runtime = (name, args) => () => {
    for (const app of ['main.mjs', 'inline.mjs']) {
      const out = execFileSync(join(root, 'node_modules/.bin', name), [...args, app], {
        cwd: project,
        encoding: 'utf8',
        env: { ...process.env, DENO_NO_UPDATE_CHECK: '1', NO_COLOR: '1' },
      });
      checkResult(JSON.parse(out), `${name} ${app}`);
    }
  };
  const missing = (bin) => !existsSync(join(root, 'node_modules/.bin', bin)) && `${bin} is not installed`;
  test('and from Deno', { skip: missing('deno') }, runtime('deno', ['run', '--allow-read', '--allow-env']));
  test('Deno without permissions: posenc/inline runs; posenc says what it needs', { skip: missing('deno') }, () => {
    const deno = (app) =>
      JSON.parse(
        execFileSync(join(root, 'node_modules/.bin/deno'), ['run', '--no-prompt', app], {
          cwd: project,
          encoding: 'utf8',
          env: { ...process.env, DENO_NO_UPDATE_CHECK: '1', NO_COLOR: '1' },
        }),
      );
    checkResult(deno('inline.mjs'), 'deno inline.mjs without flags');
    assert.match(deno('main.mjs').error, /^posenc\.load: .*--allow-read.*'posenc\/inline'/);
    // the lab has no inline build: the hint says so rather than name one
    const lab = deno('lab-load.mjs').error;
    assert.match(lab, /^posenc\.loadLab: .*--allow-read \(posenc\/lab has no inline build\)/);
    assert.doesNotMatch(lab, /import \{ load \} from 'posenc\/inline'/);
  });
  test('a copy without built modules (as from a git URL) says so', () => {
    const copy = join(work, 'unbuilt');
    mkdirSync(join(copy, 'src/js'), { recursive: true });
    execFileSync('tar', ['-xzf', tarball, '-C', copy, '--strip-components=1', '--exclude=package/src/js/wasm/*.wasm']);
    writeFileSync(join(copy, 'main.mjs'), appSource('./src/js/index.js'));
    const r = JSON.parse(execFileSync('node', ['main.mjs'], { cwd: copy, encoding: 'utf8' }));
    assert.match(r.error, /^posenc\.load: cannot read .*ENOENT.*no built \.wasm modules/);
  });
  test('and from Bun', { skip: missing('bun') }, runtime('bun', ['run']));
});

// Serves a folder on a free loopback port.
function serve(dir) {
  const types = { '.html': 'text/html', '.js': 'text/javascript', '.mjs': 'text/javascript', '.wasm': 'application/wasm' };
  const server = createServer((req, res) => {
    const path = join(dir, decodeURIComponent(new URL(req.url, 'http://x').pathname));
    if (!path.startsWith(dir) || !existsSync(path) || path.endsWith('/')) return res.writeHead(404).end();
    res.writeHead(200, { 'content-type': types[extname(path)] ?? 'application/octet-stream' }).end(readFileSync(path));
  });
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve({ url: `http://127.0.0.1:${server.address().port}/`, server })));
}

// The bundlers' inputs besides the installed tarball, hashed once (the tarball's hash is added per bundle).
const BUNDLERS = ['vite', 'webpack', 'esbuild', 'rollup', '@rollup/plugin-node-resolve'];
const sha256 = (data) => createHash('sha256').update(data).digest('hex');
const bundleInputs = () =>
  JSON.stringify({
    tarball: sha256(readFileSync(tarball)),
    test: sha256(readFileSync(new URL(import.meta.url))),
    lock: sha256(readFileSync(join(root, 'package-lock.json'))),
    bundlers: BUNDLERS.map((b) => [b, JSON.parse(readFileSync(join(root, 'node_modules', b, 'package.json'), 'utf8')).version]),
    node: process.version,
  });

describe('bundlers, no configuration', () => {
  let browser;
  let inputs;
  const out = (name) => join(project, 'dist', name);
  // The output folder `name` (under dist/) made by `build`, which returns the bundler's messages (warnings
  // and errors, as the test checks them): from build/bundles/<name> when its key is this run's.
  async function bundled(t, name, build) {
    inputs ??= bundleInputs();
    const key = sha256(`${name} ${inputs}`);
    const kept = join(root, 'build/bundles', name);
    const stamp = existsSync(join(kept, 'stamp.json')) ? JSON.parse(readFileSync(join(kept, 'stamp.json'), 'utf8')) : undefined;
    if (stamp?.key === key) {
      t.diagnostic(`${name}: the bundle kept in build/bundles (same inputs)`);
      rmSync(out(name), { recursive: true, force: true });
      cpSync(join(kept, 'dist'), out(name), { recursive: true });
      return stamp.messages;
    }
    rmSync(kept, { recursive: true, force: true });
    const messages = await build();
    cpSync(out(name), join(kept, 'dist'), { recursive: true });
    writeFileSync(join(kept, 'stamp.json'), JSON.stringify({ key, messages }));
    return messages;
  }
  before(async () => {
    browser = await launchBrowser();
  });
  after(() => browser?.close());

  // Runs a browser bundle: `page` is the HTML file in `dir` that loads it.
  async function inChromium(dir, page = 'index.html') {
    const { url, server } = await serve(dir);
    const tab = await browser.newPage();
    const errors = [];
    tab.on('pageerror', (e) => errors.push(e.message));
    try {
      await tab.goto(url + page);
      await tab.waitForSelector('body[data-result], body[data-error]', { state: 'attached', timeout: 120000 });
      const data = await tab.evaluate(() => ({ ...document.body.dataset }));
      assert.deepEqual(errors, []);
      return { result: data.result && JSON.parse(data.result), error: data.error && JSON.parse(data.error) };
    } finally {
      await tab.close();
      server.close();
    }
  }
  const inNode = (file) => JSON.parse(execFileSync('node', [file], { cwd: project, encoding: 'utf8' }));
  const html = (dir, script, type = 'module') =>
    writeFileSync(join(dir, 'index.html'), `<!doctype html><body><script type="${type}" src="${script}"></script>`);

  // Vite's warnings go to its log (logLevel 'warn'), as they always have: none is kept.
  const viteBundle = (t, name, entry) =>
    bundled(t, name, async () => {
      const dir = join(project, name);
      mkdirSync(dir, { recursive: true });
      writeFileSync(join(dir, 'main.js'), appSource(entry));
      html(dir, './main.js');
      const { build } = await import('vite');
      await build({ root: dir, configFile: false, logLevel: 'warn', build: { outDir: out(name), emptyOutDir: true } });
      return [];
    });

  test('Vite (build): posenc, the .wasm emitted as assets', async (t) => {
    await viteBundle(t, 'vite', 'posenc');
    checkResult(await inChromium(out('vite')), 'vite in Chromium');
  });

  async function webpackBuild(t, target, entry = 'main.mjs', name = `webpack-${target}`) {
    const messages = await bundled(t, name, async () => {
      const { default: webpack } = await import('webpack');
      const stats = await new Promise((resolve, reject) =>
        webpack(
          {
            mode: 'production',
            optimization: { minimize: false }, // Terser takes ~15 s per build on this machine and is not under test
            target,
            context: project,
            entry: `./${entry}`,
            output: { path: out(name), filename: 'main.js', chunkFilename: '[id].js' },
          },
          (err, s) => (err ? reject(err) : resolve(s)),
        ),
      );
      const { errors, warnings } = stats.toJson({ all: false, errors: true, warnings: true });
      return [...errors, ...warnings].map((w) => w.message);
    });
    assert.deepEqual(messages, [], `webpack ${target}`);
  }
  test('webpack (web and node targets): posenc, no warnings', async (t) => {
    await webpackBuild(t, 'web');
    html(out('webpack-web'), 'main.js', 'text/javascript');
    checkResult(await inChromium(out('webpack-web')), 'webpack web in Chromium');
    await webpackBuild(t, 'node');
    checkResult(inNode(join(out('webpack-node'), 'main.js')), 'webpack node in Node');
  });

  test('esbuild (browser and node platforms, ESM and its default CommonJS for Node): posenc/inline; posenc names the fix', async (t) => {
    // each build's errors and warnings, as [[outfile, [messages]]]
    const messages = await bundled(t, 'esbuild', async () => {
      const esbuild = await import('esbuild');
      const options = { absWorkingDir: project, bundle: true, logLevel: 'silent' };
      const found = [];
      for (const [platform, format, entry, outfile] of [
        ['browser', 'esm', 'inline.mjs', out('esbuild/browser.js')],
        ['node', 'esm', 'inline.mjs', out('esbuild/node.mjs')],
        ['node', 'esm', 'main.mjs', out('esbuild/node-url.mjs')],
        // esbuild's default output for Node is CommonJS, where import.meta.url is empty
        ['node', undefined, 'inline.mjs', out('esbuild/node-cjs.js')],
        ['node', undefined, 'main.mjs', out('esbuild/node-url-cjs.js')],
      ]) {
        const r = await esbuild.build({ ...options, platform, ...(format ? { format } : {}), entryPoints: [entry], outfile });
        found.push([outfile, [...r.errors, ...r.warnings]]);
      }
      return found;
    });
    assert.equal(messages.length, 5);
    for (const [outfile, list] of messages)
      assert.deepEqual(
        list.filter((m) => !/import\.meta/.test(m.text)),
        [],
        outfile,
      );
    html(out('esbuild'), 'browser.js');
    checkResult(await inChromium(out('esbuild')), 'esbuild browser in Chromium');
    checkResult(inNode(out('esbuild/node.mjs')), 'esbuild node in Node');
    checkResult(inNode(out('esbuild/node-cjs.js')), 'esbuild CommonJS in Node');
    // esbuild does not copy `new URL('./x.wasm', import.meta.url)` assets: the message says what to do.
    assert.match(inNode(out('esbuild/node-url.mjs')).error, /^posenc\.load: cannot read file:.*posenc-simd\.wasm \(ENOENT\)\. .*'posenc\/inline'/);
    assert.match(inNode(out('esbuild/node-url-cjs.js')).error, /^posenc\.load: cannot tell where the wasm-simd \.wasm file is .*'posenc\/inline'/);
  });

  test('posenc/inline bundles carry no .wasm files (Vite, webpack): the bytes are embedded', async (t) => {
    await viteBundle(t, 'vite-inline', 'posenc/inline');
    const emitted = (d) => execFileSync('find', [d, '-name', '*.wasm'], { encoding: 'utf8' }).trim();
    assert.equal(emitted(out('vite-inline')), '');
    checkResult(await inChromium(out('vite-inline')), 'vite posenc/inline in Chromium');
    await webpackBuild(t, 'web', 'inline.mjs', 'webpack-inline');
    assert.equal(emitted(out('webpack-inline')), '');
  });

  test('Rollup (+ node-resolve): posenc/inline, in Node and Chromium', async (t) => {
    const warnings = await bundled(t, 'rollup', async () => {
      const [{ rollup }, { nodeResolve }] = await Promise.all([import('rollup'), import('@rollup/plugin-node-resolve')]);
      const found = [];
      const bundle = await rollup({ input: join(project, 'inline.mjs'), plugins: [nodeResolve()], onwarn: (w) => found.push(w.message) });
      await bundle.write({ dir: out('rollup'), format: 'es', entryFileNames: '[name].mjs', chunkFileNames: '[name]-[hash].mjs' });
      await bundle.close();
      return found;
    });
    assert.deepEqual(warnings, []);
    checkResult(inNode(out('rollup/inline.mjs')), 'rollup in Node');
    html(out('rollup'), 'inline.mjs');
    checkResult(await inChromium(out('rollup')), 'rollup in Chromium');
  });
});
