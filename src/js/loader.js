// load(): picks the wasm build (SIMD when the engine validates a SIMD probe, else scalar), fetches
// or reads its bytes, and instantiates it once per backend. The .wasm files are referenced with
// literal `new URL(..., import.meta.url)` so bundlers (Vite, webpack, esbuild) emit them as assets.
import { Posenc } from './api.js';
import { Checker, describe } from './validate.js';

// (module (func (result v128) i32.const 0 i8x16.splat i8x16.popcnt)): validates only with SIMD.
const SIMD_PROBE = new Uint8Array([0, 97, 115, 109, 1, 0, 0, 0, 1, 5, 1, 96, 0, 1, 123, 3, 2, 1, 0, 10, 10, 1, 8, 0, 65, 0, 253, 15, 253, 98, 11]);

export function simdSupported() {
  try {
    return WebAssembly.validate(SIMD_PROBE);
  } catch {
    return false;
  }
}

const BUILDS = {
  'wasm-simd': {
    glue: () => import('./wasm/posenc-simd.mjs'),
    url: () => new URL('./wasm/posenc-simd.wasm', import.meta.url),
  },
  'wasm-scalar': {
    glue: () => import('./wasm/posenc-scalar.mjs'),
    url: () => new URL('./wasm/posenc-scalar.wasm', import.meta.url),
  },
};

const instances = new Map();

async function readBytes(url) {
  if (url.protocol === 'file:') {
    // Node and Deno: read from disk (their fetch does not take file: URLs the same way). The module
    // name is a variable so that bundlers targeting browsers leave it alone.
    const fsModule = 'node:fs/promises';
    const { readFile } = await import(/* @vite-ignore */ fsModule);
    return new Uint8Array(await readFile(url));
  }
  const response = await fetch(url);
  if (!response.ok) throw new Error(`posenc.load: fetching ${url} failed with HTTP ${response.status}`);
  return new Uint8Array(await response.arrayBuffer());
}

// Always returns a promise: bad options reject (with a TypeError/RangeError) like a failed download.
export async function load(options) {
  const c = new Checker('load');
  const o = c.options(options, ['simd', 'wasmURL', 'wasmBinary']);
  const simd = o.simd === undefined ? undefined : c.bool('simd', o.simd);
  if (o.wasmURL !== undefined && typeof o.wasmURL !== 'string' && !(o.wasmURL instanceof URL))
    throw c.type(`wasmURL must be a string or URL, got ${describe(o.wasmURL)}`);
  if (o.wasmBinary !== undefined && !(o.wasmBinary instanceof ArrayBuffer || o.wasmBinary instanceof Uint8Array))
    throw c.type(`wasmBinary must be an ArrayBuffer or Uint8Array, got ${describe(o.wasmBinary)}`);
  const supported = simdSupported();
  if (simd === true && !supported) throw c.range('simd: true was requested but this engine does not support WebAssembly SIMD');
  const backend = simd === false || !supported ? 'wasm-scalar' : 'wasm-simd';
  if (!instances.has(backend)) {
    const pending = instantiate(backend, o);
    instances.set(backend, pending);
    pending.catch(() => instances.delete(backend)); // a failed load may be retried
  }
  return instances.get(backend);
}

async function instantiate(backend, o) {
  const build = BUILDS[backend];
  const url = o.wasmURL !== undefined ? new URL(o.wasmURL, globalThis.location?.href ?? import.meta.url) : build.url();
  const wasmBinary = o.wasmBinary !== undefined ? new Uint8Array(o.wasmBinary) : await readBytes(url);
  const { default: createModule } = await build.glue();
  const mod = await createModule({ wasmBinary, print: () => {}, printErr: (m) => console.warn(`posenc: ${m}`) });
  return new Posenc(mod, backend);
}
