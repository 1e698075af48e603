# Sourced by scripts/test.sh and scripts/lint.sh: run independent steps at the same time.
#   job NAME COMMAND...   starts COMMAND (a program, not a shell function: errexit does not apply in
#                         one) in the background, its output in $JOB_LOGS/NAME.log
#   wait_jobs [NAME...]   waits for the named jobs (default: every started job); prints one line per job with its
#                         time (wall clock, and the CPU time of its whole process tree, browsers included:
#                         scripts/treecpu.py; on a shared machine the wall clock says little), and the output of
#                         each one that failed; returns 1 if any failed
JOB_LOGS=${JOB_LOGS:-build/logs}
TREECPU="$(dirname "${BASH_SOURCE[0]}")/treecpu.py"   # treecpu.py OUT COMMAND...: COMMAND's tree CPU seconds into OUT
mkdir -p "$JOB_LOGS"
_job_names=() _job_pids=()

job() {
  local name=$1
  shift
  (
    start=$(date +%s)
    if python3 "$TREECPU" "$JOB_LOGS/$name.cpu" "$@"; then rc=0; else rc=$?; fi
    echo $(($(date +%s) - start)) >"$JOB_LOGS/$name.time"
    exit $rc
  ) >"$JOB_LOGS/$name.log" 2>&1 &
  _job_names+=("$name") _job_pids+=($!)
}

wait_jobs() {
  local i name failed=0 names=() pids=()
  for i in "${!_job_pids[@]}"; do
    name=${_job_names[$i]}
    if [ $# -gt 0 ] && [[ " $* " != *" $name "* ]]; then
      names+=("$name") pids+=("${_job_pids[$i]}")   # not waited for now
      continue
    fi
    if wait "${_job_pids[$i]}"; then
      printf '  %-20s ok      %4ss  (cpu %ss)\n' "$name" "$(cat "$JOB_LOGS/$name.time")" "$(cat "$JOB_LOGS/$name.cpu" 2>/dev/null)"
    else
      printf '  %-20s FAILED  %4ss, its output (%s):\n' "$name" "$(cat "$JOB_LOGS/$name.time" 2>/dev/null)" "$JOB_LOGS/$name.log"
      tail -150 "$JOB_LOGS/$name.log" | sed 's/^/    | /'
      failed=1
    fi
  done
  _job_names=("${names[@]}") _job_pids=("${pids[@]}")
  return $failed
}
