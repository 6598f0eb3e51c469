#!/usr/bin/env bash
# The main job: setup, build, prepare TinyStories (once), train the paired SA vs XSA experiment of
# configs/default.yaml and print its results table. Every run goes to a new runs/default-<time>/ folder.
#
# Where the text comes from, in order: ../shared/tinystories (next to the repository) when present,
# otherwise $TINYSTORIES_DIR (a folder with train/*.txt and val/*.txt, or TinyStories-train.txt and
# TinyStories-valid.txt), otherwise scripts/download_tinystories.sh (needs internet).
# Extra arguments go to xsa-train, e.g.  scripts/demo.sh --set train.steps=100
set -euo pipefail
cd "$(dirname "$0")/.."
start=$(date +%s)

bash scripts/setup.sh
bash scripts/build.sh

data_dir=data/tinystories
if [ ! -f "$data_dir/meta.json" ]; then
  shopt -s nullglob
  if [ -d ../shared/tinystories/train ]; then
    train=(../shared/tinystories/train/*.txt); val=(../shared/tinystories/val/*.txt)
  elif [ -n "${TINYSTORIES_DIR:-}" ]; then
    train=("$TINYSTORIES_DIR"/train/*.txt "$TINYSTORIES_DIR"/TinyStories-train.tx[t])
    val=("$TINYSTORIES_DIR"/val/*.txt "$TINYSTORIES_DIR"/TinyStories-valid.tx[t])
  else
    bash scripts/download_tinystories.sh
    train=(data/raw/TinyStories-train.txt); val=(data/raw/TinyStories-valid.txt)
  fi
  if [ ${#train[@]} -eq 0 ] || [ ${#val[@]} -eq 0 ]; then
    echo "demo: error: no TinyStories train/val .txt files found (see data/README.md)" >&2
    exit 2
  fi
  build/xsa-prepare --train "${train[@]}" --val "${val[@]}" --vocab-size 4096 --out "$data_dir"
fi

out="runs/default-$(date +%Y%m%d-%H%M%S)"
build/xsa-train --config configs/default.yaml --out "$out" "$@"
echo "demo: done in $(( $(date +%s) - start )) s; inspect again with: build/xsa-inspect $out"
