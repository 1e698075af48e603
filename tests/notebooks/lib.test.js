// Tests of the helpers the notebooks import, in Node: their display glue (web/notebooks/lib/) and
// the numeric helpers they share with the page's figure specs (web/figures/). References are
// independent: a PNG decoder written here, hand-made rotations, the formulas themselves.
import assert from 'node:assert/strict';
import { Buffer } from 'node:buffer';
import { describe, test } from 'node:test';
import { inflateSync } from 'node:zlib';
import { loadLab } from 'posenc/lab';
import { Canvas, crc32, encodePNG, parseColor, pngDataURL, pngText } from '../../web/notebooks/lib/png.js';
import * as Plot from '@observablehq/plot';
import {
  Figure,
  Table,
  compactNumbers,
  concat,
  figure,
  fmt,
  verdict,
  notWritten,
  formatReported,
  plot,
  renumberIds,
  specLines,
  specTable,
  toFigure,
  document,
} from '../../web/notebooks/lib/display.js';
import { diagonalSpread, gaussianVector, matVec, maxAbsDiff, median, mulberry32, permutations } from '../../web/figures/numeric.js';
import { exactRow, robotTable, float32RecipeRow, extrapolation } from '../../web/figures/absolute.js';
import {
  changesSentence,
  distinctOrderings,
  labOutputs,
  sameSentencePermutations,
  shuffleErrors,
  shuffleFor,
  tokenEquivarianceError,
  unshuffleWeights,
} from '../../web/figures/lab.js';
import { alibiBias, rotateAt, rotatedScores, scalingConfigs } from '../../web/figures/relative.js';
import { CONFIGS } from '../../web/figures/hf-configs.js';
import { haveFonts, pngOf } from '../../web/notebooks/lib/raster.js';
import { longContextResults, trainShortTestLong } from '../../web/figures/longcontext.js';

const pe = await loadLab();

// A PNG reader for 8-bit RGBA images: chunks with CRCs, inflate, the five scanline filters.
function decodePNG(bytes) {
  assert.deepEqual([...bytes.subarray(0, 8)], [137, 80, 78, 71, 13, 10, 26, 10], 'PNG signature');
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  let at = 8,
    width,
    height;
  const idat = [];
  for (;;) {
    const length = view.getUint32(at);
    const type = String.fromCharCode(...bytes.subarray(at + 4, at + 8));
    const body = bytes.subarray(at + 8, at + 8 + length);
    assert.equal(view.getUint32(at + 8 + length), crc32(bytes.subarray(at + 4, at + 8 + length)), `CRC of ${type}`);
    if (type === 'IHDR') {
      [width, height] = [view.getUint32(at + 8), view.getUint32(at + 12)];
      assert.deepEqual([...body.subarray(8)], [8, 6, 0, 0, 0]);
    } else if (type === 'IDAT') idat.push(body);
    else if (type === 'IEND') break;
    at += 12 + length;
  }
  const raw = inflateSync(Buffer.concat(idat));
  const stride = width * 4,
    out = new Uint8Array(stride * height),
    filters = [];
  for (let y = 0; y < height; y++) {
    const filter = raw[y * (stride + 1)];
    filters.push(filter);
    for (let i = 0; i < stride; i++) {
      const pred = predictors(out, stride, y, i)[filter];
      assert.ok(pred !== undefined, `filter type ${filter}`);
      out[y * stride + i] = (raw[y * (stride + 1) + 1 + i] + pred) & 0xff;
    }
  }
  return { width, height, pixels: out, filters };
}

// The five filters' predictions of byte i of line y (none, sub, up, average, Paeth), from the pixels.
function predictors(pixels, stride, y, i) {
  const a = i >= 4 ? pixels[y * stride + i - 4] : 0,
    b = y ? pixels[(y - 1) * stride + i] : 0,
    c = y && i >= 4 ? pixels[(y - 1) * stride + i - 4] : 0;
  const p = a + b - c,
    pa = Math.abs(p - a),
    pb = Math.abs(p - b),
    pc = Math.abs(p - c);
  return [0, a, b, (a + b) >> 1, pa <= pb && pa <= pc ? a : pb <= pc ? b : c];
}

