#!/usr/bin/env bash
# Configures and builds into build/ (Release). Usage: scripts/build.sh [-DVAR=VALUE...] (extra cmake cache entries,
# e.g. -DCMAKE_PREFIX_PATH=/opt/libtorch)
set -euo pipefail
# shellcheck source=scripts/lib/cli.sh
source "$(dirname "$0")/lib/cli.sh"
for arg in "$@"; do
  case "$arg" in
    -h | --help) print_help "$0"; exit 0 ;;
    -D?*) ;;
    *) usage_error build "unknown argument '$arg' (expected -DVAR=VALUE cmake cache entries)" ;;
  esac
done
cd "$(dirname "$0")/.."
# Ninja where it is installed (scripts/setup.sh installs it): it schedules the whole graph where make waits
# target by target, a little faster from fresh (docs/development.md "Build time"). A build/ configured before
# keeps its generator (CMake refuses to switch one).
generator=()
if [ ! -f build/CMakeCache.txt ] && command -v ninja >/dev/null; then generator=(-G Ninja); fi
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release "${generator[@]}" "$@" >/dev/null
cmake --build build -j "$(nproc)"
