// generic_blas_core_warning: OpenBLAS's fallback to pre-AVX2 kernels on a CPU that has AVX2 and FMA.
// The configs are openblas_get_config()'s strings as this project's results.json files recorded them.
#include <gtest/gtest.h>

#include "xsa/util/blas_core.h"

namespace xsa {
namespace {

const char* kPrescott = "OpenBLAS 0.3.21 NO_LAPACKE DYNAMIC_ARCH NO_AFFINITY Prescott MAX_THREADS=64";
const char* kHaswell = "OpenBLAS 0.3.21 NO_LAPACKE DYNAMIC_ARCH NO_AFFINITY Haswell MAX_THREADS=64";
const char* kAvx512Cpu =
    "processor\t: 0\nmodel name\t: Intel(R) Xeon(R) Processor\n"
    "flags\t\t: fpu sse sse2 ssse3 fma sse4_1 avx f16c avx2 avx512f avx512_bf16\n";
const char* kSse4Cpu = "processor\t: 0\nflags\t\t: fpu sse sse2 ssse3 sse4_1 sse4_2\n";

TEST(BlasCore, WarnsWhenAnAvx2CpuRunsTheGenericKernels) {
  const std::string w = generic_blas_core_warning(kPrescott, kAvx512Cpu);
  EXPECT_NE(w.find("generic Prescott kernels"), std::string::npos) << w;
  EXPECT_NE(w.find("OPENBLAS_CORETYPE=Haswell"), std::string::npos) << w;
  EXPECT_EQ(w.find('\n'), std::string::npos) << "one line";
}

TEST(BlasCore, SilentWhenTheKernelsFitTheCpu) {
  EXPECT_EQ(generic_blas_core_warning(kHaswell, kAvx512Cpu), "");
  EXPECT_EQ(
      generic_blas_core_warning(
          "OpenBLAS 0.3.29 NO_LAPACKE DYNAMIC_ARCH NO_AFFINITY SapphireRapids MAX_THREADS=64", kAvx512Cpu),
      "");
  // Prescott is the right choice on a CPU without AVX2 / FMA.
  EXPECT_EQ(generic_blas_core_warning(kPrescott, kSse4Cpu), "");
  EXPECT_EQ(generic_blas_core_warning(kPrescott, "flags\t\t: fpu avx2\n"), "") << "avx2 without fma";
}

TEST(BlasCore, SilentForOtherBlasesAndUnreadableCpuinfo) {
  EXPECT_EQ(generic_blas_core_warning("not OpenBLAS (reference or unknown BLAS)", kAvx512Cpu), "");
  EXPECT_EQ(generic_blas_core_warning(kPrescott, ""), "");
  // A name is matched as a word, not inside another one.
  EXPECT_EQ(generic_blas_core_warning("OpenBLAS 0.3.21 DYNAMIC_ARCH PrescottLike", kAvx512Cpu), "");
}

}  // namespace
}  // namespace xsa
