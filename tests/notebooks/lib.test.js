// Tests of the helpers the notebooks import (web/notebooks/lib/), in Node. References are
// independent: a PNG decoder written here, hand-made rotations, the formulas themselves.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { inflateSync } from 'node:zlib';
import { load } from 'posenc';
import { Canvas, crc32, encodePNG, parseColor, pngDataURL } from '../../web/notebooks/lib/png.js';
import {
  Figure,
  Plot,
  Table,
  compactNumbers,
  concat,
  formatReported,
  plot,
  specFigure,
  toFigure,
  document,
} from '../../web/notebooks/lib/display.js';
import { diagonalSpread, equivarianceError, permutations, reversal, shuffles, unshuffleWeights, weightCells } from '../../web/notebooks/lib/lab.js';
import { byOffset, exactRow, matVec, row, seedsFloat32Row, shiftResidual } from '../../web/notebooks/lib/sinusoidal.js';
import { LLAMA_31, gaussianVector, phi3StyleConfig, rotateAt, rotatedScores, scalingFromHF, wavelengths } from '../../web/notebooks/lib/rope.js';
import { fmt, maxAbsDiff, median, mulberry32, verdict } from '../../web/notebooks/lib/util.js';
import { xposDecay } from '../../web/figures/beyond.js';

const pe = await load();

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
    out = new Uint8Array(stride * height);
  for (let y = 0; y < height; y++) {
    const filter = raw[y * (stride + 1)];
    for (let i = 0; i < stride; i++) {
      const v = raw[y * (stride + 1) + 1 + i];
      const a = i >= 4 ? out[y * stride + i - 4] : 0,
        b = y ? out[(y - 1) * stride + i] : 0,
        c = y && i >= 4 ? out[(y - 1) * stride + i - 4] : 0;
      const p = a + b - c,
        pa = Math.abs(p - a),
        pb = Math.abs(p - b),
        pc = Math.abs(p - c);
      const pred = [0, a, b, (a + b) >> 1, pa <= pb && pa <= pc ? a : pb <= pc ? b : c][filter];
      assert.ok(pred !== undefined, `filter type ${filter}`);
      out[y * stride + i] = (v + pred) & 0xff;
    }
  }
  return { width, height, pixels: out };
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
    assert.match(pngDataURL(1, 1, new Uint8Array(4)), /^data:image\/png;base64,iVBORw0KGgo/);
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
    assert.deepEqual(Object.keys(bundle).sort(), ['image/svg+xml', 'text/plain']);
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

  test('specFigure: a figure spec of several panels, titled, with the spec’s alt', () => {
    const spec = xposDecay(pe, { headDim: 16, maxDistance: 200 });
    const row = specFigure(spec, { gap: 10 });
    assert.ok(row instanceof Figure);
    assert.equal(row.alt, spec.alt);
    assert.equal(row.width, spec.panels.reduce((s, p) => s + p.width, 0) + 10);
    for (const p of spec.panels) assert.ok(row.svg.includes(p.title.replaceAll('·', '·')), p.title);
    const column = specFigure(spec, { direction: 'column', width: 400 });
    assert.equal(column.width, 400);
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
});

