#pragma once
// The XSA step as one fused autograd function (see docs/guide.md "Model and training").
//
//   z = y − λ (y·v̂) v̂,   v̂ = v / max(‖v‖, eps),   per head and token, along the head dimension D.
//
// Written out with tensor ops this was ~8 elementwise passes over (B, H, T, D) forward and ~15 in
// autograd's backward, plus their temporaries: 3–6% of a training step. The fused version makes one
// pass over y and v forward (per row: ‖v‖, y·v̂, z) and one pass backward (the analytic gradient for
// y, v and λ below), keeping only two numbers per row for backward.
//
// Backward, per row, with g = ∂L/∂z, a = y·v̂, s = g·v̂, n = max(‖v‖, eps):
//   ∂L/∂y = g − λ s v̂
//   ∂L/∂v̂ = −λ (s y + a g)
//   ∂L/∂v = (∂L/∂v̂ − (∂L/∂v̂·v̂) v̂) / n = −λ (s y + a g − 2 a s v̂) / n   when ‖v‖ ≥ eps
//         = ∂L/∂v̂ / eps                                                    when ‖v‖ < eps (clamped)
//   ∂L/∂λ = −a s, summed over the dimensions λ is broadcast along.
#include <torch/types.h>

namespace xsa {

constexpr double kXsaEps = 1e-6;  // guards ‖v‖ = 0 in v̂ = v / max(‖v‖, eps)

// y, v: (B, H, T, D), float32/float64, or bfloat16 (computed in float32, see the .cpp). lambda
// broadcasts against (B, H, T, 1): a scalar tensor or (1, H, 1, 1) for per-head λ. Returns
// z = y − λ (y·v̂) v̂ (float32 for bfloat16 inputs, else y's dtype). Gradients flow to y, v and λ.
torch::Tensor exclusive_projection(const torch::Tensor& y, const torch::Tensor& v,
                                   const torch::Tensor& lambda);
// Fixed λ (no gradient for λ).
torch::Tensor exclusive_projection(const torch::Tensor& y, const torch::Tensor& v, double lambda);
// Both dispatch on the device: the fused function reads raw CPU memory, so tensors on any other device take
// composite_exclusive_projection (docs/ARCHITECTURE.md "Devices").

// The same z from LibTorch operations alone (autograd's own backward), which run on any device: the seam for
// a GPU run. Equal to the fused function on CPU within 1e-5, values and gradients
// (tests/unit/torch/test_composite_paths.cpp).
torch::Tensor composite_exclusive_projection(const torch::Tensor& y, const torch::Tensor& v,
                                             const torch::Tensor& lambda);

}  // namespace xsa
