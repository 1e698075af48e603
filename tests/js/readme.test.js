// Every ```js block of README.md runs as written, each as its own ES module in a fresh Node process,
// and prints what its comments say (the convention is in CONTRIBUTING.md, "README examples"):
// the comment on a console.log line, or alone on the line after it, is the expected output up to
// its first `;`. Numbers match to the precision written, words and names exactly, `…` skips.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { describe, test } from 'node:test';

const root = new URL('../..', import.meta.url).pathname;
const dir = join(root, 'test-artifacts/readme'); // inside the package, so `import 'posenc'` resolves to it
mkdirSync(dir, { recursive: true });

function jsBlocks(markdown) {
  return [...markdown.matchAll(/^```js\n([\s\S]*?)^```$/gm)].map((m) => ({ source: m[1], line: markdown.slice(0, m.index).split('\n').length + 1 }));
}

// Line number (1-based) -> expected text, for each console.log line with a comment.
function expectations(source) {
  const lines = source.split('\n');
  const out = new Map();
  lines.forEach((line, i) => {
    if (!/console\.log\(/.test(line)) return;
    const trailing = /\)\s*;?\s*\/\/ ?(.*)$/.exec(line);
    const next = /^\s*\/\/ ?(.*)$/.exec(lines[i + 1] ?? '');
    const comment = trailing?.[1] ?? next?.[1];
    if (comment !== undefined) out.set(i + 1, comment.split(';')[0].trim());
  });
  return out;
}

// Numbers, names and `…`; quotes and punctuation are ignored.
const TOKEN = /…|-?(?:\d+\.?\d*|\.\d+)(?:e[-+]?\d+)?|[A-Za-z_$][\w$]*/gi;
const tokens = (text) => (text.replace(/['"`]/g, ' ').match(TOKEN) ?? []).map((t) => (/^[-.\d]/.test(t) ? Number(t) : t));
// Half a unit of the last digit written: 0.458 matches [0.4575, 0.4585].
function tolerance(text) {
  const [, mantissa, exponent = '0'] = /^-?([\d.]+)(?:e([-+]?\d+))?$/i.exec(text);
  const decimals = mantissa.includes('.') ? mantissa.split('.')[1].length : 0;
  return 0.5 * 10 ** (Number(exponent) - decimals) * (1 + 1e-9);
}

function matches(expected, printed) {
  const want = expected.replace(/['"`]/g, ' ').match(TOKEN) ?? [];
  const have = tokens(printed);
  const same = (w, h) => (/^[-.\d]/.test(w) ? typeof h === 'number' && Math.abs(h - Number(w)) <= tolerance(w) : w === h);
  const go = (i, j) => {
    if (i === want.length) return j === have.length;
    if (want[i] === '…') {
      for (let k = j; k <= have.length; k++) if (go(i + 1, k)) return true;
      return false;
    }
    return j < have.length && same(want[i], have[j]) && go(i + 1, j + 1);
  };
  return go(0, 0);
}

// Records each console.log call with the block line it came from.
const SHIM = `import { format } from 'node:util';
import { writeFileSync } from 'node:fs';
const calls = [];
const log = console.log;
console.log = (...args) => {
  const line = /block-\\d+\\.mjs:(\\d+):/.exec(new Error().stack)?.[1];
  calls.push({ line: Number(line), text: format(...args) });
  log(...args);
};
process.on('exit', () => writeFileSync(process.env.README_CALLS, JSON.stringify(calls)));
`;

// This Node, and Node 18 where tests/js/pack.test.js installed it.
const node18 = join(root, 'build/node18/node_modules/.bin/node');
const nodes = [process.execPath, ...(existsSync(node18) ? [node18] : [])];

describe('README.md', () => {
  const blocks = jsBlocks(readFileSync(join(root, 'README.md'), 'utf8'));
  writeFileSync(join(dir, 'shim.mjs'), SHIM);

  test('has runnable blocks, and the checker compares as documented', () => {
    assert.ok(blocks.length >= 4, `${blocks.length} js blocks`);
    assert.ok(matches('Float32Array(3) [0.458, …, 1e-7]', 'Float32Array(3) [ 0.45812, 2, 1.04e-7 ]'));
    assert.ok(!matches('[0.458, 0.5]', '[ 0.459, 0.5 ]'));
    assert.ok(!matches('[1, 2]', '[ 1, 2, 3 ]'));
    assert.ok(matches("'mat the on'", 'mat the on'));
    assert.ok(!matches('RangeError: x', 'TypeError: x'));
  });

  blocks.forEach(({ source, line }, n) => {
    test(`block ${n + 1} (README.md line ${line}) runs and prints what its comments say`, () => {
      const file = join(dir, `block-${n + 1}.mjs`);
      const callsFile = join(dir, `block-${n + 1}.json`);
      writeFileSync(file, source);
      const expected = expectations(source);
      assert.ok(expected.size > 0, 'a block shows its results with console.log(...) // expected');
      for (const node of nodes) {
        const env = { ...process.env, README_CALLS: callsFile };
        execFileSync(node, ['--import', pathToFileURL(join(dir, 'shim.mjs')).href, file], { cwd: dir, env, stdio: 'pipe' });
        const calls = JSON.parse(readFileSync(callsFile, 'utf8'));
        for (const [at, want] of expected) {
          const where = `README.md line ${line + at - 1} (${node})`;
          const printed = calls.filter((c) => c.line === at).map((c) => c.text);
          assert.ok(printed.length > 0, `${where}: console.log did not run`);
          for (const text of printed) assert.ok(matches(want, text), `${where}: printed\n${text}\nbut the comment says\n${want}`);
        }
      }
    });
  });
});
