#!/usr/bin/env bash
# npm test: installs what is missing (scripts/setup.sh), builds (scripts/build.sh), then runs side by side:
#   - Catch2 natively and compiled to wasm (SIMD and scalar), one ctest test per case;
#   - lint: clang-format, clang-tidy, ESLint, Prettier, tsc (scripts/lint.sh);
#   - the reliability suite: Catch2 under ASan + UBSan (scripts/reliability.sh), and every libFuzzer target
#     over its corpus plus POSENC_FUZZ_SECONDS seconds of fuzzing each, default 5 (scripts/fuzz.sh; .ci/run
#     asks for more); the same targets' corpus on wasm32 under Emscripten's sanitizers (scripts/fuzz-wasm.sh);
#   - the page build (scripts/build.sh --web);
# then node:test (two files at a time) over the package, the npm-pack smoke test and the page in headless
# Chromium and Firefox ESR (POSENC_BROWSERS), and last, one file at a time, the notebooks and the page's long-task budget.
# Each step's output goes to build/logs/<step>.log; a failing step's output is printed at the end.
set -euo pipefail
cd "$(dirname "$0")/.."
t0=$(date +%s)
bash scripts/setup.sh
bash scripts/build.sh
export NODE_PATH=/usr/share/nodejs
JOBS=$(nproc)
t1=$(date +%s)

source scripts/jobs.sh
for preset in native wasm-simd wasm-scalar; do
  job "ctest-$preset" ctest --preset "$preset" -j"$JOBS"
done
job lint bash scripts/lint.sh
job asan bash scripts/reliability.sh --no-fuzz
job fuzz bash scripts/fuzz.sh "${POSENC_FUZZ_SECONDS:-5}"
job fuzz-wasm bash scripts/fuzz-wasm.sh
job page bash scripts/build.sh --web
echo "== test: ${_job_names[*]} (logs in $JOB_LOGS/)"
status=0
wait_jobs || status=$?
# node:test last, after the builds: the page, notebook and memory tests wait on timers that a busy CPU
# can outrun. Two files at a time (the SVG-download test's time-outs under load were Chromium dropping a
# download in a burst and canvas.toBlob waiting for idle time, both fixed); then, alone, the notebooks
# (under load the Deno kernel can report a cell done before its outputs are sent) and the page's
# long-task budget.
job node-test node --test --test-concurrency=2 tests/js/ $(ls tests/browser/*.test.js | grep -v longtasks)
wait_jobs || status=$?
alone=(tests/browser/longtasks.test.js)
[ -d tests/notebooks ] && alone+=(tests/notebooks/)
job node-test-alone node --test --test-concurrency=1 "${alone[@]}"
wait_jobs || status=$?
echo "test: setup and build $((t1 - t0))s, tests $(($(date +%s) - t1))s"
# The test counts, for people and for CI's reading of the run: node:test's closing lines, and ctest's.
for log in node-test node-test-alone; do
  tail -n 9 "$JOB_LOGS/$log.log" | grep -E '^# (tests|pass|fail|cancelled|skipped|todo) ' | sed "s/^# /# $log: /" || true
done
for preset in native wasm-simd wasm-scalar; do
  echo "ctest $preset: $(grep -E 'tests passed|tests failed' "$JOB_LOGS/ctest-$preset.log" | tail -n 1)"
done
count() { awk -v k="$1" '$1 == "#" && $2 == k { n = $3 } END { print n + 0 }' "$JOB_LOGS/$2.log"; }
passed=$(($(count pass node-test) + $(count pass node-test-alone)))
failed=$(($(count fail node-test) + $(count fail node-test-alone)))
echo "node: ${passed:-0} passed, ${failed:-0} failed"
[ $status = 0 ] || { echo "test: FAILED" >&2; exit 1; }
echo "test: ok"