describe('lab.js', () => {
  test('reversal, shuffles and permutations', () => {
    assert.deepEqual(reversal(4), [3, 2, 1, 0]);
    const s = shuffles(6, 50, 3);
    assert.deepEqual(s, shuffles(6, 50, 3), 'deterministic');
    for (const p of s) {
      assert.deepEqual([...p].sort(), [0, 1, 2, 3, 4, 5]);
      assert.ok(
        p.some((v, i) => v !== i),
        'never the identity',
      );
    }
    assert.throws(() => shuffles(1, 1), RangeError);
    const all = permutations(4);
    assert.equal(all.length, 24);
    assert.equal(new Set(all.map(String)).size, 24);
    assert.deepEqual(all[0], [0, 1, 2, 3]);
  });

  test("equivarianceError recomputes the lab's number; unshuffled weights match without an encoding", () => {
    for (const encoding of ['none', 'sinusoidal', 'alibi']) {
      const lab = pe.permutationLab({ encoding });
      assert.ok(Math.abs(equivarianceError(lab) - lab.equivarianceError) <= 1e-6 * Math.max(1, lab.equivarianceError));
      const back = unshuffleWeights(lab);
      const diff = maxAbsDiff(back.data, lab.weights.data);
      if (encoding === 'none') assert.ok(diff < 1e-6, `none: ${diff}`);
      else if (encoding === 'sinusoidal') assert.ok(diff > 1e-2, `sinusoidal: ${diff}`);
    }
  });

  test('weightCells and diagonalSpread', () => {
    const w = { data: Float32Array.from({ length: 2 * 9 }, (_, i) => i), shape: [2, 3, 3] };
    const cells = weightCells(w, ['a', 'b', 'a']);
    assert.equal(cells.length, 18);
    assert.deepEqual(cells[10], { panel: '', head: 'head 1', query: '0 a', key: '1 b', value: 10 });
    const toeplitz = { data: Float32Array.from({ length: 16 }, (_, n) => Math.floor(n / 4) - (n % 4)), shape: [4, 4] };
    assert.ok(diagonalSpread(toeplitz).every((d) => d.spread === 0));
    assert.equal(diagonalSpread(toeplitz).length, 7);
    assert.throws(() => diagonalSpread({ data: new Float32Array(6), shape: [2, 3] }), RangeError);
  });
});

describe('sinusoidal.js', () => {
  test("exactRow gives the seeds' n = 100, d = 4 table (printed there to 8 decimals)", () => {
    assert.ok(maxAbsDiff(exactRow(1, 4, 100), [0.84147098, 0.54030231, 0.09983342, 0.99500417]) < 5e-8);
    assert.ok(maxAbsDiff(exactRow(3, 4, 100), [0.14112001, -0.9899925, 0.29552023, 0.95533649]) < 5e-8);
  });

  test('the float32 recipe is fine at small positions and off by > 1e-2 at 1e6; posenc is not', () => {
    assert.ok(maxAbsDiff(seedsFloat32Row(3, 64), exactRow(3, 64)) < 1e-6);
    const err = maxAbsDiff(seedsFloat32Row(1e6, 512), exactRow(1e6, 512));
    assert.ok(err > 1e-2 && err < 0.1, `float32 recipe error at 1e6: ${err}`);
    assert.ok(maxAbsDiff(pe.sinusoidal({ dModel: 512, positions: [1e6] }).data, exactRow(1e6, 512)) < 1e-6);
  });

  test('matVec, row, shiftResidual and byOffset', () => {
    assert.deepEqual([...matVec([1, 2, 3, 4], [1, 1])], [3, 7]);
    const t = pe.sinusoidal({ length: 50, dModel: 16 });
    assert.deepEqual([...row(t, 2)], [...t.data.subarray(32, 48)]);
    assert.ok(shiftResidual(pe.shiftMatrix({ dModel: 16, k: 5 }), t, 5) < 1e-6);
    assert.ok(shiftResidual(pe.shiftMatrix({ dModel: 16, k: 4 }), t, 5) > 0.1, 'the wrong M_k does not fit');
    const S = { data: Float32Array.from({ length: 9 }, (_, n) => n), shape: [3, 3] };
    assert.deepEqual(byOffset(S, [0, 1], 5), [
      { start: 0, offset: 0, value: 0 },
      { start: 0, offset: 1, value: 1 },
      { start: 0, offset: 2, value: 2 },
      { start: 1, offset: 0, value: 4 },
      { start: 1, offset: 1, value: 5 },
    ]);
  });
});

