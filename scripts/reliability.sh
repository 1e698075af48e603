#!/usr/bin/env bash
# The native reliability suite, run by scripts/test.sh:
#   1. the Catch2 suite built with AddressSanitizer + UndefinedBehaviorSanitizer (CMake preset `asan`: g++,
#      any finding is fatal: -fno-sanitize-recover=all, float-cast-overflow included) in build/asan, under ctest;
#   2. scripts/fuzz.sh: every libFuzzer target over its corpus, then fuzzing for POSENC_FUZZ_SECONDS seconds
#      each (default 0 here: the corpus only; .ci/run asks for 30, `npm run fuzz` for as long as you like).
# Idempotent: configures once, rebuilds what changed. --no-fuzz: only step 1 (scripts/test.sh runs
# scripts/fuzz.sh at the same time).
set -euo pipefail
cd "$(dirname "$0")/.."
JOBS=$(nproc)

t0=$(date +%s)
echo "== reliability: Catch2 under AddressSanitizer + UndefinedBehaviorSanitizer (build/asan)"
[ -f build/asan/CMakeCache.txt ] || cmake --preset asan >/dev/null
cmake --build build/asan -j"$JOBS" >build/asan/build.log 2>&1 || { tail -40 build/asan/build.log; echo "reliability: building build/asan failed" >&2; exit 1; }
ctest --preset asan -j"$JOBS"
t1=$(date +%s)
[ "${1:-}" = --no-fuzz ] && { echo "reliability: ok (asan $((t1 - t0))s)"; exit 0; }

echo "== reliability: libFuzzer targets (build/fuzz)"
bash scripts/fuzz.sh "${POSENC_FUZZ_SECONDS:-0}"
t2=$(date +%s)
echo "reliability: ok (asan $((t1 - t0))s, fuzz $((t2 - t1))s)"
