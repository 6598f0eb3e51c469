#!/usr/bin/env bash
# Commits the science results that are finished: every point folder under results/ that holds a
# results.json (with its log.jsonl, config.yaml and train.out), the sweeps' summary files and
# results/science_runs.jsonl. Unfinished points and checkpoints are never committed.
set -euo pipefail
cd "$(dirname "$0")/.."
shopt -s nullglob
files=()
for r in results/*/*/results.json; do
  d=$(dirname "$r")
  for f in "$d"/results.json "$d"/log.jsonl "$d"/config.yaml "$d"/train.out; do [ -f "$f" ] && files+=("$f"); done
done
for f in results/*/summary*.json results/science_runs.jsonl; do files+=("$f"); done
[ ${#files[@]} -eq 0 ] && { echo "commit_science: nothing finished yet"; exit 0; }
git add -- "${files[@]}"
if git diff --cached --quiet -- results; then
  echo "commit_science: nothing new"
  exit 0
fi
n=$(ls results/*/*/results.json | wc -l)
git commit -q -m "results: science sweeps, $n finished points" -- results
echo "commit_science: committed ($n finished points in all)"