describe('png.js', () => {
  test('CRC-32 matches the PNG specification (IEND chunk: ae426082)', () => {
    assert.equal(crc32(new TextEncoder().encode('IEND')), 0xae426082);
  });

  test('encodePNG round-trips through an independent decoder (smooth and noisy pictures)', () => {
    const random = mulberry32(9);
    for (const [w, h, fill] of [
      [1, 1, () => 200],
      [64, 50, (x, y, k) => (k === 3 ? 255 : (x * 4 + y * 3 + k * 40) & 0xff)],
      [37, 23, () => Math.floor(random() * 256)],
    ]) {
      const rgba = new Uint8Array(w * h * 4);
      for (let y = 0; y < h; y++) for (let x = 0; x < w; x++) for (let k = 0; k < 4; k++) rgba[(y * w + x) * 4 + k] = fill(x, y, k);
      const png = decodePNG(encodePNG(w, h, rgba));
      assert.deepEqual([png.width, png.height], [w, h]);
      assert.deepEqual(png.pixels, rgba);
    }
    assert.throws(() => encodePNG(2, 2, new Uint8Array(15)), RangeError);
    const withText = encodePNG(1, 1, new Uint8Array(4), { text: { 'posenc:spec': 'wavelengths', note: 'a\u00e9' } });
    assert.deepEqual(pngText(withText), { 'posenc:spec': 'wavelengths', note: 'a\u00e9' });
    assert.deepEqual(decodePNG(withText).pixels, new Uint8Array(4), 'tEXt chunks leave the picture alone');
    assert.throws(() => encodePNG(1, 1, new Uint8Array(4), { text: { note: 'a – b' } }), /Latin-1/);
    assert.match(pngDataURL(1, 1, new Uint8Array(4)), /^data:image\/png;base64,iVBORw0KGgo/);
  });

  test('encodePNG filters each line with the filter of least sum of |bytes as signed| (ties: the first)', () => {
    // A white card in blocks of four lines: gradients, a line under white that Paeth wins (Paeth is sub
    // there, but for the first pixel), noise, stripes; the fourth line of each block copies the third,
    // where up and Paeth tie at 0. So the lines change filter (the filter of the line above, tried
    // first, is not always the best) and some tie.
    const random = mulberry32(5);
    const [w, h] = [40, 48];
    const rgba = new Uint8ClampedArray(w * h * 4).fill(255);
    for (let y = 0; y < h; y++)
      for (let x = 0; x < w; x++)
        for (let k = 0; k < 3; k++) {
          const at = (y * w + x) * 4 + k;
          const [kind, row] = [Math.floor(y / 4) % 4, y % 4];
          if (row === 3) rgba[at] = rgba[at - w * 4];
          else if (kind === 0 && row > 0) rgba[at] = (x * 6 + y * 2 + k * 30) & 0xff;
          else if (kind === 1 && row === 2 && x > 0) rgba[at] = 60 + x * 5 + k * 30;
          else if (kind === 2 && x > 10) rgba[at] = Math.floor(random() * 256);
          else if (kind === 3) rgba[at] = x % 3 ? 40 : 200;
        }
    const png = decodePNG(encodePNG(w, h, rgba));
    assert.deepEqual(png.pixels, new Uint8Array(rgba));
    const stride = w * 4;
    const sums = (y) =>
      [0, 1, 2, 3, 4].map((f) => {
        let sum = 0;
        for (let i = 0; i < stride; i++) {
          const v = (png.pixels[y * stride + i] - predictors(png.pixels, stride, y, i)[f]) & 0xff;
          sum += v < 128 ? v : 256 - v;
        }
        return sum;
      });
    const chosen = new Set(png.filters);
    png.filters.forEach((f, y) => assert.equal(f, sums(y).indexOf(Math.min(...sums(y))), `line ${y}: sums ${sums(y)}`));
    assert.ok(chosen.size >= 4, `filters used: ${[...chosen]}`);
  });

  test('parseColor reads the colours d3 and Plot produce', () => {
    assert.deepEqual(parseColor('rgb(12, 34, 56)'), [12, 34, 56, 255]);
    assert.deepEqual(parseColor('rgba(1,2,3,0.5)'), [1, 2, 3, 128]);
    assert.deepEqual(parseColor('#0f8'), [0, 255, 136, 255]);
    assert.deepEqual(parseColor('#4269d0'), [0x42, 0x69, 0xd0, 255]);
    assert.throws(() => parseColor('steelblue'), RangeError);
  });

  test('Canvas: fillRect and putImageData land in the encoded picture', () => {
    const canvas = new Canvas();
    canvas.width = 3;
    canvas.height = 2;
    const ctx = canvas.getContext('2d');
    ctx.fillStyle = 'rgb(255, 0, 0)';
    ctx.fillRect(1, 0, 1, 1);
    const img = ctx.createImageData(1, 1);
    img.data.set([0, 0, 255, 255]);
    ctx.putImageData(img, 2, 1);
    const png = decodePNG(Buffer.from(canvas.toDataURL().split(',')[1], 'base64'));
    assert.deepEqual([...png.pixels.subarray(4, 8)], [255, 0, 0, 255]);
    assert.deepEqual([...png.pixels.subarray(20, 24)], [0, 0, 255, 255]);
    assert.equal(canvas.getContext('webgl'), null);
  });
});

