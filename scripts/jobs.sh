# Sourced by scripts/test.sh and scripts/lint.sh: run independent steps at the same time.
#   job NAME COMMAND...   starts COMMAND (a program, not a shell function: errexit does not apply in
#                         one) in the background, its output in $JOB_LOGS/NAME.log
#   wait_jobs [NAME...]   waits for the named jobs (default: every started job); prints one line per job with its time (wall clock,
#                         and the CPU time of its processes: on a shared machine the wall clock says
#                         little), and the output of each one that failed; returns 1 if any failed
JOB_LOGS=${JOB_LOGS:-build/logs}
mkdir -p "$JOB_LOGS"
_job_names=() _job_pids=()

job() {
  local name=$1
  shift
  (
    start=$(date +%s)
    if "$@"; then rc=0; else rc=$?; fi
    echo $(($(date +%s) - start)) >"$JOB_LOGS/$name.time"
    # the user + system CPU seconds of the job's (waited-for) processes: the second line of `times`
    # (written to a file first: in a pipe, `times` would run in a child of its own)
    times >"$JOB_LOGS/$name.cpu"
    awk 'NR == 2 { split($0, t, /[ms]+ */); print int(t[1] * 60 + t[2] + t[3] * 60 + t[4] + 0.5) }' "$JOB_LOGS/$name.cpu" >"$JOB_LOGS/$name.cpu.tmp"
    mv "$JOB_LOGS/$name.cpu.tmp" "$JOB_LOGS/$name.cpu"
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
