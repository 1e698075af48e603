// Loads the dev builds of the wasm modules (build/wasm-<flavour>/dev): the package's modules plus the
// bench and test hooks (_heapInUse, _bench*), which the published package does not contain. Used by the
// memory tests and scripts/bench. `bash scripts/build.sh` or `bash scripts/build.sh --js` builds them.
import { readFile } from 'node:fs/promises';
import { Posenc } from '../src/js/api.js';
import { lab } from '../src/js/lab/lab.js';
import { toy } from '../src/js/lab/toy.js';

async function module(flavour, name) {
  const dir = new URL(`../build/wasm-${flavour}/dev/`, import.meta.url);
  const wasmBinary = await readFile(new URL(`${name}-${flavour}-dev.wasm`, dir));
  const { default: createModule } = await import(new URL(`${name}-${flavour}-dev.mjs`, dir).href);
  return createModule({ wasmBinary, print: () => {}, printErr: (m) => console.warn(`posenc: ${m}`) });
}

// The core module's dev build, as load() would give it; with { lab: true }, as loadLab() would (the lab
// module's dev build beside it: `_lab` holds its hooks).
export async function loadDev({ simd = true, lab: withLab = false } = {}) {
  const flavour = simd ? 'simd' : 'scalar';
  const backend = simd ? 'wasm-simd' : 'wasm-scalar';
  const core = await module(flavour, 'posenc');
  if (!withLab) return new Posenc(core, backend);
  return new Posenc(core, backend, { mod: await module(flavour, 'posenc-lab'), methods: { ...lab, ...toy } });
}
