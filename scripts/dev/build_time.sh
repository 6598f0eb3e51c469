#!/usr/bin/env bash
# Times a fresh build of one or more commits of this repository, the way a new clone builds: each commit is
# cloned into its own temporary folder, configured (Release, the generator chosen) and built with
# -j $(nproc); the clones are removed at the end. One line per commit: "COMMIT GENERATOR SECONDS s".
# Run it on a quiet machine and compare ratios from one run (docs/development.md "Build time").
#   scripts/dev/build_time.sh [--generator ninja|make] COMMIT...
set -euo pipefail
cd "$(dirname "$0")/../.."
# shellcheck source=scripts/lib/cli.sh
source scripts/lib/cli.sh
generator=ninja
commits=()
while [ $# -gt 0 ]; do
  case "$1" in
    --generator) need_value build_time "$1" $#; generator=$2; shift 2 ;;
    -h|--help) print_help scripts/dev/build_time.sh; exit 0 ;;
    -*) usage_error build_time "unknown option '$1' (expected --generator ninja|make)" ;;
    *) commits+=("$1"); shift ;;
  esac
done
case "$generator" in
  ninja) gen_args=(-G Ninja); command -v ninja >/dev/null || { echo "build_time: error: --generator ninja, but ninja is not installed (scripts/setup.sh installs it)" >&2; exit 2; } ;;
  make) gen_args=(-G "Unix Makefiles") ;;
  *) echo "build_time: error: --generator '$generator', expected ninja or make" >&2; exit 2 ;;
esac
[ ${#commits[@]} -gt 0 ] || { echo "build_time: error: no commit given (usage: scripts/dev/build_time.sh [--generator ninja|make] COMMIT...)" >&2; exit 2; }
git rev-parse --git-dir >/dev/null 2>&1 ||
  { echo "build_time: error: $(pwd) is not a git repository (build_time clones commits of it; a copy without .git has none)" >&2; exit 2; }
for c in "${commits[@]}"; do  # every commit is checked before anything is built
  git rev-parse --verify --quiet "$c^{commit}" >/dev/null 2>&1 ||
    { echo "build_time: error: '$c' is not a commit of this repository" >&2; exit 2; }
done
work=$(mktemp -d "${TMPDIR:-/tmp}/xsa-build-time.XXXXXX")
trap 'rm -rf "$work"' EXIT
for c in "${commits[@]}"; do
  dir="$work/$(git rev-parse --short "$c")"
  git clone -q . "$dir"
  git -C "$dir" checkout -q "$c"
  cmake -S "$dir" -B "$dir/build" -DCMAKE_BUILD_TYPE=Release "${gen_args[@]}" >/dev/null
  start=$(date +%s)
  if ! cmake --build "$dir/build" -j "$(nproc)" >"$dir.log" 2>&1; then
    echo "build_time: error: $c failed to build (last lines below)" >&2; tail -5 "$dir.log" >&2; exit 1
  fi
  echo "$(git rev-parse --short "$c") $generator $(( $(date +%s) - start )) s"
  rm -rf "$dir"
done
