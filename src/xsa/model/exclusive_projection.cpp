#include "xsa/model/exclusive_projection.h"

#include <ATen/ATen.h>
#include <ATen/Dispatch.h>
#include <ATen/ExpandUtils.h>
#include <ATen/Parallel.h>
#include <torch/csrc/autograd/custom_function.h>

#include <cmath>

namespace xsa {

namespace {

// Rows of D elements per parallel task: a few thousand elements, so 2 threads split a layer's 16k rows.
constexpr int64_t kRowsPerTask = 1024;

// The compute dtype: float64 stays float64, everything else (float32, bfloat16 under autocast) runs
// in float32. Under bf16 mixed precision the norm and the dot product must not be bf16: z is the
// small difference y − (y·v̂)v̂ (|cos(y, v)| reaches 0.9 in trained XSA layers), and bf16's 8-bit
// mantissa would leave a component along v̂ of ~0.4% of |y| instead of removing it, so cos(z, v)
// would no longer be 0 and the gradient through v̂ would be mostly rounding noise.
at::ScalarType compute_dtype(const torch::Tensor& y, const torch::Tensor& v) {
  return y.scalar_type() == at::kDouble || v.scalar_type() == at::kDouble ? at::kDouble : at::kFloat;
}

// One pass over the rows: norm_raw[r] = ‖v_r‖, along[r] = y_r·v̂_r, z_r = y_r − (along·λ_r) v̂_r.
// Same operation order as the tensor formula it replaces (v̂ = v / n first, then the dot product,
// then y − (a·λ)·v̂); the row sums accumulate in double.
template <typename scalar_t>
void forward_rows(const scalar_t* y, const scalar_t* v, const scalar_t* lambda, scalar_t* z,
                  scalar_t* norm_raw, scalar_t* along, int64_t rows, int64_t D) {
  const scalar_t eps = static_cast<scalar_t>(kXsaEps);
  at::parallel_for(0, rows, kRowsPerTask, [&](int64_t begin, int64_t end) {
    for (int64_t r = begin; r < end; ++r) {
      const scalar_t* yr = y + r * D;
      const scalar_t* vr = v + r * D;
      scalar_t* zr = z + r * D;
      double ss = 0;
      for (int64_t d = 0; d < D; ++d) ss += static_cast<double>(vr[d]) * vr[d];
      const scalar_t n_raw = static_cast<scalar_t>(std::sqrt(ss));
      const scalar_t n = n_raw > eps ? n_raw : eps;
      double dot = 0;
      for (int64_t d = 0; d < D; ++d) dot += static_cast<double>(yr[d]) * (vr[d] / n);
      const scalar_t a = static_cast<scalar_t>(dot);
      const scalar_t coef = a * lambda[r];
      for (int64_t d = 0; d < D; ++d) zr[d] = yr[d] - coef * (vr[d] / n);
      norm_raw[r] = n_raw;
      along[r] = a;
    }
  });
}

// One pass over the rows: ∂L/∂y, ∂L/∂v and the per-row ∂L/∂λ (formulas in the header).
template <typename scalar_t>
void backward_rows(const scalar_t* g, const scalar_t* y, const scalar_t* v, const scalar_t* lambda,
                   const scalar_t* norm_raw, const scalar_t* along, scalar_t* gy, scalar_t* gv,
                   scalar_t* glambda, int64_t rows, int64_t D) {
  const scalar_t eps = static_cast<scalar_t>(kXsaEps);
  at::parallel_for(0, rows, kRowsPerTask, [&](int64_t begin, int64_t end) {
    for (int64_t r = begin; r < end; ++r) {
      const scalar_t* gr = g + r * D;
      const scalar_t* yr = y + r * D;
      const scalar_t* vr = v + r * D;
      scalar_t* gyr = gy + r * D;
      scalar_t* gvr = gv + r * D;
      const bool clamped = norm_raw[r] < eps;  // then n = eps is a constant: no gradient through ‖v‖
      const scalar_t n = clamped ? eps : norm_raw[r];
      const scalar_t lam = lambda[r], a = along[r];
      double s_acc = 0;
      for (int64_t d = 0; d < D; ++d) s_acc += static_cast<double>(gr[d]) * (vr[d] / n);
      const scalar_t s = static_cast<scalar_t>(s_acc);
      const scalar_t lam_s = lam * s;
      const scalar_t k = -lam / n;                                 // ∂L/∂v = k (s y + a g − 2 a s v̂)
      const scalar_t two_a_s = clamped ? scalar_t(0) : 2 * a * s;  // the radial part ‖v‖ removes
      for (int64_t d = 0; d < D; ++d) {
        const scalar_t v_hat = vr[d] / n;
        gyr[d] = gr[d] - lam_s * v_hat;
        gvr[d] = k * (s * yr[d] + a * gr[d] - two_a_s * v_hat);
      }
      glambda[r] = -a * s;
    }
  });
}

struct ExclusiveProjection : public torch::autograd::Function<ExclusiveProjection> {
  static torch::Tensor forward(torch::autograd::AutogradContext* ctx, const torch::Tensor& y,
                               const torch::Tensor& v, const torch::Tensor& lambda) {
    TORCH_CHECK(y.dim() == 4 && y.sizes() == v.sizes(),
                "exclusive_projection: y and v must be (B, H, T, D), got ", y.sizes(), " and ", v.sizes());
    const auto ct = compute_dtype(y, v);
    const auto B = y.size(0), H = y.size(1), T = y.size(2), D = y.size(3);
    auto yc = y.to(ct).contiguous();                                           // (B, H, T, D)
    auto vc = v.to(ct).contiguous();                                           // (B, H, T, D)
    auto lam_rows = lambda.detach().to(ct).expand({B, H, T, 1}).contiguous();  // (B, H, T, 1)
    auto z = at::empty_like(yc);
    auto norm_raw = at::empty({B, H, T, 1}, yc.options());
    auto along = at::empty({B, H, T, 1}, yc.options());
    AT_DISPATCH_FLOATING_TYPES(ct, "exclusive_projection_forward", [&] {
      forward_rows<scalar_t>(yc.data_ptr<scalar_t>(), vc.data_ptr<scalar_t>(), lam_rows.data_ptr<scalar_t>(),
                             z.data_ptr<scalar_t>(), norm_raw.data_ptr<scalar_t>(),
                             along.data_ptr<scalar_t>(), B * H * T, D);
    });
    ctx->save_for_backward({yc, vc, lam_rows, norm_raw, along});
    ctx->saved_data["y_dtype"] = static_cast<int64_t>(y.scalar_type());
    ctx->saved_data["v_dtype"] = static_cast<int64_t>(v.scalar_type());
    ctx->saved_data["lambda_dtype"] = static_cast<int64_t>(lambda.scalar_type());
    ctx->saved_data["lambda_sizes"] = lambda.sizes().vec();
    return z;
  }

