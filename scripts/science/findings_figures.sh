#!/usr/bin/env bash
# Redraws the figures of docs/findings.md in results/figures/ from the committed results/ (through xsa-inspect's
# JSON, so figures and tables carry the same numbers). Sweeps not run yet are left out; run it again as they
# finish. Needs build/xsa-inspect (or $XSA_BUILD/xsa-inspect, where scripts/xsapy/results.py looks) and Debian's
# python3-matplotlib.
# Usage: scripts/science/findings_figures.sh
set -euo pipefail
cd "$(dirname "$0")/../.."
# shellcheck source=scripts/lib/cli.sh
source scripts/lib/cli.sh
case "${1:-}" in
  '') ;;
  -h | --help) print_help scripts/science/findings_figures.sh; exit 0 ;;
  *) usage_error findings_figures "unknown argument '$1' (it takes none)" ;;
esac
py=/usr/bin/python3
inspect=${XSA_BUILD:-build}/xsa-inspect
sweep_exe=${XSA_BUILD:-build}/xsa-sweep
for exe in "$inspect" "$sweep_exe"; do
  [ -x "$exe" ] || { echo "findings_figures: error: $exe not built (scripts/build.sh)" >&2; exit 2; }
done
mkdir -p results/figures

# shellcheck source=scripts/science/cells.sh
source scripts/science/cells.sh
complete_cells() {  # the point folders of a results/ sweep whose cell (the point's id without its seed) is all done
  [ -f "results/$1/summary.json" ] || return 0
  sweep_points complete "results/$1" "$sweep_exe"
}

existing() {  # the given results/ folders that hold at least one results.json
  for d in "$@"; do
    if [ -n "$(find "results/$d" -name results.json -print -quit 2>/dev/null)" ]; then echo "results/$d"; fi
  done
}

complete() {  # the given results/ folders whose every point is done (xsa-sweep --status's last line)
  for d in "$@"; do
    if [ -f "results/$d/summary.json" ] &&
      "$sweep_exe" --status "results/$d" 2>/dev/null | tail -n 1 | grep -Eq ': ([0-9]+) points: \1 done,'; then
      echo "results/$d"
    fi
  done
}

# draw OUT FOLDERS [plot_findings options...]: draws into a fresh folder and replaces results/figures/OUT only
# when that succeeded, so no figure outlives its data and a failure leaves the committed figures in place; a
# folder with nothing to draw yet is removed.
draw() {
  local out=$1 folders=$2
  shift 2
  [ -n "$folders" ] || return 0
  local tmp
  tmp=$(mktemp -d "results/figures/.$out.XXXXXX")
  # shellcheck disable=SC2086  # the folder list is split on purpose
  if ! "$py" scripts/plots/plot_findings.py $folders --out "$tmp" --inspect "$inspect" "$@"; then
    rm -rf "$tmp"
    return 1
  fi
  rm -rf "results/figures/$out"
  if [ -z "$(find "$tmp" -name '*.png' -print -quit)" ]; then  # nothing to draw yet (e.g. one model size)
    rm -rf "$tmp"
    return 0
  fi
  chmod 755 "$tmp"
  mv "$tmp" "results/figures/$out"
}

draw budget "$(existing budget_300 budget_1200 budget_2400)" --lambda 1,0.5 \
  --only improvement_vs_budget,eval_delta_curve,bias_init_vs_end
draw seqlen "$(existing seqlen_tokens seqlen_fixed_batch)" --only improvement_vs_seq_len
draw lambda "$(existing budget_300 budget_1200 lambda_lr)" --only improvement_vs_lambda
draw lr "$(existing lr_control)" --only improvement_vs_lr
# The community's variants at S1 (question 7): each against SA, and each against full XSA on every layer
draw variants "$(existing variants_s1)" --only improvement_vs_lambda
draw variants_vs_xsa "$(existing variants_s1)" --baseline xsa --lambda 1@0-1,1@2-3,tanh_gate \
  --only improvement_vs_lambda
