// posenc benchmarks, Node runner: `npm run bench [-- --quick]` (scripts/bench.sh builds first).
// Runs the suite (suite.js) with both wasm backends, the native bench executable (child process) and
// TF.js-wasm, then posenc against ONNX Runtime Web (ort.js), times load() in fresh processes, measures
// the bundle, prints everything with the machine and versions, and writes <out>/benchmarks.json and
// <out>/BENCHMARKS.md.
//
// Options: --quick (fewer workloads and shorter warm-ups; writes build/bench/ unless --out is given),
//          --out DIR, --only REGEX (workload ids), --no-native, --no-tfjs, --no-ort, --ort-gqa (adds ONNX
//          Runtime's GroupQueryAttention, minutes per run, to the grouped-query workload).
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { gzipSync } from 'node:zlib';

import { loadDev } from '../dev-module.mjs';
import { loadOrt, ortTargets, ortWorkloads } from './ort.js';
import { markdown } from './report.js';
import { runWorkload, settings, targets, workloads } from './suite.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const args = process.argv.slice(2);
const flag = (name) => args.includes(name);
const option = (name) => (args.includes(name) ? args[args.indexOf(name) + 1] : undefined);
const quick = flag('--quick');
const outDir = path.resolve(ROOT, option('--out') ?? (quick ? 'build/bench' : 'docs'));
const only = option('--only') ? new RegExp(option('--only')) : null;
const started = performance.now();
const log = (...m) => console.log(...m);

// ---- machine and versions ----------------------------------------------------------------------------
const read = (file) => (existsSync(file) ? readFileSync(file, 'utf8') : '');
const run = (cmd, argv) => {
  try {
    return execFileSync(cmd, argv, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] });
  } catch {
    return '';
  }
};
const require = createRequire(path.join(ROOT, 'package.json'));
const pkgVersion = (name) => {
  try {
    return JSON.parse(readFileSync(require.resolve(`${name}/package.json`), 'utf8')).version;
  } catch {
    return undefined;
  }
};
const xsimdConfig = read(path.join(ROOT, 'build/deps/debian/usr/include/xsimd/config/xsimd_config.hpp'));
const xsimdVersion = ['MAJOR', 'MINOR', 'PATCH'].map((p) => xsimdConfig.match(new RegExp(`XSIMD_VERSION_${p} (\\d+)`))?.[1]).join('.');
const machine = {
  cpu: read('/proc/cpuinfo').match(/model name\s*:\s*(.*)/)?.[1] ?? os.cpus()[0]?.model,
  cores: os.cpus().length,
  memoryGB: +(os.totalmem() / 2 ** 30).toFixed(1),
  os: read('/etc/os-release').match(/PRETTY_NAME="(.*)"/)?.[1] ?? os.type(),
  kernel: os.release(),
  loadAverage: os.loadavg().map((x) => +x.toFixed(2)),
};
const versions = {
  posenc: JSON.parse(read(path.join(ROOT, 'package.json'))).version,
  node: process.versions.node,
  v8: process.versions.v8,
  emscripten: read('/usr/share/emscripten/emscripten-version.txt').trim() || run('em++', ['--version']).split('\n')[0],
  xsimd: xsimdVersion,
  gxx: run('g++', ['-dumpfullversion']).trim(),
  tfjs: pkgVersion('@tensorflow/tfjs-backend-wasm'),
};

// ---- contenders from outside the process -------------------------------------------------------------
// The dev modules: the package's code plus the _bench* kernel timers (scripts/build.sh builds them).
const simd = await loadDev({ lab: true }); // with the lab module: trainToy is a workload
const scalar = await loadDev({ simd: false, lab: true });

