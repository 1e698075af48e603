#!/usr/bin/env bash
# Benchmarks: builds the wasm modules (scripts/build.sh --lib) and the native bench executable
# (CMake target posenc_bench: scripts/bench/native.cpp against src/core, -O3 -msse4.2 and -mavx2, into
# build/bench-sse4.2/ and build/bench-avx2/),
# then runs the Node harness scripts/bench/run.mjs, which prints every figure and writes
# docs/benchmarks.json and docs/BENCHMARKS.md (a --quick run writes build/bench/ instead).
# Usage: npm run bench [-- --quick] [-- --out DIR] [-- --only REGEX] [-- --no-native] [-- --no-tfjs] [-- --no-ort] [-- --ort-gqa]
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/build.sh --lib
# The kernel timers (_bench*) live in the dev modules, which the package does not ship.
export NODE_PATH=/usr/share/nodejs   # Emscripten 3.1.6 needs Debian's acorn (Node does not search Debian's JS folder)
for flavour in simd scalar; do cmake --build build/wasm-$flavour -j"$(nproc)" --target posenc_wasm_dev posenc_lab_wasm_dev >/dev/null; done

# The native contender: CMake target posenc_bench (preset `bench`), built once per instruction set into
# build/bench-<arch>/; rebuilt when the core or scripts/bench/native.cpp changed.
for arch in sse4.2 avx2; do
  [ -f build/bench-$arch/CMakeCache.txt ] || cmake --preset bench -B build/bench-$arch -DPOSENC_NATIVE_ARCH=-m$arch >/dev/null
  cmake --build build/bench-$arch -j"$(nproc)" --target posenc_bench >build/bench-$arch/build.log 2>&1 \
    || { tail -30 build/bench-$arch/build.log; exit 1; }
done

exec node --expose-gc scripts/bench/run.mjs "$@"
