#!/bin/bash
# See schema.cmake. Usage: schema_e2e.sh XSA_TRAIN XSA_SWEEP XSA_INSPECT PYTHON SOURCE_DIR DATA_DIR WORK_DIR
set -euo pipefail
train=$1 sweep=$2 inspect=$3 python=$4 src=$5 data=$6 work=$7
if [ ! -f "$data/meta.json" ]; then
  echo "schema_e2e: error: no prepared test data at $data (CTest fixture train.prepare_small_data)" >&2
  exit 1
fi
rm -rf "$work"
mkdir -p "$work"
cat >"$work/tiny.yaml" <<YAML
name: tiny
seed: 3
data: {dir: $data, seq_len: 32}
model: {n_layer: 2, d_model: 32, n_head: 2, d_head: 16}
attention: {variants: [sa, learned, xsa]}
train: {steps: 8, batch_size: 4, warmup_steps: 2, log_interval: 2, checkpoint_interval: 0}
eval: {interval: 4, batches: 1}
metrics: {bias_interval: 4, bias_batches: 1}
sample: {count: 1, tokens: 4}
runtime: {threads: 1, workers: 2}
YAML
cat >"$work/sweep.yaml" <<YAML
base: tiny.yaml
name: grid
grid:
  data.seq_len: [16, 32]
  seed: [1, 2]
set:
  attention.variants: [sa, 0.5, xsa]
YAML
"$train" --config "$work/tiny.yaml" --out "$work/runs/tiny" --quiet
"$sweep" --config "$work/sweep.yaml" --out "$work/sweeps/grid" --workers 2 >"$work/sweep.out"
for format in markdown csv json; do
  "$inspect" "$work/runs/tiny" "$work/sweeps/grid" --format "$format" >"$work/inspect.$format"
done
"$python" "$src/scripts/plots/plot_results.py" "$work/runs/tiny" "$work/sweeps/grid" --out "$work/figs" --inspect "$inspect"
"$python" "$src/tests/integration/check_schema_e2e.py" "$work"
echo "schema end to end: ok"
