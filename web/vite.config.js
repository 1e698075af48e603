import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vite';

// The page imports 'posenc' and 'posenc/lab' exactly as a user would; here they resolve to this repository's package.
export default defineConfig({
  root: fileURLToPath(new URL('.', import.meta.url)),
  base: './',
  resolve: {
    alias: [
      { find: /^posenc$/, replacement: fileURLToPath(new URL('../src/js/index.js', import.meta.url)) },
      { find: /^posenc\/lab$/, replacement: fileURLToPath(new URL('../src/js/lab/index.js', import.meta.url)) },
    ],
  },
  build: { outDir: 'dist', emptyOutDir: true, target: 'es2022', assetsInlineLimit: 0 },
  // the training Worker imports posenc as a module (its wasm is found through import.meta.url)
  worker: { format: 'es' },
  preview: { host: '127.0.0.1' },
});
