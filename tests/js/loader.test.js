import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, test } from 'node:test';
import { load, simdSupported, version } from 'posenc';

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

  test('every method declared on Posenc in index.d.ts exists', async () => {
    const dts = readFileSync(new URL('../../src/js/index.d.ts', import.meta.url), 'utf8');
    const body = dts.slice(dts.indexOf('export interface Posenc {'));
    const block = body.slice(0, body.indexOf('\n}\n'));
    const methods = [...block.matchAll(/^ {2}(\w+)\(/gm)].map((m) => m[1]);
    const props = [...block.matchAll(/^ {2}readonly (\w+):/gm)].map((m) => m[1]);
    assert.ok(methods.length >= 6, `found ${methods}`);
    for (const pe of [await load(), await load({ simd: false })]) {
      for (const m of methods) assert.equal(typeof pe[m], 'function', `${pe.backend} lacks ${m}()`);
      for (const p of props) assert.notEqual(pe[p], undefined, `${pe.backend} lacks ${p}`);
    }
  });
});