async function loadTF() {
  if (flag('--no-tfjs')) return undefined;
  try {
    const tf = await import(pathToFileURL(require.resolve('@tensorflow/tfjs-core')).href);
    const backend = await import(pathToFileURL(require.resolve('@tensorflow/tfjs-backend-wasm')).href);
    backend.setWasmPaths(path.dirname(require.resolve('@tensorflow/tfjs-backend-wasm/dist/tfjs-backend-wasm-simd.wasm')) + '/');
    await tf.setBackend('wasm');
    // tfjs-core's Node bundle registers no gradients (the full tfjs package does): bundle its
    // register_all_gradients module once (its ops reach the same global engine) for the toy model
    const gradients = path.join(ROOT, 'build/bench/tf-gradients.mjs');
    const esbuild = await import('esbuild');
    await esbuild.build({
      entryPoints: [path.join(path.dirname(require.resolve('@tensorflow/tfjs-core')), 'register_all_gradients.js')],
      bundle: true,
      format: 'esm',
      platform: 'node',
      outfile: gradients,
      logLevel: 'warning',
    });
    await import(pathToFileURL(gradients).href);
    const simdOn = await tf.env().getAsync('WASM_HAS_SIMD_SUPPORT');
    const threads = await tf.env().getAsync('WASM_HAS_MULTITHREAD_SUPPORT');
    return { tf, info: `TF.js ${tf.version_core}, backend ${tf.getBackend()}, SIMD ${simdOn}, threads ${threads}` };
  } catch (e) {
    log(`TF.js not available (${e.message}); run npm install. Skipping the TF.js contender.`);
    return undefined;
  }
}
const tfjs = await loadTF();
const ortWeb = flag('--no-ort') ? undefined : await loadOrt(log);
versions.ort = ortWeb?.ort.env.versions?.web; // its package.json is not in its exports map

const nativeBin = (arch) => path.join(ROOT, `build/bench-${arch}/posenc-bench`);
const haveNative = !flag('--no-native') && ['sse4.2', 'avx2'].every((a) => existsSync(nativeBin(a)));
if (!flag('--no-native') && !haveNative) log('native bench executables missing (scripts/bench.sh builds them); skipping native contenders');

// Runs the native executable for specs [{ id, label, arch, spec, reps }]; returns their medians.
async function native(specs, samples) {
  const out = [];
  for (const arch of [...new Set(specs.map((s) => s.arch))]) {
    const mine = specs.filter((s) => s.arch === arch);
    const r = spawnSync(nativeBin(arch), [String(samples), ...mine.map((s) => `${s.spec}:${s.reps}`)], { encoding: 'utf8', maxBuffer: 1 << 20 });
    if (r.status !== 0) throw new Error(`native bench (${arch}) failed: ${r.stderr || r.error}`);
    const lines = r.stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    mine.forEach((s, i) => out.push({ ...lines[i], id: s.id, label: s.label }));
  }
  return out;
}

// ---- load() time in fresh processes, bundle bytes ----------------------------------------------------
function loadTimes(samples) {
  const index = pathToFileURL(path.join(ROOT, 'src/js/index.js')).href;
  const script = `const t0 = performance.now(); const { load } = await import(${JSON.stringify(index)});
const t1 = performance.now(); await load(); const t2 = performance.now(); await load({ simd: false }); const t3 = performance.now();
console.log(JSON.stringify({ import: t1 - t0, simd: t2 - t1, scalar: t3 - t2 }));`;
  const runs = [];
  for (let i = 0; i < samples; i++) {
    const r = spawnSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8' });
    if (r.status !== 0) throw new Error(`load() timing failed: ${r.stderr}`);
    runs.push(JSON.parse(r.stdout));
  }
  const med = (k) => {
    const s = runs.map((x) => x[k]).sort((a, b) => a - b);
    return s[Math.floor(s.length / 2)];
  };
  return { samples, importMs: med('import'), simdMs: med('simd'), scalarMs: med('scalar') };
}

// Peak wasm memory of attention at S = 4096 (one head, d = 64) with and without weights: each call in
// a fresh dev module, whose malloc footprint afterwards is the call's peak.
function attentionMemory() {
  const dev = pathToFileURL(path.join(ROOT, 'scripts/dev-module.mjs')).href;
  const measure = (weights) => {
    const script = `const { loadDev } = await import(${JSON.stringify(dev)}); const pe = await loadDev();
const S = 4096, d = 64, t = { data: new Float32Array(S * d).map((_, i) => Math.sin(i)), shape: [S, d] };
const before = pe._mod._heapFootprint(); pe.attention({ q: t, k: t, v: t, weights: ${weights} });
console.log(JSON.stringify({ bytes: pe._mod._heapFootprint() - before }));`;
    const r = spawnSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8' });
    if (r.status !== 0) throw new Error(`attention memory failed: ${r.stderr}`);
    return JSON.parse(r.stdout.trim().split('\n').at(-1)).bytes;
  };
  return { weighted: measure(true), streaming: measure(false) };
}

