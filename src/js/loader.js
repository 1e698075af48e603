// loadWith(): picks the wasm build (SIMD when the engine validates a SIMD probe, else scalar), fetches
// or reads its bytes, and instantiates it once per backend and module. Which module, its glue and where
// its bytes come from are the entry's business: 'posenc' (index.js) knows the .wasm files' addresses
// (urls.js), 'posenc/inline' (inline.js) embeds them, 'posenc/lab' (lab/index.js) has its own module;
// so a bundle of any entry holds only what that entry uses.
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

// Per backend: its key in `{ simd, scalar }` overrides and the architecture its module reports
// (xsimd's name, from the module itself: the check that the bytes handed to a backend really are that build).
const BUILDS = {
  'wasm-simd': { key: 'simd', arch: 'wasm' },
  'wasm-scalar': { key: 'scalar', arch: 'emulated' },
};
const BUILD_KEYS = ['simd', 'scalar'];
const buildOf = (arch) => Object.keys(BUILDS).find((b) => BUILDS[b].arch === arch) ?? `an unknown build (${arch})`;

const instances = new Map();

const BUNDLER_HINT =
  "If posenc was bundled by a tool that does not copy `new URL('./x.wasm', import.meta.url)` assets (esbuild, Rollup), " +
  "import { load } from 'posenc/inline' instead, or pass wasmURL / wasmBinary.";

// Why a .wasm file could not be read, and what to do: `given` when the caller named it (wasmURL),
// otherwise it is the file next to the package.
function readHint(e, given, fn) {
  if (e?.name === 'NotCapable' || e?.name === 'PermissionDenied' || /--allow-read/.test(e?.message ?? ''))
    return fn === 'load'
      ? "Deno reads the .wasm from disk only with --allow-read; or import { load } from 'posenc/inline', which needs no permission."
      : 'Deno reads the .wasm files from disk only with --allow-read (posenc/lab has no inline build), or pass wasmBinary.';
  if (e?.code === 'ENOENT' && given) return 'No file is at the wasmURL given: check the path (a relative one resolves against the posenc module).';
  if (e?.code === 'ENOENT')
    return `This copy of posenc has no built .wasm modules (installed from a git URL or a source checkout?): install the published package or its npm pack tarball, or run bash scripts/build.sh in the checkout. ${BUNDLER_HINT}`;
  return BUNDLER_HINT;
}

