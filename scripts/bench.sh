#!/usr/bin/env bash
# Performance benchmark: prints a table and writes bench/bench.json (see scripts/perf/bench.py --help).
set -euo pipefail
cd "$(dirname "$0")/.."
[ -x build/xsa-bench ] || bash scripts/build.sh
exec /usr/bin/python3 scripts/perf/bench.py "$@"
