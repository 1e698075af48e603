import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { describe, test } from 'node:test';
import { load, simdSupported, version } from 'posenc';
import * as inline from 'posenc/inline';
import { inspect, promisify } from 'node:util';
import { freshLoader } from './helpers.js';

const run = promisify(execFile);

const wasm = (build) => readFileSync(new URL(`../../src/js/wasm/posenc-${build}.wasm`, import.meta.url));
// A loopback port nothing listens on.
const closedPort = () =>
  new Promise((resolve) => {
    const s = createServer().listen(0, '127.0.0.1', () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
  });

describe('load()', () => {
  test('picks the SIMD build where the engine validates SIMD, and falls back to scalar on request', async () => {
    // The probe agrees with the engine on a module that uses a SIMD instruction and one that does not.
    const simdModule = new Uint8Array([
      0, 97, 115, 109, 1, 0, 0, 0, 1, 5, 1, 96, 0, 1, 123, 3, 2, 1, 0, 10, 10, 1, 8, 0, 65, 0, 253, 15, 253, 98, 11,
    ]);
    assert.equal(simdSupported(), WebAssembly.validate(simdModule));
    assert.equal(WebAssembly.validate(new Uint8Array([0, 97, 115, 109, 1, 0, 0, 0])), true);
    const pe = await load();
    assert.equal(pe.backend, simdSupported() ? 'wasm-simd' : 'wasm-scalar');
    assert.equal(pe.simdArch, simdSupported() ? 'wasm' : 'emulated');
    const scalar = await load({ simd: false });
    assert.equal(scalar.backend, 'wasm-scalar');
    assert.equal(scalar.simdArch, 'emulated');
  });

  test('returns the same instance per backend', async () => {
    assert.equal(await load(), await load());
    assert.equal(await load({ simd: false }), await load({ simd: false }));
    assert.equal(await load({ simd: true }), await load());
  });

  test('version is the package version', async () => {
    const pkg = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url)));
    assert.equal(version, pkg.version);
    assert.equal((await load()).version, pkg.version);
  });

  test('rejects bad options with TypeError (a rejected promise, never a synchronous throw)', async () => {
    for (const bad of [5, { simd: 'yes' }, { wasmBinary: 'x' }, { wasmURL: 3 }]) {
      let pending;
      assert.doesNotThrow(() => (pending = load(bad)));
      await assert.rejects(pending, TypeError);
    }
  });

  test('every method declared on Posenc in index.d.ts exists, and on Lab in lab/index.d.ts', async () => {
    const declared = (file, name) => {
      const dts = readFileSync(new URL(file, import.meta.url), 'utf8');
      const body = dts.slice(dts.indexOf(`export interface ${name} `));
      const block = body.slice(0, body.indexOf('\n}\n'));
      return {
        methods: [...block.matchAll(/^ {2}(\w+)\(/gm)].map((m) => m[1]),
        props: [...block.matchAll(/^ {2}readonly (\w+):/gm)].map((m) => m[1]),
      };
    };
    const core = declared('../../src/js/index.d.ts', 'Posenc');
    const lab = declared('../../src/js/lab/index.d.ts', 'Lab');
    assert.ok(core.methods.length >= 6 && lab.methods.length === 3, `found ${core.methods}; ${lab.methods}`);
    const { loadLab } = await import('posenc/lab');
    for (const [pe, { methods, props }] of [
      [await load(), core],
      [await load({ simd: false }), core],
      [await loadLab(), { methods: [...core.methods, ...lab.methods], props: core.props }],
      [await loadLab({ simd: false }), { methods: [...core.methods, ...lab.methods], props: core.props }],
    ]) {
      for (const m of methods) assert.equal(typeof pe[m], 'function', `${pe.backend} lacks ${m}()`);
      for (const p of props) assert.notEqual(pe[p], undefined, `${pe.backend} lacks ${p}`);
    }
  });

  test('a method called on the promise (a missing await) says to await it, for every method of load() and loadLab()', async () => {
    const { loadLab } = await import('posenc/lab');
    for (const [entry, name] of [
      [load, 'load'],
      [loadLab, 'loadLab'],
    ]) {
      const pe = await entry();
      const methods = Object.getOwnPropertyNames(pe).filter((k) => typeof pe[k] === 'function');
      assert.ok(methods.includes('sinusoidal') && methods.includes('rope'), `${methods}`);
      if (name === 'loadLab') assert.ok(methods.includes('trainToy'), `${methods}`);
      const pending = entry();
      for (const m of methods)
        assert.throws(() => pending[m]({}), {
          name: 'TypeError',
          message: `posenc.${m}: ${name}() returns a Promise: await it first (const pe = await ${name}()), then call pe.${m}(...)`,
        });
      // still a plain promise: no enumerable keys, printed as one, and it resolves to the instance
      assert.deepEqual(Object.keys(pending), []);
      assert.match(inspect(pending), /^Promise \{\s+<pending>/);
      assert.doesNotMatch(inspect(pending), /sinusoidal/);
      assert.equal(await pending, pe);
    }
  });

  test('wasmURL and wasmBinary per build: { simd, scalar }, a single value for the selected build', async () => {
    // Fresh instances: the memoised ones above would be returned whatever the options.
    const fresh = await freshLoader('per-build');
    const scalar = await fresh({ simd: false, wasmBinary: { simd: new Uint8Array(8), scalar: wasm('scalar') } });
    assert.equal(scalar.backend, 'wasm-scalar');
    assert.equal(scalar.simdArch, 'emulated');
    const simd = await fresh({ wasmURL: { simd: new URL('../../src/js/wasm/posenc-simd.wasm', import.meta.url) } });
    assert.equal(simd.simdArch, 'wasm');
    await assert.rejects(fresh({ wasmURL: { smid: 'x.wasm' } }), /posenc\.load: wasmURL\.smid is not an option; did you mean simd\?/);
    await assert.rejects(fresh({ wasmURL: {} }), /posenc\.load: wasmURL must be a string or URL, or \{ simd, scalar \} with at least one of them/);
    await assert.rejects(fresh({ wasmBinary: { simd: 'x' } }), /posenc\.load: wasmBinary\.simd must be an ArrayBuffer or Uint8Array, got "x"/);
  });

  test('loadLab: wasmURL / wasmBinary locate the lab module, core: { wasmURL, wasmBinary } the core module', async () => {
    // a fresh process: load()'s core instance is not cached yet
    const script = `
      import { loadLab } from 'posenc/lab';
      import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
      const bytes = (f) => readFileSync(new URL('src/js/wasm/' + f, ${JSON.stringify(new URL('../../', import.meta.url).href)}));
      const errors = [];
      for (const options of [
        { core: { wasmBinary: bytes('posenc-scalar.wasm') } },
        { core: { simd: false } },
        { core: 5 },
        { core: { wasmURL: new URL('file:///nonexistent/posenc-simd.wasm') } },
      ])
        await loadLab(options).then(() => errors.push('loaded'), (e) => errors.push(e.constructor.name + ': ' + e.message));
      const lab = await loadLab({ wasmBinary: bytes('posenc-lab-simd.wasm'), core: { wasmBinary: bytes('posenc-simd.wasm') } });
      console.log(JSON.stringify({ errors, backend: lab.backend, tokens: lab.permutationLab({}).tokens.length }));`;
    const { stdout } = await run(process.execPath, ['--input-type=module', '-e', script], { cwd: new URL('../../', import.meta.url) });
    const r = JSON.parse(stdout);
    assert.equal(r.backend, 'wasm-simd');
    assert.equal(r.tokens, 6);
    assert.match(r.errors[0], /^RangeError: posenc\.loadLab: core\.wasmBinary is the wasm-scalar build, but wasm-simd was selected/);
    assert.match(r.errors[1], /^TypeError: posenc\.loadLab: core\.simd is not an option/);
    assert.match(r.errors[2], /^TypeError: posenc\.loadLab: core must be an object, got 5/);
    // a core module that cannot be read is named as loadLab's, not load()'s
    assert.match(r.errors[3], /^Error: posenc\.loadLab: the core module: cannot read file:\/\/\/nonexistent\/posenc-simd\.wasm/);
  });

  test('refuses bytes of the other build instead of reporting the wrong backend', async () => {
    const fresh = await freshLoader('wrong-build');
    await assert.rejects(fresh({ simd: false, wasmBinary: wasm('simd') }), {
      name: 'RangeError',
      message: /posenc\.load: wasmBinary is the wasm-simd build, but wasm-scalar was selected; pass \{ scalar: … \}/,
    });
    await assert.rejects(fresh({ wasmBinary: { simd: wasm('scalar') } }), /wasmBinary is the wasm-scalar build, but wasm-simd was selected/);
    await assert.rejects(
      fresh({ simd: false, wasmBinary: new Uint8Array([0, 97, 115, 109, 1, 0, 0, 0]) }),
      /does not instantiate as the wasm-scalar build/,
    );
    // and the instance still loads with the right bytes afterwards
    assert.equal((await fresh({ simd: false, wasmBinary: wasm('scalar') })).simdArch, 'emulated');
  });

  test('bytes that are not wasm: one error that says why, and nothing on the console', async () => {
    const script = `
      import { load } from 'posenc';
      import { loadLab } from 'posenc/lab';
      const errors = [];
      for (const f of [load, loadLab])
        for (const wasmBinary of [new Uint8Array(8), new Uint8Array([0, 97, 115, 109, 1, 0, 0, 0, 99])])
          await f({ wasmBinary }).then(() => errors.push('loaded'), (e) => errors.push(e.constructor.name + ': ' + e.message));
      console.log(JSON.stringify(errors));`;
    const { stdout, stderr } = await run(process.execPath, ['--input-type=module', '-e', script], { cwd: new URL('../../', import.meta.url) });
    assert.equal(stderr, '');
    const errors = JSON.parse(stdout);
    assert.equal(errors.length, 4);
    for (const [i, e] of errors.entries()) {
      assert.match(
        e,
        new RegExp(`^RangeError: posenc\\.${i < 2 ? 'load' : 'loadLab'}: wasmBinary does not instantiate as the wasm-simd build \\(CompileError: `),
      );
      assert.match(e, i % 2 ? /expected section length/ : /expected magic word 00 61 73 6d/);
      assert.doesNotMatch(e, /Aborted|ASSERTIONS/); // Emscripten's words for its own developers
    }
  });

  test('a failed download names posenc and the address', async () => {
    const fresh = await freshLoader('failed-fetch');
    const url = `http://127.0.0.1:${await closedPort()}/posenc-simd.wasm`;
    await assert.rejects(fresh({ wasmURL: url }), (e) => e.message.startsWith(`posenc.load: fetching ${url} failed (`) && e.cause !== undefined);
    // a file the caller named: the hint is about that path, not about how posenc was installed
    const missing = new URL('file:///nonexistent/posenc-simd.wasm');
    await assert.rejects(fresh({ wasmURL: missing }), (e) => {
      assert.match(e.message, /^posenc\.load: cannot read file:\/\/\/nonexistent\/posenc-simd\.wasm \(ENOENT\)\. No file is at the wasmURL given/);
      assert.doesNotMatch(e.message, /git URL|posenc\/inline/);
      return true;
    });
  });

  test("posenc/inline: the same API, both builds embedded, memoised with 'posenc'", async () => {
    assert.deepEqual(Object.keys(inline).sort(), Object.keys(await import('posenc')).sort());
    assert.equal(inline.ropeConfig, (await import('posenc')).ropeConfig);
    assert.equal(await inline.load(), await load());
    for (const build of ['simd', 'scalar']) {
      const { default: base64 } = await import(`../../src/js/wasm/posenc-${build}.inline.js`);
      assert.ok(Buffer.from(base64, 'base64').equals(wasm(build)), `posenc-${build}.inline.js is stale: run scripts/build.sh`);
    }
    // The decoding path itself runs in the bundles of tests/js/pack.test.js, where no .wasm file exists.
  });
});
