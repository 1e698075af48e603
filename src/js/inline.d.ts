// `posenc/inline`: the same API as `posenc`, with both .wasm modules embedded in the JavaScript.
export * from './index.js';