describe('raster.js', () => {
  test(
    'pngOf: the same SVG and text again give the same PNG; a change in either, a PNG of its own',
    { skip: !haveFonts && 'no DejaVu font files' },
    () => {
      const svg = (fill) => `<svg xmlns="http://www.w3.org/2000/svg" width="20" height="10"><rect width="20" height="10" fill="${fill}"/></svg>`;
      const decoded = (png) => decodePNG(Buffer.from(png, 'base64'));
      const first = pngOf(svg('#336699'), { note: 'a' });
      assert.deepEqual([...decoded(first).pixels.subarray(0, 4)], [0x33, 0x66, 0x99, 255]);
      assert.equal(pngOf(svg('#336699'), { note: 'a' }), first);
      const retitled = Buffer.from(pngOf(svg('#336699'), { note: 'b' }), 'base64');
      assert.deepEqual(pngText(retitled), { note: 'b' });
      assert.deepEqual(decodePNG(retitled).pixels, decoded(first).pixels);
      assert.deepEqual([...decoded(pngOf(svg('#336600'), { note: 'a' })).pixels.subarray(0, 4)], [0x33, 0x66, 0, 255]);
      for (let i = 0; i < 100; i++) assert.equal(decoded(pngOf(svg(`rgb(${i}, 0, 0)`))).pixels[0], i); // more figures than it keeps
      assert.equal(pngOf(svg('#336699'), { note: 'a' }), first, 'drawn again once forgotten: the same PNG');
    },
  );
});