function bundle() {
  const size = (f) => {
    const bytes = readFileSync(path.join(ROOT, f));
    return { file: f, raw: bytes.length, gzip: gzipSync(bytes, { level: 9 }).length };
  };
  const files = (flavour) => [`src/js/wasm/posenc-${flavour}.wasm`, `src/js/wasm/posenc-${flavour}.mjs`].map(size);
  const js = readdirSync(path.join(ROOT, 'src/js'))
    .filter((f) => f.endsWith('.js'))
    .map((f) => size(`src/js/${f}`));
  const sum = (list) => ({ raw: list.reduce((a, x) => a + x.raw, 0), gzip: list.reduce((a, x) => a + x.gzip, 0) });
  return {
    simd: { files: files('simd'), ...sum(files('simd')) },
    scalar: { files: files('scalar'), ...sum(files('scalar')) },
    packageJs: { files: js, ...sum(js) },
  };
}

// ---- run ---------------------------------------------------------------------------------------------
const s = settings(quick);
log(`posenc benchmarks${quick ? ' (quick)' : ''}: median of ${s.samples} interleaved samples per contender`);
log(
  `machine: ${machine.cpu}, ${machine.cores} cores, ${machine.memoryGB} GB, ${machine.os}, Linux ${machine.kernel}, load average ${machine.loadAverage.join(' ')}`,
);
log(
  `versions: posenc ${versions.posenc}, Node ${versions.node} (V8 ${versions.v8}), Emscripten ${versions.emscripten}, xsimd ${versions.xsimd}, g++ ${versions.gxx}, TF.js ${versions.tfjs ?? 'n/a'}, ONNX Runtime Web ${versions.ort ?? 'n/a'}`,
);
log(
  `wasm backends: ${simd.backend} (${simd.simdArch}), ${scalar.backend} (${scalar.simdArch}); native: ${haveNative ? 'sse4.2, avx2' : 'skipped'}; ${tfjs?.info ?? 'TF.js skipped'}; ${ortWeb?.info ?? 'ONNX Runtime Web skipped'}`,
);
log('');

const { toyTrainerTF } = await import('./toy-tf.js');
const toyTF = tfjs ? () => toyTrainerTF(tfjs.tf) : undefined;
const env = {
  simd,
  scalar,
  tf: tfjs?.tf,
  toyTF,
  ort: ortWeb,
  ortGqa: flag('--ort-gqa'),
  native: haveNative ? native : undefined,
  quick,
  gc: globalThis.gc,
  log: () => {},
};
const results = [];
for (const { id, make } of [...workloads(env, quick), ...(ortWeb ? ortWorkloads(env) : [])]) {
  if (only && !only.test(id)) continue;
  const r = await runWorkload(make, env, s);
  results.push(r);
  printWorkload(r);
}

const load_ = only ? undefined : loadTimes(s.samples);
const memory = only ? undefined : attentionMemory();
const size = bundle();
const all = [...targets(results), ...ortTargets(results)];
if (load_)
  all.push({
    id: 'load',
    text: 'load() <= 50 ms in Node',
    met: load_.simdMs <= 50,
    figure: `${load_.simdMs.toFixed(1)} ms (SIMD), ${load_.scalarMs.toFixed(1)} ms (scalar), fresh process each, median of ${load_.samples}`,
  });
if (memory)
  all.push({
    id: 'attention-memory',
    text: 'attention S=4096 with weights: false uses < 1/10 of the memory of the weighted call',
    met: memory.streaming < memory.weighted / 10,
    figure: `${(memory.streaming / 2 ** 20).toFixed(1)} MiB vs ${(memory.weighted / 2 ** 20).toFixed(1)} MiB of wasm heap (${((100 * memory.streaming) / memory.weighted).toFixed(1)}%)`,
  });
