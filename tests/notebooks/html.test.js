// The committed notebooks converted to HTML by the nbconvert installed here (Debian 12 ships 6.5.3, whose
// HTML exporter strips the children of inline SVG with lxml's clean_html; 7 does not): every figure must
// come out as an <img> with its PNG data, the same pixels the notebook stores, and no <svg> may be left
// empty. Skipped, with a message, only when `jupyter nbconvert` is not installed.
import assert from 'node:assert/strict';
import { execFile, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { before, describe, test } from 'node:test';
import { promisify } from 'node:util';
import { NOTEBOOKS, figuresOf, notebooks } from './records.js';

const version = spawnSync('jupyter', ['nbconvert', '--version'], { encoding: 'utf8' });
const skip = version.status === 0 ? false : 'jupyter nbconvert is not installed (scripts/setup.sh installs jupyter-nbconvert)';

describe(`nbconvert ${version.stdout?.trim() ?? ''} --to html shows every figure`, { skip }, () => {
  const all = notebooks();
  const html = {};
  // one nbconvert for the four notebooks: each conversion is mostly Python starting up
  before(async () => {
    const out = mkdtempSync(join(tmpdir(), 'posenc-html-'));
    try {
      await promisify(execFile)('jupyter', ['nbconvert', '--to', 'html', '--output-dir', out, ...all.map(({ name }) => join(NOTEBOOKS, name))], {
        encoding: 'utf8',
        maxBuffer: 256 * 2 ** 20,
      });
      for (const { name } of all) html[name] = readFileSync(join(out, name.replace(/\.ipynb$/, '.html')), 'utf8');
    } finally {
      rmSync(out, { recursive: true, force: true });
    }
  });
  for (const { name, nb } of all) {
    test(name, () => {
      const images = [...html[name].matchAll(/<img\b[^>]*\bsrc="data:image\/png;base64,([^"]*)"/g)].map((m) => m[1].replace(/\s/g, ''));
      const figures = figuresOf(nb);
      assert.ok(figures.length >= 5, `${figures.length} figures`);
      assert.equal(images.length, figures.length, `${images.length} <img> for ${figures.length} figures`);
      figures.forEach((f, i) => assert.equal(images[i], f.png.replace(/\s/g, ''), `figure ${i + 1} (cell ${f.cell}): not the stored PNG`));
      for (const svg of html[name].matchAll(/<svg\b[^>]*>([\s\S]*?)<\/svg>/g))
        assert.ok(svg[1].trim().length > 0, `an empty <svg>: ${svg[0].slice(0, 120)}`);
    });
  }
});
