// Loads the dev build of the wasm module (build/wasm-<flavour>/dev): the package's module plus the
// bench and test hooks (_heapInUse, _bench*), which the published package does not contain.
// Used by the memory tests and scripts/bench. `node scripts/build.sh` (without --lib) builds it.
import { readFile } from 'node:fs/promises';
import { Posenc } from '../src/js/api.js';

export async function loadDev({ simd = true } = {}) {
  const flavour = simd ? 'simd' : 'scalar';
  const dir = new URL(`../build/wasm-${flavour}/dev/`, import.meta.url);
  const wasmBinary = await readFile(new URL(`posenc-${flavour}-dev.wasm`, dir));
  const { default: createModule } = await import(new URL(`posenc-${flavour}-dev.mjs`, dir).href);
  const mod = await createModule({ wasmBinary, print: () => {}, printErr: (m) => console.warn(`posenc: ${m}`) });
  return new Posenc(mod, simd ? 'wasm-simd' : 'wasm-scalar');
}
