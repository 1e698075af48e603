// The demo page. It imports posenc exactly as a user of the npm package would (posenc/lab: every core
// method plus the teaching models). The sections (and
// Observable Plot with them) load while the wasm module does, each module evaluated in a task of its own.
import { loadLab } from 'posenc/lab';
import { noteBadURL, restoreFromURL } from './state.js';

const status = document.querySelector('[data-status]');
for (const form of document.forms) form.addEventListener('submit', (e) => e.preventDefault()); // Enter must not reload
noteBadURL(restoreFromURL());
try {
  const [pe, sections, { performancePanel }, { whenDrawn }] = await Promise.all([
    loadLab(),
    import('./sections.js'),
    import('./performance.js'),
    import('./figures/render.js'),
  ]);
  const {
    beyondTextSection,
    biasSection,
    extrapolationSection,
    inspectorSection,
    labSection,
    overviewSection,
    recapSection,
    relativeSection,
    ropeSection,
    sinusoidalSection,
    trainingSection,
  } = sections;
  document.querySelector('[data-backend]').textContent = `${pe.backend}, kernels compiled for ${pe.simdArch} (posenc ${pe.version})`;
  // One section failing must not blank the others: each reports in place. Each starts in a task of
  // its own, and the page says it is ready once their first figures are drawn.
  for (const section of [
    recapSection,
    labSection,
    overviewSection,
    sinusoidalSection,
    relativeSection,
    extrapolationSection,
    ropeSection,
    inspectorSection,
    biasSection,
    beyondTextSection,
    trainingSection,
  ]) {
    await new Promise((resolve) => setTimeout(resolve));
    try {
      section(pe);
    } catch (e) {
      console.warn(`${section.name}:`, e);
    }
  }
  performancePanel();
  await whenDrawn();
  status.textContent = `Ready: ${pe.backend}.`;
  document.body.dataset.ready = 'true';
} catch (e) {
  status.className = 'error';
  status.textContent = `posenc failed to load: ${e.message}`;
}
