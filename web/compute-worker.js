// Heavy figure numbers computed off the main thread: the page posts { id, job, params } and gets back
// { id, result } (typed arrays, transferred) or { id, error }. Only numbers travel: the figure specs,
// with their Plot marks, are built on the page from these results.
import { load } from 'posenc';
import { xposScores } from './figures/xpos.js';

const JOBS = {
  // xposScores, with its per-pair scales at the largest distance in place of the function
  xposScores(pe, params) {
    const { pairScale, ...arrays } = xposScores(pe, params);
    return { ...arrays, scale: pairScale(params.maxDistance) };
  },
};

const ready = load();
self.onmessage = async ({ data: { id, job, params } }) => {
  try {
    const result = JOBS[job](await ready, params);
    self.postMessage(
      { id, result },
      Object.values(result).map((a) => a.buffer),
    );
  } catch (e) {
    self.postMessage({ id, error: `${e.constructor.name}: ${e.message}` });
  }
};
