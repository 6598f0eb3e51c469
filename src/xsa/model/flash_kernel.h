#pragma once
// The fused attention kernel as compiled once per instruction set (flash_kernel.inl, included by
// flash_kernel_baseline.cpp and flash_kernel_avx2.cpp); flash_attention.cpp picks one at run time.
// Private to those files: everything else calls xsa/model/flash_attention.h.
//
// The .inl is compiled with -mavx2 in one of them, so it uses no inline function or template of a header
// (the C++ library's included): those have one copy per program, chosen by the linker from any object file,
// and an AVX2 copy would reach code that runs on CPUs without AVX2. Its helpers have internal linkage, its
// scratch comes in as raw pointers, its maths are compiler builtins and CBLAS.
#include <cstdint>

namespace xsa::flash {

// Scratch for one slice, sized by the caller (flash_attention.cpp size_workspace).
template <typename scalar_t>
struct Scratch {
  scalar_t* scores;   // (kQueryBlock, kKeyBlock): s, then p
  scalar_t* dp;       // (kQueryBlock, kKeyBlock): dp, then ds (backward)
  scalar_t* row_max;  // (kQueryBlock)
  scalar_t* row_sum;  // (kQueryBlock)
  scalar_t* delta;    // (T)
};

template <typename scalar_t>
struct KernelFunctions {
  void (*forward)(const scalar_t* q, const scalar_t* k, const scalar_t* v, int64_t T, int64_t D,
                  scalar_t scale, scalar_t* y, scalar_t* lse, const Scratch<scalar_t>& scratch);
  void (*backward)(const scalar_t* q, const scalar_t* k, const scalar_t* v, const scalar_t* y,
                   const scalar_t* lse, const scalar_t* dy, int64_t T, int64_t D, scalar_t scale,
                   scalar_t* dq, scalar_t* dk, scalar_t* dv, const Scratch<scalar_t>& scratch);
};

// One compilation of the kernel: float and float64, and the float exp it applies to score blocks.
struct KernelSet {
  KernelFunctions<float> f32;
  KernelFunctions<double> f64;
  float (*score_exp)(float);
};

namespace baseline {
extern const KernelSet kernels;  // the x86-64 baseline (SSE2), or whatever the target's default is
}
#if defined(XSA_FLASH_AVX2)
namespace avx2 {
extern const KernelSet kernels;  // -mavx2 (x86-64 only; see CMakeLists.txt)
}
#endif

}  // namespace xsa::flash