  static torch::autograd::variable_list backward(torch::autograd::AutogradContext* ctx,
                                                 torch::autograd::variable_list grad_outputs) {
    auto saved = ctx->get_saved_variables();
    const auto &yc = saved[0], &vc = saved[1], &lam_rows = saved[2], &norm_raw = saved[3], &along = saved[4];
    auto g = grad_outputs[0].to(yc.scalar_type()).contiguous();  // (B, H, T, D)
    auto gy = at::empty_like(yc), gv = at::empty_like(vc);
    auto glambda_rows = at::empty_like(along);  // (B, H, T, 1)
    AT_DISPATCH_FLOATING_TYPES(yc.scalar_type(), "exclusive_projection_backward", [&] {
      backward_rows<scalar_t>(g.data_ptr<scalar_t>(), yc.data_ptr<scalar_t>(), vc.data_ptr<scalar_t>(),
                              lam_rows.data_ptr<scalar_t>(), norm_raw.data_ptr<scalar_t>(),
                              along.data_ptr<scalar_t>(), gy.data_ptr<scalar_t>(), gv.data_ptr<scalar_t>(),
                              glambda_rows.data_ptr<scalar_t>(), yc.numel() / yc.size(3), yc.size(3));
    });
    auto dtype = [&](const char* key) { return static_cast<at::ScalarType>(ctx->saved_data[key].toInt()); };
    torch::Tensor glambda;
    if (ctx->needs_input_grad(2)) {
      // Sum over the dimensions λ was broadcast along: a fixed reduction order at a fixed thread count.
      glambda =
          at::sum_to(glambda_rows, ctx->saved_data["lambda_sizes"].toIntVector()).to(dtype("lambda_dtype"));
    }
    return {gy.to(dtype("y_dtype")), gv.to(dtype("v_dtype")), glambda};
  }
};

}  // namespace

torch::Tensor composite_exclusive_projection(const torch::Tensor& y, const torch::Tensor& v,
                                             const torch::Tensor& lambda) {
  const auto dtype = compute_dtype(y, v);  // bfloat16 is computed in float32, as the fused function does
  const auto yc = y.to(dtype), vc = v.to(dtype);
  const auto v_hat = vc / vc.norm(2, -1, /*keepdim=*/true).clamp_min(kXsaEps);  // (B, H, T, D)
  const auto along = (yc * v_hat).sum(-1, /*keepdim=*/true);                    // (B, H, T, 1)
  return yc - (along * lambda.to(dtype)) * v_hat;
}

torch::Tensor exclusive_projection(const torch::Tensor& y, const torch::Tensor& v,
                                   const torch::Tensor& lambda) {
  if (!y.device().is_cpu()) return composite_exclusive_projection(y, v, lambda);
  return ExclusiveProjection::apply(y, v, lambda);
}

torch::Tensor exclusive_projection(const torch::Tensor& y, const torch::Tensor& v, double lambda) {
  return exclusive_projection(y, v, at::scalar_tensor(lambda, y.options().dtype(compute_dtype(y, v))));
}

}  // namespace xsa
