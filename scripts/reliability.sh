#!/usr/bin/env bash
# The native reliability suite, run by scripts/test.sh. One clang build tree, build/sanitize (CMake preset
# `sanitize`), compiles the core once with AddressSanitizer + UndefinedBehaviorSanitizer (any finding is
# fatal: -fno-sanitize-recover=all, float-cast-overflow included) and libFuzzer's coverage instrumentation
# (-fsanitize=fuzzer-no-link), and links it into two binaries:
#   1. posenc_tests, the Catch2 suite, run under ctest (one process per test file);
#   2. posenc_fuzz, every libFuzzer target of tests/fuzz, which scripts/fuzz.sh runs over each target's corpus,
#      then fuzzing for POSENC_FUZZ_SECONDS seconds each (default 0 here: the corpus only; .ci/run asks for
#      30, `npm run fuzz` for as long as you like).
# Idempotent: configures once, rebuilds what changed. --no-fuzz: only step 1 (scripts/test.sh runs
# scripts/fuzz.sh at the same time); --build: only the build (scripts/fuzz.sh starts with it). The build
# holds a lock (build/sanitize.lock), so two scripts started side by side build the tree once.
set -euo pipefail
cd "$(dirname "$0")/.."
JOBS=$(nproc)

build() {
  [ -f build/deps/debian/usr/include/xsimd/xsimd.hpp ] || { echo "reliability: xsimd headers missing; run scripts/setup.sh" >&2; exit 1; }
  command -v clang++ >/dev/null || { echo "reliability: clang++ not found; run scripts/setup.sh" >&2; exit 1; }
  mkdir -p build
  exec 9>build/sanitize.lock
  if command -v flock >/dev/null; then flock 9; fi   # util-linux; elsewhere, do not start two at once
  if [ ! -f build/sanitize/CMakeCache.txt ]; then
    # libFuzzer's runtime ships separately from clang on Debian (libclang-rt-*-dev): check it links first.
    probe=$(mktemp -d)
    echo 'extern "C" int LLVMFuzzerTestOneInput(const unsigned char*, unsigned long) { return 0; }' >"$probe/p.cpp"
    clang++ -fsanitize=fuzzer "$probe/p.cpp" -o "$probe/p" 2>/dev/null \
      || { rm -rf "$probe"; echo "reliability: clang++ cannot link libFuzzer (-fsanitize=fuzzer); run scripts/setup.sh" >&2; exit 1; }
    rm -rf "$probe"
    cmake --preset sanitize >/dev/null
  fi
  cmake --build build/sanitize -j"$JOBS" >build/sanitize/build.log 2>&1 \
    || { tail -40 build/sanitize/build.log; echo "reliability: building build/sanitize failed" >&2; exit 1; }
  exec 9>&-
}

t0=$(date +%s)
[ "${1:-}" = --build ] && { build; exit 0; }
echo "== reliability: Catch2 under AddressSanitizer + UndefinedBehaviorSanitizer (build/sanitize)"
build
ctest --preset sanitize -j"$JOBS"
t1=$(date +%s)
[ "${1:-}" = --no-fuzz ] && { echo "reliability: ok (sanitize $((t1 - t0))s)"; exit 0; }

echo "== reliability: libFuzzer targets (build/sanitize)"
bash scripts/fuzz.sh "${POSENC_FUZZ_SECONDS:-0}"
t2=$(date +%s)
echo "reliability: ok (sanitize $((t1 - t0))s, fuzz $((t2 - t1))s)"
