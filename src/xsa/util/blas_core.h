#pragma once
// OpenBLAS built with DYNAMIC_ARCH (Debian's) chooses its kernels from the CPU model when it loads. 0.3.21
// (Debian 12) does not know some newer CPUs and falls back to its generic Prescott (SSE3) kernels even when
// the CPU has AVX2 and FMA: measured on such a machine (docs/guide.md "Determinism, threads, concurrency"), a
// training step took twice as long as with OPENBLAS_CORETYPE=Haswell, and the fp32 numbers differ from a
// machine that ran the Haswell kernels (other rounding), while with the same kernels they agree bit for bit.
// Torch-free, so the sweep tools and tests can use it; the trainer passes openblas_get_config().
#include <string>

namespace xsa {

// The one-line advice when `blas_config` (openblas_get_config(), e.g. "OpenBLAS 0.3.21 NO_LAPACKE
// DYNAMIC_ARCH NO_AFFINITY Prescott MAX_THREADS=64") names a core type without AVX2 kernels while the first
// "flags" line of `cpuinfo` (/proc/cpuinfo's text) has avx2 and fma; "" otherwise (also for a BLAS that is
// not OpenBLAS).
std::string generic_blas_core_warning(const std::string& blas_config, const std::string& cpuinfo);

}  // namespace xsa
