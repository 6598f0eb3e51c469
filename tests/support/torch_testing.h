#pragma once
// Tensor helpers the LibTorch tests share: seeded random inputs and the distances they assert on.
#include <ATen/CPUGeneratorImpl.h>
#include <torch/types.h>

#include <cstdint>
#include <vector>

namespace xsa::testing {

// Standard-normal values from their own generator: the same seed gives the same tensor in every test and
// process. Drawn in `dtype` itself (a float draw is not a rounded double draw).
inline torch::Tensor seeded_randn(std::vector<int64_t> shape, uint64_t seed,
                                  torch::ScalarType dtype = torch::kDouble) {
  auto gen = at::make_generator<at::CPUGeneratorImpl>(seed);
  return torch::randn(shape, gen, torch::TensorOptions().dtype(dtype));
}

// Drawn in double, then rounded to `dtype`: inputs of every precision that are the same numbers up to
// rounding.
inline torch::Tensor seeded_randn_rounded(std::vector<int64_t> shape, uint64_t seed,
                                          torch::ScalarType dtype) {
  return seeded_randn(std::move(shape), seed).to(dtype);
}

inline double max_abs_diff(const torch::Tensor& a, const torch::Tensor& b) {
  return (a.to(torch::kDouble) - b.to(torch::kDouble)).abs().max().item<double>();
}

// max |a - b| relative to max |b| (1 when b is all zeros).
inline double relative_error(const torch::Tensor& a, const torch::Tensor& b) {
  auto bd = b.to(torch::kDouble);
  double scale = bd.abs().max().item<double>();
  return (a.to(torch::kDouble) - bd).abs().max().item<double>() / (scale > 0 ? scale : 1.0);
}

}  // namespace xsa::testing
