// index.d.ts type-checks in strict mode under each tests/types/tsconfig.<name>.json: moduleResolution
// bundler, node16 and nodenext, each with the default lib and no @types/node (a browser-only
// project; es2022: lib ES2022 alone, no DOM and no Node types, where URL and Float16Array are unknown
// project: Symbol.dispose comes from index.d.ts's own declaration) and with @types/node.
// tests/types/tsconfig.json (explicit libs) is checked by scripts/lint.sh.
// Each program is incremental, as lint.sh's tsc is: tsc's build info (build/types/<config>.tsbuildinfo)
// keeps the diagnostics of the files whose contents, options and dependencies are unchanged since the
// last check, errors included; what changed is checked again. A fresh tree checks everything.
// A clean check also leaves a stamp (build/types/<config>.clean): tsc's version, the parsed options and
// root files, and every answer the file system gave the program (each file read, by content hash; each
// existence probe, directory listing and real path). While every answer is still the same, the program
// would be the same program: it is not built again.
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
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

// The file system's questions a program asks, as the stamp records them: kind -> [the host's method, the
// answer kept]. A stamp's answers are asked again of ts.sys, the host's own file system.
const hash = (text) => (text === undefined ? null : createHash('sha256').update(text).digest('hex'));
const QUESTIONS = {
  read: ['readFile', hash],
  exists: ['fileExists', (r) => r],
  directory: ['directoryExists', (r) => r],
  list: ['getDirectories', (r) => r.join('\n')],
  real: ['realpath', (r) => r],
};
const ask = (kind, path) => QUESTIONS[kind][1](ts.sys[QUESTIONS[kind][0]](path));

// Parsed files are shared between the programs (same file, same language version and module format).
// Every answer the host gives is recorded in `answers` (the build info's own reads aside).
const parsedFiles = new Map();
function compilerHost(options, answers) {
  const host = ts.createIncrementalCompilerHost(options); // hashes each file's text: its version in the build info
  const record = (kind, path, answer) => path.startsWith(buildInfo) || answers.set(JSON.stringify([kind, path]), answer);
  for (const [kind, [method, toAnswer]] of Object.entries(QUESTIONS)) {
    const original = host[method].bind(host);
    host[method] = (path, ...rest) => {
      const r = original(path, ...rest);
      record(kind, path, toAnswer(r));
      return r;
    };
  }
  const getSourceFile = host.getSourceFile.bind(host);
  host.getSourceFile = (file, language, ...rest) => {
    const key = `${file} ${JSON.stringify(language)}`;
    if (!parsedFiles.has(key)) parsedFiles.set(key, getSourceFile(file, language, ...rest));
    record('read', file, hash(parsedFiles.get(key)?.text));
    return parsedFiles.get(key);
  };
  return host;
}

for (const config of configs) {
  test(`tsc -p tests/types/${config}`, (t) => {
    const parsed = ts.getParsedCommandLineOfConfigFile(
      join(dir, config),
      {},
      { ...ts.sys, onUnRecoverableConfigFileDiagnostic: (d) => assert.fail(String(d.messageText)) },
    );
    assert.deepEqual(parsed.errors, []);
    const stampFile = join(buildInfo, config.replace(/\.json$/, '.clean'));
    const key = JSON.stringify({ typescript: ts.version, options: parsed.options, rootNames: parsed.fileNames });
    const stamp = existsSync(stampFile) ? JSON.parse(readFileSync(stampFile, 'utf8')) : undefined;
    if (stamp?.key === key && stamp.answers.every(([kind, path, answer]) => ask(kind, path) === answer)) {
      t.diagnostic('every file and probe as at its last clean check');
      return;
    }
    rmSync(stampFile, { force: true });
    const answers = new Map();
    const options = { ...parsed.options, incremental: true, tsBuildInfoFile: join(buildInfo, config.replace(/\.json$/, '.tsbuildinfo')) };
    const program = ts.createIncrementalProgram({ rootNames: parsed.fileNames, options, host: compilerHost(options, answers) });
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
    writeFileSync(stampFile, JSON.stringify({ key, answers: [...answers].map(([question, answer]) => [...JSON.parse(question), answer]) }));
  });
}
