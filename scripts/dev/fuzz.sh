#!/usr/bin/env bash
# Builds the libFuzzer targets in fuzz/ (clang, AddressSanitizer + UndefinedBehaviorSanitizer) into
# build-sanitize/ (scripts/dev/sanitize_build.sh) and runs each one for a bounded time, starting from its committed
# seed corpus fuzz/corpus/<name>/ (new inputs go to build-sanitize/corpus/<name>/ and are reused next time).
# InputError is the expected answer to bad input; a crash, sanitizer report, other exception, broken invariant,
# slow input (-timeout) or huge allocation (-malloc_limit_mb) fails the script and saves the input under
# build-sanitize/artifacts/.
#   scripts/dev/fuzz.sh                       CI: 15 s per target (~1.75 min for the seven)
#   scripts/dev/fuzz.sh --minutes 30          local campaign: 30 minutes split over the targets
#   scripts/dev/fuzz.sh --seconds 120 config  chosen targets (config sweep results meta pieces tokens safetensors)
#   build-sanitize/fuzz/fuzz_config FILE      replay one saved input
set -euo pipefail
cd "$(dirname "$0")/../.."
# shellcheck source=scripts/lib/cli.sh
source scripts/lib/cli.sh
all=(config sweep results meta pieces tokens safetensors)
seconds=15
minutes=""
targets=()
while [ $# -gt 0 ]; do
  case "$1" in
    --seconds) need_value fuzz "$1" $#; need_count fuzz "$1" "$2" 1; seconds=$2; shift 2 ;;
    --minutes) need_value fuzz "$1" $#; need_count fuzz "$1" "$2" 1; minutes=$2; shift 2 ;;
    -h | --help) print_help scripts/dev/fuzz.sh; exit 0 ;;
    -*) usage_error fuzz "unknown option '$1'" ;;
    *) targets+=("$1"); shift ;;
  esac
done
[ ${#targets[@]} -gt 0 ] || targets=("${all[@]}")
for name in "${targets[@]}"; do  # checked before the sanitizer build
  [ -d "fuzz/corpus/$name" ] || usage_error fuzz "no target '$name' (have: ${all[*]})"
done
[ -z "$minutes" ] || seconds=$(( minutes * 60 / ${#targets[@]} ))

bash scripts/dev/sanitize_build.sh xsa_fuzz_all
build="build-sanitize"

export ASAN_OPTIONS="halt_on_error=1:abort_on_error=1:detect_leaks=1"
export UBSAN_OPTIONS="halt_on_error=1:print_stacktrace=1"
mkdir -p "$build/artifacts"
failed=()
for name in "${targets[@]}"; do
  mkdir -p "$build/corpus/$name"
  dict=()
  [ -f "fuzz/dict/$name.dict" ] && dict=(-dict="fuzz/dict/$name.dict")
  log="$build/fuzz_$name.log"
  rc=0
  # CI uses a fixed seed so the same commit explores the same inputs (a local campaign draws a new seed).
  seed=()
  [ "${CI:-}" = true ] && seed=(-seed=1)
  "$build/fuzz/fuzz_$name" "${seed[@]}" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -malloc_limit_mb=256 \
    -max_len=4096 -print_final_stats=1 -artifact_prefix="$build/artifacts/$name-" "${dict[@]}" \
    "$build/corpus/$name" "fuzz/corpus/$name" >"$log" 2>&1 || rc=$?
  execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
  corpus=$(find "$build/corpus/$name" -type f | wc -l)
  if [ $rc -eq 0 ]; then
    echo "fuzz: $name: ok, ${execs:-?} inputs in ${seconds} s, corpus $corpus"
  else
    echo "fuzz: $name: FAILED (exit $rc) after ${execs:-?} inputs; log $log:"
    grep -E "ERROR|invariant failed|terminate called|what\(\)|runtime error|Test unit written|SUMMARY" "$log" | head -20 || true
    failed+=("$name")
  fi
done
[ ${#failed[@]} -eq 0 ] || { echo "fuzz: failed: ${failed[*]}" >&2; exit 1; }
