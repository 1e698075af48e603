// A minimal PNG encoder (8-bit RGBA, adaptive scanline filters) and the bit of <canvas> that Observable Plot
// draws on: `raster` fills an ImageData and `putImageData`s it, continuous legends `fillRect` one
// pixel per colour, and both read the result back with `toDataURL()`. A DOM shim has no canvas, so
// this one is enough for Plot's heatmaps and colour ramps to render as <image> elements in an SVG.
import { Buffer } from 'node:buffer';
import { deflateSync } from 'node:zlib';

const CRC_TABLE = new Uint32Array(256).map((_, n) => {
  let c = n;
  for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
  return c >>> 0;
});

// CRC-32 (ISO 3309, the one PNG chunks carry).
export function crc32(bytes) {
  let c = 0xffffffff;
  for (const b of bytes) c = CRC_TABLE[(c ^ b) & 0xff] ^ (c >>> 8);
  return (c ^ 0xffffffff) >>> 0;
}

function chunk(type, body) {
  const out = new Uint8Array(12 + body.length);
  const view = new DataView(out.buffer);
  view.setUint32(0, body.length);
  for (let i = 0; i < 4; i++) out[4 + i] = type.charCodeAt(i);
  out.set(body, 8);
  view.setUint32(8 + body.length, crc32(out.subarray(4, 8 + body.length)));
  return out;
}

// Each scanline becomes a filter byte and the filtered pixels. Per line, the filter (none, sub, up,
// average, Paeth) with the smallest sum of |bytes as signed| is kept, the usual heuristic (PNG spec,
// section 12.8): smooth pictures such as heatmaps then compress several times better. Ties go to the
// first filter. A figure is a megabyte of pixels, so each filter has a loop of its own, the filter
// that won the line above is tried first, and the others stop as soon as they cannot beat it (on a
// figure's white background, within a few bytes).
const COST = new Uint8Array(256).map((_, v) => (v < 128 ? v : 256 - v)); // |v| for the byte v read as signed

// Each filter of `line` (`prev` the line above) into `out`: returns its sum, or `limit` as soon as the
// sum reaches it (`out` then holds part of the line). Bytes left of the first pixel count as 0.
const FILTERS = [
  function none(line, prev, out, limit) {
    let score = 0;
    for (let i = 0; i < line.length && score < limit; i++) score += COST[(out[i] = line[i])];
    return Math.min(score, limit);
  },
  function sub(line, prev, out, limit) {
    let score = 0;
    for (let i = 0; i < 4; i++) score += COST[(out[i] = line[i])];
    for (let i = 4; i < line.length && score < limit; i++) score += COST[(out[i] = (line[i] - line[i - 4]) & 0xff)];
    return Math.min(score, limit);
  },
  function up(line, prev, out, limit) {
    let score = 0;
    for (let i = 0; i < line.length && score < limit; i++) score += COST[(out[i] = (line[i] - prev[i]) & 0xff)];
    return Math.min(score, limit);
  },
  function average(line, prev, out, limit) {
    let score = 0;
    for (let i = 0; i < 4; i++) score += COST[(out[i] = (line[i] - (prev[i] >> 1)) & 0xff)];
    for (let i = 4; i < line.length && score < limit; i++) score += COST[(out[i] = (line[i] - ((line[i - 4] + prev[i]) >> 1)) & 0xff)];
    return Math.min(score, limit);
  },
  function paeth(line, prev, out, limit) {
    let score = 0;
    for (let i = 0; i < 4; i++) score += COST[(out[i] = (line[i] - prev[i]) & 0xff)]; // a = c = 0: the predictor is b
    for (let i = 4; i < line.length && score < limit; i++) {
      const a = line[i - 4],
        b = prev[i],
        c = prev[i - 4];
      const pa = Math.abs(b - c), // |p - a| for p = a + b - c
        pb = Math.abs(a - c),
        pc = Math.abs(a + b - 2 * c);
      score += COST[(out[i] = (line[i] - (pa <= pb && pa <= pc ? a : pb <= pc ? b : c)) & 0xff)];
    }
    return Math.min(score, limit);
  },
];

function filterScanlines(width, height, rgba) {
  const stride = width * 4;
  const pixels = rgba instanceof Uint8Array ? rgba : new Uint8Array(rgba.buffer, rgba.byteOffset, rgba.length);
  const raw = new Uint8Array((stride + 1) * height);
  const candidates = FILTERS.map(() => new Uint8Array(stride));
  const zeros = new Uint8Array(stride); // the line above the first
  let best = 0;
  for (let y = 0; y < height; y++) {
    const line = pixels.subarray(y * stride, (y + 1) * stride);
    const prev = y > 0 ? pixels.subarray((y - 1) * stride, y * stride) : zeros;
    const first = best; // the line above's filter: the sum to beat
    let bestScore = FILTERS[first](line, prev, candidates[first], Infinity);
    for (let f = 0; f < FILTERS.length; f++) {
      if (f === first) continue;
      const limit = f < best ? bestScore + 1 : bestScore; // (sums are integers) an earlier filter wins a tie
      const score = FILTERS[f](line, prev, candidates[f], limit);
      if (score < limit) [best, bestScore] = [f, score];
    }
    raw[y * (stride + 1)] = best;
    raw.set(candidates[best], y * (stride + 1) + 1);
  }
  return raw;
}

