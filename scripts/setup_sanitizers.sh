#!/usr/bin/env bash
# Installs what the sanitizer and fuzz builds need on top of scripts/setup.sh: clang and its compiler-rt
# (AddressSanitizer, UndefinedBehaviorSanitizer and libFuzzer runtimes), from Debian. Idempotent.
set -euo pipefail
PACKAGES=(clang-14 libclang-rt-14-dev)
missing=()
for p in "${PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO="sudo"
if [ ${#missing[@]} -gt 0 ]; then
  echo "setup_sanitizers: installing ${missing[*]}"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
else
  echo "setup_sanitizers: ${PACKAGES[*]} already installed"
fi
