#!/usr/bin/env bash
# Prepares data/tinystories (tokenizer + token files) once, if it is not there yet; needs build/xsa-prepare.
# Where the text comes from, in order: ../shared/tinystories (next to the repository) when present,
# otherwise $TINYSTORIES_DIR (a folder with train/*.txt and val/*.txt, or TinyStories-train.txt and
# TinyStories-valid.txt), otherwise scripts/download_tinystories.sh (needs internet).
set -euo pipefail
cd "$(dirname "$0")/.."
data_dir=data/tinystories
[ -f "$data_dir/meta.json" ] && exit 0
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
  echo "prepare_data: error: no TinyStories train/val .txt files found (see data/README.md)" >&2
  exit 2
fi
build/xsa-prepare --train "${train[@]}" --val "${val[@]}" --vocab-size 4096 --out "$data_dir"
