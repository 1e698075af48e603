#!/usr/bin/env bash
# Fuzzing (`npm run fuzz`): builds build/sanitize (scripts/reliability.sh --build: CMake preset `sanitize`,
# clang, ASan + UBSan, the core compiled once for the Catch2 suite and the fuzz targets), whose posenc_fuzz
# holds every libFuzzer target of tests/fuzz; it runs as build/sanitize/fuzz_<family>, a link whose name
# picks the target. Runs each target, as many at a time as there are cores, first over its committed corpus
# (tests/fuzz/corpus/<family>) and the inputs earlier runs found (build/sanitize/fuzz/corpus/<family>, never
# the repository), then fuzzing for SECONDS seconds.
#   npm run fuzz [-- SECONDS [FAMILY ...]]   SECONDS: per target, default $POSENC_FUZZ_SECONDS or 600;
#                                            0 only replays the corpus. FAMILY: rope, sinusoidal, ...
# npm test runs it over the corpus only (POSENC_FUZZ_SECONDS, default 0 there; .ci/run asks for 30).
# A crash leaves its input in build/sanitize/fuzz/artifacts/ and prints the command that replays it.
set -euo pipefail
cd "$(dirname "$0")/.."
SECONDS_EACH=${1:-${POSENC_FUZZ_SECONDS:-600}}
shift || true
JOBS=$(nproc)
OUT=build/sanitize/fuzz

t0=$(date +%s)
bash scripts/reliability.sh --build
mkdir -p $OUT/artifacts $OUT/logs
t1=$(date +%s)

families=("$@")
if [ ${#families[@]} = 0 ]; then
  for src in tests/fuzz/fuzz_*.cpp; do name=$(basename "$src" .cpp); families+=("${name#fuzz_}"); done
fi

fuzz_one() {  # runs one target; prints one summary line
  local family=$1 bin=build/sanitize/fuzz_$1 log=$OUT/logs/$1.log
  [ -x "$bin" ] || { echo "   $family: no such target ($bin)"; return 1; }
  mkdir -p "$OUT/corpus/$family" "tests/fuzz/corpus/$family"
  local budget=(-max_total_time="$SECONDS_EACH")
  [ "$SECONDS_EACH" = 0 ] && budget=(-runs=0)
  if "$bin" "${budget[@]}" -timeout=10 -rss_limit_mb=2048 -malloc_limit_mb=2048 -print_final_stats=1 \
      -artifact_prefix="$OUT/artifacts/$family-" "$OUT/corpus/$family" "tests/fuzz/corpus/$family" >"$log" 2>&1; then
    echo "   $family: ok, $(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1) inputs"
  else
    echo "   $family: FAILED (log: $log)"
    { grep -E "fuzz check failed|ERROR|runtime error|SUMMARY|what\(\)" "$log" || tail -5 "$log"; } | head -5 | sed 's/^/      /' || true
    local artifact
    artifact=$(sed -n 's/.*Test unit written to \([^ ]*\).*/\1/p' "$log" | tail -1)
    [ -n "$artifact" ] && echo "      replay: $bin $artifact"
    return 1
  fi
}

echo "fuzz: ${#families[@]} targets, ${SECONDS_EACH}s each after the corpus, $JOBS at a time"
status=0
pids=()
for family in "${families[@]}"; do
  fuzz_one "$family" &
  pids+=($!)
  if [ ${#pids[@]} -ge "$JOBS" ]; then
    wait "${pids[0]}" || status=1
    pids=("${pids[@]:1}")
  fi
done
for pid in "${pids[@]}"; do wait "$pid" || status=1; done
t2=$(date +%s)
echo "fuzz: build $((t1 - t0))s, fuzzing $((t2 - t1))s"
[ $status = 0 ] || { echo "fuzz: a target failed" >&2; exit 1; }
