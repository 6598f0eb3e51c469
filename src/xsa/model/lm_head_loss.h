#pragma once
// Output layer + cross-entropy without materialising the (B·T, V) logits.
//
// At the default size (vocab 4096, d_model 128) the output layer is over half the model's FLOPs, and
// the full logits (64 MiB for 32×128 tokens) plus their softmax and gradient made it memory-bound:
// 478 ms of a 712 ms step. Processing rows in chunks keeps each chunk's logits in cache, and the
// gradient is formed in the same pass (softmax − one-hot), so backward is one scale per input.
#include <torch/types.h>

namespace xsa {

constexpr int64_t kLmHeadChunkRows = 512;  // measured best of 256/512/1024 at V = 4096

// Mean next-token cross-entropy of logits x·Wᵀ. x: (N, C), weight: (V, C), targets: (N) int64.
// Differentiable in x and weight (a custom autograd function; gradients match autograd through
// linear + cross_entropy to float rounding). Inside a bf16 PrecisionScope (precision.h) the two
// matmuls run in bf16; logits' softmax, losses and gradient accumulation stay float32.
torch::Tensor lm_head_cross_entropy(const torch::Tensor& x, const torch::Tensor& weight,
                                    const torch::Tensor& targets);

// Per-token losses (N), no gradient: for evaluation.
torch::Tensor lm_head_token_losses(const torch::Tensor& x, const torch::Tensor& weight,
                                   const torch::Tensor& targets);

}  // namespace xsa
