// The PNG copy of each notebook figure: the figure's SVG rendered by resvg (compiled to wasm, so the
// same bytes on every machine) with DejaVu Sans, the one font it is given. Fonts are files, not
// system lookups: a wasm renderer has no access to the system's font list. Without a font file (a
// machine without fonts-dejavu-core, which scripts/setup.sh installs) figures keep only their SVG.
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { Buffer } from 'node:buffer';
import { Resvg, initWasm } from '@resvg/resvg-wasm';
import { encodePNG } from './png.js';

const require = createRequire(import.meta.url);
await initWasm(readFileSync(require.resolve('@resvg/resvg-wasm/index_bg.wasm')));

const FONT_DIRS = ['/usr/share/fonts/truetype/dejavu', '/usr/share/fonts/dejavu', '/usr/local/share/fonts', '/Library/Fonts'];
const read = (name) => {
  for (const dir of FONT_DIRS)
    try {
      return readFileSync(`${dir}/${name}`);
    } catch {
      // not in this directory
    }
  return null;
};
const fonts = ['DejaVuSans.ttf', 'DejaVuSans-Bold.ttf', 'DejaVuSans-Oblique.ttf'].map(read).filter(Boolean);

export const haveFonts = fonts.length > 0;

// The PNGs of the last figures drawn, by a hash of their SVG and text. A cell run again draws its figure
// again, to the same SVG (figures are deterministic), and gets the PNG without rendering and encoding the
// same picture a second time; a figure that changed in any way is a new SVG, rendered.
const drawn = new Map();
const REMEMBERED = 64;

// The PNG of an SVG document as base64 (what a Jupyter image/png output holds), or null without fonts.
// `text`: { keyword: Latin-1 text } stored in the PNG's tEXt chunks.
export function pngOf(svg, text = {}) {
  if (!haveFonts) return null;
  const key = createHash('sha256').update(svg).update('\0').update(JSON.stringify(text)).digest('base64');
  if (!drawn.has(key)) {
    drawn.set(key, render(svg, text));
    if (drawn.size > REMEMBERED) drawn.delete(drawn.keys().next().value); // the oldest
  }
  return drawn.get(key);
}

function render(svg, text) {
  const r = new Resvg(svg, {
    font: { fontBuffers: fonts, defaultFontFamily: 'DejaVu Sans', sansSerifFamily: 'DejaVu Sans' },
    fitTo: { mode: 'original' },
    imageRendering: 1, // nearest neighbour: a heatmap's cells stay cells (smoothed, a 500 × 64 raster became a 700 KB photo)
  });
  const image = r.render();
  // Encoded by png.js (deflate level 9, a filter chosen per line): the same pixels in about 30% fewer
  // bytes than resvg's own encoder. resvg's pixels are premultiplied by alpha; PNG's are not.
  const rgba = image.pixels;
  for (let i = 3; i < rgba.length; i += 4) {
    const a = rgba[i];
    if (a > 0 && a < 255) for (let c = i - 3; c < i; c++) rgba[c] = Math.min(255, Math.round((rgba[c] * 255) / a));
  }
  const png = encodePNG(image.width, image.height, rgba, { text });
  image.free();
  r.free();
  return Buffer.from(png).toString('base64');
}
