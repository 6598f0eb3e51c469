#!/usr/bin/env bash
# Commits the science results that are finished: every point folder under results/ that holds a
# results.json (with its log.jsonl, config.yaml and train.out), the sweeps' summary files and
# results/science_runs.jsonl. Unfinished points and checkpoints are never committed.
# --from DIR first copies those files from the checkout DIR where scripts/science/run_science.sh runs (a worktree
# nobody rebuilds, see there) into this one's results/.
#   scripts/science/commit_science.sh [--from /path/to/science-checkout]
set -euo pipefail
cd "$(dirname "$0")/../.."
shopt -s nullglob
if [ "${1:-}" = --from ]; then
  src=${2:?commit_science: --from needs a checkout folder}
  [ -d "$src/results" ] || { echo "commit_science: error: $src/results: no such folder" >&2; exit 2; }
  for r in "$src"/results/*/*/results.json; do
    d=${r%/results.json}
    rel=results/${d#"$src"/results/}
    mkdir -p "$rel"
    for f in results.json log.jsonl config.yaml train.out; do [ -f "$d/$f" ] && cp "$d/$f" "$rel/$f"; done
  done
  for f in "$src"/results/*/summary*.json "$src"/results/science_runs.jsonl; do
    rel=results/${f#"$src"/results/}
    mkdir -p "$(dirname "$rel")"
    cp "$f" "$rel"
  done
elif [ $# -gt 0 ]; then
  echo "commit_science: error: unknown argument '$1' (expected --from DIR)" >&2
  exit 2
fi
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
