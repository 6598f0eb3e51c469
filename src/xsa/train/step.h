#pragma once
// One training step, the only one: xsa-train's step loop and xsa-bench's timings both call train_step,
// so what the benchmark measures is what training does (docs/ARCHITECTURE.md "Training").
#include <torch/optim/optimizer.h>
#include <torch/types.h>

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "xsa/config/config.h"
#include "xsa/model/gpt.h"
#include "xsa/model/precision.h"

namespace xsa {

// The optimizer train.optimizer names, as training uses it (docs/extending.md "An optimizer"): one case per
// OptimizerKind. AdamW: decay on >= 2-D weights only, betas from the config, eps 1e-8. With lambda_lr_scale
// != 1 the variants' λ parameters (is_variant_parameter) get a third parameter group, whose learning rate
// set_learning_rate keeps at lr × lambda_lr_scale; with 1 there are two groups, as before the option existed
// (so earlier checkpoints still load).
std::unique_ptr<torch::optim::Optimizer> make_optimizer(Gpt& model, const TrainConfig& train,
                                                        double lambda_lr_scale = 1.0);

// This step's learning rate: `lr` for the weights, lr × lambda_lr_scale for the λ/gate group if there is one.
void set_learning_rate(torch::optim::Optimizer& optimizer, double lr, double lambda_lr_scale);

struct StepOutcome {
  double loss = 0;       // training loss of the batch, before the update
  double grad_norm = 0;  // total gradient norm before clipping
  // Wall time of the phases, for the benchmark: zero_grad + forward + loss, backward + clipping, update.
  double forward_ms = 0, backward_ms = 0, optimizer_ms = 0;
};

// Data-parallel ranks (train/rank_sync.h): what a step does to make its gradients the global batch's.
class GradientSync {
 public:
  virtual ~GradientSync() = default;
  // Before the forward pass of step `step_number` (1-based), instead of the optimizer's zero_grad: every
  // gradient zero or undefined when it returns.
  virtual void begin_step(int step_number) = 0;
  // This rank's loss, known after the forward pass, before backward.
  virtual void after_forward(double loss) = 0;
  // After backward, before clipping: returns once the gradients are the mean over the ranks; the global loss.
  virtual double after_backward() = 0;
};

// What one step takes besides the model, the optimizer and the batch.
struct StepSettings {
  double lr = 0;               // this step's learning rate (the schedule's)
  double lambda_lr_scale = 1;  // the λ/gate group's learning rate is lr × this (make_optimizer's scale)
  double grad_clip = 0;        // the global gradient norm's cap; 0 = no clipping
  std::string run;             // the variant's name, for the error message
  int step_number = 0;         // 1-based, for the error message
  Precision precision = Precision::kFp32;
  GradientSync* sync = nullptr;  // data-parallel ranks > 1: averages the gradients over them
};

// Sets the learning rate (set_learning_rate), then forward + fused loss on x (B, T) against y (B, T) (under
// bf16 autocast when `precision` is bf16: the forward only; backward follows the dtypes autograd recorded),
// backward, gradient clipping to `grad_clip` (0 = no clipping: gradients stay as backward left them; the norm
// is still measured) and one optimizer update. Throws RuntimeFailure naming `run` and `step_number` when the
// loss or the gradient norm is not finite (before the weights change). With `sync` (ranks > 1) the
// gradients are averaged over the ranks before clipping, so the norm and the update are the global batch's.
StepOutcome train_step(Gpt& model, torch::optim::Optimizer& optimizer, const torch::Tensor& x,
                       const torch::Tensor& y, const StepSettings& settings);

}  // namespace xsa
