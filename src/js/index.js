// posenc: positional encodings for transformers, in C++ compiled to WebAssembly SIMD.
import { CORE } from './core.js';
import { loadWith } from './loader.js';
import { wasmURL } from './urls.js';

// The SIMD build when the engine supports WebAssembly SIMD, else the scalar build; its .wasm read or
// fetched from next to the package (or from wasmURL / wasmBinary).
export function load(options) {
  return loadWith(options, { ...CORE, url: wasmURL });
}
export { simdSupported } from './loader.js';
export { version } from './version.js';
export { ropeConfig } from './config.js';
