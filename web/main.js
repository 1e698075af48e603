// The demo page. It imports posenc exactly as a user of the npm package would.
import { load } from 'posenc';
import { extrapolationFigures, sinusoidalFigures } from './absolute.js';
import { restoreFromURL } from './state.js';

const status = document.querySelector('[data-status]');
try {
  restoreFromURL();
  const pe = await load();
  document.querySelector('[data-backend]').textContent = `${pe.backend}, kernels compiled for ${pe.simdArch} (posenc ${pe.version})`;
  sinusoidalFigures(pe);
  extrapolationFigures(pe);
  status.textContent = `Ready: ${pe.backend}.`;
  document.body.dataset.ready = 'true';
} catch (e) {
  status.className = 'error';
  status.textContent = `posenc failed to load: ${e.message}`;
  throw e;
}
