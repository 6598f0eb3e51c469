#!/usr/bin/env bash
# Where a training step's time goes: perf samples of one SA run (1 thread) at T x batch with an attention
# implementation, taken after 4 s of startup and stopped with SIGTERM after 20 s, before the final evaluation
# (which is forward-only and would swamp the profile; the step-0 evaluation and bias metrics are cut to one
# batch each), then the top symbols by self time.
# Needs linux-perf (apt-get install linux-perf), a build and data/tinystories.
# Usage: scripts/perf/profile_step.sh [fused|explicit] [T] [batch]     e.g. scripts/perf/profile_step.sh explicit 2048 2
set -euo pipefail
cd "$(dirname "$0")/../.."
# shellcheck source=scripts/lib/cli.sh
source scripts/lib/cli.sh
case "${1:-}" in -h | --help) print_help scripts/perf/profile_step.sh; exit 0 ;; esac
[ $# -le 3 ] || usage_error profile_step "unexpected argument '$4' (usage: [fused|explicit] [T] [batch])"
impl=${1:-fused} T=${2:-128} batch=${3:-32}
case "$impl" in fused|explicit) ;; *) usage_error profile_step "implementation '$impl', expected fused or explicit" ;; esac
need_count profile_step T "$T" 1
need_count profile_step batch "$batch" 1
command -v perf >/dev/null || { echo "profile_step: error: perf not found (apt-get install linux-perf)" >&2; exit 2; }
work=$(mktemp -d /tmp/xsa-profile.XXXXXX)
trap 'rm -rf "$work"' EXIT
perf record -q -D 4000 -o "$work/perf.data" -- build/xsa-train --config configs/default.yaml --out "$work/run" --quiet \
  --set attention.impl="$impl" --set "attention.variants=[sa]" --set runtime.workers=1 --set runtime.threads=1 \
  --set train.steps=100000 --set train.checkpoint_interval=0 --set eval.interval=100000 \
  --set metrics.bias_interval=100000 --set eval.batches=1 --set metrics.bias_batches=1 --set sample.count=0 --set data.seq_len="$T" --set train.batch_size="$batch" \
  >/dev/null 2>"$work/train.err" &
pid=$!
for _ in $(seq 20); do
  sleep 1
  # A run that ended by itself refused its settings (e.g. a T beyond data.seq_len's range): its line, not an
  # empty profile.
  kill -0 "$pid" 2>/dev/null ||
    { echo "profile_step: error: xsa-train stopped before the profile: $(grep -m1 . "$work/train.err")" >&2; exit 2; }
done
pkill -TERM -f -- "--out $work/run" || true
wait "$pid" || true  # SIGTERM: the run checkpoints and exits 75
echo "profile_step: $impl attention, T = $T x batch $batch, SA, 1 thread: top symbols by self time"
perf report -i "$work/perf.data" --no-children --sort dso,symbol 2>/dev/null | grep -v '^#' | grep '%' | head -15 |
  awk '{sym = $4; for (i = 5; i <= NF; i++) sym = sym " " $i; sub(/( -)+$/, "", sym); printf "%8s  %-28s %.100s\n", $1, $2, sym}'
