#!/usr/bin/env bash
# Builds xsa with AddressSanitizer + UndefinedBehaviorSanitizer (clang, -fno-sanitize-recover=all) into
# build-sanitize/ (scripts/dev/sanitize_build.sh) and runs the GoogleTest suites there: torch-free, prepare and
# LibTorch (they also run the sweep/inspect/prepare binaries, sanitized too). Any sanitizer report aborts the
# test that caused it and fails this script. Library-side suppressions: tests/sanitizers/*.supp (each one says why).
#   scripts/dev/sanitize.sh        what CI runs after scripts/test.sh
set -euo pipefail
cd "$(dirname "$0")/../.."
# shellcheck source=scripts/lib/cli.sh
source scripts/lib/cli.sh
case "${1:-}" in
  '') ;;
  -h | --help) print_help scripts/dev/sanitize.sh; exit 0 ;;
  *) usage_error sanitize "unknown argument '$1' (scripts/dev/sanitize.sh takes none)" ;;
esac
bash scripts/dev/sanitize_build.sh xsa_tests_common xsa_tests_prepare xsa_tests_torch
built=$(date +%s)

supp="$PWD/tests/sanitizers"
export ASAN_OPTIONS="halt_on_error=1:abort_on_error=1:detect_leaks=1:strict_string_checks=1:detect_stack_use_after_return=1:check_initialization_order=1"
export LSAN_OPTIONS="suppressions=$supp/lsan.supp:print_suppressions=0"
export UBSAN_OPTIONS="halt_on_error=1:print_stacktrace=1:suppressions=$supp/ubsan.supp"
cd build-sanitize
ctest --output-on-failure -j "$(nproc)" --timeout 900 -L unit
echo "sanitize: tests took $(( $(date +%s) - built )) s"
