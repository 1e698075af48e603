#!/usr/bin/env bash
# Benchmarks: builds the wasm modules (scripts/build.sh --lib) and the native bench executable
# (scripts/bench/native.cpp against src/core, g++ -O3 -msse4.2 and -mavx2, into build/bench-native/),
# then runs the Node harness scripts/bench/run.mjs, which prints every figure and writes
# docs/benchmarks.json and docs/BENCHMARKS.md (a --quick run writes build/bench/ instead).
# Usage: npm run bench [-- --quick] [-- --out DIR] [-- --only REGEX] [-- --no-native] [-- --no-tfjs]
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/build.sh --lib
# The kernel timers (_bench*) live in the dev modules, which the package does not ship.
export NODE_PATH=/usr/share/nodejs
for flavour in simd scalar; do cmake --build build/wasm-$flavour -j"$(nproc)" --target posenc_wasm_dev; done
mkdir -p build/bench-native/generated
node scripts/contract-hpp.mjs build/bench-native/generated/contract.hpp

# The native contender: the core sources it needs, compiled once per instruction set; rebuilt when
# any of them (or native.cpp) is newer than the executable.
CORE=(src/core/angles.cpp src/core/sinusoidal.cpp src/core/rope.cpp src/core/relative.cpp src/core/attention.cpp src/core/ops.cpp src/core/status.cpp)
OUT=build/bench-native
mkdir -p "$OUT"
pids=()
for arch in sse4.2 avx2; do
  bin="$OUT/posenc-bench-$arch"
  stale=0
  [ -x "$bin" ] || stale=1
  for f in scripts/bench/native.cpp "${CORE[@]}" src/core/*.hpp; do
    [ "$f" -nt "$bin" ] && stale=1
  done
  if [ $stale = 1 ]; then
    echo "bench: compiling $bin"
    g++ -std=c++20 -O3 -ffp-contract=off -m"$arch" -Isrc/core -Ibuild/bench-native/generated -isystem build/deps/xsimd/usr/include \
      scripts/bench/native.cpp "${CORE[@]}" -o "$bin" &
    pids+=($!)
  fi
done
for pid in "${pids[@]}"; do wait "$pid"; done

exec node --expose-gc scripts/bench/run.mjs "$@"
