// The demo page. It imports posenc exactly as a user of the npm package would.
import { load } from 'posenc';
import { extrapolationFigures, sinusoidalFigures } from './absolute.js';
import { labFigures } from './lab.js';
import { performancePanel } from './performance.js';
import { analysisFigures, biasFigures, ropeFigures } from './relative.js';
import { restoreFromURL } from './state.js';

const status = document.querySelector('[data-status]');
try {
  restoreFromURL();
  for (const form of document.forms) form.addEventListener('submit', (e) => e.preventDefault()); // Enter must not reload
  const pe = await load();
  document.querySelector('[data-backend]').textContent = `${pe.backend}, kernels compiled for ${pe.simdArch} (posenc ${pe.version})`;
  labFigures(pe);
  sinusoidalFigures(pe);
  analysisFigures(pe);
  extrapolationFigures(pe);
  ropeFigures(pe);
  biasFigures(pe);
  performancePanel();
  status.textContent = `Ready: ${pe.backend}.`;
  document.body.dataset.ready = 'true';
} catch (e) {
  status.className = 'error';
  status.textContent = `posenc failed to load: ${e.message}`;
  throw e;
}
