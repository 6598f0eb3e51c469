#!/usr/bin/env bash
# The main job: setup, build, prepare TinyStories (once), train the paired SA vs XSA experiment of
# configs/default.yaml and print its results table. Every run goes to a new runs/default-<time>/ folder.
# Where the text comes from: see scripts/prepare_data.sh.
# Extra arguments go to xsa-train, e.g.  scripts/demo.sh --set train.steps=100
set -euo pipefail
cd "$(dirname "$0")/.."
start=$(date +%s)

bash scripts/setup.sh
bash scripts/build.sh

bash scripts/prepare_data.sh

out="runs/default-$(date +%Y%m%d-%H%M%S)"
build/xsa-train --config configs/default.yaml --out "$out" "$@"
echo "demo: done in $(( $(date +%s) - start )) s; inspect again with: build/xsa-inspect $out"