describe('rope.js', () => {
  test('scalingFromHF converts Hugging Face rope_scaling blocks', () => {
    assert.deepEqual(scalingFromHF(LLAMA_31.ropeScaling), {
      type: 'llama3',
      factor: 8,
      originalMaxPositions: 8192,
      lowFreqFactor: 1,
      highFreqFactor: 4,
    });
    assert.deepEqual(scalingFromHF({ type: 'yarn', factor: 4, original_max_position_embeddings: 32768, beta_fast: 32, beta_slow: 1 }), {
      type: 'yarn',
      factor: 4,
      originalMaxPositions: 32768,
      betaFast: 32,
      betaSlow: 1,
    });
    const phi = phi3StyleConfig();
    const longrope = scalingFromHF(phi.ropeScaling, { maxPositionEmbeddings: phi.maxPositionEmbeddings });
    assert.equal(longrope.type, 'longrope');
    assert.equal(longrope.factor, 32);
    assert.equal(longrope.longFactor.length, 48);
    assert.equal(scalingFromHF({ type: 'su', short_factor: [1], long_factor: [2] }).type, 'longrope');
    assert.equal(scalingFromHF(null), undefined);
    assert.throws(() => scalingFromHF({ rope_type: 'banana' }), /unknown rope_type "banana"/);
    // what the package makes of it: Llama 3.1 keeps the fast pairs, divides the slow ones by 8
    const { invFreq } = pe.ropeFrequencies({ dim: 128, base: 500000, scaling: scalingFromHF(LLAMA_31.ropeScaling) });
    assert.equal(invFreq[0], 1);
    assert.ok(Math.abs((invFreq[63] * 8) / 500000 ** (-126 / 128) - 1) < 1e-6);
  });

  test('phi3StyleConfig: long factors rise from 1 to 64', () => {
    const { long_factor: f, short_factor: s } = phi3StyleConfig().ropeScaling;
    assert.equal(f[0], 1);
    assert.ok(Math.abs(f[47] - 64) < 1e-9);
    assert.ok(f.every((v, i) => i === 0 || v > f[i - 1]));
    assert.ok(s.every((v) => v === 1));
  });

  test('wavelengths, rotateAt and rotatedScores against hand-made rotations', () => {
    assert.ok(maxAbsDiff(wavelengths(Float32Array.of(1, 0.5)), [2 * Math.PI, 4 * Math.PI]) < 1e-12);
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

  test('gaussianVector is deterministic and roughly standard normal', () => {
    const v = gaussianVector(20000, 4);
    assert.deepEqual(v, gaussianVector(20000, 4));
    const mean = v.reduce((a, b) => a + b) / v.length;
    const std = Math.sqrt(v.reduce((a, b) => a + (b - mean) ** 2, 0) / v.length);
    assert.ok(Math.abs(mean) < 0.03 && Math.abs(std - 1) < 0.03, `mean ${mean}, std ${std}`);
  });
});

describe('util.js', () => {
  test('verdict: ✓ within the tolerance, ✗ over it, for NaN and for a throw', () => {
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
    assert.match(
      verdict(
        'ex',
        () => {
          throw new TypeError('not yet');
        },
        1,
      ),
      /^✗ ex: your code threw TypeError: not yet$/,
    );
  });

  test('fmt, median, maxAbsDiff, mulberry32', () => {
    assert.equal(fmt(0), '0');
    assert.equal(fmt(1.23456), '1.23');
    assert.equal(fmt(3.5e-7), '3.50e-7');
    assert.equal(fmt(2.5e6), '2.50e+6');
    assert.equal(fmt(-0.125), '-0.125');
    assert.equal(median([3, 1, 2]), 2);
    assert.equal(median([4, 1, 2, 3]), 2.5);
    assert.ok(Number.isNaN(median([])));
    assert.throws(() => maxAbsDiff([1], [1, 2]), RangeError);
    const a = mulberry32(1),
      b = mulberry32(1);
    const xs = Array.from({ length: 1000 }, () => a());
    assert.deepEqual(
      xs,
      Array.from({ length: 1000 }, () => b()),
    );
    assert.ok(xs.every((x) => x >= 0 && x < 1));
  });
});
