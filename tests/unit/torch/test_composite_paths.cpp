// The device seam (docs/ARCHITECTURE.md "Devices"): the attention and the XSA projection built from LibTorch
// operations alone, which run on any device, against the fused CPU kernels they stand in for: values and
// gradients within 1e-5 on CPU, in float32 and float64, with a row whose v is zero (the clamped norm).
#include <ATen/CPUGeneratorImpl.h>
#include <gtest/gtest.h>
#include <torch/torch.h>

#include "torch_testing.h"
#include "xsa/model/causal_attention.h"
#include "xsa/model/exclusive_projection.h"

namespace xsa {
namespace {

using xsa::testing::max_abs_diff;

struct Inputs {
  torch::Tensor q, k, v, upstream;
};

Inputs random_inputs(torch::ScalarType dtype, int64_t T) {
  auto gen = at::make_generator<at::CPUGeneratorImpl>(21);
  const auto opts = torch::TensorOptions().dtype(dtype);
  Inputs in;
  in.q = torch::randn({2, 3, T, 8}, gen, opts).requires_grad_();
  in.k = torch::randn({2, 3, T, 8}, gen, opts).requires_grad_();
  in.v = torch::randn({2, 3, T, 8}, gen, opts).requires_grad_();
  in.upstream = torch::randn({2, 3, T, 8}, gen, opts);
  return in;
}

class CompositePaths : public ::testing::TestWithParam<torch::ScalarType> {};

TEST_P(CompositePaths, AttentionEqualsTheFusedKernelWithItsGradients) {
  for (int64_t T : {1, 17, 70}) {
    Inputs in = random_inputs(GetParam(), T);
    const double scale = 1.0 / std::sqrt(8.0);
    auto fused = fused_causal_attention(in.q, in.k, in.v, scale);
    auto grads_fused = torch::autograd::grad({fused.y}, {in.q, in.k, in.v}, {in.upstream});
    auto composite = composite_causal_attention(in.q, in.k, in.v, scale);
    auto grads_composite = torch::autograd::grad({composite.y}, {in.q, in.k, in.v}, {in.upstream});
    EXPECT_LT(max_abs_diff(fused.y, composite.y), 1e-5) << "T=" << T;
    EXPECT_LT(max_abs_diff(fused.lse, composite.lse), 1e-5) << "T=" << T;
    for (int i = 0; i < 3; ++i) EXPECT_LT(max_abs_diff(grads_fused[i], grads_composite[i]), 1e-5) << i;
    EXPECT_EQ(composite.y.scalar_type(), GetParam());
  }
}

TEST_P(CompositePaths, XsaProjectionEqualsTheFusedFunctionWithItsGradients) {
  Inputs in = random_inputs(GetParam(), 33);
  torch::Tensor v = in.v.detach().clone();
  v.index_put_({0, 1, 5}, 0.0);  // a zero value: v̂ = v / eps, the clamped branch of the backward
  v.requires_grad_();
  auto lambda = torch::tensor({0.0, 0.5, 1.0}, torch::TensorOptions().dtype(GetParam()))
                    .view({1, 3, 1, 1})
                    .requires_grad_();
  auto z_fused = exclusive_projection(in.q, v, lambda);
  auto g_fused = torch::autograd::grad({z_fused}, {in.q, v, lambda}, {in.upstream});
  auto z_composite = composite_exclusive_projection(in.q, v, lambda);
  auto g_composite = torch::autograd::grad({z_composite}, {in.q, v, lambda}, {in.upstream});
  EXPECT_LT(max_abs_diff(z_fused, z_composite), 1e-5);
  for (int i = 0; i < 3; ++i) EXPECT_LT(max_abs_diff(g_fused[i], g_composite[i]), 1e-5) << i;
  // The invariant itself: at λ = 1 (head 2) z ⟂ v.
  const auto head = z_composite.select(1, 2);  // (B, T, D)
  EXPECT_LT((head * v.select(1, 2)).sum(-1).abs().max().item<double>(), 1e-4);
}

INSTANTIATE_TEST_SUITE_P(Dtypes, CompositePaths, ::testing::Values(torch::kFloat, torch::kDouble),
                         [](const auto& info) {
                           return std::string(info.param == torch::kFloat ? "f32" : "f64");
                         });

}  // namespace
}  // namespace xsa
