#!/usr/bin/env bash
# The test command: setup, configure, build, run every test (unit + integration) with CTest.
# Every test runs on data it makes itself (tests/support/make_stories.py); none is skipped for missing data.
# The only tests allowed to skip are the Slurm and shaped-link tests outside CI (they need root, and say why); with
# CI=true a skipped test fails the run, so a green run never hides part of the suite.
# Usage: scripts/test.sh
set -euo pipefail
# shellcheck source=scripts/lib/cli.sh
source "$(dirname "$0")/lib/cli.sh"
case "${1:-}" in
  '') ;;
  -h | --help) print_help "$0"; exit 0 ;;
  *) usage_error test "unknown argument '$1' (scripts/test.sh takes none)" ;;
esac
cd "$(dirname "$0")/.."
bash scripts/setup.sh
start=$(date +%s)
bash scripts/build.sh
echo "test: build took $(( $(date +%s) - start )) s"
cd build
log=$(mktemp)
trap 'rm -f "$log"' EXIT
start=$(date +%s)
set +e
ctest --output-on-failure -j "$(nproc)" --timeout 1500 2>&1 | tee "$log"
rc=${PIPESTATUS[0]}
set -e
echo "test: ctest took $(( $(date +%s) - start )) s"
[ "$rc" -eq 0 ] || exit "$rc"
# CTest lists skipped tests under "The following tests did not run:" as "  N - name (Skipped)".
skipped=$(awk '/The following tests did not run:/ {on = 1; next} on && /\(Skipped\)/ {print $3} on && !/^[[:space:]]/ {on = 0}' "$log")
if [ -n "$skipped" ]; then
  if [ "${CI:-}" = true ]; then
    echo "test: error: CI=true and these tests were skipped: $(echo $skipped)" >&2
    exit 1
  fi
  echo "test: skipped here (see each test's output for why): $(echo $skipped)"
fi
