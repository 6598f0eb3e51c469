#!/usr/bin/env bash
# Runs the science sweeps of configs/science/ into results/<name>/ at low priority (nice 19), resumably:
# rerunning skips finished points and resumes unfinished ones from their checkpoints, so a later session
# (or machine) continues where this one stopped. Each sweep invocation appends a start record and, when it
# ends, its wall time to results/science_runs.jsonl (scripts/science_compute.py sums the runs' own times). Commit finished points with scripts/commit_science.sh.
# Run it from a checkout nobody edits or rebuilds meanwhile (e.g. a git worktree of its own): every point starts
# build/xsa-train with configs/default.yaml afresh, so a config key added by a newer commit before the binary is
# rebuilt fails the points that start in between (seen here: 19 points failed in seconds, "unknown key").
#
# Usage: scripts/run_science.sh [--lanes 2|1] [--only NAME[,NAME...]]
#   --lanes 2 (default): two sweeps side by side with one worker each (a 2-core machine), in two queues:
#             lane A budget_300 -> budget_1200 -> budget_2400,
#             lane B seqlen_tokens -> lambda_lr -> seqlen_fixed_batch -> budget_2400.
#             The short sweeps go first so whole cells finish early; both lanes end in budget_2400, the
#             largest, and share its points (claims: each point is trained once), so neither idles long.
#   --lanes 1: every sweep one after another with --workers 2, short sweeps first as above.
#   --only:   just these sweeps (names of configs/science/*.yaml), one after another.
set -uo pipefail
cd "$(dirname "$0")/.."

lanes=2
only=""
while [ $# -gt 0 ]; do
  case "$1" in
    --lanes) lanes="${2:-}"; shift 2 ;;
    --only) only="${2:-}"; shift 2 ;;
    -h|--help) sed -n 2,17p "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "run_science: error: unknown argument '$1' (see --help)" >&2; exit 2 ;;
  esac
done
case "$lanes" in 1|2) ;; *) echo "run_science: error: --lanes '$lanes', expected 1 or 2" >&2; exit 2 ;; esac

[ -x build/xsa-sweep ] && [ -x build/xsa-train ] || { bash scripts/setup.sh && bash scripts/build.sh; } || exit 1
bash scripts/prepare_data.sh || exit 1
mkdir -p results

# run_sweep NAME WORKERS: one resumable sweep, its wall time appended to results/science_runs.jsonl.
run_sweep() {
  local name=$1 workers=$2 config="configs/science/$1.yaml"
  [ -f "$config" ] || { echo "run_science: error: $config: no such sweep file" >&2; return 2; }
  local start end rc
  start=$(date +%s)
  echo "run_science: $name: started $(date -u +%FT%TZ), $workers worker(s), into results/$name"
  # A start record first: a sweep killed with its session (SIGKILL) never writes the end record below.
  printf '{"sweep": "%s", "event": "start", "started": "%s", "workers": %d}\n' \
    "$name" "$(date -u -d "@$start" +%FT%TZ)" "$workers" >> results/science_runs.jsonl
  nice -n 19 build/xsa-sweep --config "$config" --workers "$workers" --out "results/$name" \
    > "results/$name.sweep.log" 2>&1
  rc=$?
  end=$(date +%s)
  printf '{"sweep": "%s", "event": "end", "started": "%s", "wall_s": %d, "workers": %d, "exit": %d, "cpu": "%s"}\n' \
    "$name" "$(date -u -d "@$start" +%FT%TZ)" $((end - start)) "$workers" "$rc" \
    "$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')" >> results/science_runs.jsonl
  echo "run_science: $name: exit $rc after $((end - start)) s (log: results/$name.sweep.log)"
  return $rc
}

lane() {  # lane WORKERS NAME...: sweeps one after another; a failed point does not stop the queue
  local workers=$1; shift
  local rc=0
  for name in "$@"; do run_sweep "$name" "$workers" || rc=1; done
  return $rc
}

if [ -n "$only" ]; then
  lane "$lanes" ${only//,/ }
elif [ "$lanes" = 1 ]; then
  lane 2 budget_300 seqlen_tokens lambda_lr seqlen_fixed_batch budget_1200 budget_2400
else
  lane 1 budget_300 budget_1200 budget_2400 &
  a=$!
  lane 1 seqlen_tokens lambda_lr seqlen_fixed_batch budget_2400 &
  b=$!
  rc=0
  wait $a || rc=1
  wait $b || rc=1
  exit $rc
fi
