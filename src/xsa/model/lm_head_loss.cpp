#include "xsa/model/lm_head_loss.h"

#include <ATen/ATen.h>
#include <torch/csrc/autograd/custom_function.h>
#include <torch/utils.h>

#include <algorithm>

#include "xsa/model/precision.h"
#include "xsa/model/torch_compat.h"

namespace xsa {

namespace {

// The dtype the output layer's matmuls run in: bf16 inside a bf16 PrecisionScope (autocast is on),
// else the input's. Read before entering the custom function: autocast does not reach inside it, so
// the casts below are explicit.
at::ScalarType matmul_dtype(const torch::Tensor& x) {
  return torch_compat::cpu_autocast_enabled() ? torch_compat::cpu_autocast_dtype() : x.scalar_type();
}

// One pass over the rows: per-token losses, and if wanted the gradients of their mean. The matmuls
// run in mm_dtype (x's dtype, or bf16 under mixed precision); the logits' softmax, the losses and the
// gradients' accumulation stay in x's dtype (float32).
void chunked_pass(const torch::Tensor& x, const torch::Tensor& weight, const torch::Tensor& targets,
                  at::ScalarType mm_dtype, torch::Tensor* token_losses, torch::Tensor* grad_x,
                  torch::Tensor* grad_weight) {
  PrecisionScope no_autocast(Precision::kFp32);  // every cast here is explicit
  const bool mixed = mm_dtype != x.scalar_type();
  const int64_t N = x.size(0);
  const double inv_n = 1.0 / static_cast<double>(N);
  auto x_mm = mixed ? x.to(mm_dtype) : x;                 // (N, C)
  auto weight_mm = mixed ? weight.to(mm_dtype) : weight;  // (V, C)
  auto weight_t = weight_mm.t();                          // (C, V)
  for (int64_t start = 0; start < N; start += kLmHeadChunkRows) {
    const int64_t rows = std::min(kLmHeadChunkRows, N - start);
    auto xc = x_mm.narrow(0, start, rows);                        // (r, C)
    auto yc = targets.narrow(0, start, rows).unsqueeze(1);        // (r, 1)
    auto logits = at::mm(xc, weight_t);                           // (r, V)
    if (mixed) logits = logits.to(x.scalar_type());               // softmax and loss in float32
    auto target_logit = logits.gather(1, yc);                     // (r, 1)
    auto row_max = std::get<0>(logits.max(1, /*keepdim=*/true));  // (r, 1)
    logits.sub_(row_max).exp_();                                  // e = exp(logit − max), in place
    auto sum_e = logits.sum(1, /*keepdim=*/true);                 // (r, 1)
    // loss = log Σ exp(logit) − logit_y = log(sum_e) + max − logit_y
    token_losses->narrow(0, start, rows).copy_((sum_e.log() + row_max - target_logit).squeeze(1));
    if (grad_x != nullptr) {
      auto& probs = logits.div_(sum_e);                                       // softmax, (r, V)
      probs.scatter_add_(1, yc, at::full({rows, 1}, -1.0, probs.options()));  // − one-hot
      probs.mul_(inv_n);                                                      // d(mean)/d(logits)
      auto gx = grad_x->narrow(0, start, rows);
      if (mixed) {
        auto probs_mm = probs.to(mm_dtype);
        gx.copy_(at::mm(probs_mm, weight_mm));        // (r, C)
        grad_weight->add_(at::mm(probs_mm.t(), xc));  // (V, C), accumulated in float32
      } else {
        at::mm_out(gx, probs, weight);       // (r, C)
        grad_weight->addmm_(probs.t(), xc);  // (V, C)
      }
    }
  }
}

struct LmHeadCrossEntropy : public torch::autograd::Function<LmHeadCrossEntropy> {
  static torch::Tensor forward(torch::autograd::AutogradContext* ctx, const torch::Tensor& x,
                               const torch::Tensor& weight, const torch::Tensor& targets, int64_t mm_dtype) {
    auto xc = x.contiguous();
    auto losses = at::empty({x.size(0)}, x.options());
    auto grad_x = at::empty_like(xc);
    auto grad_weight = at::zeros_like(weight);
    chunked_pass(xc, weight, targets, static_cast<at::ScalarType>(mm_dtype), &losses, &grad_x, &grad_weight);
    ctx->save_for_backward({grad_x, grad_weight});
    return losses.mean();
  }

  static torch::autograd::variable_list backward(torch::autograd::AutogradContext* ctx,
                                                 torch::autograd::variable_list grad_outputs) {
    auto saved = ctx->get_saved_variables();
    const auto& g = grad_outputs[0];  // scalar
    return {saved[0] * g, saved[1] * g, torch::Tensor(), torch::Tensor()};
  }
};

}  // namespace

torch::Tensor lm_head_cross_entropy(const torch::Tensor& x, const torch::Tensor& weight,
                                    const torch::Tensor& targets) {
  if (!torch::GradMode::is_enabled()) return lm_head_token_losses(x, weight, targets).mean();
  return LmHeadCrossEntropy::apply(x, weight, targets, static_cast<int64_t>(matmul_dtype(x)));
}

torch::Tensor lm_head_token_losses(const torch::Tensor& x, const torch::Tensor& weight,
                                   const torch::Tensor& targets) {
  torch::NoGradGuard no_grad;
  auto xc = x.contiguous();
  auto losses = at::empty({x.size(0)}, x.options());
  chunked_pass(xc, weight, targets, matmul_dtype(x), &losses, nullptr, nullptr);
  return losses;
}

}  // namespace xsa
