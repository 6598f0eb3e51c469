#!/usr/bin/env bash
# Runs the science sweeps of configs/science/ into results/<name>/ at low priority (nice 19), resumably:
# rerunning skips finished points and resumes unfinished ones from their checkpoints, so a later session
# (or machine) continues where this one stopped. Each sweep invocation appends a start record and, when it
# ends, its wall time to results/science_runs.jsonl (scripts/science/science_compute.py sums the runs' own times). Commit finished points with scripts/science/commit_science.sh.
# Run it from a checkout nobody edits or rebuilds meanwhile (e.g. a git worktree of its own): every point starts
# build/xsa-train with configs/default.yaml afresh, so a config key added by a newer commit before the binary is
# rebuilt fails the points that start in between (seen here: 19 points failed in seconds, "unknown key").
#
# Usage: scripts/science/run_science.sh [--round 4|5|6|3|2|1] [--lanes 2|1] [--only NAME[,NAME...]]
#   --round 6: question 11's long-corpus part (docs/findings.md): both lanes on long_lr (the code corpus
#             linux-source at T = 1,024, SA and XSA at three lrs, sharing its points); builds the corpus first
#             (scripts/corpora/build_corpus.sh linux-source) when data/corpora/linux-source is missing; needs a
#             build with data.doc_mask and loss_by_position.
#   --round 5: question 11's TinyStories part (docs/findings.md): lane A seqlen_tokens_docmask, lane B
#             length_s1_docmask -> seqlen_tokens_docmask (answers 2 and 8's cells with data.doc_mask: true);
#             needs a build from commit 99eacf4 on (before it, the bias metrics under data.doc_mask weighed
#             batches by windows, not by the tokens they counted).
#   --round 4 (default): the fourth round (docs/findings.md, question 10, the modern baseline): both lanes start
#             on modern_s0 (sharing its points), then lane A nonorm_warmup150 -> warmup_150 -> nonorm_qknorm ->
#             modern_s1, lane B modern_s1 -> nonorm_warmup150 -> warmup_150 -> nonorm_qknorm: the modern setup at
#             S0 first (the answer), then one lane on S1's long points while the other brackets the partial
#             setups and warmup_150's added lr 3e-3 (question 9's sweep: its first two lrs left both arms' best at
#             the edge, and XSA's best setup at S0 is there), before the second partial setup.
#   --round 3: the third round (docs/findings.md, question 9): lane A baseline_choices ->
#             qknorm_lr -> paper_dynamics -> gate_headwise_lr -> gate_elementwise -> warmup_150 -> qknorm_s1
#             -> gate_lr_s1, lane B gate_lr_s1 -> baseline_choices -> qknorm_lr -> paper_dynamics ->
#             gate_headwise_lr -> gate_elementwise -> warmup_150 -> qknorm_s1 (claims share each sweep's
#             points): QK-norm's lr sweep and the paper's setup's dynamics (which its dynamics figure needs
#             beside it) first, then the headwise gate and the elementwise one at its best lr (experiment 3
#             whole), the warmup (short points) and experiment 4 at S1.
#   --round 2: the second round (docs/findings.md, questions 5-8): both lanes start on
#             lr_control (sharing its points: claims train each point once), so the short, first-priority
#             sweep finishes first; then lane A size_s2 -> variants_s1 -> length_s1, lane B variants_s1 ->
#             length_s1 -> size_s2 (one lane on short points, so a session that ends mid-point loses little
#             on it), then both gate_lr_s1 (question 7's control: the tanh gate at 30x its lr).
#   --round 1: the first round's sweeps (all finished and committed; a rerun only rewrites their summaries):
#             lane A budget_300 -> budget_1200 -> budget_2400,
#             lane B seqlen_tokens -> lambda_lr -> seqlen_fixed_batch -> budget_2400.
#   --lanes 2 (default): two sweeps side by side with one worker each (a 2-core machine);
#   --lanes 1: the queue one sweep after another with --workers 2.
#   --only:   just these sweeps (names of configs/science/*.yaml), one after another, --workers = --lanes.
set -uo pipefail
cd "$(dirname "$0")/../.." || exit 2
# shellcheck source=scripts/lib/cli.sh
source scripts/lib/cli.sh