// width x height RGBA pixels (row-major, 4 bytes each) -> the bytes of a PNG file.
// tEXt chunks: { keyword: text } in Latin-1 (1-79 characters of keyword). Text outside Latin-1 is
// refused: callers escape it (JSON's \u escapes do).
function textChunks(text) {
  return Object.entries(text).map(([keyword, value]) => {
    const all = `${keyword}\0${value}`;
    if (!/^[\x20-\x7e\xa1-\xff]{1,79}$/.test(keyword) || [...all].some((c) => c.charCodeAt(0) > 0xff))
      throw new RangeError(`encodePNG: a tEXt chunk holds Latin-1 text under a 1-79 character keyword, got ${JSON.stringify(keyword)}`);
    return chunk(
      'tEXt',
      Uint8Array.from(all, (c) => c.charCodeAt(0)),
    );
  });
}

// The tEXt chunks of a PNG, as { keyword: text }.
export function pngText(png) {
  const view = new DataView(png.buffer, png.byteOffset, png.byteLength);
  const out = {};
  for (let at = 8; at + 8 <= png.length;) {
    const length = view.getUint32(at);
    const type = String.fromCharCode(...png.subarray(at + 4, at + 8));
    if (type === 'tEXt') {
      const body = String.fromCharCode(...png.subarray(at + 8, at + 8 + length));
      const nul = body.indexOf('\0');
      out[body.slice(0, nul)] = body.slice(nul + 1);
    }
    at += 12 + length;
  }
  return out;
}

export function encodePNG(width, height, rgba, { text = {} } = {}) {
  if (!(width > 0 && height > 0) || rgba.length !== width * height * 4)
    throw new RangeError(`encodePNG: expected ${width} x ${height} x 4 = ${width * height * 4} bytes, got ${rgba.length}`);
  const header = new Uint8Array(13);
  const hv = new DataView(header.buffer);
  hv.setUint32(0, width);
  hv.setUint32(4, height);
  header.set([8, 6, 0, 0, 0], 8); // bit depth 8, colour type 6 (RGBA), deflate, filter method 0 (five per-line filters), no interlace
  const raw = filterScanlines(width, height, rgba);
  const parts = [
    new Uint8Array([137, 80, 78, 71, 13, 10, 26, 10]),
    chunk('IHDR', header),
    ...textChunks(text),
    chunk('IDAT', new Uint8Array(deflateSync(raw, { level: 9 }))),
    chunk('IEND', new Uint8Array(0)),
  ];
  const png = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) {
    png.set(p, at);
    at += p.length;
  }
  return png;
}

export function pngDataURL(width, height, rgba) {
  return `data:image/png;base64,${Buffer.from(encodePNG(width, height, rgba)).toString('base64')}`;
}

// CSS colours as d3 interpolators and Plot write them: rgb(), rgba(), #rgb, #rrggbb.
export function parseColor(css) {
  const s = String(css).trim();
  let m = /^rgba?\(\s*([\d.]+)[\s,]+([\d.]+)[\s,]+([\d.]+)(?:\s*[,/]\s*([\d.]+%?))?\s*\)$/i.exec(s);
  if (m) {
    const alpha = m[4] === undefined ? 1 : m[4].endsWith('%') ? parseFloat(m[4]) / 100 : +m[4];
    return [+m[1], +m[2], +m[3], Math.round(alpha * 255)].map((v) => Math.max(0, Math.min(255, Math.round(v))));
  }
  m = /^#([0-9a-f]{3}|[0-9a-f]{6})$/i.exec(s);
  if (m) {
    const h = m[1].length === 3 ? [...m[1]].map((c) => c + c).join('') : m[1];
    return [0, 2, 4].map((i) => parseInt(h.slice(i, i + 2), 16)).concat(255);
  }
  throw new RangeError(`parseColor: cannot parse the colour ${JSON.stringify(css)}`);
}

// The subset of CanvasRenderingContext2D that Plot uses.
class Context2D {
  constructor(canvas) {
    this.canvas = canvas;
    this.fillStyle = '#000000';
  }
  createImageData(width, height) {
    return { width, height, data: new Uint8ClampedArray(width * height * 4) };
  }
  putImageData(image, dx = 0, dy = 0) {
    const { pixels, width, height } = this.canvas;
    for (let y = 0; y < image.height; y++)
      for (let x = 0; x < image.width; x++) {
        const tx = x + dx,
          ty = y + dy;
        if (tx < 0 || ty < 0 || tx >= width || ty >= height) continue;
        const s = (y * image.width + x) * 4,
          t = (ty * width + tx) * 4;
        for (let k = 0; k < 4; k++) pixels[t + k] = image.data[s + k];
      }
  }
  fillRect(x0, y0, w, h) {
    const { pixels, width, height } = this.canvas;
    const rgba = parseColor(this.fillStyle);
    for (let y = Math.max(0, Math.floor(y0)); y < Math.min(height, Math.ceil(y0 + h)); y++)
      for (let x = Math.max(0, Math.floor(x0)); x < Math.min(width, Math.ceil(x0 + w)); x++) pixels.set(rgba, (y * width + x) * 4);
  }
}

export class Canvas {
  #width = 300;
  #height = 150;
  pixels = new Uint8ClampedArray(300 * 150 * 4);
  get width() {
    return this.#width;
  }
  set width(w) {
    this.#width = w;
    this.pixels = new Uint8ClampedArray(w * this.#height * 4);
  }
  get height() {
    return this.#height;
  }
  set height(h) {
    this.#height = h;
    this.pixels = new Uint8ClampedArray(this.#width * h * 4);
  }
  getContext(type) {
    return type === '2d' ? new Context2D(this) : null;
  }
  toDataURL() {
    return pngDataURL(this.#width, this.#height, this.pixels);
  }
}