const wasmGzip = (flavour) => size[flavour].files.find((f) => f.file.endsWith('.wasm')).gzip;
all.push({
  id: 'wasm-size',
  text: 'the wasm is at most 60 KB gzip (each build)',
  met: Math.max(wasmGzip('simd'), wasmGzip('scalar')) <= 60 * 1024,
  figure: `SIMD ${kb(wasmGzip('simd'))} KB, scalar ${kb(wasmGzip('scalar'))} KB gzip`,
});
all.push({
  id: 'bundle',
  text: 'bundle: wasm + glue <= 150 KB gzip',
  met: size.simd.gzip <= 150 * 1024,
  figure: `SIMD ${kb(size.simd.gzip)} KB gzip (${kb(size.simd.raw)} KB raw), scalar ${kb(size.scalar.gzip)} KB gzip; a page loads one of them plus ${kb(size.packageJs.gzip)} KB of package JS`,
});

log('');
if (load_)
  log(
    `load(): ${load_.simdMs.toFixed(1)} ms SIMD, ${load_.scalarMs.toFixed(1)} ms scalar (package import ${load_.importMs.toFixed(1)} ms), median of ${load_.samples} fresh processes`,
  );
log(
  `bundle: SIMD wasm + glue ${kb(size.simd.raw)} KB raw / ${kb(size.simd.gzip)} KB gzip; scalar ${kb(size.scalar.raw)} / ${kb(size.scalar.gzip)} KB; package JS ${kb(size.packageJs.raw)} / ${kb(size.packageJs.gzip)} KB`,
);
log('');
log('targets:');
for (const t of all)
  log(`  ${t.met === true ? 'met    ' : t.met === false ? 'NOT MET' : 'n/a    '}  ${t.text}: ${t.figure}${t.detail ? ` (${t.detail})` : ''}`);

const report = {
  generated: new Date().toISOString(),
  command: `npm run bench${args.length ? ` -- ${args.join(' ')}` : ''}`,
  machine,
  versions,
  backends: { simd: simd.simdArch, scalar: scalar.simdArch, tfjs: tfjs?.info, ort: ortWeb?.info },
  settings: s,
  durationSeconds: +((performance.now() - started) / 1000).toFixed(1),
  workloads: results.map(({ sink: _sink, ...w }) => w), // the checksum sink stays out of the JSON
  load: load_,
  attentionMemory: memory,
  bundle: size,
  targets: all,
};
mkdirSync(outDir, { recursive: true });
writeFileSync(path.join(outDir, 'benchmarks.json'), JSON.stringify(report, null, 2) + '\n');
const notes = read(path.join(ROOT, 'scripts/bench/notes.md'));
writeFileSync(path.join(outDir, 'BENCHMARKS.md'), markdown(report, notes));
log('');
log(`wrote ${path.relative(ROOT, path.join(outDir, 'benchmarks.json'))} and BENCHMARKS.md in ${report.durationSeconds} s`);

function kb(bytes) {
  return (bytes / 1024).toFixed(1);
}

function printWorkload(r) {
  const parts = r.contenders.map((c) => {
    const extra = c.gflops ? ` ${c.gflops.toFixed(1)} GF/s` : c.gbPerSecond ? ` ${c.gbPerSecond.toFixed(1)} GB/s` : '';
    return `${c.id} ${fmtMs(c.ms)}${extra}${c.maxError !== undefined ? ` err ${c.maxError.toExponential(1)}` : ''}`;
  });
  log(`${r.title.padEnd(34)} ${parts.join(' | ')} [${r.seconds} s]`);
  for (const [id, x] of Object.entries(r.speedup ?? {})) log(`${''.padEnd(34)} ${id} time / posenc time: ${x.toFixed(2)}x`);
}

function fmtMs(x) {
  return x >= 100 ? `${x.toFixed(0)} ms` : x >= 1 ? `${x.toFixed(2)} ms` : `${(x * 1000).toFixed(1)} us`;
}
