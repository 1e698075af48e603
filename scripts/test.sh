#!/usr/bin/env bash
# npm test: installs what is missing (scripts/setup.sh), then runs every check, side by side; each step's
# output goes to build/logs/<step>.log and a failing step's output is printed at the end.
#   - First, at a lower priority (nice) the whole time, the reliability builds, which need nothing from
#     scripts/build.sh: Catch2 under ASan + UBSan (scripts/reliability.sh), every libFuzzer target over
#     its corpus (scripts/fuzz.sh, plus POSENC_FUZZ_SECONDS seconds of fuzzing each when asked: default 0
#     here, a replay of the corpus, since a search for new inputs is not a test; .ci/run asks for 30 s,
#     `npm run fuzz` for 600), and the same corpus on wasm32 under Emscripten's sanitizers
#     (scripts/fuzz-wasm.sh). Their build folders (build/sanitize, shared by the Catch2 suite and the fuzz
#     targets, and build/wasm-sanitize) are kept: a later run rebuilds only what changed.
#   - Meanwhile the wasm modules and their dev builds (scripts/build.sh --js), then at once: node:test over the
#     package (tests/js, two files at a time), the notebooks (tests/notebooks, one at a time), and the page
#     build (scripts/build.sh --page) followed by the page tests in headless Chromium and Firefox ESR
#     (POSENC_BROWSERS), all files in one process (tests/browser/run.mjs: one page server and one browser
#     per engine), two files at a time, both engines at once. While they run, the rest of the build
#     (scripts/build.sh: native, and the Catch2 suites compiled to wasm), then Catch2 natively (one ctest
#     test per case) and in wasm, SIMD and scalar (one Node process per test file), and lint
#     (scripts/lint.sh).
# Nothing waits on how busy the machine is: the waits are on conditions with generous time-outs, the
# notebooks wait for the kernel to confirm each output, and the page's long-task budget is a ratio to a
# calibration timed in the same page moments before.
set -euo pipefail
cd "$(dirname "$0")/.."
t0=$(date +%s)
bash scripts/setup.sh
export NODE_PATH=/usr/share/nodejs
JOBS=$(nproc)

source scripts/jobs.sh
job asan nice -n 10 bash scripts/reliability.sh --no-fuzz
job fuzz nice -n 10 bash scripts/fuzz.sh "${POSENC_FUZZ_SECONDS:-0}"
job fuzz-wasm nice -n 10 bash scripts/fuzz-wasm.sh
# the wasm modules and their dev builds first: the node tests, the notebooks and the page need nothing
# else, and start while the native build and the Catch2 suites' wasm builds go on
python3 "$TREECPU" "$JOB_LOGS/build-js.cpu" bash scripts/build.sh --js
t1=$(date +%s)
job page-tests bash -c "bash scripts/build.sh --page && echo '== page tests' && node --test tests/browser/run.mjs"
job node-test node --test --test-concurrency=2 tests/js/
[ -d tests/notebooks ] && job notebooks node --test --test-concurrency=1 tests/notebooks/
build=0
python3 "$TREECPU" "$JOB_LOGS/build.cpu" bash scripts/build.sh || build=$?   # on failure, the jobs already started still finish and report
t2=$(date +%s)
if [ $build = 0 ]; then
  for preset in native wasm-simd wasm-scalar; do
    job "ctest-$preset" ctest --preset "$preset" -j"$JOBS"
  done
  job lint bash scripts/lint.sh
fi
echo "== test: ${_job_names[*]} (logs in $JOB_LOGS/)"
steps=(build-js build "${_job_names[@]}")
status=$build
wait_jobs || status=1
echo "test: setup and the package's build $((t1 - t0))s, the rest of the build $((t2 - t1))s (the tests meanwhile), then $(($(date +%s) - t2))s"
cpu=0
for step in "${steps[@]}"; do cpu=$((cpu + $(cat "$JOB_LOGS/$step.cpu" 2>/dev/null || echo 0))); done
echo "test: ${cpu}s of CPU after setup (builds and steps, every process of each, browsers included)"
# The test counts, for people and for CI's reading of the run: node:test's closing lines, and ctest's.
node_logs=(page-tests node-test notebooks)
for log in "${node_logs[@]}"; do
  [ -f "$JOB_LOGS/$log.log" ] || continue
  tail -n 9 "$JOB_LOGS/$log.log" | grep -E '^# (tests|pass|fail|cancelled|skipped|todo) ' | sed "s/^# /# $log: /" || true
done
for preset in native wasm-simd wasm-scalar; do
  [ -f "$JOB_LOGS/ctest-$preset.log" ] && echo "ctest $preset: $(grep -E 'tests passed|tests failed' "$JOB_LOGS/ctest-$preset.log" | tail -n 1)"
done
count() { [ -f "$JOB_LOGS/$2.log" ] || { echo 0; return; }; awk -v k="$1" '$1 == "#" && $2 == k { n = $3 } END { print n + 0 }' "$JOB_LOGS/$2.log"; }
passed=0 failed=0
for log in "${node_logs[@]}"; do passed=$((passed + $(count pass "$log"))) failed=$((failed + $(count fail "$log"))); done
echo "node: $passed passed, $failed failed"
[ $status = 0 ] || { echo "test: FAILED" >&2; exit 1; }
echo "test: ok"
