#!/usr/bin/env bash
# npm test: installs what is missing (scripts/setup.sh), builds (scripts/build.sh), then runs side by side:
#   - Catch2 natively (one ctest test per case) and compiled to wasm, SIMD and scalar (one Node process per
#     test file: a wasm test process costs ~0.7 s of start-up);
#   - lint: clang-format, clang-tidy, ESLint, Prettier, tsc (scripts/lint.sh);
#   - the reliability suite: Catch2 under ASan + UBSan (scripts/reliability.sh), and every libFuzzer target
#     over its corpus (scripts/fuzz.sh), plus POSENC_FUZZ_SECONDS seconds of fuzzing each when asked: default
#     0 here, a replay of the corpus (a search for new inputs is not a test; .ci/run asks for 30 s, `npm run
#     fuzz` for 600); the same targets' corpus on wasm32 under Emscripten's sanitizers (scripts/fuzz-wasm.sh);
#     their build folders (build/asan, build/fuzz, build/wasm-sanitize) are kept: a later run rebuilds only
#     what changed;
#   - the page build (scripts/build.sh --web), then the page tests in headless Chromium and Firefox ESR
#     (POSENC_BROWSERS), two files at a time, both engines at once: they mostly wait on the browsers;
# then, after the compilers and the Catch2 runs, node:test over the package (two files at a time, with
# the npm-pack smoke test), and last, one file at a time, the notebooks and the page's long-task budget.
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
native=(ctest-native ctest-wasm-simd ctest-wasm-scalar lint asan fuzz fuzz-wasm)
for preset in native wasm-simd wasm-scalar; do
  job "ctest-$preset" ctest --preset "$preset" -j"$JOBS"
done
job lint bash scripts/lint.sh
job asan bash scripts/reliability.sh --no-fuzz
job fuzz bash scripts/fuzz.sh "${POSENC_FUZZ_SECONDS:-0}"
job fuzz-wasm bash scripts/fuzz-wasm.sh
# The page tests start as soon as the page is built: their waits are on conditions with generous time-outs
# (the long-task budget, which times the page, runs alone below).
pages=$(ls tests/browser/*.test.js | grep -v longtasks | tr '\n' ' ')
job page-tests bash -c "bash scripts/build.sh --web && echo '== page tests' && node --test --test-concurrency=2 $pages"
echo "== test: ${_job_names[*]} (logs in $JOB_LOGS/)"
status=0
wait_jobs "${native[@]}" || status=$?
# node:test over the package after the compilers: the memory tests and the pack test's bundlers wait on
# timers that a busy CPU can outrun. Two files at a time.
job node-test node --test --test-concurrency=2 tests/js/
wait_jobs || status=$?
# then, alone: the notebooks (under load the Deno kernel can report a cell done before its outputs are
# sent) and the page's long-task budget.
alone=(tests/browser/longtasks.test.js)
[ -d tests/notebooks ] && alone+=(tests/notebooks/)
job node-test-alone node --test --test-concurrency=1 "${alone[@]}"
wait_jobs || status=$?
echo "test: setup and build $((t1 - t0))s, tests $(($(date +%s) - t1))s"
# The test counts, for people and for CI's reading of the run: node:test's closing lines, and ctest's.
for log in page-tests node-test node-test-alone; do
  tail -n 9 "$JOB_LOGS/$log.log" | grep -E '^# (tests|pass|fail|cancelled|skipped|todo) ' | sed "s/^# /# $log: /" || true
done
for preset in native wasm-simd wasm-scalar; do
  echo "ctest $preset: $(grep -E 'tests passed|tests failed' "$JOB_LOGS/ctest-$preset.log" | tail -n 1)"
done
count() { awk -v k="$1" '$1 == "#" && $2 == k { n = $3 } END { print n + 0 }' "$JOB_LOGS/$2.log"; }
passed=$(($(count pass page-tests) + $(count pass node-test) + $(count pass node-test-alone)))
failed=$(($(count fail page-tests) + $(count fail node-test) + $(count fail node-test-alone)))
echo "node: ${passed:-0} passed, ${failed:-0} failed"
[ $status = 0 ] || { echo "test: FAILED" >&2; exit 1; }
echo "test: ok"
