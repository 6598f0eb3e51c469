#!/usr/bin/env bash
# Executes notebooks/tour.ipynb headless (jupyter nbconvert --execute, bounded in time) into build/notebook/,
# then opens the HTML in headless Chromium and checks that every figure rendered (loaded, not blank) and that
# no cell wrote an error (scripts/dev/check_notebook_html.py). With --screenshot PNG it also saves a screenshot
# of the executed notebook (docs/guide.md "Explore" shows docs/images/tour.png). Needs scripts/setup.sh --notebook
# (Debian's jupyter-nbconvert, python3-ipykernel, chromium) and a build (scripts/build.sh).
# Part 3 trains on $XSA_TOUR_DATA or data/tinystories, else on a generated corpus; $XSA_TOUR_STEPS steps.
# Usage: scripts/notebook.sh [--screenshot PNG]
set -euo pipefail
cd "$(dirname "$0")/.."
# shellcheck source=scripts/lib/cli.sh
source scripts/lib/cli.sh
screenshot=""
while [ $# -gt 0 ]; do
  case "$1" in
    --screenshot) need_value notebook "$1" $#; screenshot="$2"; shift ;;
    -h | --help) print_help scripts/notebook.sh; exit 0 ;;
    *) usage_error notebook "unknown argument '$1' (expected --screenshot PNG)" ;;
  esac
  shift
done
# The screenshot's place is checked now, not after the notebook has run (minutes).
if [ -n "$screenshot" ]; then
  shot_dir=$(dirname "$screenshot")
  [ ! -d "$screenshot" ] || { echo "notebook: error: --screenshot $screenshot: is a folder (expected a PNG file)" >&2; exit 2; }
  [ -d "$shot_dir" ] && [ -w "$shot_dir" ] ||
    { echo "notebook: error: --screenshot $screenshot: folder $shot_dir does not exist or is not writable" >&2; exit 2; }
fi
for tool in jupyter-nbconvert chromium; do
  command -v "$tool" >/dev/null || { echo "notebook: error: $tool not found (bash scripts/setup.sh --notebook)" >&2; exit 2; }
done
[ -x build/xsa-train ] || { echo "notebook: error: build/xsa-train not found (bash scripts/build.sh)" >&2; exit 2; }
out=build/notebook
mkdir -p "$out"
start=$(date +%s)
# Debian's python (matplotlib, ipykernel) runs the kernel, whatever python3 comes first on PATH.
PATH=/usr/bin:$PATH XSA_BUILD="$PWD/build" PYDEVD_DISABLE_FILE_VALIDATION=1 timeout 900 jupyter-nbconvert --to html --execute \
  --ExecutePreprocessor.timeout=600 --output-dir "$out" --output tour notebooks/tour.ipynb
echo "notebook: executed in $(( $(date +%s) - start )) s -> $out/tour.html"
/usr/bin/python3 scripts/dev/check_notebook_html.py "$out/tour.html" --figures 6 ${screenshot:+--screenshot "$screenshot"}
