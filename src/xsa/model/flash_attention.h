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
//
// The float kernel is compiled twice, for the x86-64 baseline and for AVX2, and the widest one the CPU has
// runs (flash_kernel.h). Both do the same arithmetic in the same order (fixed lanes, no FMA contraction), so
// they give the same bits; AVX2 does 8 floats at a time where the baseline does 4.
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

// The instruction sets the kernel is compiled for.
enum class Isa { kBaseline, kAvx2 };
const char* isa_name(Isa isa);  // "baseline", "avx2"
bool isa_available(Isa isa);    // compiled in (x86-64 builds) and supported by this CPU
Isa float_isa();                // the one forward/backward<float> run: AVX2 where available

// The exp the kernel applies to score blocks (float: a vectorisable polynomial, relative error ≤ 2e-7 on
// [-87.3, 88.7]; float64: std::exp), in one instruction set's compilation. Exposed for its test.
float score_exp(float x, Isa isa = float_isa());

// q, k, v, y: (T, D) row-major; lse: (T). float or double.
template <typename scalar_t>
void forward(const scalar_t* q, const scalar_t* k, const scalar_t* v, int64_t T, int64_t D, scalar_t scale,
             scalar_t* y, scalar_t* lse, Workspace<scalar_t>& ws);

// dy: (T, D), the gradient of y; writes dq, dk, dv (T, D), overwriting them.
template <typename scalar_t>
void backward(const scalar_t* q, const scalar_t* k, const scalar_t* v, const scalar_t* y, const scalar_t* lse,
              const scalar_t* dy, int64_t T, int64_t D, scalar_t scale, scalar_t* dq, scalar_t* dk,
              scalar_t* dv, Workspace<scalar_t>& ws);

// The float kernel of one instruction set (which must be available), for the tests that compare them and
// for xsa-bench; forward/backward<float> are these at float_isa(). float64 always runs the baseline.
void forward_with(Isa isa, const float* q, const float* k, const float* v, int64_t T, int64_t D, float scale,
                  float* y, float* lse, Workspace<float>& ws);
void backward_with(Isa isa, const float* q, const float* k, const float* v, const float* y, const float* lse,
                   const float* dy, int64_t T, int64_t D, float scale, float* dq, float* dk, float* dv,
                   Workspace<float>& ws);

}  // namespace xsa::flash
