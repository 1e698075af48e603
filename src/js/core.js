// The core module as the loader takes it (src/js/loader.js loadWith): its glue and the object load()
// resolves to. Shared by 'posenc' (index.js, which adds where the .wasm files are) and 'posenc/inline'
// (inline.js, which embeds them).
import { Posenc, methodNames } from './api.js';

export const CORE = {
  name: 'load',
  glue: (backend) => (backend === 'wasm-simd' ? import('./wasm/posenc-simd.mjs') : import('./wasm/posenc-scalar.mjs')),
  make: (mod, backend) => new Posenc(mod, backend),
  methodNames,
};