async function readBytes(url, fn, given) {
  if (url.protocol === 'file:') {
    // Node, Deno and Bun: read from disk (Node's fetch does not take file: URLs). No bundler may
    // follow this import: its name is a variable (Vite, esbuild, Rollup leave it alone) and
    // webpackIgnore keeps webpack from warning about it.
    const fsModule = 'node:fs/promises';
    const { readFile } = globalThis.process?.getBuiltinModule?.(fsModule) ?? (await import(/* webpackIgnore: true */ /* @vite-ignore */ fsModule));
    try {
      return new Uint8Array(await readFile(url));
    } catch (e) {
      throw new Error(`posenc.${fn}: cannot read ${url.href} (${e.code ?? e.message}). ${readHint(e, given, fn)}`, { cause: e });
    }
  }
  let response;
  try {
    response = await fetch(url);
  } catch (e) {
    throw new Error(`posenc.${fn}: fetching ${url.href} failed (${e.cause?.message ?? e.message})`, { cause: e });
  }
  if (!response.ok) throw new Error(`posenc.${fn}: fetching ${url.href} failed with HTTP ${response.status}. ${BUNDLER_HINT}`);
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
// `source` describes the entry's module:
//   name            'load' or 'loadLab' (messages; instances are kept per name and backend)
//   glue(backend)   imports the module's Emscripten glue
//   url(backend)    where its .wasm is ('posenc': next to the package), or
//   embedded(backend)  resolves to its bytes ('posenc/inline'); an explicit wasmBinary or wasmURL wins
//   make(mod, backend, options)  the object load resolves to (may be async); options: the checked options
//   options         option names besides simd, wasmURL and wasmBinary that `make` reads
//   methodNames     the methods of the object it resolves to
// Whatever goes wrong rejects with an error naming posenc.<name>.
export function loadWith(options, source) {
  const pending = loadChecked(options, source).catch((e) => {
    throw e instanceof Error && e.message.startsWith('posenc.') ? e : asPosencError(source.name, e);
  });
  // A method called on the promise itself (a missing await: `load().sinusoidal(...)`) says so, where
  // the engine would say "is not a function". Not enumerable: the promise still prints as a promise.
  for (const m of source.methodNames ?? [])
    Object.defineProperty(pending, m, {
      value: () => {
        throw new TypeError(
          `posenc.${m}: ${source.name}() returns a Promise: await it first (const pe = await ${source.name}()), then call pe.${m}(...)`,
        );
      },
    });
  return pending;
}

async function loadChecked(options, source) {
  const c = new Checker(source.name);
  const o = c.options(options, ['simd', 'wasmURL', 'wasmBinary', ...(source.options ?? [])]);
  const simd = o.simd === undefined ? undefined : c.bool('simd', o.simd);
  const urlFor = perBackend(c, 'wasmURL', o.wasmURL, isURL, 'a string or URL');
  const binaryFor = perBackend(c, 'wasmBinary', o.wasmBinary, isBytes, 'an ArrayBuffer or Uint8Array');
  const supported = simdSupported();
  if (simd === true && !supported) throw c.range('simd: true was requested but this engine does not support WebAssembly SIMD');
  const backend = simd === false || !supported ? 'wasm-scalar' : 'wasm-simd';
  const key = `${source.name} ${backend}`;
  if (!instances.has(key)) {
    const pending = instantiate(c, backend, binaryFor(backend), urlFor(backend), source, o);
    instances.set(key, pending);
    pending.catch(() => instances.delete(key)); // a failed load may be retried
  }
  return instances.get(key);
}

async function instantiate(c, backend, binary, address, { url, embedded, glue, make }, options) {
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
  } else if (address === undefined && embedded) [wasmBinary, source] = [await embedded(backend), 'the embedded module'];
  else {
    let where;
    try {
      where = address !== undefined ? new URL(address, globalThis.location?.href ?? url(backend)) : url(backend);
    } catch (e) {
      // a CommonJS bundle has no import.meta.url: there is no file next to the package to read
      throw new Error(`posenc.${c.fn}: cannot tell where the ${backend} .wasm file is (${e.message}). ${BUNDLER_HINT}`, { cause: e });
    }
    [wasmBinary, source] = [await readBytes(where, c.fn, address !== undefined), where.href];
  }
  const { default: createModule } = await glue(backend);
  let mod;
  // While the module instantiates, what the glue prints is the failure the error below reports: it
  // stays off the console (the glue says it twice: "failed to asynchronously prepare wasm", "Aborted").
  let instantiating = true;
  try {
    // locateFile: the bytes are given, the glue has nothing to look up
    mod = await createModule({
      wasmBinary,
      locateFile: (file) => file,
      print: () => {},
      printErr: (m) => instantiating || console.warn(`posenc: ${m}`),
    });
  } catch (e) {
    // the engine's words, without the glue's wrapping ("Aborted(...). Build with -s ASSERTIONS=1 ...")
    const why = String(e?.message ?? e).replace(/^Aborted\((.*)\)(\. Build with -s ASSERTIONS=1 for more info\.)?$/s, '$1');
    throw c.range(`${source} does not instantiate as the ${backend} build (${why}); is it a posenc ${build.key} .wasm of this version?`);
  } finally {
    instantiating = false;
  }
  const arch = mod._simdArch();
  if (arch !== build.arch)
    throw c.range(`${source} is the ${buildOf(arch)} build, but ${backend} was selected; pass { ${build.key}: … } with the ${build.key} .wasm`);
  return make(mod, backend, options);
}
