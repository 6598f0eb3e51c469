#include "xsa/model/causal_attention.h"

#include <ATen/ATen.h>
#include <ATen/Dispatch.h>
#include <ATen/Parallel.h>
#include <torch/csrc/autograd/custom_function.h>
#include <torch/utils.h>

#include <limits>
#include <stdexcept>
#include <string>

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

// The documents of every window row (document_runs), or one run of T per row without doc_start.
std::vector<std::vector<std::pair<int64_t, int64_t>>> window_runs(const torch::Tensor& doc_start, int64_t B,
                                                                  int64_t T) {
  if (!doc_start.defined() || doc_start.numel() == 0)
    return std::vector<std::vector<std::pair<int64_t, int64_t>>>(B, {{0, T}});
  TORCH_CHECK(doc_start.dim() == 2 && doc_start.size(0) == B && doc_start.size(1) == T,
              "fused_causal_attention: doc_start must be (B, T) = (", B, ", ", T, "), got ",
              doc_start.sizes());
  const auto starts = doc_start.to(torch::kCPU, torch::kLong).contiguous();  // (B, T)
  std::vector<std::vector<std::pair<int64_t, int64_t>>> runs;
  for (int64_t b = 0; b < B; ++b) runs.push_back(document_runs(starts.data_ptr<int64_t>() + b * T, T));
  return runs;
}

struct FusedCausalAttention : public torch::autograd::Function<FusedCausalAttention> {
  // doc_start: (B, T) int64, or empty (one run per row: the whole window); never undefined, which autograd's
  // apply refuses as an input.
  static torch::autograd::variable_list forward(torch::autograd::AutogradContext* ctx, const torch::Tensor& q,
                                                const torch::Tensor& k, const torch::Tensor& v, double scale,
                                                const torch::Tensor& doc_start) {
    TORCH_CHECK(q.dim() == 4 && q.sizes() == k.sizes() && q.sizes() == v.sizes(),
                "fused_causal_attention: q, k, v must be (B, H, T, D) alike, got ", q.sizes(), ", ",
                k.sizes(), ", ", v.sizes());
    const auto ct = compute_dtype(q, k, v);
    const auto B = q.size(0), H = q.size(1), T = q.size(2), D = q.size(3);
    const auto runs = window_runs(doc_start, B, T);
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
        for (const auto& [first, n] : runs[s / H]) {  // rows first .. first+n-1 of slice s: one document
          const auto at = s * step + first * D;
          flash::forward<scalar_t>(qp + at, kp + at, vp + at, n, D, static_cast<scalar_t>(scale), yp + at,
                                   lp + s * T + first, ws);
        }
      });
    });
    ctx->save_for_backward({qc, kc, vc, y, lse});
    ctx->saved_data["scale"] = scale;
    ctx->saved_data["heads"] = H;
    if (doc_start.numel() > 0) ctx->saved_data["doc_start"] = doc_start;
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
    const auto H = ctx->saved_data["heads"].toInt();
    const auto found = ctx->saved_data.find("doc_start");
    const auto runs = window_runs(found != ctx->saved_data.end() ? found->second.toTensor() : torch::Tensor(),
                                  qc.size(0), T);
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
        for (const auto& [first, n] : runs[s / H]) {  // every row of the slice is in exactly one run
          const auto at = s * step + first * D;
          flash::backward<scalar_t>(qp + at, kp + at, vp + at, yp + at, lp + s * T + first, gp + at, n, D,
                                    static_cast<scalar_t>(scale), dqp + at, dkp + at, dvp + at, ws);
        }
      });
    });
    auto dtype = [&](const char* key) { return static_cast<at::ScalarType>(ctx->saved_data[key].toInt()); };
    return {dq.to(dtype("q_dtype")), dk.to(dtype("k_dtype")), dv.to(dtype("v_dtype")), torch::Tensor(),
            torch::Tensor()};
  }
};

}  // namespace

std::vector<std::pair<int64_t, int64_t>> document_runs(const int64_t* doc_start, int64_t T) {
  std::vector<std::pair<int64_t, int64_t>> runs;
  for (int64_t t = 0; t < T; ++t) {
    if (doc_start[t] == t) {
      runs.emplace_back(t, 1);  // a document starts here
    } else if (t > 0 && doc_start[t] == doc_start[t - 1]) {
      ++runs.back().second;
    } else {
      throw std::invalid_argument(
          "doc_start[" + std::to_string(t) + "] = " + std::to_string(doc_start[t]) + ": expected " +
          (t == 0 ? std::string("0 (the window's first token starts a document)")
                  : std::to_string(t) + " (a document starts) or doc_start[" + std::to_string(t - 1) +
                        "] = " + std::to_string(doc_start[t - 1]) + " (it goes on)"));
    }
  }
  return runs;
}

torch::Tensor attention_mask(int64_t T, const torch::Tensor& doc_start, const torch::Device& device) {
  const auto options = torch::TensorOptions().dtype(at::kLong).device(device);
  const auto col = at::arange(T, options).view({1, T});  // (1, T): key j
  const auto row = at::arange(T, options).view({T, 1});  // (T, 1): query i
  const auto future = col > row;                         // (T, T)
  if (!doc_start.defined()) return future;
  const auto before = col.unsqueeze(0) < doc_start.to(device).unsqueeze(-1);  // (B, T, T): j < doc_start_i
  return (future.unsqueeze(0) | before).unsqueeze(1);                         // (B, 1, T, T)
}

CausalAttentionOutput composite_causal_attention(const torch::Tensor& q, const torch::Tensor& k,
                                                 const torch::Tensor& v, double scale,
                                                 const torch::Tensor& doc_start) {
  const auto dtype = compute_dtype(q, k, v);  // bfloat16 is computed in float32, as the kernel does
  const auto qc = q.to(dtype), kc = k.to(dtype), vc = v.to(dtype);
  const int64_t T = q.size(2);
  if (doc_start.defined()) (void)window_runs(doc_start, q.size(0), T);  // the fused path's checks and errors
  const auto masked = attention_mask(T, doc_start, q.device());         // (T, T) or (B, 1, T, T)
  const auto scores = (at::matmul(qc, kc.transpose(-2, -1)) * scale)    // (B, H, T, T)
                          .masked_fill(masked, -std::numeric_limits<double>::infinity());
  const auto lse = at::logsumexp(scores, -1).detach();  // (B, H, T), no gradient (as the kernel's)
  return {at::matmul(at::softmax(scores, -1), vc), lse};
}

CausalAttentionOutput fused_causal_attention(const torch::Tensor& q, const torch::Tensor& k,
                                             const torch::Tensor& v, double scale,
                                             const torch::Tensor& doc_start) {
  if (!q.device().is_cpu()) return composite_causal_attention(q, k, v, scale, doc_start);
  auto out = FusedCausalAttention::apply(q, k, v, scale,
                                         doc_start.defined() ? doc_start : at::empty({0}, at::kLong));
  return {out[0], out[1]};
}

torch::Tensor attention_diagonal(const torch::Tensor& q, const torch::Tensor& k, const torch::Tensor& lse,
                                 double scale) {
  torch::NoGradGuard no_grad;
  auto s_ii = (q.to(lse.scalar_type()) * k.to(lse.scalar_type())).sum(-1) * scale;  // (B, H, T)
  return (s_ii - lse).exp();
}

}  // namespace xsa
