// posenc: positional encodings for transformers, in C++ compiled to WebAssembly SIMD.
export { load, simdSupported } from './loader.js';
export { version } from './version.js';
export { ropeConfig } from './config.js';
