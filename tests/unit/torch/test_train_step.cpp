// The one training step (xsa-train and xsa-bench both call it): clipping semantics against a plain
// backward pass of an identical model, and failures before the weights change.
#include <ATen/CPUGeneratorImpl.h>
#include <gtest/gtest.h>
#include <torch/types.h>
#include <torch/utils.h>

#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>
#include <vector>

#include "xsa/model/gpt.h"
#include "xsa/train/step.h"
#include "xsa/util/error.h"

namespace xsa {
namespace {

StepSettings step_settings(double lr, double lambda_lr_scale, double grad_clip, const std::string& run,
                           int step) {
  StepSettings s;
  s.lr = lr;
  s.lambda_lr_scale = lambda_lr_scale;
  s.grad_clip = grad_clip;
  s.run = run;
  s.step_number = step;
  return s;
}

constexpr int kVocab = 64, kSeqLen = 8;

Config small_config() {
  Config cfg;
  cfg.model.n_layer = 2;
  cfg.model.d_model = 16;
  cfg.model.n_head = 2;
  cfg.model.d_head = 8;
  cfg.data.seq_len = kSeqLen;
  return cfg;
}

Gpt make_model(const Config& cfg) {
  Gpt model(cfg.model, cfg.attention, VariantSpec{VariantSpec::Kind::kFixed, 1.0, true, {}}, kVocab, kSeqLen);
  model->init_weights(at::make_generator<at::CPUGeneratorImpl>(5));
  return model;
}

struct Batch {
  torch::Tensor x, y;
};
Batch make_batch() {
  auto gen = at::make_generator<at::CPUGeneratorImpl>(9);
  auto ids = torch::randint(0, kVocab, {4, kSeqLen + 1}, gen, torch::kLong);
  return {ids.narrow(1, 0, kSeqLen), ids.narrow(1, 1, kSeqLen)};
}

// Gradients of a plain forward + backward on an identical model: what the step must leave when not clipping.
std::vector<torch::Tensor> reference_gradients(const Config& cfg, const Batch& b, double* norm) {
  Gpt ref = make_model(cfg);
  ref->forward_loss(b.x, b.y).backward();
  std::vector<torch::Tensor> grads;
  double sq = 0;
  for (auto& p : ref->parameters()) {
    grads.push_back(p.grad().clone());
    sq += p.grad().to(torch::kDouble).pow(2).sum().item<double>();
  }
  *norm = std::sqrt(sq);
  return grads;
}

TEST(TrainStep, GradClipZeroLeavesGradientsUntouched) {
  Config cfg = small_config();
  cfg.train.grad_clip = 0;
  Batch b = make_batch();
  double ref_norm = 0;
  auto ref = reference_gradients(cfg, b, &ref_norm);
  ASSERT_GT(ref_norm, 0.0);

  Gpt model = make_model(cfg);
  auto optimizer = make_optimizer(model, cfg.train);
  StepOutcome out =
      train_step(model, *optimizer, b.x, b.y, step_settings(1e-3, 1.0, cfg.train.grad_clip, "t", 1));
  auto params = model->parameters();
  ASSERT_EQ(params.size(), ref.size());
  for (size_t i = 0; i < params.size(); ++i) {
    // AdamW leaves .grad as backward (and clipping) left it: bit-identical to the plain pass.
    EXPECT_TRUE(torch::equal(params[i].grad(), ref[i])) << "parameter " << i;
  }
  EXPECT_NEAR(out.grad_norm, ref_norm, 1e-5 * ref_norm);  // the norm is still measured
  EXPECT_TRUE(std::isfinite(out.loss));
}

TEST(TrainStep, PositiveGradClipScalesGradientsToTheLimit) {
  Config cfg = small_config();
  Batch b = make_batch();
  double ref_norm = 0;
  auto ref = reference_gradients(cfg, b, &ref_norm);
  cfg.train.grad_clip = ref_norm / 4;  // binding: every gradient is scaled by ~1/4

  Gpt model = make_model(cfg);
  auto optimizer = make_optimizer(model, cfg.train);
  StepOutcome out =
      train_step(model, *optimizer, b.x, b.y, step_settings(1e-3, 1.0, cfg.train.grad_clip, "t", 1));
  EXPECT_NEAR(out.grad_norm, ref_norm, 1e-5 * ref_norm);  // reported before clipping
  double sq = 0;
  auto params = model->parameters();
  for (size_t i = 0; i < params.size(); ++i) {
    sq += params[i].grad().to(torch::kDouble).pow(2).sum().item<double>();
    EXPECT_TRUE(torch::allclose(params[i].grad(), ref[i] * (cfg.train.grad_clip / ref_norm), 1e-4, 1e-7));
  }
  EXPECT_NEAR(std::sqrt(sq), cfg.train.grad_clip, 1e-4 * cfg.train.grad_clip);
}

TEST(TrainStep, NonFiniteLossThrowsBeforeTheWeightsChange) {
  Config cfg = small_config();
  Batch b = make_batch();
  Gpt model = make_model(cfg);
  auto optimizer = make_optimizer(model, cfg.train);
  {
    torch::NoGradGuard no_grad;
    model->parameters()[0].fill_(std::numeric_limits<float>::quiet_NaN());
  }
  auto before = model->parameters()[1].clone();
  try {
    train_step(model, *optimizer, b.x, b.y, step_settings(1e-3, 1.0, 1.0, "xsa", 7));
    FAIL() << "expected RuntimeFailure";
  } catch (const RuntimeFailure& e) {
    EXPECT_NE(std::string(e.what()).find("run 'xsa': loss became"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("at step 7"), std::string::npos) << e.what();
  }
  EXPECT_TRUE(torch::equal(model->parameters()[1], before));
}

// Adam's first update of a parameter is lr · g/(|g| + eps) (eps = 1e-8): about ±lr wherever |g| ≫ eps,
// whatever the gradient's size. So the λ parameters must move by lr × lambda_lr_scale times that, and every
// other weight exactly as without the option.
class LambdaLrScale : public ::testing::TestWithParam<VariantSpec::Kind> {};

TEST_P(LambdaLrScale, ScalesOnlyTheLambdaParameters) {
  Config cfg = small_config();
  Batch b = make_batch();
  const VariantSpec variant{GetParam(), 0.0, true, {}};
  struct Moved {
    std::string name;
    torch::Tensor delta, grad;
  };
  auto step_once = [&](double scale) {
    Gpt model(cfg.model, cfg.attention, variant, kVocab, kSeqLen);
    model->init_weights(at::make_generator<at::CPUGeneratorImpl>(5));
    auto optimizer = make_optimizer(model, cfg.train, scale);
    EXPECT_EQ(optimizer->param_groups().size(), scale == 1.0 ? 2u : 3u);
    std::vector<Moved> moved;
    for (const auto& item : model->named_parameters(true))
      moved.push_back({item.key(), item.value().detach().clone(), {}});
    train_step(model, *optimizer, b.x, b.y,
               step_settings(1e-3, scale, cfg.train.grad_clip, variant.name(), 1));
    auto now = model->named_parameters(true);
    for (auto& m : moved) {
      m.delta = now[m.name].detach() - m.delta;
      m.grad = now[m.name].grad().clone();  // after clipping: what AdamW used
    }
    return moved;
  };
  const auto plain = step_once(1.0), scaled = step_once(10.0);
  ASSERT_EQ(plain.size(), scaled.size());
  int lambda_tensors = 0;
  for (size_t i = 0; i < plain.size(); ++i) {
    const Moved& a = plain[i];
    const Moved& b10 = scaled[i];
    ASSERT_EQ(a.name, b10.name);
    if (is_variant_parameter(a.name)) {
      ++lambda_tensors;
      const auto g = a.grad.to(torch::kDouble);
      const auto expected = -1e-3 * g / (g.abs() + 1e-8);  // Adam's first step at lr 1e-3, no decay on θ
      EXPECT_TRUE(torch::allclose(a.delta.to(torch::kDouble), expected, 1e-4, 1e-9)) << a.name << a.delta;
      EXPECT_TRUE(torch::allclose(b10.delta.to(torch::kDouble), 10 * expected, 1e-4, 1e-8))
          << a.name << b10.delta;
      EXPECT_GT(a.delta.abs().max().item<double>(), 5e-4);  // the check above is not vacuous
    } else {
      EXPECT_TRUE(torch::equal(a.delta, b10.delta)) << a.name;  // the weights' update ignores the option
    }
  }
  EXPECT_EQ(lambda_tensors, cfg.model.n_layer);
}

// Every kind with a trained λ (kVariantKinds' rows with a parameter), so a new kind is tested here too.
std::vector<VariantSpec::Kind> kinds_with_a_parameter() {
  std::vector<VariantSpec::Kind> out;
  for (const auto& row : kVariantKinds)
    if (*row.parameter != '\0') out.push_back(row.value);
  return out;
}

INSTANTIATE_TEST_SUITE_P(LearnedAndGate, LambdaLrScale, ::testing::ValuesIn(kinds_with_a_parameter()),
                         [](const auto& info) { return std::string(variant_kind_name(info.param)); });

TEST(TrainStep, AnOptimizerBuiltForAnotherLambdaLrScaleIsRefused) {
  Config cfg = small_config();
  Batch b = make_batch();
  Gpt model = make_model(cfg);
  auto optimizer = make_optimizer(model, cfg.train, 1.0);
  EXPECT_THROW(train_step(model, *optimizer, b.x, b.y, step_settings(1e-3, 30.0, 1.0, "xsa", 1)),
               std::logic_error);
}

}  // namespace
}  // namespace xsa
