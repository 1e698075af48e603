// posenc with both .wasm modules embedded (base64), for bundlers and runtimes that do not turn
// `new URL('./x.wasm', import.meta.url)` into an asset (esbuild, Rollup, ...): nothing to serve or
// copy, at the price of a larger bundle (README: "Bundlers"). Same API as 'posenc'; only the selected
// build is decoded. `wasmURL` / `wasmBinary` still override the embedded bytes.
import { CORE } from './core.js';
import { loadWith } from './loader.js';

const EMBEDDED = {
  'wasm-simd': () => import('./wasm/posenc-simd.inline.js'),
  'wasm-scalar': () => import('./wasm/posenc-scalar.inline.js'),
};

async function embedded(backend) {
  const { default: base64 } = await EMBEDDED[backend]();
  const text = atob(base64);
  const bytes = new Uint8Array(text.length);
  for (let i = 0; i < text.length; i++) bytes[i] = text.charCodeAt(i);
  return bytes;
}

// (a relative wasmURL resolves against this module, as it does against 'posenc')
export function load(options) {
  return loadWith(options, { ...CORE, embedded, url: () => new URL('.', import.meta.url) });
}
export { simdSupported } from './loader.js';
export { version } from './version.js';
export { ropeConfig } from './config.js';
