// Isolated npm smoke test: pack the package, install the tarball into an empty folder, and use it
// from Node and Deno as a user would.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { after, describe, test } from 'node:test';

const root = new URL('../..', import.meta.url).pathname;
const work = mkdtempSync(join(tmpdir(), 'posenc-pack-'));
after(() => rmSync(work, { recursive: true, force: true }));

const npm = (args, cwd) => execFileSync('npm', [...args, '--no-audit', '--no-fund', '--loglevel=error'], { cwd, encoding: 'utf8' });

describe('npm pack', () => {
  const [info] = JSON.parse(npm(['pack', '--json', '--pack-destination', work], root));
  const tarball = join(work, info.filename);

  test('ships only what users need, and the wasm + glue stay small', () => {
    const files = info.files.map((f) => f.path).sort();
    for (const f of [
      'package.json',
      'README.md',
      'LICENSE',
      'src/js/index.js',
      'src/js/index.d.ts',
      'src/js/loader.js',
      'src/js/wasm/posenc-simd.wasm',
      'src/js/wasm/posenc-simd.mjs',
      'src/js/wasm/posenc-scalar.wasm',
      'src/js/wasm/posenc-scalar.mjs',
    ])
      assert.ok(files.includes(f), `tarball lacks ${f}`);
    assert.ok(
      files.every((f) => f === 'package.json' || f === 'README.md' || f === 'LICENSE' || f === 'CHANGELOG.md' || f.startsWith('src/js/')),
      files.join(', '),
    );
    for (const flavour of ['simd', 'scalar']) {
      const bytes = ['wasm', 'mjs'].map((ext) => gzipSync(readFileSync(join(root, `src/js/wasm/posenc-${flavour}.${ext}`)), { level: 9 }).length);
      const total = bytes[0] + bytes[1];
      assert.ok(total <= 150 * 1024, `${flavour}: wasm + glue = ${total} bytes gzipped, over 150 KB`);
    }
  });

  const project = join(work, 'app');
  test('installs into an empty project and computes from Node', () => {
    execFileSync('mkdir', ['-p', project]);
    writeFileSync(join(project, 'package.json'), JSON.stringify({ name: 'app', private: true, type: 'module' }));
    npm(['install', '--offline', tarball], project);
    writeFileSync(
      join(project, 'main.mjs'),
      `import { load } from 'posenc';
const pe = await load();
const t = pe.sinusoidal({ length: 4, dModel: 4, base: 100 });
console.log(JSON.stringify({ backend: pe.backend, shape: t.shape, v: t.data[4] }));`,
    );
    const out = JSON.parse(execFileSync('node', ['main.mjs'], { cwd: project, encoding: 'utf8' }));
    assert.equal(out.backend, 'wasm-simd');
    assert.deepEqual(out.shape, [4, 4]);
    assert.ok(Math.abs(out.v - Math.sin(1)) < 1e-7);
  });

  const deno = join(root, 'node_modules/.bin/deno');
  test('and from Deno', { skip: !existsSync(deno) && 'deno is not installed' }, () => {
    const out = execFileSync(deno, ['run', '--allow-read', '--allow-env', 'main.mjs'], {
      cwd: project,
      encoding: 'utf8',
      env: { ...process.env, DENO_NO_UPDATE_CHECK: '1', NO_COLOR: '1' },
    });
    const r = JSON.parse(out);
    assert.equal(r.backend, 'wasm-simd');
    assert.ok(Math.abs(r.v - Math.sin(1)) < 1e-7);
  });
});
