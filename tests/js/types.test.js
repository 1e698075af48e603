// index.d.ts type-checks in strict mode under each tests/types/tsconfig.<name>.json: moduleResolution
// bundler, node16 and nodenext, each with the default lib and no @types/node (a browser-only
// project; es2022: lib ES2022 alone, no DOM and no Node types, where URL and Float16Array are unknown
// project: Symbol.dispose comes from index.d.ts's own declaration) and with @types/node.
// tests/types/tsconfig.json (explicit libs) is checked by scripts/lint.sh.
import assert from 'node:assert/strict';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import ts from 'typescript';

const dir = new URL('../types/', import.meta.url).pathname;
const configs = readdirSync(dir).filter((f) => /^tsconfig\..+\.json$/.test(f));

test('there is a configuration per resolution mode, with and without @types/node', () => {
  const names = ['bundler', 'bundler-node', 'es2022', 'node16', 'node16-node', 'nodenext', 'nodenext-node'];
  assert.deepEqual(configs.sort(), names.map((n) => `tsconfig.${n}.json`).sort());
});

// Parsed files are shared between the programs (same file, same language version and module format).
const parsedFiles = new Map();
function compilerHost(options) {
  const host = ts.createCompilerHost(options);
  const getSourceFile = host.getSourceFile.bind(host);
  host.getSourceFile = (file, language, ...rest) => {
    const key = `${file} ${JSON.stringify(language)}`;
    if (!parsedFiles.has(key)) parsedFiles.set(key, getSourceFile(file, language, ...rest));
    return parsedFiles.get(key);
  };
  return host;
}

for (const config of configs) {
  test(`tsc -p tests/types/${config}`, () => {
    const parsed = ts.getParsedCommandLineOfConfigFile(
      join(dir, config),
      {},
      { ...ts.sys, onUnRecoverableConfigFileDiagnostic: (d) => assert.fail(String(d.messageText)) },
    );
    assert.deepEqual(parsed.errors, []);
    const program = ts.createProgram({ rootNames: parsed.fileNames, options: parsed.options, host: compilerHost(parsed.options) });
    const host = { getCanonicalFileName: (f) => f, getCurrentDirectory: () => dir, getNewLine: () => '\n' };
    const diagnostics = ts.getPreEmitDiagnostics(program);
    assert.equal(diagnostics.length, 0, ts.formatDiagnostics(diagnostics, host));
  });
}
