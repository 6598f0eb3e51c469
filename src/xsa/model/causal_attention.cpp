#include "xsa/model/causal_attention.h"

#include <ATen/ATen.h>
#include <ATen/Dispatch.h>
#include <ATen/Parallel.h>
#include <torch/csrc/autograd/custom_function.h>
#include <torch/utils.h>

#include <limits>

#include "xsa/model/flash_attention.h"

namespace xsa {

namespace {

at::ScalarType compute_dtype(const torch::Tensor& q, const torch::Tensor& k, const torch::Tensor& v) {
  for (const auto* t : {&q, &k, &v})
    if (t->scalar_type() == at::kDouble) return at::kDouble;
  return at::kFloat;
}

// Runs fn(slice) for every (batch, head) slice, one Workspace per task. A slice is the unit of work, so the
// split between threads never changes a result.
template <typename scalar_t, typename Fn>
void for_each_slice(int64_t slices, Fn fn) {
  at::parallel_for(0, slices, 1, [&](int64_t begin, int64_t end) {
    flash::Workspace<scalar_t> ws;
    for (int64_t s = begin; s < end; ++s) fn(s, ws);
  });
}

struct FusedCausalAttention : public torch::autograd::Function<FusedCausalAttention> {
  static torch::autograd::variable_list forward(torch::autograd::AutogradContext* ctx, const torch::Tensor& q,
                                                const torch::Tensor& k, const torch::Tensor& v,
                                                double scale) {
    TORCH_CHECK(q.dim() == 4 && q.sizes() == k.sizes() && q.sizes() == v.sizes(),
                "fused_causal_attention: q, k, v must be (B, H, T, D) alike, got ", q.sizes(), ", ",
                k.sizes(), ", ", v.sizes());
    const auto ct = compute_dtype(q, k, v);
    const auto B = q.size(0), H = q.size(1), T = q.size(2), D = q.size(3);
    auto qc = q.to(ct).contiguous(), kc = k.to(ct).contiguous(), vc = v.to(ct).contiguous();  // (B, H, T, D)
    auto y = at::empty_like(qc);                                                              // (B, H, T, D)
    auto lse = at::empty({B, H, T}, qc.options());                                            // (B, H, T)
    AT_DISPATCH_FLOATING_TYPES(ct, "fused_causal_attention_forward", [&] {
      const auto step = T * D;
      const scalar_t* qp = qc.data_ptr<scalar_t>();
      const scalar_t* kp = kc.data_ptr<scalar_t>();
      const scalar_t* vp = vc.data_ptr<scalar_t>();
      scalar_t* yp = y.data_ptr<scalar_t>();
      scalar_t* lp = lse.data_ptr<scalar_t>();
      for_each_slice<scalar_t>(B * H, [&](int64_t s, flash::Workspace<scalar_t>& ws) {
        flash::forward<scalar_t>(qp + s * step, kp + s * step, vp + s * step, T, D,
                                 static_cast<scalar_t>(scale), yp + s * step, lp + s * T, ws);
      });
    });
    ctx->save_for_backward({qc, kc, vc, y, lse});
    ctx->saved_data["scale"] = scale;
    ctx->saved_data["q_dtype"] = static_cast<int64_t>(q.scalar_type());
    ctx->saved_data["k_dtype"] = static_cast<int64_t>(k.scalar_type());
    ctx->saved_data["v_dtype"] = static_cast<int64_t>(v.scalar_type());
    ctx->mark_non_differentiable({lse});
    return {y, lse};
  }

  static torch::autograd::variable_list backward(torch::autograd::AutogradContext* ctx,
                                                 torch::autograd::variable_list grad_outputs) {
    auto saved = ctx->get_saved_variables();
    const auto &qc = saved[0], &kc = saved[1], &vc = saved[2], &y = saved[3], &lse = saved[4];
    const auto T = qc.size(2), D = qc.size(3), slices = qc.size(0) * qc.size(1);
    const double scale = ctx->saved_data["scale"].toDouble();
    auto dy =
        grad_outputs[0].defined() ? grad_outputs[0].to(qc.scalar_type()).contiguous() : at::zeros_like(y);
    auto dq = at::empty_like(qc), dk = at::empty_like(kc), dv = at::empty_like(vc);
    AT_DISPATCH_FLOATING_TYPES(qc.scalar_type(), "fused_causal_attention_backward", [&] {
      const auto step = T * D;
      const scalar_t *qp = qc.data_ptr<scalar_t>(), *kp = kc.data_ptr<scalar_t>(),
                     *vp = vc.data_ptr<scalar_t>();
      const scalar_t *yp = y.data_ptr<scalar_t>(), *lp = lse.data_ptr<scalar_t>(),
                     *gp = dy.data_ptr<scalar_t>();
      scalar_t *dqp = dq.data_ptr<scalar_t>(), *dkp = dk.data_ptr<scalar_t>(), *dvp = dv.data_ptr<scalar_t>();
      for_each_slice<scalar_t>(slices, [&](int64_t s, flash::Workspace<scalar_t>& ws) {
        flash::backward<scalar_t>(qp + s * step, kp + s * step, vp + s * step, yp + s * step, lp + s * T,
                                  gp + s * step, T, D, static_cast<scalar_t>(scale), dqp + s * step,
                                  dkp + s * step, dvp + s * step, ws);
      });
    });
    auto dtype = [&](const char* key) { return static_cast<at::ScalarType>(ctx->saved_data[key].toInt()); };
    return {dq.to(dtype("q_dtype")), dk.to(dtype("k_dtype")), dv.to(dtype("v_dtype")), torch::Tensor()};
  }
};

}  // namespace

CausalAttentionOutput composite_causal_attention(const torch::Tensor& q, const torch::Tensor& k,
                                                 const torch::Tensor& v, double scale) {
  const auto dtype = compute_dtype(q, k, v);  // bfloat16 is computed in float32, as the kernel does
  const auto qc = q.to(dtype), kc = k.to(dtype), vc = v.to(dtype);
  const int64_t T = q.size(2);
  const auto future = at::ones({T, T}, q.options().dtype(at::kBool)).triu(1);  // (T, T): j > i
  const auto scores = (at::matmul(qc, kc.transpose(-2, -1)) * scale)           // (B, H, T, T)
                          .masked_fill(future, -std::numeric_limits<double>::infinity());
  const auto lse = at::logsumexp(scores, -1).detach();  // (B, H, T), no gradient (as the kernel's)
  return {at::matmul(at::softmax(scores, -1), vc), lse};
}

CausalAttentionOutput fused_causal_attention(const torch::Tensor& q, const torch::Tensor& k,
                                             const torch::Tensor& v, double scale) {
  if (!q.device().is_cpu()) return composite_causal_attention(q, k, v, scale);
  auto out = FusedCausalAttention::apply(q, k, v, scale);
  return {out[0], out[1]};
}

torch::Tensor attention_diagonal(const torch::Tensor& q, const torch::Tensor& k, const torch::Tensor& lse,
                                 double scale) {
  torch::NoGradGuard no_grad;
  auto s_ii = (q.to(lse.scalar_type()) * k.to(lse.scalar_type())).sum(-1) * scale;  // (B, H, T)
  return (s_ii - lse).exp();
}

}  // namespace xsa