describe('display.js', () => {
  const isStandaloneSVG = (svg) => {
    assert.match(
      svg,
      /^<svg xmlns="http:\/\/www\.w3\.org\/2000\/svg" xmlns:xlink="http:\/\/www\.w3\.org\/1999\/xlink" width="[\d.]+" height="[\d.]+"/,
    );
    assert.doesNotMatch(svg, /<(div|span|figure|h2|h3|figcaption)\b/, 'no HTML left in the SVG');
    assert.ok(svg.endsWith('</svg>'));
  };

  test('a raster heatmap with a colour ramp becomes one SVG with two PNG images', () => {
    const t = pe.sinusoidal({ length: 20, dModel: 8 });
    const fig = plot({ color: { type: 'diverging', legend: true }, marks: [Plot.raster(t.data, { width: 8, height: 20 })] }, 'a heatmap');
    assert.ok(fig instanceof Figure);
    isStandaloneSVG(fig.svg);
    assert.equal(fig.svg.match(/data:image\/png;base64,/g).length, 2);
    assert.match(fig.svg, /<title>a heatmap<\/title>/);
    const bundle = fig[Symbol.for('Jupyter.display')]();
    // one stored picture: the PNG (every front end shows it; nbconvert 6 empties inline SVG)
    assert.deepEqual(Object.keys(bundle).sort(), ['image/png', 'text/plain']);
    const png = Buffer.from(bundle['image/png'], 'base64');
    assert.deepEqual([...png.subarray(1, 4)].map((c) => String.fromCharCode(c)).join(''), 'PNG');
    const [w, h] = [png.readUInt32BE(16), png.readUInt32BE(20)];
    assert.deepEqual([w, h], [Math.ceil(Number(/width="([\d.]+)"/.exec(fig.svg)[1])), Math.ceil(Number(/height="([\d.]+)"/.exec(fig.svg)[1]))]);
    const pixels = decodePNG(png).pixels;
    const colours = new Set(
      Array.from({ length: pixels.length / 4 }, (_, i) => (pixels[4 * i] << 16) | (pixels[4 * i + 1] << 8) | pixels[4 * i + 2]),
    );
    assert.ok(colours.size > 20, `a picture, not a blank (${colours.size} colours)`);
    assert.equal(bundle['text/plain'], 'a heatmap');
  });

  test('titles and categorical legends (HTML in Plot) are redrawn as SVG text', () => {
    const fig = plot({
      title: 'A title',
      subtitle: 'a subtitle',
      caption: 'a caption',
      color: { legend: true },
      marks: [
        Plot.dot(
          [
            { x: 1, c: 'alpha' },
            { x: 2, c: 'beta' },
          ],
          { x: 'x', fill: 'c' },
        ),
      ],
    });
    isStandaloneSVG(fig.svg);
    for (const text of ['A title', 'a subtitle', 'a caption', 'alpha', 'beta']) assert.match(fig.svg, new RegExp(`>${text}</text>`));
  });

  test('toFigure of a bare <svg>, concat in rows and columns', () => {
    const svg = document.createElementNS('http://www.w3.org/2000/svg', 'svg');
    svg.setAttribute('width', '100');
    svg.setAttribute('height', '50');
    svg.innerHTML = '<rect width="10" height="10"/>';
    const a = toFigure(svg, 'a'),
      b = new Figure({ width: 40, height: 80, body: '<circle r="3"/>', alt: 'b' });
    assert.deepEqual([a.width, a.height], [100, 50]);
    const row = concat([a, b], { gap: 10 });
    assert.deepEqual([row.width, row.height, row.alt], [150, 80, 'a | b']);
    const column = concat([a, b], { direction: 'column', gap: 10, title: 'T' });
    assert.deepEqual([column.width, column.height], [100, 50 + 10 + 80 + 28]);
    isStandaloneSVG(column.svg);
  });

  test('compactNumbers rounds coordinates, never text', () => {
    assert.equal(
      compactNumbers('<path d="M0,159.99999999999997L-6,2.5" transform="translate(40,125.00000000000001)"/><text x="1.23456">0.0625 1.23456</text>'),
      '<path d="M0,160L-6,2.5" transform="translate(40,125)"/><text x="1.23">0.0625 1.23456</text>',
    );
  });

  test('tables and reported numbers', () => {
    const t = new Table(
      [
        { a: 1, b: 0.5 },
        { a: 22, b: 0.25 },
      ],
      { format: { b: (v) => v.toFixed(2) }, caption: 'cap' },
    );
    assert.equal(t.text, 'cap\n a     b\n 1  0.50\n22  0.25');
    assert.match(t.html, /^<table><caption>cap<\/caption><thead><tr><th>a<\/th><th>b<\/th>/);
    assert.equal(new Table([{ x: '<&>' }]).html.includes('&lt;&amp;&gt;'), true);
    assert.equal(formatReported(720), '720');
    assert.equal(formatReported(0.1045273123), '0.1045273');
    assert.equal(formatReported(3.576279e-7), '3.576279e-7');
  });
  test('fmt: 3 significant digits, scientific when tiny or huge', () => {
    assert.equal(fmt(0), '0');
    assert.equal(fmt(1.23456), '1.23');
    assert.equal(fmt(3.5e-7), '3.50e-7');
    assert.equal(fmt(2.5e6), '2.50e+6');
    assert.equal(fmt(-0.125), '-0.125');
  });

  test("figure draws a page spec: every panel under its title, the caption, the spec's name and params kept", () => {
    const fig = figure(alibiBias, pe, { heads: 4, length: 8, distances: 16 }, { width: 700 });
    isStandaloneSVG(fig.svg);
    assert.ok(fig.width <= 700 + 1, `width ${fig.width}`);
    assert.equal(fig.spec.panels.length, 5);
    for (const h of [1, 2, 3, 4]) assert.match(fig.svg, new RegExp(`>head ${h}: m = `));
    assert.match(fig.svg, />bias against distance, one line per head</);
    assert.match(fig.svg, />ALiBi adds −m·\(distance\)/, 'the caption, as text');
    assert.match(
      fig.svg,
      /data-spec="alibiBias" data-params="\{&quot;heads&quot;:4,&quot;length&quot;:8,&quot;distances&quot;:16\}" data-options="\{&quot;width&quot;:700\}"/,
    );
    const bundle = fig[Symbol.for('Jupyter.display')]();
    assert.equal(bundle['text/plain'], fig.spec.alt);
    // the spec, params and options ride in the PNG's tEXt chunks, ASCII (JSON's \u escapes)
    assert.deepEqual(pngText(Buffer.from(bundle['image/png'], 'base64')), {
      'posenc:spec': 'alibiBias',
      'posenc:params': '{"heads":4,"length":8,"distances":16}',
      'posenc:options': '{"width":700}',
    });
    const accented = new Figure({ width: 120, height: 60, body: '<rect width="10" height="10"/>', data: { params: '{"sentence":"déjà vu – ok"}' } });
    const t = pngText(Buffer.from(accented[Symbol.for('Jupyter.display')]()['image/png'], 'base64'));
    assert.equal(t['posenc:params'], '{"sentence":"d\\u00e9j\\u00e0 vu \\u2013 ok"}');
    assert.deepEqual(JSON.parse(t['posenc:params']), { sentence: 'déjà vu – ok' });
    assert.equal(fig.svg.match(/data:image\/png;base64,/g).length, 4, 'one raster per head');
    // the same spec and params draw the same picture
    assert.equal(figure(alibiBias, pe, { heads: 4, length: 8, distances: 16 }, { width: 700 }).svg, fig.svg);
    assert.equal(figure(alibiBias, pe, { heads: 4, length: 8, distances: 16 }, { width: 700, panels: [4] }).spec.panels.length, 5);
    assert.throws(() => figure(robotTable, pe), /robotTable has no panels/);
  });

  test("renumberIds: Plot's process-wide id counters renumbered in order of appearance", () => {
    assert.equal(
      renumberIds('<marker id="plot-marker-7"/><path marker-end="url(#plot-marker-7)"/><marker id="plot-marker-3"/><g class="plot-d6a7b5-ramp">'),
      '<marker id="plot-marker-1"/><path marker-end="url(#plot-marker-1)"/><marker id="plot-marker-2"/><g class="plot-d6a7b5-ramp">',
    );
  });

  test("specTable and specLines show a spec's table and lines", () => {
    const t = specTable(robotTable(pe));
    assert.deepEqual(t.columns, ['word', 'position', 'P(k,0) sin', 'P(k,1) cos', 'P(k,2) sin', 'P(k,3) cos']);
    assert.deepEqual(t.cells[1].slice(0, 3), ['am', '1', '0.841471']);
    assert.match(t.text, /^Positional encoding of "I am a robot"/);
    assert.match(specLines(extrapolation(pe, { maxLength: 10, position: 20, dModel: 4 })), /^Learned table: RangeError: .*\nSinusoidal row 20: \[/);
  });
});

describe('web/figures/numeric.js', () => {
  test('median, maxAbsDiff, matVec, mulberry32', () => {
    assert.equal(median([3, 1, 2]), 2);
    assert.equal(median([4, 1, 2, 3]), 2.5);
    assert.ok(Number.isNaN(median([])));
    assert.throws(() => maxAbsDiff([1], [1, 2]), RangeError);
    assert.deepEqual([...matVec([1, 2, 3, 4], [1, 1])], [3, 7]);
    const a = mulberry32(1),
      b = mulberry32(1);
    const xs = Array.from({ length: 1000 }, () => a());
    assert.deepEqual(
      xs,
      Array.from({ length: 1000 }, () => b()),
    );
    assert.ok(xs.every((x) => x >= 0 && x < 1));
  });

  test('permutations and diagonalSpread', () => {
    const all = permutations(4);
    assert.equal(all.length, 24);
    assert.equal(new Set(all.map(String)).size, 24);
    assert.deepEqual(all[0], [0, 1, 2, 3]);
    const toeplitz = { data: Float32Array.from({ length: 16 }, (_, n) => Math.floor(n / 4) - (n % 4)), shape: [4, 4] };
    assert.equal(diagonalSpread(toeplitz), 0);
    const bumped = { data: toeplitz.data.map((v, n) => (n === 5 ? v + 0.5 : v)), shape: [4, 4] };
    assert.equal(diagonalSpread(bumped), 0.5);
    assert.throws(() => diagonalSpread({ data: new Float32Array(6), shape: [2, 3] }), RangeError);
  });

  test('gaussianVector is deterministic and roughly standard normal', () => {
    const v = gaussianVector(20000, 4);
    assert.deepEqual(v, gaussianVector(20000, 4));
    const mean = v.reduce((a, b) => a + b) / v.length;
    const std = Math.sqrt(v.reduce((a, b) => a + (b - mean) ** 2, 0) / v.length);
    assert.ok(Math.abs(mean) < 0.03 && Math.abs(std - 1) < 0.03, `mean ${mean}, std ${std}`);
  });
});

describe('web/figures: what the notebooks compute with', () => {
  test('seeded shuffles change the sentence as the model reads it (never only "The" <-> "the")', () => {
    const tokens = ['The', 'cat', 'sat', 'on', 'the', 'mat'];
    const random = mulberry32(3);
    for (let n = 0; n < 50; n++) {
      const p = shuffleFor(tokens, random);
      assert.deepEqual([...p].sort(), [0, 1, 2, 3, 4, 5]);
      assert.ok(changesSentence(tokens, p));
    }
    assert.equal(changesSentence(tokens, [4, 1, 2, 3, 0, 5]), false);
    assert.equal(shuffleFor(['a', 'A']), null);
  });

  test('compared by tokens: a repeated word can move without changing the sentence', () => {
    const tokens = ['The', 'cat', 'sat', 'on', 'the', 'mat'];
    // the reversal and the reversal with "The" and "the" swapped are one sentence to the model
    assert.deepEqual(sameSentencePermutations(tokens, [5, 4, 3, 2, 1, 0]), [
      [5, 0, 3, 2, 1, 4],
      [5, 4, 3, 2, 1, 0],
    ]);
    assert.deepEqual(sameSentencePermutations(tokens, [1, 2, 3, 5, 0, 4]).length, 2);
    assert.deepEqual(sameSentencePermutations(['a', 'b'], [1, 0]), [[1, 0]]);
    assert.equal(distinctOrderings(tokens).length, 720 / 2);
    assert.equal(distinctOrderings(['a', 'A', 'a']).length, 1);
    // symmetric ALiBi cannot see the reversal, however the two "the" are matched; by index the lab scores one matching as seen
    const swapped = [5, 0, 3, 2, 1, 4];
    assert.ok(pe.permutationLab({ encoding: 'alibi', permutation: swapped }).equivarianceError > 1e-3);
    assert.ok(tokenEquivarianceError(pe, { encoding: 'alibi', permutation: swapped }) < 1e-6);
    assert.ok(tokenEquivarianceError(pe, { encoding: 'alibi', permutation: [5, 4, 3, 2, 1, 0] }) < 1e-6);
    assert.ok(tokenEquivarianceError(pe, { encoding: 'rope', permutation: swapped }) > 1e-2);
    assert.ok(tokenEquivarianceError(pe, { encoding: 'none', permutation: [1, 0, 5, 4, 2, 3] }) < 1e-6);
  });

  test('shuffleErrors by tokens names the shuffle ALiBi misses: the reversal', () => {
    const s = shuffleErrors(pe, { count: 40, seed: 7, byTokens: true });
    assert.deepEqual(
      s.numbers.missed.map((m) => [m.encoding, m.shuffle, m.permutation.join('')]),
      [['alibi', 38, '503214']],
    );
    assert.match(s.caption, /missed: alibi on shuffle #38 \("mat The on sat cat the"\)/);
    assert.ok(s.numbers.seenSmallest > 1e-3 && s.numbers.noneLargest < 1e-6);
    assert.equal(shuffleErrors(pe, { count: 40, seed: 7 }).numbers.missed.length, 0, 'by index, the lab scores it as seen');
  });

  test("labOutputs recomputes the lab's number; unshuffled weights match without an encoding", () => {
    for (const encoding of ['none', 'sinusoidal', 'alibi']) {
      const lab = pe.permutationLab({ encoding });
      const recomputed = labOutputs(pe, { encoding }).numbers.equivarianceError;
      assert.ok(Math.abs(recomputed - lab.equivarianceError) <= 1e-6 * Math.max(1, lab.equivarianceError));
      const diff = maxAbsDiff(unshuffleWeights(lab).data, lab.weights.data);
      if (encoding === 'none') assert.ok(diff < 1e-6, `none: ${diff}`);
      else if (encoding === 'sinusoidal') assert.ok(diff > 1e-2, `sinusoidal: ${diff}`);
    }
  });

  test('exactRow gives the n = 100, d = 4 table of "A Gentle Introduction to Positional Encoding in Transformer Models" (printed there to 8 decimals)', () => {
    assert.ok(maxAbsDiff(exactRow(1, 4, 100), [0.84147098, 0.54030231, 0.09983342, 0.99500417]) < 5e-8);
    assert.ok(maxAbsDiff(exactRow(3, 4, 100), [0.14112001, -0.9899925, 0.29552023, 0.95533649]) < 5e-8);
  });

  test('the float32 recipe is fine at small positions and off by > 1e-2 at 1e6; posenc is not', () => {
    assert.ok(maxAbsDiff(float32RecipeRow(3, 64), exactRow(3, 64)) < 1e-6);
    const err = maxAbsDiff(float32RecipeRow(1e6, 512), exactRow(1e6, 512));
    assert.ok(err > 1e-2 && err < 0.1, `float32 recipe error at 1e6: ${err}`);
    assert.ok(maxAbsDiff(pe.sinusoidal({ dModel: 512, positions: [1e6] }).data, exactRow(1e6, 512)) < 1e-6);
  });

  test("scalingConfigs' llama3 entry is Llama 3.1's rope_scaling block, which the package reads as written", () => {
    const block = CONFIGS['Llama 3.1 8B'].rope_scaling;
    assert.deepEqual(scalingConfigs(8, 8192).llama3, block);
    // Llama 3.1 keeps the fast pairs and divides the slow ones by 8
    const { invFreq } = pe.ropeFrequencies({ dim: 128, base: 500000, scaling: block });
    assert.equal(invFreq[0], 1);
    assert.ok(Math.abs((invFreq[63] * 8) / 500000 ** (-126 / 128) - 1) < 1e-6);
  });

  test('rotateAt and rotatedScores against hand-made rotations', () => {
    const r = rotateAt(pe, Float32Array.of(1, 0), [0, 1, 2]);
    assert.ok(maxAbsDiff(r.data, [1, 0, Math.cos(1), Math.sin(1), Math.cos(2), Math.sin(2)]) < 1e-6);
    const q = Float32Array.of(1, 2),
      k = Float32Array.of(-0.5, 1);
    const s = rotatedScores(pe, q, k, [0, 3], [1]);
    const rot = (v, a) => [v[0] * Math.cos(a) - v[1] * Math.sin(a), v[0] * Math.sin(a) + v[1] * Math.cos(a)];
    const dot = (a, b) => a[0] * b[0] + a[1] * b[1];
    assert.deepEqual(s.shape, [2, 1]);
    assert.ok(maxAbsDiff(s.data, [dot(rot(q, 0), rot(k, 1)), dot(rot(q, 3), rot(k, 1))]) < 1e-5);
  });

  test('longContextResults trains once per setting: the same options again give the same run, any other setting a new one', () => {
    // tiny models: the bookkeeping is what is checked (tests/js/longcontext.test.js checks the experiment)
    const base = { task: 'before', length: 4, steps: 6, seeds: 1, firstSeed: 0, tuneSteps: 3, rows: ['rope', 'ft'], multiples: [2] };
    const first = longContextResults(pe, base);
    assert.deepEqual(first, trainShortTestLong(pe, base).results, 'the first call runs the experiment');
    assert.equal(longContextResults(pe, { ...base }), first, 'asked again: not trained again');
    const defaulted = Object.fromEntries(Object.entries(base).filter(([name]) => name !== 'task')); // 'before' is the default task
    assert.equal(longContextResults(pe, defaulted), first, 'a default spelled out or left out is the same setting');
    const changes = { task: 'copy', length: 5, steps: 7, seeds: 2, firstSeed: 1, tuneSteps: 4, rows: ['rope'], multiples: [3] };
    for (const [name, value] of Object.entries(changes)) {
      const options = { ...base, [name]: value };
      const run = longContextResults(pe, options);
      assert.notEqual(run, first, `${name} changed: trained again`);
      assert.deepEqual(run, trainShortTestLong(pe, options).results, `${name} changed: the run of that setting`);
    }
  });
});

describe('verdict (the check cell of a self-checked exercise)', () => {
  test('✓ within the tolerance, ✗ over it, for NaN and for a throw', () => {
    assert.match(
      verdict('ex', () => 1e-8, 1e-6),
      /^✓ ex: largest difference from posenc 1\.00e-8 \(within the tolerance 1\.00e-6\)$/,
    );
    assert.match(
      verdict('ex', () => 0, 0),
      /^✓ /,
    );
    assert.match(
      verdict('ex', () => 0.5, 1e-6),
      /^✗ ex: .*0\.5 \(over/,
    );
    assert.match(
      verdict('ex', () => NaN, 1e-6),
      /^✗ /,
    );
    const thrower = () => {
      throw new TypeError('not yet');
    };
    assert.match(verdict('ex', thrower, 1), /^✗ ex: threw TypeError: not yet$/);
  });

  test('with cases: ✗ names the first case that fails, ✓ counts them', () => {
    const cases = [
      ['n = 1', () => 0],
      ['n = 2', () => 0.5],
      ['n = 3', () => 1],
    ];
    assert.equal(verdict('exercise 1', cases, 0.1), '✗ exercise 1, case n = 2: difference from posenc 0.5 (over the tolerance 0.1)');
    assert.equal(verdict('exercise 1', cases, 1), '✓ exercise 1: 3 cases, largest difference from posenc 1 (within the tolerance 1)');
    const stub = () => notWritten('causalAttention');
    assert.equal(
      verdict('exercise 2', [['q 5 × 4', stub]], 1),
      '✗ exercise 2, case q 5 × 4: threw Error: causalAttention is not written yet: replace the line that throws with your code',
    );
  });
});
