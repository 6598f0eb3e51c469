#pragma once
// Causal softmax attention for one (batch, head) slice, forward and backward, in O(T) memory
// (docs/ARCHITECTURE.md "Fused causal attention"). Torch-free: raw row-major arrays, BLAS for the
// block matmuls; the autograd wrapper (causal_attention.h) runs it over (batch, head) in parallel.
//
//   y_i = Σ_{j ≤ i} a_ij v_j,   a_ij = exp(s_ij − lse_i),   s_ij = scale · q_i·k_j,   lse_i = log Σ_{j ≤ i}
//   exp(s_ij)
//
// Forward: per block of kQueryBlock queries, scores only for the key blocks at or before the block's
// last query (the masked upper triangle beyond them is never computed), an online softmax over key
// blocks of kKeyBlock (running max m and sum l per row; the partial output is rescaled by exp(m_old − m_new)
// when the max grows), then y = acc / l and lse = m + log l. Only y and lse (T floats) are kept.
// Backward (flash-attention 2): δ_i = dy_i·y_i; per (query block, key block) the scores are recomputed,
// p = exp(s − lse), dv += pᵀ dy, dp = dy vᵀ, ds = p ∘ (dp − δ), dq += scale · ds k, dk += scale · dsᵀ q.
// Every sum runs in a fixed order, so results are bit-identical for the same inputs (whatever thread runs
// the slice); they differ from the explicit softmax(q kᵀ) v in the last bits (a different summation order).
#include <cstdint>
#include <vector>

namespace xsa::flash {

constexpr int64_t kQueryBlock = 64;  // rows of q per block: a 64 × 256 score block is 64 KB (fp32), in L2
constexpr int64_t kKeyBlock = 256;   // keys per block; a multiple of kQueryBlock (see the .cpp)

// Scratch for one slice at a time (one per thread); sized on first use and reused.
template <typename scalar_t>
struct Workspace {
  std::vector<scalar_t> scores;                   // (kQueryBlock, kKeyBlock): s, then p
  std::vector<scalar_t> dp;                       // (kQueryBlock, kKeyBlock): dp, then ds (backward)
  std::vector<scalar_t> row_max, row_sum, delta;  // (kQueryBlock) / (T)
};

// The exp the kernel applies to score blocks (float: a vectorisable polynomial, relative error ≤ 2e-7 on
// [-87.3, 88.7]; float64: std::exp). Exposed for its test.
float score_exp(float x);

// q, k, v, y: (T, D) row-major; lse: (T). float or double.
template <typename scalar_t>
void forward(const scalar_t* q, const scalar_t* k, const scalar_t* v, int64_t T, int64_t D, scalar_t scale,
             scalar_t* y, scalar_t* lse, Workspace<scalar_t>& ws);

// dy: (T, D), the gradient of y; writes dq, dk, dv (T, D), overwriting them.
template <typename scalar_t>
void backward(const scalar_t* q, const scalar_t* k, const scalar_t* v, const scalar_t* y, const scalar_t* lse,
              const scalar_t* dy, int64_t T, int64_t D, scalar_t scale, scalar_t* dq, scalar_t* dk,
              scalar_t* dv, Workspace<scalar_t>& ws);

}  // namespace xsa::flash
