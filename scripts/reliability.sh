#!/usr/bin/env bash
# The native reliability suite (issue 7), run by scripts/test.sh:
#   1. the Catch2 suite built with AddressSanitizer + UndefinedBehaviorSanitizer (g++, any finding is
#      fatal: -fno-sanitize-recover=all, float-cast-overflow included) in build/asan, under ctest;
#   2. one libFuzzer target per kernel family (tests/fuzz/fuzz_*.cpp, clang, -fsanitize=fuzzer,address,
#      undefined) in build/fuzz, each started from its committed corpus (tests/fuzz/corpus/<family>)
#      and run for POSENC_FUZZ_SECONDS seconds (default 60; 0 only replays the corpus), as many at a
#      time as there are cores. New inputs go to build/fuzz/corpus/<family>, never to the repository.
# A crash leaves its input in build/fuzz/artifacts/ and prints the command that replays it.
# Idempotent: configures once, rebuilds what changed. About 6 minutes on 2 cores from scratch.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
SECONDS_EACH=${POSENC_FUZZ_SECONDS:-60}
JOBS=$(nproc)
bash scripts/setup.sh --no-npm >/dev/null   # compilers, libclang-rt-14-dev (libFuzzer), xsimd headers

CLANGXX=$(command -v clang++-14 || command -v clang++ || true)
[ -n "$CLANGXX" ] || { echo "reliability: clang++ not found" >&2; exit 1; }
ls /usr/lib/llvm-*/lib/clang/*/lib/linux/libclang_rt.fuzzer-x86_64.a >/dev/null 2>&1 \
  || { echo "reliability: libFuzzer runtime missing (Debian package libclang-rt-14-dev)" >&2; exit 1; }

t0=$(date +%s)
echo "== reliability: Catch2 under AddressSanitizer + UndefinedBehaviorSanitizer (build/asan)"
[ -f build/asan/CMakeCache.txt ] || cmake -S . -B build/asan -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_COMPILER=g++ \
  -DPOSENC_SANITIZE=address,undefined,float-cast-overflow >/dev/null
build() { cmake --build "$1" -j"$JOBS" >"$1/build.log" 2>&1 || { tail -40 "$1/build.log"; echo "reliability: building $1 failed" >&2; exit 1; }; }
build build/asan
(cd build/asan && ASAN_OPTIONS=detect_leaks=1:detect_stack_use_after_return=1 UBSAN_OPTIONS=print_stacktrace=1 \
  ctest --output-on-failure)
t1=$(date +%s)

echo "== reliability: libFuzzer targets, ${SECONDS_EACH}s each, $JOBS at a time (build/fuzz)"
[ -f build/fuzz/CMakeCache.txt ] || cmake -S . -B build/fuzz -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_COMPILER="$CLANGXX" \
  -DPOSENC_SANITIZE=address,undefined -DPOSENC_FUZZ=ON -DPOSENC_TESTS=OFF >/dev/null
build build/fuzz
t2=$(date +%s)

targets=()
for src in tests/fuzz/fuzz_*.cpp; do
  name=$(basename "$src" .cpp)
  targets+=("${name#fuzz_}")
done
mkdir -p build/fuzz/artifacts build/fuzz/logs

fuzz_one() {  # runs one target; prints one summary line
  local family=$1 bin=build/fuzz/fuzz_$1 log=build/fuzz/logs/$1.log
  mkdir -p "build/fuzz/corpus/$family" "tests/fuzz/corpus/$family"
  local budget=(-max_total_time="$SECONDS_EACH")
  [ "$SECONDS_EACH" = 0 ] && budget=(-runs=0)
  if "$bin" "${budget[@]}" -timeout=10 -rss_limit_mb=2048 -malloc_limit_mb=2048 -print_final_stats=1 \
      -artifact_prefix="build/fuzz/artifacts/$family-" "build/fuzz/corpus/$family" "tests/fuzz/corpus/$family" >"$log" 2>&1; then
    echo "   $family: ok, $(grep -oP 'stat::number_of_executed_units: \K[0-9]+' "$log" || echo '?') inputs"
  else
    echo "   $family: FAILED (log: $log)"
    { grep -E "fuzz check failed|ERROR|runtime error|SUMMARY|what\(\)" "$log" || tail -5 "$log"; } | head -5 | sed 's/^/      /' || true
    local artifact
    artifact=$(grep -oP "Test unit written to \K\S+" "$log" | tail -1 || true)
    [ -n "$artifact" ] && echo "      replay: $bin $artifact"
    return 1
  fi
}

status=0
pids=()
for family in "${targets[@]}"; do
  fuzz_one "$family" &
  pids+=($!)
  if [ ${#pids[@]} -ge "$JOBS" ]; then
    wait "${pids[0]}" || status=1
    pids=("${pids[@]:1}")
  fi
done
for pid in "${pids[@]}"; do wait "$pid" || status=1; done
t3=$(date +%s)

echo "reliability: asan $((t1 - t0))s, fuzz build $((t2 - t1))s, fuzzing $((t3 - t2))s, total $((t3 - t0))s"
[ $status = 0 ] || { echo "reliability: a fuzz target failed" >&2; exit 1; }
echo "reliability: ok"
