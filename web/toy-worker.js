// The toy transformers train here, off the main thread. The page posts { id, job, options }:
//   job 'toy' (the default): trainModels, answered with { id, type: 'point' | 'run', ... } as training goes;
//   job 'longcontext': longContextRuns (train short, test long), answered with its 'progress' and
//   'result' events.
// Then { id, type: 'done', ms, backend } (or 'error'). The page cancels a job by terminating the Worker.
import { loadLab } from 'posenc/lab';
import { longContextRuns } from './figures/longcontext.js';
import { trainModels } from './figures/training.js';

const ready = loadLab();
self.onmessage = async ({ data: { id, job = 'toy', options } }) => {
  try {
    const pe = await ready;
    const t0 = performance.now();
    if (job === 'longcontext') for (const event of longContextRuns(pe, options)) self.postMessage({ id, ...event });
    else trainModels(pe, options, (event) => self.postMessage({ id, ...event }));
    self.postMessage({ id, type: 'done', ms: performance.now() - t0, backend: pe.backend });
  } catch (e) {
    self.postMessage({ id, type: 'error', message: `${e.constructor.name}: ${e.message}` });
  }
};
