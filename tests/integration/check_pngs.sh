#!/usr/bin/env bash
# Runs a plotting command into a fresh folder and checks what it drew (plots.* and findings tests).
# Usage: check_pngs.sh OUT "NAME..." "ABSENT_NAME..." COMMAND...   (COMMAND gets --out OUT appended)
# Every NAME.png must be a PNG file; no ABSENT_NAME.png may exist (a figure without the data it needs).
set -euo pipefail
out=$1 present=$2 absent=$3
shift 3
rm -rf "$out"
"$@" --out "$out"
for f in $present; do
  [ "$(head -c 4 "$out/$f.png" 2>/dev/null | tail -c 3)" = PNG ] || { echo "missing or not a PNG: $out/$f.png"; exit 1; }
done
for f in $absent; do
  [ ! -e "$out/$f.png" ] || { echo "drawn without the data it needs: $out/$f.png"; exit 1; }
done
