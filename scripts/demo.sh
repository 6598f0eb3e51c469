#!/usr/bin/env bash
# The main job: setup, build, prepare TinyStories (once), train the paired SA vs XSA experiment of
# configs/default.yaml and print its results table. Every run goes to a new runs/default-<time>/ folder.
# Where the text comes from: see scripts/prepare_data.sh (without local data it downloads ~30 MB; --full
# downloads and prepares the whole dataset, ~2 GB, and trains on it).
# Usage: scripts/demo.sh [--full] [xsa-train arguments...], e.g.  scripts/demo.sh --set train.steps=100
set -euo pipefail
cd "$(dirname "$0")/.."
# shellcheck source=scripts/lib/cli.sh
source scripts/lib/cli.sh
start=$(date +%s)
case "${1:-}" in -h | --help) print_help scripts/demo.sh; exit 0 ;; esac
prepare_args=()
if [ "${1:-}" = --full ]; then prepare_args=(--full); shift; fi

bash scripts/setup.sh
bash scripts/build.sh

data_dir=$(bash scripts/prepare_data.sh "${prepare_args[@]}" | tail -n 1)

out="runs/default-$(date +%Y%m%d-%H%M%S)"
build/xsa-train --config configs/default.yaml --set "data.dir=$data_dir" --out "$out" "$@"
echo "demo: done in $(( $(date +%s) - start )) s; inspect again with: build/xsa-inspect $out"
