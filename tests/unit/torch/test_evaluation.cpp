// The final evaluation's loss by position (xsa/train/evaluation.h, results.json's final.loss_by_position):
// the per-position sums leave the per-window losses bit for bit as they were, each bucket equals the loss
// computed another way (full logits and cross_entropy, the model's unfused path, sliced by hand), and the
// token-weighted mean of the buckets is the val loss (1e-12 relative in float64; in float32 the per-window
// means are rounded to float32 before val_loss averages them, so there the bound is float32's).
#include <ATen/CPUGeneratorImpl.h>
#include <gtest/gtest.h>
#include <torch/nn/functional/loss.h>
#include <torch/utils.h>

#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "process.h"
#include "tiny_model.h"
#include "xsa/data/token_data.h"
#include "xsa/model/gpt.h"
#include "xsa/records/results.h"
#include "xsa/train/evaluation.h"

namespace xsa {
namespace {

constexpr int kVocab = 64, kSeqLen = 40, kWindows = 5;

// A token file of random ids: kWindows non-overlapping windows of kSeqLen + 1 tokens, and one token spare.
std::string write_tokens(const testing::TempDir& dir) {
  auto gen = at::make_generator<at::CPUGeneratorImpl>(7);
  const auto ids = torch::randint(0, kVocab, {kWindows * kSeqLen + 2}, gen, torch::kLong);
  testing::spit(dir / "val.bin",
                testing::token_file_bytes(std::vector<std::int64_t>(
                    ids.data_ptr<std::int64_t>(), ids.data_ptr<std::int64_t>() + ids.numel())));
  return dir / "val.bin";
}

struct Evaluated {
  std::vector<double> plain, with_positions, position_sums;
  std::vector<PositionLoss> buckets;
  std::vector<double> reference;  // each bucket's mean loss from full logits, in bucket order
};

Evaluated evaluate(torch::ScalarType dtype) {
  testing::TempDir dir;
  TokenFile file(write_tokens(dir), kWindows * kSeqLen + 2, kVocab);
  std::vector<std::uint64_t> starts;
  for (int w = 0; w < kWindows; ++w) starts.push_back(static_cast<std::uint64_t>(w) * kSeqLen);
  VariantSpec xsa;
  xsa.kind = VariantSpec::Kind::kFixed;
  xsa.lambda = 1.0;
  Gpt model(test_fixtures::tiny_model(), AttentionConfig{}, xsa, kVocab, kSeqLen);
  model->init_weights(at::make_generator<at::CPUGeneratorImpl>(3));
  model->to(dtype);

  Evaluated e;
  // Batches of 2: two full ones and a last one of 1, so the sums run over batches of unequal size.
  e.plain = window_losses(model, file, starts, kSeqLen, 2);
  e.with_positions = window_losses(model, file, starts, kSeqLen, 2, {}, &e.position_sums);
  e.buckets = loss_by_position(e.position_sums, kWindows);

  torch::NoGradGuard no_grad;
  auto batch = make_batch(file, starts.data(), kWindows, kSeqLen);  // (W, T+1)
  auto x = batch.narrow(1, 0, kSeqLen), y = batch.narrow(1, 1, kSeqLen);
  auto logits = model->forward(x);  // (W, T, V)
  namespace F = torch::nn::functional;
  auto per_token = F::cross_entropy(logits.reshape({-1, kVocab}), y.reshape({-1}),
                                    F::CrossEntropyFuncOptions().reduction(torch::kNone))
                       .view({kWindows, kSeqLen})  // (W, T)
                       .to(torch::kDouble);
  // Position t is column t − 1: the prediction of the window's token t from tokens 0..t−1.
  e.reference.push_back(per_token.narrow(1, 0, 16).mean().item<double>());        // positions 1–16
  e.reference.push_back(per_token.narrow(1, 16, 40 - 16).mean().item<double>());  // positions 17–40
  return e;
}

double mean_of(const std::vector<double>& xs) {
  double sum = 0;
  for (double x : xs) sum += x;
  return sum / static_cast<double>(xs.size());
}

double token_weighted_mean(const std::vector<PositionLoss>& buckets) {
  double sum = 0, tokens = 0;
  for (const auto& b : buckets) {
    sum += b.loss * static_cast<double>(b.tokens);
    tokens += static_cast<double>(b.tokens);
  }
  return sum / tokens;
}

void check_buckets(const Evaluated& e, double tolerance) {
  // T = 40: positions 1–16 and 17–40, each over the 5 windows.
  ASSERT_EQ(e.buckets.size(), 2u);
  EXPECT_EQ(e.buckets[0].positions, (PositionBucket{1, 16}));
  EXPECT_EQ(e.buckets[0].tokens, 5 * 16);
  EXPECT_EQ(e.buckets[1].positions, (PositionBucket{17, 40}));
  EXPECT_EQ(e.buckets[1].tokens, 5 * 24);
  for (std::size_t i = 0; i < 2; ++i)
    EXPECT_NEAR(e.buckets[i].loss, e.reference[i], tolerance * e.reference[i]) << "bucket " << i;
}

TEST(Evaluation, LossByPositionMatchesTheLogitsInFloat64) {
  const Evaluated e = evaluate(torch::kDouble);
  EXPECT_EQ(e.with_positions, e.plain);  // bit for bit: val_loss and its SE are what they were
  ASSERT_EQ(e.position_sums.size(), static_cast<std::size_t>(kSeqLen));
  check_buckets(e, 1e-12);
  const double val_loss = mean_of(e.plain);
  EXPECT_NEAR(token_weighted_mean(e.buckets), val_loss, 1e-12 * val_loss);
}

TEST(Evaluation, LossByPositionMatchesTheLogitsInFloat32) {
  const Evaluated e = evaluate(torch::kFloat);
  EXPECT_EQ(e.with_positions, e.plain);
  check_buckets(e, 1e-5);  // float32 logits and losses, two summation orders
  // val_loss averages the per-window means, each rounded to float32 (2^-24 ≈ 6e-8 relative).
  const double val_loss = mean_of(e.plain);
  EXPECT_NEAR(token_weighted_mean(e.buckets), val_loss, 1e-6 * val_loss);
  // The buckets differ: an untrained model's loss need not fall with position, but the two are not one value
  // copied (which a bucketing that ignored positions would give).
  EXPECT_NE(e.buckets[0].loss, e.buckets[1].loss);
}

}  // namespace
}  // namespace xsa
