// Run by Deno (tests/notebooks/specs.test.js spawns it): reads a JSON list of { file, spec, params,
// options } on stdin, draws each figure spec of web/figures/<file> with lib/display.js's figure(), as
// the notebooks do in Deno's kernel, and writes the PNGs (base64, as a notebook stores them) as a JSON
// list on stdout. Drawing in the
// same runtime as the notebooks matters: float64 Math.pow and Math.sin may differ in the last bit
// between Deno's V8 and Node's, and a table at position 1e9 turns that bit into a visible difference.
import { loadLab } from 'posenc/lab';
import { figure } from '../../web/notebooks/lib/display.js';

const pe = await loadLab(); // the core's functions and the lab's, for every spec
const requests = JSON.parse(await new Response(Deno.stdin.readable).text());
const svgs = [];
for (const { file, spec, params, options } of requests) {
  const module = await import(new URL(`../../web/figures/${file}`, import.meta.url).href);
  svgs.push(figure(module[spec], pe, params, options)[Symbol.for('Jupyter.display')]()['image/png']);
}
console.log(JSON.stringify(svgs));
