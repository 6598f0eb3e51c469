#!/usr/bin/env bash
# Prepares the demo's data (tokenizer + token files) once, if it is not there yet; needs build/xsa-prepare.
# Usage: scripts/prepare_data.sh [--full]
# Where the text comes from, in order: ../shared/tinystories (next to the repository) when present,
# otherwise $TINYSTORIES_DIR (a folder with train/*.txt and val/*.txt, or TinyStories-train.txt and
# TinyStories-valid.txt), otherwise scripts/download_tinystories.py: the validation file and the first 10 MiB
# of the train file (~30 MB in all) into data/tinystories, or with --full the whole dataset (~2 GB) into
# data/tinystories-full. Prints the folder it prepared (or found) on its last line.
set -euo pipefail
cd "$(dirname "$0")/.."
# shellcheck source=scripts/lib/cli.sh
source scripts/lib/cli.sh
full=0
for arg in "$@"; do
  case "$arg" in
    --full) full=1 ;;
    -h | --help) print_help scripts/prepare_data.sh; exit 0 ;;
    *) usage_error prepare_data "unknown argument '$arg' (expected --full)" ;;
  esac
done
data_dir=data/tinystories
[ "$full" = 1 ] && data_dir=data/tinystories-full
if [ -f "$data_dir/meta.json" ]; then echo "$data_dir"; exit 0; fi
shopt -s nullglob
if [ "$full" = 0 ] && [ -d ../shared/tinystories/train ]; then
  train=(../shared/tinystories/train/*.txt); val=(../shared/tinystories/val/*.txt)
elif [ -n "${TINYSTORIES_DIR:-}" ]; then
  [ -d "$TINYSTORIES_DIR" ] || { echo "prepare_data: error: TINYSTORIES_DIR=$TINYSTORIES_DIR: no such folder" >&2; exit 2; }
  train=("$TINYSTORIES_DIR"/train/*.txt "$TINYSTORIES_DIR"/TinyStories-train.tx[t])
  val=("$TINYSTORIES_DIR"/val/*.txt "$TINYSTORIES_DIR"/TinyStories-valid.tx[t])
elif [ "$full" = 1 ]; then
  python3 scripts/download_tinystories.py --full >&2
  train=(data/raw/TinyStories-train.txt); val=(data/raw/TinyStories-valid.txt)
else
  python3 scripts/download_tinystories.py >&2
  train=(data/raw/TinyStories-train-head-10MB.txt); val=(data/raw/TinyStories-valid.txt)
fi
if [ ${#train[@]} -eq 0 ] || [ ${#val[@]} -eq 0 ]; then
  echo "prepare_data: error: no TinyStories train/val .txt files found${TINYSTORIES_DIR:+ in TINYSTORIES_DIR=$TINYSTORIES_DIR} (expected train/*.txt and val/*.txt, or TinyStories-train.txt and TinyStories-valid.txt; see data/README.md)" >&2
  exit 2
fi
build/xsa-prepare --train "${train[@]}" --val "${val[@]}" --vocab-size 4096 --out "$data_dir" >&2
echo "$data_dir"
