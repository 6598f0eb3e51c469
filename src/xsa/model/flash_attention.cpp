#include "xsa/model/flash_attention.h"

#include <stdexcept>
#include <string>

#include "xsa/model/flash_kernel.h"

namespace xsa::flash {

namespace {

bool cpu_has_avx2() {
#if defined(XSA_FLASH_AVX2)
  return __builtin_cpu_supports("avx2");
#else
  return false;
#endif
}

const KernelSet& kernels_of(Isa isa) {
  if (!isa_available(isa))
    throw std::invalid_argument(std::string("fused attention: the ") + isa_name(isa) +
                                " kernel is not available on this build or CPU");
#if defined(XSA_FLASH_AVX2)
  if (isa == Isa::kAvx2) return avx2::kernels;
#endif
  return baseline::kernels;
}

// The kernel reads scratch through raw pointers (flash_kernel.h): size it here, outside the per-ISA code.
template <typename scalar_t>
Scratch<scalar_t> size_workspace(Workspace<scalar_t>& ws, int64_t T) {
  ws.scores.resize(kQueryBlock * kKeyBlock);
  ws.dp.resize(kQueryBlock * kKeyBlock);
  ws.row_max.resize(kQueryBlock);
  ws.row_sum.resize(kQueryBlock);
  ws.delta.resize(static_cast<size_t>(T));
  return {ws.scores.data(), ws.dp.data(), ws.row_max.data(), ws.row_sum.data(), ws.delta.data()};
}

template <typename scalar_t>
const KernelFunctions<scalar_t>& functions(const KernelSet& set);
template <>
const KernelFunctions<float>& functions<float>(const KernelSet& set) {
  return set.f32;
}
template <>
const KernelFunctions<double>& functions<double>(const KernelSet& set) {
  return set.f64;
}

template <typename scalar_t>
Isa isa_for() {
  return sizeof(scalar_t) == sizeof(float) ? float_isa() : Isa::kBaseline;
}

}  // namespace

const char* isa_name(Isa isa) {
  return isa == Isa::kAvx2 ? "avx2" : "baseline";
}

bool isa_available(Isa isa) {
  return isa == Isa::kBaseline || (isa == Isa::kAvx2 && cpu_has_avx2());
}

Isa float_isa() {
  static const Isa isa = isa_available(Isa::kAvx2) ? Isa::kAvx2 : Isa::kBaseline;
  return isa;
}

float score_exp(float x, Isa isa) {
  return kernels_of(isa).score_exp(x);
}

template <typename scalar_t>
void forward(const scalar_t* q, const scalar_t* k, const scalar_t* v, int64_t T, int64_t D, scalar_t scale,
             scalar_t* y, scalar_t* lse, Workspace<scalar_t>& ws) {
  functions<scalar_t>(kernels_of(isa_for<scalar_t>()))
      .forward(q, k, v, T, D, scale, y, lse, size_workspace(ws, T));
}

template <typename scalar_t>
void backward(const scalar_t* q, const scalar_t* k, const scalar_t* v, const scalar_t* y, const scalar_t* lse,
              const scalar_t* dy, int64_t T, int64_t D, scalar_t scale, scalar_t* dq, scalar_t* dk,
              scalar_t* dv, Workspace<scalar_t>& ws) {
  functions<scalar_t>(kernels_of(isa_for<scalar_t>()))
      .backward(q, k, v, y, lse, dy, T, D, scale, dq, dk, dv, size_workspace(ws, T));
}

void forward_with(Isa isa, const float* q, const float* k, const float* v, int64_t T, int64_t D, float scale,
                  float* y, float* lse, Workspace<float>& ws) {
  kernels_of(isa).f32.forward(q, k, v, T, D, scale, y, lse, size_workspace(ws, T));
}

void backward_with(Isa isa, const float* q, const float* k, const float* v, const float* y, const float* lse,
                   const float* dy, int64_t T, int64_t D, float scale, float* dq, float* dk, float* dv,
                   Workspace<float>& ws) {
  kernels_of(isa).f32.backward(q, k, v, y, lse, dy, T, D, scale, dq, dk, dv, size_workspace(ws, T));
}

template void forward<float>(const float*, const float*, const float*, int64_t, int64_t, float, float*,
                             float*, Workspace<float>&);
template void forward<double>(const double*, const double*, const double*, int64_t, int64_t, double, double*,
                              double*, Workspace<double>&);
template void backward<float>(const float*, const float*, const float*, const float*, const float*,
                              const float*, int64_t, int64_t, float, float*, float*, float*,
                              Workspace<float>&);
template void backward<double>(const double*, const double*, const double*, const double*, const double*,
                               const double*, int64_t, int64_t, double, double*, double*, double*,
                               Workspace<double>&);

}  // namespace xsa::flash