# Question 7's control, gate_lr_s1 (α at 30x the lr): XSA and the gate against SA, on their own. Its SA and XSA
# runs share variants_s1's seeds and setup but some ran with other OpenBLAS kernels and differ after a few dozen steps
# (docs/findings.md, question 7), so pooling the two folders would average two runs per seed.
draw gate_lr "$(existing gate_lr_s1)" --only improvement_vs_lambda
# S0 = lr_control's cells, S1 = variants_s1's sa and xsa runs, S2 = size_s2 (docs/findings.md, question 6)
draw size "$(existing lr_control variants_s1 size_s2)" --lambda 1 --only improvement_vs_size,bias_by_depth
# the length trend at S1 (length_s1, fused attention) next to the 2-layer one (seqlen_tokens) (question 8)
draw length "$(existing seqlen_tokens length_s1)" --lambda 1 --only improvement_vs_seq_len
# warmup_150 gained lr 3e-3 in the fourth round; until that lr's points are all done, its figures take its finished
# cells (question 9's two lrs), so no figure shows a cell with fewer seeds.
warmup_150=$(complete_cells warmup_150)
# Question 9: each third-round sweep next to lr_control, whose cells are its arms without the change it makes
# (positions and embedding norm, QK-norm, output gate, warmup); one colour per baseline setup. The attention
# dynamics next to paper_dynamics instead (lr_control's cells trained again with them measured; never pooled
# with lr_control, configs/science/paper_dynamics.yaml says why).
# The elementwise gate (gate_elementwise, at the headwise gate's best lr) is drawn with the headwise one.
for sweep in baseline_choices qknorm_lr gate_headwise_lr warmup_150; do
  if [ -n "$(existing "$sweep")" ]; then
    with=""
    if [ "$sweep" = gate_headwise_lr ]; then with=$(existing gate_elementwise); fi
    folder=results/$sweep
    if [ "$sweep" = warmup_150 ]; then folder=$warmup_150; fi
    draw "$sweep" "results/lr_control $folder $with" --lambda 1 --only improvement_vs_lr,early_val_loss
    draw "${sweep}_dynamics" "$(existing paper_dynamics) $folder $with" --lambda 1 \
      --only dynamics_over_training
  fi
done
# Experiment 4, QK-norm one size up (S1, at experiment 1's two arms' best lrs) beside QK-norm at S0 (qknorm_lr) and
# S1 without it (variants_s1's SA and XSA, lr 1e-3 only: a point); one colour per model.
if [ -n "$(existing qknorm_s1)" ]; then
  draw qknorm_s1 "$(existing qknorm_lr variants_s1 qknorm_s1)" --lambda 1 --only improvement_vs_lr
fi
# Every baseline setup of question 9 at once: each arm at its own best lr per setup, and XSA's Δ best vs best.
draw setups "results/lr_control $(existing baseline_choices qknorm_lr gate_headwise_lr gate_elementwise) $warmup_150" \
  --lambda 1 --only best_per_setup
# Question 10: every setup of the default model without the embedding LayerNorm (experiment 0's RoPE cells, the two
# partial setups, the modern setup) beside the paper's setup and the longer warmup with the norm (XSA's best setup
# of question 9). A fourth-round sweep is drawn once all its points are done, so no figure shows a cell with fewer
# seeds than the others.
modern_s0=$(complete modern_s0)
if [ -n "$modern_s0" ]; then
  q10="results/lr_control $(ls -d results/baseline_choices/*pos=rope_embed_norm=false) $warmup_150"
  q10="$q10 $modern_s0 $(complete nonorm_warmup150 nonorm_qknorm)"
  draw modern "$q10" --lambda 1 --only improvement_vs_lr,early_val_loss,best_per_setup
fi
# Experiment 2, the modern setup one size up, beside S1 with the embedding norm and QK-norm (qknorm_s1) and in the
# paper's setup at lr 1e-3 (variants_s1's SA and XSA); one colour per setup.
if [ -n "$(complete modern_s1)" ]; then
  draw modern_s1 "$(existing variants_s1 qknorm_s1) results/modern_s1" --lambda 1 --only improvement_vs_lr,best_per_setup
fi
