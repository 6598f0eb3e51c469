#!/usr/bin/env bash
# The test command on Debian 13 (trixie: LibTorch 2.6, g++ 14, CLI11 2.4, yaml-cpp 0.8), run on any Debian
# machine as root: builds a minimal Debian 13 root with debootstrap (or reuses one this script built before),
# copies this work tree into it and runs scripts/test.sh there, so the project's own setup installs everything.
# The root has no ../shared beside the copy, so this is also a fresh-machine run.
#
# Usage: scripts/debian13.sh [--root DIR] [--fresh] [--with-data] [--run COMMAND]
#   --root DIR  where the Debian 13 root lives (default $XSA_DEBIAN13_ROOT or /var/tmp/xsa-debian13);
#               reused across runs once complete (it holds nothing of the project between runs)
#   --fresh     delete a root built before and bootstrap a new one
#   --with-data also copy data/tinystories (git-ignored, so not part of the work tree copied) for COMMAND
#   --run CMD   run CMD in the copy instead of the tests, after scripts/setup.sh and scripts/build.sh, e.g.
#               --with-data --run 'bash scripts/bench.sh --lengths-only' (the PyTorch reference then uses
#               LibTorch 2.6's scaled_dot_product_attention)
# The Debian mirror is the one this machine's apt sources name (XSA_DEBIAN_MIRROR overrides it). Everything
# mounted is unmounted on exit, also on failure or Ctrl-C. Prints how long each step took.
set -euo pipefail
cd "$(dirname "$0")/.."
# shellcheck source=scripts/lib/cli.sh
source scripts/lib/cli.sh
repo=$(pwd)

root="${XSA_DEBIAN13_ROOT:-/var/tmp/xsa-debian13}"
fresh=0
with_data=0
run_cmd="bash scripts/test.sh"
while [ $# -gt 0 ]; do
  case "$1" in
    -h | --help) print_help scripts/debian13.sh; exit 0 ;;
    --root) need_value debian13 "$1" $#; root="$2"; shift ;;
    --fresh) fresh=1 ;;
    --with-data) with_data=1 ;;
    --run) need_value debian13 "$1" $#
      run_cmd="bash scripts/setup.sh && bash scripts/build.sh && $2"; shift ;;
    *) usage_error debian13 "unknown argument '$1' (expected --root DIR, --fresh, --with-data or --run CMD)" ;;
  esac
  shift
