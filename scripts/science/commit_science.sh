#!/usr/bin/env bash
# Commits the science results that are finished: every point folder under results/ that holds a
# results.json (with its log.jsonl, config.yaml and train.out), the sweeps' summary files (see summary_taken) and
# results/science_runs.jsonl. Unfinished points and checkpoints are never committed, and a sweep's finished point
# waits while its cell (the point without its seed) is unfinished and another cell of the sweep is complete: one new
# point at a new lr would cut the lr and setup selections' paired seeds to its own (scripts/science/cells.sh).
# --from DIR first copies those files from the checkout DIR where scripts/science/run_science.sh runs (a worktree
# nobody rebuilds, see there) into this one's results/; a waiting point is not copied.
# Needs build/xsa-sweep (or $XSA_BUILD/xsa-sweep) for the sweeps' state.
#   scripts/science/commit_science.sh [--from /path/to/science-checkout]
set -euo pipefail
cd "$(dirname "$0")/../.."
shopt -s nullglob
# shellcheck source=scripts/science/cells.sh
source scripts/science/cells.sh
# shellcheck source=scripts/lib/cli.sh
source scripts/lib/cli.sh
src=.
if [ "${1:-}" = --from ]; then
  need_value commit_science --from $#
  src=$2
  [ -d "$src/results" ] || usage_error commit_science "$src/results: no such folder"
  [ $# -eq 2 ] || usage_error commit_science "unexpected argument '$3' after --from DIR"
elif [ "${1:-}" = -h ] || [ "${1:-}" = --help ]; then
  print_help scripts/science/commit_science.sh
  exit 0
elif [ $# -gt 0 ]; then
  usage_error commit_science "unknown argument '$1' (expected --from DIR)"
fi
sweep_exe=${XSA_BUILD:-build}/xsa-sweep
[ -x "$sweep_exe" ] || { echo "commit_science: error: $sweep_exe not built (scripts/build.sh)" >&2; exit 2; }

# The finished point folders to take, relative to $src (results/<sweep>/<point>).
points=()
for sweep in "$src"/results/*/; do
  sweep=${sweep%/}
  name=${sweep#"$src"/}
  finished=("$sweep"/*/results.json)
  [ ${#finished[@]} -eq 0 ] && continue
  summaries=("$sweep"/summary*.json)
  if [ ${#summaries[@]} -eq 0 ]; then  # not a sweep: every finished folder
    for r in "${finished[@]}"; do d=${r%/results.json}; points+=("$name/${d##*/}"); done
    continue
  fi
  taken=$(sweep_points committable "$sweep" "$sweep_exe")
  while IFS= read -r d; do [ -n "$d" ] && points+=("$name/${d##*/}"); done <<< "$taken"
  waiting=$((${#finished[@]} - $(grep -c . <<< "$taken" || true)))
  if [ "$waiting" -gt 0 ]; then
    echo "commit_science: $name: $waiting finished point(s) wait until their cell has every seed (xsa-sweep --status $sweep)"
  fi
done

# summary_taken FILE: a sweep's first summary (summary.json, summary.shard-K-of-N.json) is taken; a second
# process's (summary[.shard-K-of-N].2.json, or summary*.<host>-<pid>.json from builds before the numbered names)
# only when it lists a point the first one does not (a grid grown while only that process ran). Otherwise it is
# the snapshot of a process long gone and adds nothing: xsa-sweep --status reads the union of a folder's summaries.
summary_ids() { grep -o '"run_id": *"[^"]*"' "$1" | sort -u; }
summary_taken() {
  local file=$1 name=${1##*/} first
  if [[ $name =~ ^(summary\.shard-[0-9]+-of-[0-9]+)\. ]]; then first=${file%/*}/${BASH_REMATCH[1]}.json
  else first=${file%/*}/summary.json; fi
  [ "$file" = "$first" ] || [ ! -f "$first" ] || [ -n "$(comm -23 <(summary_ids "$file") <(summary_ids "$first"))" ]
}

files=()
for p in "${points[@]}"; do
  if [ "$src" != . ]; then
    mkdir -p "$p"
    for f in results.json log.jsonl config.yaml train.out; do [ -f "$src/$p/$f" ] && cp "$src/$p/$f" "$p/$f"; done
  fi
  for f in "$p"/results.json "$p"/log.jsonl "$p"/config.yaml "$p"/train.out; do [ -f "$f" ] && files+=("$f"); done
done
runs_log=()  # the sweeps' wall-time log, when the checkout has one
[ -f "$src/results/science_runs.jsonl" ] && runs_log=("$src/results/science_runs.jsonl")
for f in "$src"/results/*/summary*.json "${runs_log[@]}"; do
  [[ $f == */summary*.json ]] && ! summary_taken "$f" && continue
  rel=results/${f#"$src"/results/}
  if [ "$src" != . ]; then
    mkdir -p "$(dirname "$rel")"
    cp "$f" "$rel"
  fi
  files+=("$rel")
done
[ ${#files[@]} -eq 0 ] && { echo "commit_science: nothing finished yet"; exit 0; }
git add -- "${files[@]}"
if git diff --cached --quiet -- results; then
  echo "commit_science: nothing new"
  exit 0
fi
n=$(git ls-files -- results | grep -c '^results/[^/]*/[^/]*/results\.json$' || true)
git commit -q -m "results: science sweeps, $n finished points" -- "${files[@]}"  # exactly what was taken
echo "commit_science: committed ($n finished points in all)"
