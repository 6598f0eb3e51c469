// clang-format off
#include <torch/types.h>  // clip_grad.h uses torch::Tensor without including it: keep this first
// clang-format on
#include "xsa/train/step.h"

#include <torch/nn/utils/clip_grad.h>
#include <torch/optim/adamw.h>

#include <chrono>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>
#include <vector>

#include "xsa/util/error.h"

namespace xsa {

namespace {
constexpr std::size_t kLambdaGroup = 2;  // the λ/gate group, present only when lambda_lr_scale != 1
}

namespace {

std::unique_ptr<torch::optim::Optimizer> make_adamw(Gpt& model, const TrainConfig& train,
                                                    double lambda_lr_scale) {
  // decay on >= 2-D weights only (not norms, λ, gates); λ and gates in a group of their own when scaled
  std::vector<torch::Tensor> decay, no_decay, lambda_group;
  const bool separate = lambda_lr_scale != 1.0;
  for (auto& item : model->named_parameters(true)) {
    const torch::Tensor& p = item.value();
    if (separate && is_variant_parameter(item.key()))
      lambda_group.push_back(p);
    else
      (p.dim() >= 2 ? decay : no_decay).push_back(p);
  }
  auto options = [&](double lr, double wd) {
    auto o = std::make_unique<torch::optim::AdamWOptions>(lr);
    o->betas({train.beta1, train.beta2}).weight_decay(wd).eps(1e-8);
    return o;
  };
  std::vector<torch::optim::OptimizerParamGroup> groups;
  groups.emplace_back(decay, options(train.lr, train.weight_decay));
  groups.emplace_back(no_decay, options(train.lr, 0.0));
  if (separate) groups.emplace_back(lambda_group, options(train.lr * lambda_lr_scale, 0.0));
  return std::make_unique<torch::optim::AdamW>(groups, torch::optim::AdamWOptions(train.lr));
}

}  // namespace

std::unique_ptr<torch::optim::Optimizer> make_optimizer(Gpt& model, const TrainConfig& train,
                                                        double lambda_lr_scale) {
  switch (train.optimizer) {
    case OptimizerKind::kAdamW:
      return make_adamw(model, train, lambda_lr_scale);
  }
  throw std::logic_error("make_optimizer: train.optimizer has no case");  // not reached
}

void set_learning_rate(torch::optim::Optimizer& optimizer, double lr, double lambda_lr_scale) {
  auto& groups = optimizer.param_groups();
  // The scale is given twice (make_optimizer, every step): an optimizer built for another scale is a bug.
  if ((groups.size() > kLambdaGroup) != (lambda_lr_scale != 1.0))
    throw std::logic_error("set_learning_rate: lambda_lr_scale " + std::to_string(lambda_lr_scale) +
                           " but the optimizer has " + std::to_string(groups.size()) + " parameter groups");
  for (std::size_t i = 0; i < groups.size(); ++i)
    groups[i].options().set_lr(i == kLambdaGroup ? lr * lambda_lr_scale : lr);
}

StepOutcome train_step(Gpt& model, torch::optim::Optimizer& optimizer, const torch::Tensor& x,
                       const torch::Tensor& y, const StepSettings& settings) {
  const auto& [lr, lambda_lr_scale, grad_clip, run, step_number, precision, sync] = settings;
  using Clock = std::chrono::steady_clock;
  auto ms = [](Clock::time_point a, Clock::time_point b) {
    return std::chrono::duration<double, std::milli>(b - a).count();
  };
  set_learning_rate(optimizer, lr, lambda_lr_scale);

  StepOutcome out;
  auto t0 = Clock::now();
  // With ranks the sync clears the gradients: with buckets they are views, which zero_grad cannot detach.
  if (sync != nullptr)
    sync->begin_step(step_number);
  else
    optimizer.zero_grad();
  torch::Tensor loss;
  {
    PrecisionScope mixed(precision);   // bf16: matmuls in bf16 for the forward only
    loss = model->forward_loss(x, y);  // fused output layer + cross-entropy
  }
  out.loss = loss.item<double>();
  if (!std::isfinite(out.loss)) {
    throw RuntimeFailure("run '" + run + "': loss became " + std::to_string(out.loss) + " at step " +
                         std::to_string(step_number));
  }
  if (sync != nullptr) sync->after_forward(out.loss);
  auto t1 = Clock::now();
  loss.backward();
  if (sync != nullptr) out.loss = sync->after_backward();
  // An infinite max norm measures the norm and scales by 1 (clip_coef clamped to 1.0): gradients unchanged.
  const double max_norm = grad_clip > 0 ? grad_clip : std::numeric_limits<double>::infinity();
  out.grad_norm = torch::nn::utils::clip_grad_norm_(model->parameters(), max_norm);
  if (!std::isfinite(out.grad_norm)) {
    throw RuntimeFailure("run '" + run + "': gradient norm became " + std::to_string(out.grad_norm) +
                         " at step " + std::to_string(step_number));
  }
  auto t2 = Clock::now();
  optimizer.step();
  auto t3 = Clock::now();
  out.forward_ms = ms(t0, t1);
  out.backward_ms = ms(t1, t2);
  out.optimizer_ms = ms(t2, t3);
  return out;
}

}  // namespace xsa
