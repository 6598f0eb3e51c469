// The fused chunked output layer + cross-entropy against autograd through linear + cross_entropy.
#include <ATen/CPUGeneratorImpl.h>
#include <gtest/gtest.h>
#include <torch/nn/functional/loss.h>
#include <torch/utils.h>

#include "xsa/model/lm_head_loss.h"

namespace xsa {
namespace {

void expect_matches_autograd(int64_t rows, int64_t dim, int64_t vocab, double weight_scale) {
  auto gen = at::make_generator<at::CPUGeneratorImpl>(rows * 7 + vocab);
  auto x0 = torch::randn({rows, dim}, gen);
  auto w0 = torch::randn({vocab, dim}, gen) * weight_scale;
  auto targets = torch::randint(0, vocab, {rows}, gen, torch::kLong);

  auto x_ref = x0.clone().requires_grad_(true), w_ref = w0.clone().requires_grad_(true);
  auto loss_ref = torch::nn::functional::cross_entropy(torch::mm(x_ref, w_ref.t()), targets);
  loss_ref.backward();

  auto x = x0.clone().requires_grad_(true), w = w0.clone().requires_grad_(true);
  auto loss = lm_head_cross_entropy(x, w, targets);
  (loss * 3.0).backward();  // the upstream gradient is applied

  EXPECT_NEAR(loss.item<double>(), loss_ref.item<double>(), 1e-5 * std::max(1.0, loss_ref.item<double>()));
  EXPECT_TRUE(torch::allclose(x.grad(), 3.0 * x_ref.grad(), 1e-4, 1e-6)) << rows << "x" << vocab;
  EXPECT_TRUE(torch::allclose(w.grad(), 3.0 * w_ref.grad(), 1e-4, 1e-6)) << rows << "x" << vocab;

  auto per_token = lm_head_token_losses(x0, w0, targets);
  auto per_token_ref = torch::nn::functional::cross_entropy(
      torch::mm(x0, w0.t()), targets,
      torch::nn::functional::CrossEntropyFuncOptions().reduction(torch::kNone));
  EXPECT_TRUE(torch::allclose(per_token, per_token_ref, 1e-5, 1e-5));
}

TEST(LmHeadLoss, MatchesAutogradWithinOneChunk) {
  expect_matches_autograd(48, 16, 64, 1.0);
}

TEST(LmHeadLoss, MatchesAutogradAcrossChunksWithRemainder) {
  expect_matches_autograd(2 * kLmHeadChunkRows + 37, 32, 300, 0.5);
}

TEST(LmHeadLoss, StableForLargeLogits) {
  // Logits in the hundreds: a naive exp would overflow; the max-shift keeps it finite and exact.
  expect_matches_autograd(64, 8, 50, 40.0);
}

TEST(LmHeadLoss, NoGradModeGivesTheSameLoss) {
  auto gen = at::make_generator<at::CPUGeneratorImpl>(3);
  auto x = torch::randn({100, 8}, gen), w = torch::randn({20, 8}, gen);
  auto targets = torch::randint(0, 20, {100}, gen, torch::kLong);
  double with_grad = lm_head_cross_entropy(x.requires_grad_(true), w, targets).item<double>();
  torch::NoGradGuard no_grad;
  EXPECT_DOUBLE_EQ(lm_head_cross_entropy(x, w, targets).item<double>(), with_grad);
}

}  // namespace
}  // namespace xsa
