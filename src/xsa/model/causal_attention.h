#pragma once
// softmax(scale · q kᵀ + causal mask) v as one autograd function over the fused O(T)-memory kernel
// (flash_attention.h): the default `attention.impl: fused`. The explicit path (scores B·H·T·T, mask,
// softmax, matmul) stays in gpt.cpp as the reference and for the results committed before the kernel.
#include <torch/types.h>

#include <cstdint>
#include <utility>
#include <vector>

namespace xsa {

struct CausalAttentionOutput {
  torch::Tensor y;    // (B, H, T, D)
  torch::Tensor lse;  // (B, H, T): log Σ_{j ≤ i} exp(s_ij), no gradient; a_ii = exp(s_ii − lse_i)
};

// q, k, v: (B, H, T, D), float32/float64, or bfloat16 (computed in float32, like the XSA projection). y is
// float32 for bfloat16 inputs, else the inputs' dtype. Gradients flow to q, k and v. The (batch, head)
// slices run in parallel (at::parallel_for); each slice's result does not depend on the thread count.
//
// doc_start (data.doc_mask; undefined: plain causal attention): (B, T) int64, the index of the first token of
// token t's document in its window (DocumentLayout in gpt.h), so query i attends to keys doc_start_i ≤ j ≤ i
// only (block-diagonal causal). The kernel then runs once per document, on its rows alone: each document's
// y, lse and gradients are exactly those of the document run by itself, and no score across a boundary is
// ever computed.
CausalAttentionOutput fused_causal_attention(const torch::Tensor& q, const torch::Tensor& k,
                                             const torch::Tensor& v, double scale,
                                             const torch::Tensor& doc_start = {});

// The same y and lse from LibTorch operations alone (the scores B·H·T·T written out, masked, softmax, matmul;
// autograd's own backward), which run on any device: fused_causal_attention takes this path for tensors not
// on the CPU (its kernel reads raw CPU memory; docs/ARCHITECTURE.md "Devices"). Equal to the fused kernel on
// CPU within 1e-5, values and gradients (tests/unit/torch/test_composite_paths.cpp).
CausalAttentionOutput composite_causal_attention(const torch::Tensor& q, const torch::Tensor& k,
                                                 const torch::Tensor& v, double scale,
                                                 const torch::Tensor& doc_start = {});

// The keys query i may not see, true where masked: j > i, and with doc_start also j < doc_start_i.
// (T, T) without doc_start; (B, 1, T, T) with it (broadcast over heads). Built on `device`.
torch::Tensor attention_mask(int64_t T, const torch::Tensor& doc_start = {},
                             const torch::Device& device = torch::kCPU);

// The documents of one window row, as (first token, length) runs, from its doc_start row (T values). Throws
// std::invalid_argument unless doc_start[0] = 0 and each doc_start[t] is t (a document starts) or
// doc_start[t-1] (it goes on).
std::vector<std::pair<int64_t, int64_t>> document_runs(const int64_t* doc_start, int64_t T);

// a_ii = exp(scale · q_i·k_i − lse_i): the attention's diagonal (B, H, T) from the kernel's lse, no grad.
torch::Tensor attention_diagonal(const torch::Tensor& q, const torch::Tensor& k, const torch::Tensor& lse,
                                 double scale);

}  // namespace xsa