done
[ "$(id -u)" -eq 0 ] || { echo "debian13: error: needs root (debootstrap, mount and chroot)" >&2; exit 2; }
case "$root" in /*) ;; *) root="$repo/$root" ;; esac
[ "$root" != "/" ] || { echo "debian13: error: --root must not be /" >&2; exit 2; }

# The mirror: the first non-security URI of the machine's Debian sources (deb822 or one-line format).
mirror="${XSA_DEBIAN_MIRROR:-}"
if [ -z "$mirror" ]; then
  mirror=$(cat /etc/apt/sources.list.d/*.sources 2>/dev/null | awk '/^URIs:/ && $2 !~ /security/ {print $2; exit}')
fi
if [ -z "$mirror" ]; then
  mirror=$(cat /etc/apt/sources.list /etc/apt/sources.list.d/*.list 2>/dev/null |
    awk '$1 == "deb" && $2 !~ /security/ {for (i = 2; i <= NF; i++) if ($i ~ /^[a-z]+:\/\//) {print $i; exit}}')
fi
[ -n "$mirror" ] || { echo "debian13: error: no Debian mirror in /etc/apt/sources* (set XSA_DEBIAN_MIRROR)" >&2; exit 2; }

step_start=0
step() { step_start=$(date +%s); echo "debian13: $*"; }
step_done() { echo "debian13: $1 took $(( $(date +%s) - step_start )) s"; }
total_start=$(date +%s)

mounted=()
cleanup() {
  local i
  for (( i=${#mounted[@]}-1; i>=0; i-- )); do
    umount -R "${mounted[$i]}" 2>/dev/null || umount -l "${mounted[$i]}" 2>/dev/null || true
  done
  mounted=()
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# Leftover mounts of an interrupted earlier run would make rm -rf reach the host's /dev: unmount them first.
for m in run dev sys proc; do
  if mountpoint -q "$root/$m" 2>/dev/null; then umount -R "$root/$m" 2>/dev/null || umount -l "$root/$m"; fi
done
if mountpoint -q "$root" 2>/dev/null; then umount -R "$root" 2>/dev/null || umount -l "$root"; fi

marker="$root/.xsa-debian13-complete"
if [ "$fresh" = 1 ] || [ ! -f "$marker" ]; then
  command -v debootstrap >/dev/null || {
    step "installing debootstrap"
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends debootstrap >/dev/null
    step_done "installing debootstrap"
  }
  rm -rf "$root"
  step "debootstrap --variant=minbase trixie $root from $mirror"
  debootstrap --variant=minbase trixie "$root" "$mirror" > "$root.debootstrap.log" 2>&1 || {
    echo "debian13: error: debootstrap failed (last lines of $root.debootstrap.log):" >&2
    tail -n 5 "$root.debootstrap.log" >&2
    exit 1
  }
  printf 'deb %s trixie main contrib\n' "$mirror" > "$root/etc/apt/sources.list"
  rm -f "$root"/etc/apt/sources.list.d/*.sources
  touch "$marker"
  step_done "debootstrap"
else
  echo "debian13: reusing the Debian 13 root at $root (built $(date -r "$marker" '+%F %T'); --fresh rebuilds it)"
fi

cp /etc/resolv.conf "$root/etc/resolv.conf"
# The host's names resolve inside the root as outside: the Slurm test's data-parallel ranks meet at the job's first
# node, named by its hostname (an unresolvable name left them waiting for the rendezvous until its deadline).
cp /etc/hosts "$root/etc/hosts"
# The root a mount point of its own, as / is on a booted system: `ip netns exec` and `ip -n` (the shaped-link
# test) run `mount --make-rslave /` in a private mount namespace, which fails on a / that is a plain folder.
mount --bind "$root" "$root"; mount --make-private "$root"; mounted+=("$root")
mount -t proc proc "$root/proc"; mounted+=("$root/proc")
mount --rbind /sys "$root/sys"; mount --make-rslave "$root/sys"; mounted+=("$root/sys")
mount --rbind /dev "$root/dev"; mount --make-rslave "$root/dev"; mounted+=("$root/dev")
# A fresh /run, as a booted system has: `ip netns add` (the shaped-link test) bind-mounts /run/netns, and
# unmounting this tmpfs (-R) takes that mount with it instead of leaving it in the host's table under $root.
mount -t tmpfs -o mode=0755 tmpfs "$root/run"; mounted+=("$root/run")

# The work tree as a clone would have it: tracked and untracked-but-not-ignored files, no build folder.
step "copying the work tree to $root/work/xsa"
rm -rf "$root/work/xsa"
mkdir -p "$root/work/xsa"
git ls-files -z --cached --others --exclude-standard |
  while IFS= read -r -d '' f; do [ -e "$f" ] && printf '%s\0' "$f"; done |
  tar --null -T - -cf - | tar -xf - -C "$root/work/xsa"
if [ "$with_data" = 1 ]; then
  [ -f data/tinystories/meta.json ] || { echo "debian13: error: --with-data: data/tinystories is not prepared" >&2; exit 2; }
  mkdir -p "$root/work/xsa/data" && cp -r data/tinystories "$root/work/xsa/data/"
fi
step_done "copying"

step "$run_cmd inside Debian 13"
set +e
chroot "$root" /usr/bin/env -i HOME=/root PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
  LANG=C.UTF-8 CI="${CI:-}" DEBIAN_FRONTEND=noninteractive \
  XSA_RUN="$run_cmd" bash -c 'cd /work/xsa && . /etc/os-release && echo "debian13: inside $PRETTY_NAME" && eval "$XSA_RUN"'
rc=$?
set -e
step_done "$run_cmd inside Debian 13"
echo "debian13: exit $rc, $(( $(date +%s) - total_start )) s in all"
exit $rc
