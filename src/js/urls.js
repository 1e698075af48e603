// Where the 'posenc' entry finds its .wasm files: next to this module. Literal
// `new URL('./x.wasm', import.meta.url)` expressions, which Vite and webpack emit as assets and Node,
// Deno and Bun read from disk. Only index.js imports this module, so 'posenc/inline' bundles never
// carry the files.
export function wasmURL(backend) {
  return backend === 'wasm-simd' ? new URL('./wasm/posenc-simd.wasm', import.meta.url) : new URL('./wasm/posenc-scalar.wasm', import.meta.url);
}
