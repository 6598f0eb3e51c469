#pragma once
// softmax(scale · q kᵀ + causal mask) v as one autograd function over the fused O(T)-memory kernel
// (flash_attention.h): the default `attention.impl: fused`. The explicit path (scores B·H·T·T, mask,
// softmax, matmul) stays in gpt.cpp as the reference and for the results committed before the kernel.
#include <torch/types.h>

namespace xsa {

struct CausalAttentionOutput {
  torch::Tensor y;    // (B, H, T, D)
  torch::Tensor lse;  // (B, H, T): log Σ_{j ≤ i} exp(s_ij), no gradient; a_ii = exp(s_ii − lse_i)
};

// q, k, v: (B, H, T, D), float32/float64, or bfloat16 (computed in float32, like the XSA projection). y is
// float32 for bfloat16 inputs, else the inputs' dtype. Gradients flow to q, k and v. The (batch, head)
// slices run in parallel (at::parallel_for); each slice's result does not depend on the thread count.
CausalAttentionOutput fused_causal_attention(const torch::Tensor& q, const torch::Tensor& k,
                                             const torch::Tensor& v, double scale);

// The same y and lse from LibTorch operations alone (the scores B·H·T·T written out, masked, softmax, matmul;
// autograd's own backward), which run on any device: fused_causal_attention takes this path for tensors not
// on the CPU (its kernel reads raw CPU memory; docs/ARCHITECTURE.md "Devices"). Equal to the fused kernel on
// CPU within 1e-5, values and gradients (tests/unit/torch/test_composite_paths.cpp).
CausalAttentionOutput composite_causal_attention(const torch::Tensor& q, const torch::Tensor& k,
                                                 const torch::Tensor& v, double scale);

// a_ii = exp(scale · q_i·k_i − lse_i): the attention's diagonal (B, H, T) from the kernel's lse, no grad.
torch::Tensor attention_diagonal(const torch::Tensor& q, const torch::Tensor& k, const torch::Tensor& lse,
                                 double scale);

}  // namespace xsa
