#!/usr/bin/env bash
# The fuzz targets on wasm32 (run by npm test): every target of tests/fuzz, built by Emscripten with its
# AddressSanitizer and UndefinedBehaviorSanitizer into one binary with a main() that replays files
# (tests/fuzz/main.cpp; there is no libFuzzer for wasm), build/wasm-sanitize/fuzz_replay.cjs FAMILY FILE...,
# run under Node over each target's committed corpus. On wasm32 size_t is 32 bits: a size product the 64-bit
# native fuzzers cannot wrap can wrap here. CMake preset wasm-sanitize (build/wasm-sanitize); it never
# writes the shipped modules.
set -euo pipefail
cd "$(dirname "$0")/.."
export NODE_PATH=/usr/share/nodejs   # Emscripten 3.1.6 needs Debian's acorn etc.
command -v emcmake >/dev/null || { echo "fuzz-wasm: Emscripten missing; run scripts/setup.sh" >&2; exit 1; }
t0=$(date +%s)
[ -f build/wasm-sanitize/CMakeCache.txt ] || emcmake cmake --preset wasm-sanitize >build/wasm-sanitize.configure.log 2>&1 \
  || { cat build/wasm-sanitize.configure.log >&2; exit 1; }
cmake --build build/wasm-sanitize -j"$(nproc)" >build/wasm-sanitize/build.log 2>&1 \
  || { tail -40 build/wasm-sanitize/build.log; echo "fuzz-wasm: build failed" >&2; exit 1; }
t1=$(date +%s)
status=0
for src in tests/fuzz/fuzz_*.cpp; do
  family=$(basename "$src" .cpp)
  family=${family#fuzz_}
  if out=$(node --no-experimental-fetch build/wasm-sanitize/fuzz_replay.cjs "$family" tests/fuzz/corpus/"$family"/* 2>&1); then
    echo "   $family: ok, ${out##*replay: }"
  else
    echo "   $family: FAILED"
    echo "$out" | grep -E "ERROR|runtime error|SUMMARY|fuzz check failed|fuzz:" | head -5 | sed 's/^/      /' || true
    status=1
  fi
done
echo "fuzz-wasm: build $((t1 - t0))s, replay $(($(date +%s) - t1))s"
[ $status = 0 ] || { echo "fuzz-wasm: a target failed" >&2; exit 1; }
