// Imported by the first cell of each notebook that tests/notebooks/notebooks.test.js runs, in the
// notebook's fresh Deno kernel before any of the notebook's own cells: reads a JSON list of { file, spec,
// params, options } from `requestsPath`, draws each figure spec of web/figures/<file> with
// lib/display.js's figure(), as the notebooks do, and writes the PNGs (base64, as a notebook stores
// them) as a JSON list to `pngsPath`, or { error } for a figure that could not be drawn (the notebook's
// own cells still run: a failure here is one test's, not the whole run's). Drawing in the same runtime
// as the notebooks matters: float64 Math.pow and Math.sin may differ in the last bit between Deno's V8
// and Node's, and a table at position 1e9 turns that bit into a visible difference. The models it
// trains are remembered by web/figures/training.js (by their options: training is deterministic), so
// the notebook's own cells that ask for the same models do not train them again.
import { loadLab } from 'posenc/lab';
import { figure } from '../../web/notebooks/lib/display.js';

export async function redrawFiles(requestsPath, pngsPath) {
  const pe = await loadLab(); // the core's functions and the lab's, for every spec
  const requests = JSON.parse(await Deno.readTextFile(requestsPath));
  const pngs = [];
  for (const { file, spec, params, options } of requests) {
    try {
      const module = await import(new URL(`../../web/figures/${file}`, import.meta.url).href);
      pngs.push(figure(module[spec], pe, params, options)[Symbol.for('Jupyter.display')]()['image/png']);
    } catch (e) {
      pngs.push({ error: String(e?.stack ?? e) });
    }
  }
  await Deno.writeTextFile(pngsPath, JSON.stringify(pngs));
}
