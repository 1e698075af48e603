// posenc/lab: the teaching models, in a wasm module of their own that only their users load: the
// permutation lab (permutationLab, scoreTerms) and the toy trainer (trainToy). loadLab() resolves to an
// object with those three and every method of the core (load()'s), so a page or a notebook loads one thing.
import { Posenc, guardAll, methodNames } from '../api.js';
import { CORE } from '../core.js';
import { loadWith } from '../loader.js';
import { Checker } from '../validate.js';
import { wasmURL } from '../urls.js';
import { lab } from './lab.js';
import { toy } from './toy.js';

const methods = guardAll({ ...lab, ...toy });

// The lab module's .wasm files, next to the core's (literal URLs: bundlers emit them as assets).
function labURL(backend) {
  return backend === 'wasm-simd'
    ? new URL('../wasm/posenc-lab-simd.wasm', import.meta.url)
    : new URL('../wasm/posenc-lab-scalar.wasm', import.meta.url);
}

// Options as load()'s: simd, and wasmURL / wasmBinary for the lab module; `core: { wasmURL, wasmBinary }`
// for the core module (load()'s own, shared with load() in the same thread).
export function loadLab(options) {
  return loadWith(options, {
    name: 'loadLab',
    options: ['core'],
    methodNames: [...methodNames, ...Object.keys(methods)],
    glue: (backend) => (backend === 'wasm-simd' ? import('../wasm/posenc-lab-simd.mjs') : import('../wasm/posenc-lab-scalar.mjs')),
    url: labURL,
    make: async (mod, backend, o) => {
      const core = new Checker('loadLab').options(o.core, ['wasmURL', 'wasmBinary'], 'core');
      // the core's errors name the option as loadLab's caller wrote it (core.wasmBinary, ...)
      const pe = await loadWith({ ...core, simd: backend === 'wasm-simd' }, { ...CORE, url: wasmURL }).catch((e) => {
        const message = e.message.replace(/^posenc\.load: (wasm)?/, (_, option) =>
          option ? 'posenc.loadLab: core.wasm' : 'posenc.loadLab: the core module: ',
        );
        throw new e.constructor(message, { cause: e });
      });
      return new Posenc(pe._mod, backend, { mod, methods });
    },
  });
}

export { version } from '../version.js';
