// index.d.ts type-checks in strict mode under each tests/types/tsconfig.<name>.json: moduleResolution
// bundler, node16 and nodenext, each with the default lib and no @types/node (a browser-only
// project; es2022: lib ES2022 alone, no DOM and no Node types, where URL and Float16Array are unknown
// project: Symbol.dispose comes from index.d.ts's own declaration) and with @types/node.
// tests/types/tsconfig.json (explicit libs) is checked by scripts/lint.sh.
// Each program is incremental, as lint.sh's tsc is: tsc's build info (build/types/<config>.tsbuildinfo)
// keeps the diagnostics of the files whose contents, options and dependencies are unchanged since the
// last check, errors included; what changed is checked again. A fresh tree checks everything.
import assert from 'node:assert/strict';
import { mkdirSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import ts from 'typescript';

const dir = new URL('../types/', import.meta.url).pathname;
const buildInfo = new URL('../../build/types/', import.meta.url).pathname;
mkdirSync(buildInfo, { recursive: true });
const configs = readdirSync(dir).filter((f) => /^tsconfig\..+\.json$/.test(f));

test('there is a configuration per resolution mode, with and without @types/node', () => {
  const names = ['bundler', 'bundler-node', 'es2022', 'node16', 'node16-node', 'nodenext', 'nodenext-node'];
  assert.deepEqual(configs.sort(), names.map((n) => `tsconfig.${n}.json`).sort());
});

// Parsed files are shared between the programs (same file, same language version and module format).
const parsedFiles = new Map();
function compilerHost(options) {
  const host = ts.createIncrementalCompilerHost(options); // hashes each file's text: its version in the build info
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
    const options = { ...parsed.options, incremental: true, tsBuildInfoFile: join(buildInfo, config.replace(/\.json$/, '.tsbuildinfo')) };
    const program = ts.createIncrementalProgram({ rootNames: parsed.fileNames, options, host: compilerHost(options) });
    const host = { getCanonicalFileName: (f) => f, getCurrentDirectory: () => dir, getNewLine: () => '\n' };
    // what ts.getPreEmitDiagnostics gathers, from the builder (which answers from the build info for unchanged files)
    const diagnostics = [
      ...program.getConfigFileParsingDiagnostics(),
      ...program.getOptionsDiagnostics(),
      ...program.getGlobalDiagnostics(),
      ...program.getSyntacticDiagnostics(),
      ...program.getSemanticDiagnostics(),
    ];
    program.emit(); // noEmit: writes the build info only
    assert.equal(diagnostics.length, 0, ts.formatDiagnostics(diagnostics, host));
  });
}
