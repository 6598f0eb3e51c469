#!/usr/bin/env bash
# The test command: setup, configure, build, run every test (unit + integration) with CTest.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
start=$(date +%s)
bash scripts/build.sh
echo "test: build took $(( $(date +%s) - start )) s"
cd build
ctest --output-on-failure -j "$(nproc)" --timeout 1500
