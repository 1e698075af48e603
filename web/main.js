// The demo page. It imports posenc exactly as a user of the npm package would.
import { load } from 'posenc';
import { performancePanel } from './performance.js';
import {
  beyondTextSection,
  biasSection,
  extrapolationSection,
  inspectorSection,
  labSection,
  relativeSection,
  ropeSection,
  sinusoidalSection,
  trainingSection,
} from './sections.js';
import { noteBadURL, restoreFromURL } from './state.js';

const status = document.querySelector('[data-status]');
for (const form of document.forms) form.addEventListener('submit', (e) => e.preventDefault()); // Enter must not reload
noteBadURL(restoreFromURL());
try {
  const pe = await load();
  document.querySelector('[data-backend]').textContent = `${pe.backend}, kernels compiled for ${pe.simdArch} (posenc ${pe.version})`;
  // One section failing must not blank the others: each reports in place.
  for (const section of [
    labSection,
    trainingSection,
    sinusoidalSection,
    relativeSection,
    extrapolationSection,
    ropeSection,
    inspectorSection,
    biasSection,
    beyondTextSection,
  ])
    try {
      section(pe);
    } catch (e) {
      console.warn(`${section.name}:`, e);
    }
  performancePanel();
  status.textContent = `Ready: ${pe.backend}.`;
  document.body.dataset.ready = 'true';
} catch (e) {
  status.className = 'error';
  status.textContent = `posenc failed to load: ${e.message}`;
}
