#!/usr/bin/env bash
# Configures and builds the sanitizer build shared by scripts/dev/sanitize.sh and scripts/dev/fuzz.sh: clang-14 with
# AddressSanitizer + UndefinedBehaviorSanitizer (-fno-sanitize-recover=all) and libFuzzer coverage
# (-DXSA_FUZZ=ON), in build-sanitize/. One build dir for both, so CI compiles the library once. File by
# file (-DXSA_UNITY_BUILD=OFF): the one build that checks every source compiles on its own includes.
#   scripts/dev/sanitize_build.sh TARGET...
set -euo pipefail
cd "$(dirname "$0")/../.."
# shellcheck source=scripts/lib/cli.sh
source scripts/lib/cli.sh
[ $# -gt 0 ] || usage_error sanitize_build "no target given (usage: scripts/dev/sanitize_build.sh TARGET...)"
for arg in "$@"; do
  case "$arg" in
    -h | --help) print_help scripts/dev/sanitize_build.sh; exit 0 ;;
    -*) usage_error sanitize_build "unknown option '$arg' (expected CMake target names)" ;;
  esac
done
bash scripts/setup.sh --sanitizers
launcher=()
if command -v ccache >/dev/null; then
  launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache -DCMAKE_C_COMPILER_LAUNCHER=ccache)
fi
start=$(date +%s)
cmake -S . -B build-sanitize -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_COMPILER=clang++-14 \
  -DXSA_SANITIZE=address,undefined -DXSA_FUZZ=ON -DXSA_UNITY_BUILD=OFF "${launcher[@]}" >/dev/null
cmake --build build-sanitize -j "$(nproc)" --target "$@"
echo "sanitize_build: $* took $(( $(date +%s) - start )) s"
