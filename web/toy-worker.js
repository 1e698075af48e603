// The toy transformer trains here, off the main thread: the page posts { id, options } and gets back
// { id, type: 'point' | 'run', ... } as training goes, then { id, type: 'done', ms } (or 'error').
import { loadLab } from 'posenc/lab';
import { trainModels } from './figures/training.js';

const ready = loadLab();
self.onmessage = async ({ data: { id, options } }) => {
  try {
    const pe = await ready;
    const t0 = performance.now();
    trainModels(pe, options, (event) => self.postMessage({ id, ...event }));
    self.postMessage({ id, type: 'done', ms: performance.now() - t0, backend: pe.backend });
  } catch (e) {
    self.postMessage({ id, type: 'error', message: `${e.constructor.name}: ${e.message}` });
  }
};
