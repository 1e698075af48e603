// load(): picks the wasm build (SIMD when the engine validates a SIMD probe, else scalar), fetches
// or reads its bytes, and instantiates it once per backend. The .wasm files are referenced with
// literal `new URL(..., import.meta.url)` so bundlers that understand it (Vite, webpack) emit them as
// assets; for the others (esbuild, Rollup) `posenc/inline` embeds them (inline.js).
import { Posenc } from './api.js';
import { Checker, asPosencError, describe } from './validate.js';

// (module (func (result v128) i32.const 0 i8x16.splat i8x16.popcnt)): validates only with SIMD.
const SIMD_PROBE = new Uint8Array([0, 97, 115, 109, 1, 0, 0, 0, 1, 5, 1, 96, 0, 1, 123, 3, 2, 1, 0, 10, 10, 1, 8, 0, 65, 0, 253, 15, 253, 98, 11]);

export function simdSupported() {
  try {
    return WebAssembly.validate(SIMD_PROBE);
  } catch {
    return false;
  }
}

// Per backend: its key in `{ simd, scalar }` overrides, the glue, where its .wasm lies, and the
// architecture its module reports (xsimd's name, from the module itself: the check that the bytes
// handed to a backend really are that build).
const BUILDS = {
  'wasm-simd': {
    key: 'simd',
    arch: 'wasm',
    glue: () => import('./wasm/posenc-simd.mjs'),
    url: () => new URL('./wasm/posenc-simd.wasm', import.meta.url),
  },
  'wasm-scalar': {
    key: 'scalar',
    arch: 'emulated',
    glue: () => import('./wasm/posenc-scalar.mjs'),
    url: () => new URL('./wasm/posenc-scalar.wasm', import.meta.url),
  },
};
const BUILD_KEYS = ['simd', 'scalar'];
const buildOf = (arch) => Object.keys(BUILDS).find((b) => BUILDS[b].arch === arch) ?? `an unknown build (${arch})`;

const instances = new Map();

const BUNDLER_HINT =
  "If posenc was bundled by a tool that does not copy `new URL('./x.wasm', import.meta.url)` assets (esbuild, Rollup), " +
  "import { load } from 'posenc/inline' instead, or pass wasmURL / wasmBinary.";

async function readBytes(url) {
  if (url.protocol === 'file:') {
    // Node, Deno and Bun: read from disk (Node's fetch does not take file: URLs). No bundler may
    // follow this import: its name is a variable (Vite, esbuild, Rollup leave it alone) and
    // webpackIgnore keeps webpack from warning about it.
    const fsModule = 'node:fs/promises';
    const { readFile } = globalThis.process?.getBuiltinModule?.(fsModule) ?? (await import(/* webpackIgnore: true */ /* @vite-ignore */ fsModule));
    try {
      return new Uint8Array(await readFile(url));
    } catch (e) {
      throw new Error(`posenc.load: cannot read ${url.href} (${e.code ?? e.message}). ${BUNDLER_HINT}`, { cause: e });
    }
  }
  let response;
  try {
    response = await fetch(url);
  } catch (e) {
    throw new Error(`posenc.load: fetching ${url.href} failed (${e.cause?.message ?? e.message})`, { cause: e });
  }
  if (!response.ok) throw new Error(`posenc.load: fetching ${url.href} failed with HTTP ${response.status}. ${BUNDLER_HINT}`);
  return new Uint8Array(await response.arrayBuffer());
}

// `wasmURL`/`wasmBinary`: one value for the selected backend, or `{ simd, scalar }` (either may be
// left out). Returns `pick(backend)`, the value for that backend or undefined.
function perBackend(c, name, v, isValue, allowed) {
  if (v === undefined) return () => undefined;
  if (isValue(v)) return () => v;
  const proto = typeof v === 'object' && v !== null ? Object.getPrototypeOf(v) : undefined;
  const refuse = () => c.type(`${name} must be ${allowed}, or { simd, scalar } with at least one of them, got ${describe(v)}`);
  if (proto !== Object.prototype && proto !== null) throw refuse();
  const o = c.options(v, BUILD_KEYS, name);
  if (Object.keys(o).length === 0) throw refuse();
  for (const k of Object.keys(o)) if (!isValue(o[k])) throw c.type(`${name}.${k} must be ${allowed}, got ${describe(o[k])}`);
  return (backend) => o[BUILDS[backend].key];
}

const isURL = (v) => typeof v === 'string' || v instanceof URL;
const isBytes = (v) => v instanceof ArrayBuffer || v instanceof Uint8Array;

// Always returns a promise: bad options reject (with a TypeError/RangeError) like a failed download.
export async function load(options) {
  return loadWith(options);
}

// `embedded(backend)`, when given (posenc/inline), resolves to the bytes of that build; an explicit
// wasmBinary or wasmURL still wins. Whatever goes wrong rejects with an error naming posenc.load.
export async function loadWith(options, embedded) {
  try {
    return await loadChecked(options, embedded);
  } catch (e) {
    throw e instanceof Error && e.message.startsWith('posenc.') ? e : asPosencError('load', e);
  }
}

async function loadChecked(options, embedded) {
  const c = new Checker('load');
  const o = c.options(options, ['simd', 'wasmURL', 'wasmBinary']);
  const simd = o.simd === undefined ? undefined : c.bool('simd', o.simd);
  const urlFor = perBackend(c, 'wasmURL', o.wasmURL, isURL, 'a string or URL');
  const binaryFor = perBackend(c, 'wasmBinary', o.wasmBinary, isBytes, 'an ArrayBuffer or Uint8Array');
  const supported = simdSupported();
  if (simd === true && !supported) throw c.range('simd: true was requested but this engine does not support WebAssembly SIMD');
  const backend = simd === false || !supported ? 'wasm-scalar' : 'wasm-simd';
  if (!instances.has(backend)) {
    const pending = instantiate(c, backend, binaryFor(backend), urlFor(backend), embedded);
    instances.set(backend, pending);
    pending.catch(() => instances.delete(backend)); // a failed load may be retried
  }
  return instances.get(backend);
}

async function instantiate(c, backend, binary, address, embedded) {
  const build = BUILDS[backend];
  let wasmBinary;
  let source;
  if (binary !== undefined) {
    try {
      wasmBinary = new Uint8Array(binary);
    } catch {
      throw c.type("wasmBinary's buffer is detached (transferred to a Worker?): pass bytes this thread still owns");
    }
    if (wasmBinary.byteLength === 0) throw c.range('wasmBinary holds no bytes (an empty or detached buffer)');
    source = 'wasmBinary';
  }
  else if (address === undefined && embedded) [wasmBinary, source] = [await embedded(backend), 'the embedded module'];
  else {
    const url = address !== undefined ? new URL(address, globalThis.location?.href ?? import.meta.url) : build.url();
    [wasmBinary, source] = [await readBytes(url), url.href];
  }
  const { default: createModule } = await build.glue();
  let mod;
  try {
    mod = await createModule({ wasmBinary, print: () => {}, printErr: (m) => console.warn(`posenc: ${m}`) });
  } catch (e) {
    throw c.range(`${source} does not instantiate as the ${backend} build (${e?.message ?? e}); is it a posenc ${build.key} .wasm of this version?`);
  }
  const arch = mod._simdArch();
  if (arch !== build.arch)
    throw c.range(`${source} is the ${buildOf(arch)} build, but ${backend} was selected; pass { ${build.key}: … } with the ${build.key} .wasm`);
  return new Posenc(mod, backend);
}
