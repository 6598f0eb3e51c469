// The fused XSA projection (custom autograd function) against two independent expectations: autograd
// through the plain tensor formula, and central finite differences, both in float64; plus float32,
// bf16 and thread-count behaviour.
#include <ATen/CPUGeneratorImpl.h>
#include <ATen/Parallel.h>
#include <gtest/gtest.h>
#include <torch/autograd.h>
#include <torch/utils.h>

#include <functional>

#include "torch_testing.h"
#include "xsa/model/exclusive_projection.h"

namespace xsa {
namespace {

using xsa::testing::max_abs_diff;
using xsa::testing::seeded_randn;

// The formula written out with tensor ops (what gpt.cpp used before the fused function); autograd
// differentiates it independently of the hand-written backward.
torch::Tensor composite(const torch::Tensor& y, const torch::Tensor& v, const torch::Tensor& lambda) {
  auto v_hat = v / v.norm(2, {-1}, /*keepdim=*/true).clamp_min(kXsaEps);
  auto along = (y * v_hat).sum(-1, /*keepdim=*/true);
  return y - (lambda * along) * v_hat;
}

struct ProjectionGrads {
  torch::Tensor z, y, v, lambda;
};

// z and ∂<w, z>/∂(y, v, λ) through `fn`.
ProjectionGrads grads_of(
    const std::function<torch::Tensor(const torch::Tensor&, const torch::Tensor&, const torch::Tensor&)>& fn,
    const torch::Tensor& y0, const torch::Tensor& v0, const torch::Tensor& lambda0, const torch::Tensor& w) {
  auto y = y0.detach().clone().requires_grad_(true);
  auto v = v0.detach().clone().requires_grad_(true);
  auto lambda = lambda0.detach().clone().requires_grad_(true);
  auto z = fn(y, v, lambda);
  (z * w).sum().backward();
  return {z.detach(), y.grad(), v.grad(), lambda.grad()};
}

const auto fused = [](const torch::Tensor& y, const torch::Tensor& v, const torch::Tensor& lambda) {
  return exclusive_projection(y, v, lambda);
};

TEST(FusedExclusiveProjection, MatchesAutogradOfTheFormulaForScalarAndPerHeadLambda) {
  const int64_t B = 3, H = 4, T = 9, D = 16;
  auto y = seeded_randn({B, H, T, D}, 1), v = seeded_randn({B, H, T, D}, 2),
       w = seeded_randn({B, H, T, D}, 3);
  // A scalar λ (fixed XSA / λ-XSA) and a per-head λ (the learned and gate variants: (1, H, 1, 1)).
  for (const auto& lambda : {torch::tensor(0.7, torch::kDouble), seeded_randn({1, H, 1, 1}, 4).sigmoid()}) {
    auto want = grads_of(composite, y, v, lambda, w);
    auto got = grads_of(fused, y, v, lambda, w);
    ASSERT_EQ(got.lambda.sizes(), lambda.sizes());
    EXPECT_LT(max_abs_diff(got.z, want.z), 1e-13);
    EXPECT_LT(max_abs_diff(got.y, want.y), 1e-13);
    EXPECT_LT(max_abs_diff(got.v, want.v), 1e-13);
    EXPECT_LT(max_abs_diff(got.lambda, want.lambda), 1e-12);
    // The check is not vacuous: every gradient is of order 1.
    EXPECT_GT(want.v.abs().max().item<double>(), 0.1);
    EXPECT_GT(want.lambda.abs().max().item<double>(), 0.1);
  }
}

TEST(FusedExclusiveProjection, GradientsMatchCentralFiniteDifferences) {
  const int64_t H = 2;
  auto y = seeded_randn({2, H, 3, 5}, 11), v = seeded_randn({2, H, 3, 5}, 12),
       w = seeded_randn({2, H, 3, 5}, 13);
  auto lambda = torch::tensor({0.3, 0.9}, torch::kDouble).view({1, H, 1, 1});
  auto got = grads_of(fused, y, v, lambda, w);
  auto objective = [&](const torch::Tensor& yy, const torch::Tensor& vv, const torch::Tensor& ll) {
    torch::NoGradGuard no_grad;
    return (exclusive_projection(yy, vv, ll) * w).sum().item<double>();
  };
  const double h = 1e-6;
  double worst = 0;
  for (int which = 0; which < 3; ++which) {
    const torch::Tensor& base = which == 0 ? y : which == 1 ? v : lambda;
    const torch::Tensor& grad = which == 0 ? got.y : which == 1 ? got.v : got.lambda;
    auto flat_grad = grad.reshape({-1});
    for (int64_t i = 0; i < base.numel(); ++i) {
      auto plus = base.clone(), minus = base.clone();
      plus.view({-1})[i] += h;
      minus.view({-1})[i] -= h;
      double fp = which == 0   ? objective(plus, v, lambda)
                  : which == 1 ? objective(y, plus, lambda)
                               : objective(y, v, plus);
      double fm = which == 0   ? objective(minus, v, lambda)
                  : which == 1 ? objective(y, minus, lambda)
                               : objective(y, v, minus);
      double numeric = (fp - fm) / (2 * h);
      double err = std::abs(flat_grad[i].item<double>() - numeric);
      worst = std::max(worst, err);
      EXPECT_LT(err, 1e-7) << "d/d" << (which == 0 ? "y" : which == 1 ? "v" : "lambda") << " at " << i;
    }
  }
  RecordProperty("max_abs_error_vs_finite_differences", std::to_string(worst));
}

TEST(FusedExclusiveProjection, ClampedZeroValueRowsMatchAutograd) {
  auto y = seeded_randn({1, 2, 4, 6}, 21), v = seeded_randn({1, 2, 4, 6}, 22),
       w = seeded_randn({1, 2, 4, 6}, 23);
  v.select(2, 1).zero_();     // ‖v‖ = 0: clamped, nothing removed
  v.select(2, 2).mul_(1e-8);  // tiny but non-zero: clamped as well
  auto lambda = torch::tensor(1.0, torch::kDouble);
  auto want = grads_of(composite, y, v, lambda, w);
  auto got = grads_of(fused, y, v, lambda, w);
  EXPECT_TRUE(torch::equal(got.z.select(2, 1), y.select(2, 1)));
  EXPECT_LT(max_abs_diff(got.z, want.z), 1e-13);
  EXPECT_LT(max_abs_diff(got.y, want.y), 1e-13);
  // The gradient in a clamped row is ∂L/∂v̂ / eps: large, so compare relatively.
  EXPECT_LT(max_abs_diff(got.v, want.v), 1e-13 * (1 + want.v.abs().max().item<double>()));
  EXPECT_TRUE(torch::isfinite(got.v).all().item<bool>());
  EXPECT_LT(max_abs_diff(got.lambda, want.lambda), 1e-12);
}

TEST(FusedExclusiveProjection, FixedLambdaOverloadHasNoLambdaGradientAndAgrees) {
  auto y = seeded_randn({2, 3, 5, 8}, 31).requires_grad_(true),
       v = seeded_randn({2, 3, 5, 8}, 32).requires_grad_(true);
  auto z = exclusive_projection(y, v, 0.25);
  EXPECT_LT(max_abs_diff(z, composite(y, v, torch::tensor(0.25, torch::kDouble))), 1e-13);
  z.sum().backward();
  EXPECT_TRUE(y.grad().defined());
  EXPECT_TRUE(v.grad().defined());
}

TEST(FusedExclusiveProjection, Float32AgreesWithFloat64ToRounding) {
  const int64_t B = 4, H = 4, T = 32, D = 32;  // the default model's head size
  auto y = seeded_randn({B, H, T, D}, 41), v = seeded_randn({B, H, T, D}, 42),
       w = seeded_randn({B, H, T, D}, 43);
  auto lambda = torch::tensor(1.0, torch::kDouble);
  auto ref = grads_of(fused, y, v, lambda, w);
  auto f32 = grads_of(fused, y.to(torch::kFloat), v.to(torch::kFloat), lambda.to(torch::kFloat),
                      w.to(torch::kFloat));
  EXPECT_EQ(f32.z.scalar_type(), torch::kFloat);
  EXPECT_LT(max_abs_diff(f32.z, ref.z), 1e-5);
  EXPECT_LT(max_abs_diff(f32.y, ref.y), 1e-5);
  EXPECT_LT(max_abs_diff(f32.v, ref.v), 1e-4);
  EXPECT_LT(max_abs_diff(f32.lambda, ref.lambda), 1e-3);  // a sum over 4·4·32 rows
}

TEST(FusedExclusiveProjection, Bf16InputsComputeInFloat32) {
  // Under bf16 mixed precision y and v arrive in bf16. The projection runs in float32 on exactly
  // those values, so z is float32 and orthogonal to v̂ to float32 precision (a bf16 computation
  // would leave ~1e-2 of y along v̂).
  auto y = seeded_randn({2, 2, 16, 32}, 51, torch::kFloat).to(torch::kBFloat16);
  auto v = (seeded_randn({2, 2, 16, 32}, 52, torch::kFloat) + 0.9 * y.to(torch::kFloat)).to(torch::kBFloat16);
  auto yg = y.clone().requires_grad_(true), vg = v.clone().requires_grad_(true);
  auto z = exclusive_projection(yg, vg, 1.0);
  EXPECT_EQ(z.scalar_type(), torch::kFloat);
  auto expected = composite(y.to(torch::kDouble), v.to(torch::kDouble), torch::tensor(1.0, torch::kDouble));
  EXPECT_LT(max_abs_diff(z, expected), 1e-5);
  auto v_hat = v.to(torch::kDouble) / v.to(torch::kDouble).norm(2, {-1}, true);
  EXPECT_LT((z.to(torch::kDouble) * v_hat).sum(-1).abs().max().item<double>(), 1e-5);
  z.sum().backward();
  EXPECT_EQ(yg.grad().scalar_type(), torch::kBFloat16);  // gradients come back in the inputs' dtype
  EXPECT_EQ(vg.grad().scalar_type(), torch::kBFloat16);
}

TEST(FusedExclusiveProjection, SameBitsAtOneAndTwoThreads) {
  auto y = seeded_randn({8, 4, 64, 32}, 61, torch::kFloat),
       v = seeded_randn({8, 4, 64, 32}, 62, torch::kFloat);
  auto w = seeded_randn({8, 4, 64, 32}, 63, torch::kFloat);
  auto lambda = seeded_randn({1, 4, 1, 1}, 64, torch::kFloat).sigmoid();
  const int before = at::get_num_threads();
  at::set_num_threads(1);
  auto one = grads_of(fused, y, v, lambda, w);
  at::set_num_threads(2);
  auto two = grads_of(fused, y, v, lambda, w);
  at::set_num_threads(before);
  EXPECT_TRUE(torch::equal(one.z, two.z));
  EXPECT_TRUE(torch::equal(one.y, two.y));
  EXPECT_TRUE(torch::equal(one.v, two.v));
}

}  // namespace
}  // namespace xsa
