#!/usr/bin/env bash
# Configures and builds into build/ (Release). Usage: scripts/build.sh [extra cmake args]
set -euo pipefail
cd "$(dirname "$0")/.."
# Ninja where it is installed (scripts/setup.sh installs it): it schedules the whole graph where make waits
# target by target, a little faster from fresh (docs/development.md "Build time"). A build/ configured before
# keeps its generator (CMake refuses to switch one).
generator=()
if [ ! -f build/CMakeCache.txt ] && command -v ninja >/dev/null; then generator=(-G Ninja); fi
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release "${generator[@]}" "$@" >/dev/null
cmake --build build -j "$(nproc)"
