#!/usr/bin/env bash
# Usage: check_linkage.sh --without LIBNAME EXE... [--without LIBNAME EXE...]
# Fails if any EXE loads (directly or transitively, per ldd) a library whose name contains LIBNAME.
set -u
forbidden=""; status=0; checked=0
for arg in "$@"; do
  if [ "$arg" = "--without" ]; then forbidden="next"; continue; fi
  if [ "$forbidden" = "next" ]; then forbidden="$arg"; continue; fi
  [ -x "$arg" ] || { echo "FAIL: $arg is not an executable"; status=1; continue; }
  hits=$(ldd "$arg" | awk '{print $1}' | grep -i "lib${forbidden}" || true)
  checked=$((checked + 1))
  if [ -n "$hits" ]; then
    echo "FAIL: $(basename "$arg") links $forbidden: $hits"; status=1
  else
    echo "ok: $(basename "$arg") does not link $forbidden"
  fi
done
[ "$checked" -gt 0 ] || { echo "FAIL: nothing checked"; exit 1; }
exit $status
