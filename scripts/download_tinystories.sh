#!/usr/bin/env bash
# Downloads the official TinyStories text files (Eldan & Li 2023; license CDLA-Sharing-1.0) from the
# Hugging Face dataset roneneldan/TinyStories into data/raw/:
#   TinyStories-train.txt  (~1.9 GB)     TinyStories-valid.txt  (~19 MB)
# Usage: scripts/download_tinystories.sh [--valid-only]
# Then prepare them (see data/README.md):
#   build/xsa-prepare --train data/raw/TinyStories-train.txt --val data/raw/TinyStories-valid.txt \
#                     --vocab-size 4096 --out data/tinystories-full
set -euo pipefail

base_url="https://huggingface.co/datasets/roneneldan/TinyStories/resolve/main"
out_dir="$(cd "$(dirname "$0")/.." && pwd)/data/raw"
files=(TinyStories-valid.txt TinyStories-train.txt)
if [[ "${1:-}" == "--valid-only" ]]; then files=(TinyStories-valid.txt); fi

if command -v curl >/dev/null; then
  fetch() { curl --fail --location --continue-at - --retry 3 --output "$2" "$1"; }
elif command -v wget >/dev/null; then
  fetch() { wget --continue --tries=3 --output-document="$2" "$1"; }
else
  echo "download_tinystories.sh: error: needs curl or wget" >&2
  exit 1
fi

mkdir -p "$out_dir"
for name in "${files[@]}"; do
  target="$out_dir/$name"
  echo "downloading $base_url/$name -> $target"
  # Download to .part and rename, so an interrupted download never looks complete (re-running resumes).
  if ! fetch "$base_url/$name" "$target.part"; then
    echo "download_tinystories.sh: error: could not download $base_url/$name (offline? behind a proxy?)." >&2
    echo "  Alternatives: copy TinyStories .txt files you already have, or use ../shared/tinystories (data/README.md)." >&2
    exit 1
  fi
  mv "$target.part" "$target"
done
echo "done: $(ls "$out_dir")"
