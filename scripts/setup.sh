#!/usr/bin/env bash
# Installs every Debian package xsa needs (idempotent, --no-install-recommends: libtorch's recommends
# pull in GTK/Qt) and checks that the BLAS alternative points to OpenBLAS (without it LibTorch falls
# back to the reference BLAS and training is 13-40x slower).
# `--slurm` also installs munge and Slurm (slurmctld, slurmd, client) for the scale-out test
# (tests/integration/slurm_test.sh); it is opt-in because on a machine with systemd the packages enable
# system daemons. CI passes it (.ci/run).
# `--sanitizers` also installs clang and its compiler-rt (AddressSanitizer, UndefinedBehaviorSanitizer and
# libFuzzer runtimes) for the sanitizer and fuzz builds (scripts/dev/sanitize_build.sh calls it).
# `--notebook` also installs Jupyter (the notebook server, nbconvert, the Python kernel) and Chromium, for
# notebooks/tour.ipynb and its headless check (scripts/notebook.sh; CI passes it).
set -euo pipefail
# shellcheck source=scripts/lib/cli.sh
source "$(dirname "$0")/lib/cli.sh"

WITH_SLURM=0
WITH_SANITIZERS=0
WITH_NOTEBOOK=0
for arg in "$@"; do
  case "$arg" in
    --slurm) WITH_SLURM=1 ;;
    --sanitizers) WITH_SANITIZERS=1 ;;
    --notebook) WITH_NOTEBOOK=1 ;;
    -h | --help) print_help "$0"; exit 0 ;;
    *) usage_error setup "unknown argument '$arg' (expected --slurm, --sanitizers or --notebook)" ;;
  esac
done

PACKAGES=(
  build-essential cmake ninja-build pkg-config git
  libtorch-dev libopenblas0-pthread
  libgloo-dev  # the gloo headers c10d's ProcessGroupGloo.hpp includes (data-parallel ranks)
  libcli11-dev libyaml-cpp-dev nlohmann-json3-dev
  libsentencepiece-dev sentencepiece
  googletest libgtest-dev
  python3 python3-torch python3-numpy python3-matplotlib
  protobuf-compiler python3-protobuf python3-crcmod  # the tests' independent TensorBoard decoder only
  iproute2  # ip netns and tc: ranks on a shaped network (scripts/perf/shaped_link.py; not in a minimal root)
)
# Hugging Face's safetensors library, packaged from Debian 13 on (Debian 12 has none): the export test reads
# xsa-export's model.safetensors with it there (tests/integration/export_test.py requires it on 13 and later).
debian_version=$(. /etc/os-release 2>/dev/null && echo "${VERSION_ID:-0}")
case "$debian_version" in ''|*[!0-9]*) debian_version=0 ;; esac
[ "$debian_version" -ge 13 ] && PACKAGES+=(python3-safetensors)
# Slurm 22.05 from Debian 12; the test starts its own private single-node cluster (no systemd).
[ "$WITH_SLURM" = 1 ] && PACKAGES+=(munge slurmctld slurmd slurm-client)
[ "$WITH_SANITIZERS" = 1 ] && PACKAGES+=(clang-14 libclang-rt-14-dev)
[ "$WITH_NOTEBOOK" = 1 ] && PACKAGES+=(jupyter-notebook jupyter-nbconvert python3-ipykernel chromium)

missing=()
for p in "${PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done

SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO="sudo"
if [ ${#missing[@]} -gt 0 ]; then
  echo "setup: installing ${missing[*]}"
  install_start=$(date +%s)
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
  echo "setup: installed ${#missing[@]} packages in $(( $(date +%s) - install_start )) s"
else
  echo "setup: all ${#PACKAGES[@]} packages already installed"
fi

blas=$(readlink -f /usr/lib/x86_64-linux-gnu/libblas.so.3 2>/dev/null || true)
case "$blas" in
  *openblas*) echo "setup: BLAS -> $blas" ;;
  *)
    echo "setup: BLAS points to '$blas', switching to OpenBLAS"
    $SUDO update-alternatives --set libblas.so.3-x86_64-linux-gnu \
      /usr/lib/x86_64-linux-gnu/openblas-pthread/libblas.so.3
    blas=$(readlink -f /usr/lib/x86_64-linux-gnu/libblas.so.3)
    case "$blas" in *openblas*) ;; *) echo "setup: error: BLAS is still '$blas', expected OpenBLAS" >&2; exit 1 ;; esac
    ;;
esac