lanes=2
round=4
only=""
while [ $# -gt 0 ]; do
  case "$1" in
    --lanes) need_value run_science "$1" $#; lanes=$2; shift 2 ;;
    --round) need_value run_science "$1" $#; round=$2; shift 2 ;;
    --only) need_value run_science "$1" $#; only=$2; shift 2 ;;
    -h|--help) print_help scripts/science/run_science.sh; exit 0 ;;
    *) usage_error run_science "unknown argument '$1'" ;;
  esac
done
case "$lanes" in 1|2) ;; *) echo "run_science: error: --lanes '$lanes', expected 1 or 2" >&2; exit 2 ;; esac
for name in ${only//,/ }; do  # every sweep named is checked before setup, build and data
  [ -f "configs/science/$name.yaml" ] || usage_error run_science "--only $name: no sweep file configs/science/$name.yaml"
done
case "$round" in 1|2|3|4|5|6) ;; *) echo "run_science: error: --round '$round', expected 1, 2, 3, 4, 5 or 6" >&2; exit 2 ;; esac

# With sched_autogroup (the kernel's default), nice orders processes only within one autogroup (a session): a
# sweep started in its own session (setsid, nohup from another terminal) took half of the 2 cores from every
# build and benchmark despite nice 19. Giving its autogroup nice 19 as well makes it yield for real.
if [ -w /proc/self/autogroup ]; then echo 19 > /proc/self/autogroup 2>/dev/null || true; fi
[ -x build/xsa-sweep ] && [ -x build/xsa-train ] || { bash scripts/setup.sh && bash scripts/build.sh; } || exit 1
bash scripts/prepare_data.sh || exit 1
if [ "$round" = 6 ] && [ ! -f data/corpora/linux-source/tokens/meta.json ]; then
  bash scripts/corpora/build_corpus.sh linux-source || exit 1
fi
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
    >> "results/$name.sweep.log" 2>&1
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

# queues: lane A's and lane B's sweeps of the chosen round (--lanes 1 runs lane A's, then lane B's new ones).
if [ "$round" = 1 ]; then
  queue_a=(budget_300 budget_1200 budget_2400)
  queue_b=(seqlen_tokens lambda_lr seqlen_fixed_batch budget_2400)
elif [ "$round" = 6 ]; then
  queue_a=(long_lr)
  queue_b=(long_lr)
elif [ "$round" = 5 ]; then
  queue_a=(seqlen_tokens_docmask)
  queue_b=(length_s1_docmask seqlen_tokens_docmask)
elif [ "$round" = 4 ]; then
  queue_a=(modern_s0 nonorm_warmup150 warmup_150 nonorm_qknorm modern_s1)
  queue_b=(modern_s0 modern_s1 nonorm_warmup150 warmup_150 nonorm_qknorm)
elif [ "$round" = 3 ]; then
  queue_a=(baseline_choices qknorm_lr paper_dynamics gate_headwise_lr gate_elementwise warmup_150 qknorm_s1
    gate_lr_s1)
  queue_b=(gate_lr_s1 baseline_choices qknorm_lr paper_dynamics gate_headwise_lr gate_elementwise warmup_150
    qknorm_s1)
else
  queue_a=(lr_control size_s2 variants_s1 length_s1 gate_lr_s1)
  queue_b=(lr_control variants_s1 length_s1 size_s2 gate_lr_s1)
fi

if [ -n "$only" ]; then
  # shellcheck disable=SC2086  # the comma-separated names are split into words on purpose
  lane "$lanes" ${only//,/ }
elif [ "$lanes" = 1 ]; then
  queue=("${queue_a[@]}")
  for name in "${queue_b[@]}"; do [[ " ${queue[*]} " == *" $name "* ]] || queue+=("$name"); done
  lane 2 "${queue[@]}"
else
  lane 1 "${queue_a[@]}" &
  a=$!
  lane 1 "${queue_b[@]}" &
  b=$!
  rc=0
  wait $a || rc=1
  wait $b || rc=1
  exit $rc
fi
