#pragma once
// One training step, the only one: xsa-train's step loop and xsa-bench's timings both call train_step,
// so what the benchmark measures is what training does (docs/ARCHITECTURE.md "Training").
#include <torch/optim/adamw.h>
#include <torch/types.h>

#include <memory>
#include <string>

#include "xsa/config/config.h"
#include "xsa/model/gpt.h"
#include "xsa/model/precision.h"

namespace xsa {

// AdamW as training uses it: decay on >= 2-D weights only, betas/eps/lr from the config.
std::unique_ptr<torch::optim::AdamW> make_adamw(Gpt& model, const TrainConfig& train);

struct StepOutcome {
  double loss = 0;       // training loss of the batch, before the update
  double grad_norm = 0;  // total gradient norm before clipping
  // Wall time of the phases, for the benchmark: zero_grad + forward + loss, backward + clipping, update.
  double forward_ms = 0, backward_ms = 0, optimizer_ms = 0;
};

// Sets the learning rate, then forward + fused loss on x (B, T) against y (B, T) (under bf16 autocast when
// `precision` is bf16: the forward only; backward follows the dtypes autograd recorded), backward, gradient
// clipping to `grad_clip` (0 = no clipping: gradients stay as backward left them; the norm is still
// measured) and one AdamW update. Throws RuntimeFailure naming `run` and the 1-based `step_number` when the
// loss or the gradient norm is not finite (before the weights change).
StepOutcome train_step(Gpt& model, torch::optim::AdamW& optimizer, const torch::Tensor& x,
                       const torch::Tensor& y, double lr, double grad_clip, const std::string& run,
                       int step_number, Precision precision = Precision::kFp32);

}  // namespace xsa
