#include "xsa/model/gpt.h"

#include <ATen/ATen.h>
#include <torch/nn/functional/activation.h>
#include <torch/nn/functional/linear.h>
#include <torch/nn/functional/loss.h>
#include <torch/utils.h>

#include <cmath>
#include <cstdio>
#include <limits>
#include <optional>
#include <tuple>

#include "xsa/model/causal_attention.h"
#include "xsa/model/lm_head_loss.h"
#include "xsa/model/precision.h"
#include "xsa/model/variant_lambda.h"

namespace xsa {

namespace F = torch::nn::functional;

// ---------------------------------------------------------------------------------------------
RopeTables make_rope_tables(int max_len, int d_head, double base) {
  // Built in float64 and rounded once, so the tables do not depend on float32 pow/cos accumulation.
  auto opts = torch::TensorOptions().dtype(torch::kFloat64);
  auto half = d_head / 2;
  auto inv_freq = torch::pow(base, -torch::arange(0, half, opts) * 2.0 / d_head);  // (D/2)
  auto pos = torch::arange(0, max_len, opts);                                      // (T)
  auto angles = torch::outer(pos, inv_freq);                                       // (T, D/2)
  return {angles.cos().to(torch::kFloat32), angles.sin().to(torch::kFloat32)};
}

torch::Tensor apply_rope(const torch::Tensor& x, const RopeTables& rope) {
  auto T = x.size(2);
  auto half = x.size(3) / 2;
  const bool per_token = rope.cos.dim() == 4;                  // rope_at's (B, 1, T, D/2)
  auto cos = per_token ? rope.cos : rope.cos.narrow(0, 0, T);  // (T, D/2), broadcasts over (B, H)
  auto sin = per_token ? rope.sin : rope.sin.narrow(0, 0, T);
  auto x1 = x.narrow(-1, 0, half);  // (B, H, T, D/2)
  auto x2 = x.narrow(-1, half, half);
  return torch::cat({x1 * cos - x2 * sin, x1 * sin + x2 * cos}, -1);  // (B, H, T, D)
}

RopeTables rope_at(const RopeTables& rope, const torch::Tensor& positions) {
  const auto B = positions.size(0), T = positions.size(1), half = rope.cos.size(1);
  auto rows = [&](const torch::Tensor& table) {
    return table.index_select(0, positions.reshape({-1})).view({B, 1, T, half});  // (B, 1, T, D/2)
  };
  return {rows(rope.cos), rows(rope.sin)};
}

DocumentLayout document_layout(const torch::Tensor& idx, int64_t boundary_token) {
  const auto T = idx.size(1);
  const auto t =
      torch::arange(T, idx.options().dtype(torch::kLong)).view({1, T}).expand(idx.sizes());  // (B, T)
  auto begins = idx.eq(boundary_token);                                                      // (B, T)
  begins.select(1, 0).fill_(true);  // the window's first token starts its (maybe earlier) document
  // The latest start at or before t: the running maximum of t where a document begins, else 0.
  auto start = std::get<0>(torch::where(begins, t, torch::zeros_like(t)).cummax(1));  // (B, T)
  return {start, t - start};
}

// ---------------------------------------------------------------------------------------------
namespace {

// RMSNorm over the last dim with a gain: x / sqrt(mean(x²) + ε) · g (ε 1e-6, as Qwen3). Under bf16 mixed
// precision the statistics are taken in float32 and the result returns to x's dtype.
torch::Tensor rms_norm(const torch::Tensor& x, const torch::Tensor& gain) {
  constexpr double kEps = 1e-6;
  const auto xf = x.scalar_type() == torch::kBFloat16 ? x.to(torch::kFloat) : x;
  auto normed = xf * torch::rsqrt(xf.pow(2).mean(-1, /*keepdim=*/true) + kEps) * gain;
  return normed.to(x.scalar_type());
}

torch::nn::Linear make_linear(int64_t in, int64_t out) {
  return torch::nn::Linear(torch::nn::LinearOptions(in, out).bias(false));
}

// cos(a, b) along the last dim, with the same ‖·‖ guard as v̂.
torch::Tensor cosine_last_dim(const torch::Tensor& a, const torch::Tensor& b) {
  auto na = a.norm(2, {-1}).clamp_min(kXsaEps);
  auto nb = b.norm(2, {-1}).clamp_min(kXsaEps);
  return (a * b).sum(-1) / (na * nb);
}

// (B, T) bool: the tokens the per-token bias metrics count under document masking, every one that is not its
// document's first (which attends only to itself, as position 0 does without documents).
torch::Tensor counted_tokens(const DocumentLayout& docs) {
  const auto T = docs.start.size(1);
  return docs.start < torch::arange(T, docs.start.options()).view({1, T});  // (B, T)
}

// diag: the attention's diagonal a_ii (B, H, T); y, z, v: (B, H, T, D). impl picks how value_cos is summed:
// explicit keeps the (B, H, T, T) Gram matrix it always had (bit-identical to the committed results), fused
// the O(T) identity Σ_{i≠j} v̂_i·v̂_j = ‖Σ_i v̂_i‖² − Σ_i ‖v̂_i‖² (at T = 8,192 the Gram matrix alone is 1 GB).
//
// With documents (data.doc_mask), the positions left out are every document's first token (each attends only
// to itself, as position 0 does without them); value_cos still takes every pair of the window.
void measure_bias(const torch::Tensor& diag, const torch::Tensor& y, const torch::Tensor& z,
                  const torch::Tensor& v, AttentionImpl impl, const DocumentLayout* docs, LayerBias* probe) {
  torch::NoGradGuard no_grad;
  if (y.scalar_type() == torch::kBFloat16 || v.scalar_type() == torch::kBFloat16) {  // bf16 mixed precision
    measure_bias(diag.to(torch::kFloat), y.to(torch::kFloat), z.to(torch::kFloat), v.to(torch::kFloat), impl,
                 docs, probe);
    return;
  }
  auto T = diag.size(-1);
  if (T < 2) {
    *probe = LayerBias{};
    return;
  }
  // Position 0 is excluded everywhere: it can only attend to itself, so y_0 = v_0 and a_00 = 1
  // trivially, and under XSA z_0 is rounding noise whose cosine with v_0 means nothing.
  if (docs == nullptr) {
    auto later = [&](const torch::Tensor& t) { return t.narrow(2, 1, T - 1); };  // (B, H, T-1, ...)
    probe->cos_y_v = cosine_last_dim(later(y), later(v)).mean().item<double>();
    probe->cos_z_v = cosine_last_dim(later(z), later(v)).mean().item<double>();
    probe->attn_diag = diag.narrow(-1, 1, T - 1).mean().item<double>();
  } else {
    const auto counted =
        counted_tokens(*docs).unsqueeze(1).expand(diag.sizes()).to(torch::kDouble);  // (B, H, T)
    const double n = counted.sum().item<double>();
    auto mean = [&](const torch::Tensor& x) {
      return n > 0 ? (x.to(torch::kDouble) * counted).sum().item<double>() / n : 0.0;
    };
    probe->cos_y_v = mean(cosine_last_dim(y, v));
    probe->cos_z_v = mean(cosine_last_dim(z, v));
    probe->attn_diag = mean(diag);
  }
  {
    auto v_hat = v / v.norm(2, {-1}, true).clamp_min(kXsaEps);  // (B, H, T, D)
    torch::Tensor off_diag;                                     // (B, H)
    if (impl == AttentionImpl::kFused) {
      off_diag = v_hat.sum(2).pow(2).sum(-1) - v_hat.pow(2).sum({-2, -1});
    } else {
      auto gram = torch::matmul(v_hat, v_hat.transpose(-2, -1));  // (B, H, T, T)
      off_diag = gram.sum({-2, -1}) - gram.diagonal(0, -2, -1).sum(-1);
    }
    probe->value_cos = (off_diag / static_cast<double>(T * (T - 1))).mean().item<double>();
  }
}

// The attention's dynamics from q and k (B, H, T, D) after RoPE, recomputed without gradient in blocks of
// query rows, so the memory is O(B · H · 256 · T) whichever implementation ran (the full scores at T = 8,192
// are 1 GB) and both implementations report the same quantity. Rows i >= 1 only for the entropy and a_i0 (row
// 0 attends to itself alone); the max logit over every allowed pair j <= i.
//
// With documents (data.doc_mask), the allowed pairs are doc_start_i <= j <= i, the rows left out every
// document's first token, and the sink is the mass on the first token of the row's document.
AttentionDynamics measure_document_dynamics(const torch::Tensor& q, const torch::Tensor& kt, double scale,
                                            const DocumentLayout& docs);

AttentionDynamics measure_dynamics(const torch::Tensor& q_in, const torch::Tensor& k_in, double scale,
                                   const DocumentLayout* docs) {
  torch::NoGradGuard no_grad;
  PrecisionScope fp32(Precision::kFp32);  // autocast off: under bf16 the scores and sums stay float32
  const auto q = q_in.to(torch::kFloat), kt = k_in.to(torch::kFloat).transpose(-2, -1);  // kt: (B, H, D, T)
  if (docs != nullptr) return measure_document_dynamics(q, kt, scale, *docs);
  const int64_t B = q.size(0), H = q.size(1), T = q.size(2);
  AttentionDynamics d;
  if (T < 2) return d;
  constexpr int64_t kRows = 256;
  const auto index = q.options().dtype(torch::kLong);  // on q's device
  const auto col = torch::arange(T, index).view({1, T});
  double max_logit = -std::numeric_limits<double>::infinity(), entropy = 0, sink = 0;
  for (int64_t r0 = 0; r0 < T; r0 += kRows) {
    const int64_t n = std::min(kRows, T - r0);
    const auto future = col > torch::arange(r0, r0 + n, index).view({n, 1});  // (n, T)
    auto s = torch::matmul(q.narrow(2, r0, n), kt).mul_(scale);               // (B, H, n, T)
    s.masked_fill_(future, -std::numeric_limits<float>::infinity());
    max_logit = std::max(max_logit, s.max().item<double>());
    const auto log_p = torch::log_softmax(s, -1).masked_fill(future, 0.0);  // (B, H, n, T); 0 · ln 0 = 0
    const int64_t skip = r0 == 0 ? 1 : 0;                                   // row 0
    entropy -= (log_p.exp() * log_p).sum(-1).narrow(-1, skip, n - skip).sum(torch::kDouble).item<double>();
    sink += log_p.select(-1, 0).exp().narrow(-1, skip, n - skip).sum(torch::kDouble).item<double>();
  }
  const double rows = static_cast<double>(B * H * (T - 1));
  d.max_logit = max_logit;
  d.attn_entropy = entropy / rows;
  d.attn_sink = sink / rows;
  return d;
}

AttentionDynamics measure_document_dynamics(const torch::Tensor& q, const torch::Tensor& kt, double scale,
                                            const DocumentLayout& docs) {
  const int64_t H = q.size(1), T = q.size(2);
  AttentionDynamics d;
  if (T < 2) return d;
  constexpr int64_t kRows = 256;
  const auto index = q.options().dtype(torch::kLong);
  const auto col = torch::arange(T, index).view({1, 1, T});  // (1, 1, T)
  const auto not_first = counted_tokens(docs);               // (B, T)
  double max_logit = -std::numeric_limits<double>::infinity(), entropy = 0, sink = 0, rows = 0;
  for (int64_t r0 = 0; r0 < T; r0 += kRows) {
    const int64_t n = std::min(kRows, T - r0);
    const auto row = torch::arange(r0, r0 + n, index).view({1, n, 1});  // (1, n, 1)
    const auto start = docs.start.narrow(1, r0, n).unsqueeze(-1);       // (B, n, 1)
    const auto masked = ((col > row) | (col < start)).unsqueeze(1);     // (B, 1, n, T)
    auto s = torch::matmul(q.narrow(2, r0, n), kt).mul_(scale);         // (B, H, n, T)
    s.masked_fill_(masked, -std::numeric_limits<float>::infinity());
    max_logit = std::max(max_logit, s.max().item<double>());
    const auto log_p = torch::log_softmax(s, -1).masked_fill(masked, 0.0);  // (B, H, n, T); 0 · ln 0 = 0
    const auto counted =
        not_first.narrow(1, r0, n).unsqueeze(1).to(torch::kDouble);  // (B, 1, n): not a first token
    entropy -= ((log_p.exp() * log_p).sum(-1).to(torch::kDouble) * counted).sum().item<double>();
    const auto first = start.unsqueeze(1).expand({-1, H, -1, -1});  // (B, H, n, 1): the document's first key
    sink += (log_p.gather(-1, first).squeeze(-1).exp().to(torch::kDouble) * counted).sum().item<double>();
    rows += H * counted.sum().item<double>();
  }
  d.max_logit = max_logit;
  d.attn_entropy = rows > 0 ? entropy / rows : 0.0;
  d.attn_sink = rows > 0 ? sink / rows : 0.0;
  return d;
}

}  // namespace

CausalSelfAttentionImpl::CausalSelfAttentionImpl(const ModelConfig& cfg, const LayerAttention& variant)
    : n_head_(cfg.n_head), d_head_(cfg.d_head), variant_(variant) {
  qkv = register_module("qkv", make_linear(cfg.d_model, 3 * cfg.n_head * cfg.d_head));
  proj = register_module("proj", make_linear(cfg.n_head * cfg.d_head, cfg.d_model));
  if (cfg.qk_norm) {
    q_norm = register_parameter("q_norm", torch::ones({d_head_}));
    k_norm = register_parameter("k_norm", torch::ones({d_head_}));
  }
  if (variant_.output_gate != OutputGate::kNone) {
    const int64_t gates = variant_.output_gate == OutputGate::kHeadwise ? n_head_ : n_head_ * d_head_;
    gate =
        register_module("gate", torch::nn::Linear(torch::nn::LinearOptions(cfg.d_model, gates).bias(true)));
  }
  if (has_variant_parameters())
    variant_parameter_ = register_parameter(variant_kind(variant_.kind).parameter, torch::empty({n_head_}));
  reset_variant_parameters();
}

void CausalSelfAttentionImpl::reset_variant_parameters() {
  torch::NoGradGuard no_grad;
  if (variant_parameter_.defined())
    variant_parameter_.copy_(initial_variant_parameter(variant_.kind, variant_.lambda, n_head_));
}

torch::Tensor CausalSelfAttentionImpl::effective_lambda() const {
  torch::NoGradGuard no_grad;
  if (!variant_parameter_.defined()) return torch::full({n_head_}, variant_.lambda);  // on the CPU
  return lambda_from_parameter(variant_.kind, variant_parameter_).clone();
}

torch::Tensor CausalSelfAttentionImpl::forward(const torch::Tensor& x, const torch::Tensor& mask,
                                               const RopeTables* rope, const DocumentLayout* docs,
                                               LayerBias* probe) {
  const auto B = x.size(0), T = x.size(1);
  // One copy into head-major layout, so every batched matmul below reads contiguous (T, D) blocks
  // (strided views made LibTorch clone them inside each matmul and its backward).
  auto qkv_heads = qkv->forward(x)
                       .view({B, T, 3, n_head_, d_head_})  // (B, T, 3, H, D)
                       .permute({2, 0, 3, 1, 4})           // (3, B, H, T, D)
                       .contiguous();
  auto q = qkv_heads[0], k = qkv_heads[1], v = qkv_heads[2];  // (B, H, T, D) each
  if (q_norm.defined()) {  // model.qk_norm: before RoPE, as Qwen3 and Gemma 3
    q = rms_norm(q, q_norm);
    k = rms_norm(k, k_norm);
  }
  if (rope != nullptr) {
    q = apply_rope(q, *rope);
    k = apply_rope(k, *rope);
  }
  const double scale = 1.0 / std::sqrt(static_cast<double>(d_head_));
  torch::Tensor y, diag;  // (B, H, T, D); the attention's diagonal (B, H, T), only for the probe
  if (variant_.impl == AttentionImpl::kFused) {
    auto attention = fused_causal_attention(q, k, v, scale, docs != nullptr ? docs->start : torch::Tensor());
    y = attention.y;
    if (probe != nullptr) diag = attention_diagonal(q, k, attention.lse, scale);
  } else {
    auto att = torch::matmul(q, k.transpose(-2, -1));  // (B, H, T, T)
    // In place: the scores themselves are not needed for backward (matmul keeps q and k).
    att.mul_(scale).masked_fill_(mask, -std::numeric_limits<float>::infinity());
    // Under bf16 mixed precision the scores come out of the matmul in bf16; the softmax runs in float32.
    att = att.scalar_type() == torch::kBFloat16 ? torch::softmax(att, -1, torch::kFloat)
                                                : torch::softmax(att, -1);
    y = torch::matmul(att, v);  // (B, H, T, D)
    if (probe != nullptr) diag = att.diagonal(0, -2, -1);
  }

  torch::Tensor z = y;  // λ = 0 takes exactly the SA path
  if (variant_parameter_.defined()) {
    z = exclusive_projection(
        y, v, lambda_from_parameter(variant_.kind, variant_parameter_).view({1, n_head_, 1, 1}));
  } else if (variant_.lambda != 0.0) {
    z = exclusive_projection(y, v, variant_.lambda);
  }
  if (probe != nullptr) {
    measure_bias(diag, y, z, v, variant_.impl, docs, probe);
    probe->dynamics = measure_dynamics(q, k, scale, docs);
    auto lam = effective_lambda().cpu();
    probe->lambda_per_head.assign(lam.data_ptr<float>(), lam.data_ptr<float>() + lam.numel());
  }
  if (!gate.is_empty()) {  // after the XSA projection (the bias metrics above see z before it), before W_o
    const int64_t per_head = variant_.output_gate == OutputGate::kHeadwise ? 1 : d_head_;
    auto g = torch::sigmoid(gate->forward(x))      // (B, T, G), G = H or H·D
                 .view({B, T, n_head_, per_head})  // (B, T, H, 1 or D)
                 .transpose(1, 2);                 // (B, H, T, 1 or D)
    z = z * g.to(z.scalar_type());
  }
  auto merged = z.transpose(1, 2).reshape({B, T, n_head_ * d_head_});  // (B, T, H·D)
  return proj->forward(merged);                                        // (B, T, C)
}

// ---------------------------------------------------------------------------------------------
MlpImpl::MlpImpl(const ModelConfig& cfg) {
  fc = register_module("fc", make_linear(cfg.d_model, cfg.mlp_ratio * cfg.d_model));
  proj = register_module("proj", make_linear(cfg.mlp_ratio * cfg.d_model, cfg.d_model));
}

torch::Tensor MlpImpl::forward(const torch::Tensor& x) {
  return proj->forward(torch::gelu(fc->forward(x)));
}

BlockImpl::BlockImpl(const ModelConfig& cfg, const LayerAttention& variant) {
  ln_1 = register_module("ln_1", torch::nn::LayerNorm(torch::nn::LayerNormOptions({cfg.d_model})));
  attn = register_module("attn", CausalSelfAttention(cfg, variant));
  ln_2 = register_module("ln_2", torch::nn::LayerNorm(torch::nn::LayerNormOptions({cfg.d_model})));
  mlp = register_module("mlp", Mlp(cfg));
}

torch::Tensor BlockImpl::forward(const torch::Tensor& x, const torch::Tensor& mask, const RopeTables* rope,
                                 const DocumentLayout* docs, LayerBias* probe) {
  auto h = x + attn->forward(ln_1->forward(x), mask, rope, docs, probe);  // pre-LN residual blocks
  return h + mlp->forward(ln_2->forward(h));
}

// ---------------------------------------------------------------------------------------------
std::vector<LayerAttention> layer_attention_plan(const ModelConfig& cfg, const AttentionConfig& attention,
                                                 const VariantSpec& variant) {
  const ResolvedVariant resolved = resolve_variant(attention, variant);
  LayerAttention modified;
  modified.impl = attention.impl;
  modified.output_gate = attention.output_gate;
  modified.kind = resolved.kind;
  modified.lambda = resolved.initial_lambda;
  LayerAttention standard;  // SA: fixed λ = 0
  standard.impl = attention.impl;
  standard.output_gate = attention.output_gate;
  std::vector<LayerAttention> plan(cfg.n_layer, standard);
  for (int l = 0; l < cfg.n_layer; ++l)
    if (resolved.modifies(l)) plan[l] = modified;
  return plan;
}

GptImpl::GptImpl(const ModelConfig& cfg, const AttentionConfig& attention, const VariantSpec& variant,
                 int vocab_size, int max_len)
    : cfg_(cfg), vocab_size_(vocab_size), max_len_(max_len) {
  wte = register_module("wte", torch::nn::Embedding(vocab_size, cfg.d_model));
  if (cfg.pos == PositionEncoding::kLearned)
    wpe = register_module("wpe", torch::nn::Embedding(max_len, cfg.d_model));
  if (cfg.embed_norm)
    ln_emb = register_module("ln_emb", torch::nn::LayerNorm(torch::nn::LayerNormOptions({cfg.d_model})));
  blocks = register_module("blocks", torch::nn::ModuleList());
  auto plan = layer_attention_plan(cfg, attention, variant);
  for (int l = 0; l < cfg.n_layer; ++l) {
    block_refs_.push_back(Block(cfg, plan[l]));
    blocks->push_back(block_refs_.back());
  }
  ln_f = register_module("ln_f", torch::nn::LayerNorm(torch::nn::LayerNormOptions({cfg.d_model})));
  if (!cfg.tie_embeddings) lm_head = register_module("lm_head", make_linear(cfg.d_model, vocab_size));
  if (cfg.pos == PositionEncoding::kRope) rope_ = make_rope_tables(max_len, cfg.d_head);
  // Only the explicit attention reads a mask (the fused kernel masks by construction): at T = 8,192 it is 64
  // MB.
  if (attention.impl == AttentionImpl::kExplicit)
    mask_ = torch::ones({max_len, max_len}, torch::kBool).triu(1);  // true where j > i (the future)
}

const torch::Tensor& GptImpl::causal_mask(int64_t t) {
  if (t > mask_.size(0)) mask_ = torch::ones({t, t}, mask_.options()).triu(1);
  return mask_;
}

torch::Tensor GptImpl::hidden(const torch::Tensor& idx, BiasProbe* probe) {
  const auto T = idx.size(1);
  TORCH_CHECK(T <= max_len_, "sequence of ", T, " tokens is longer than the model's ", max_len_);
  follow_device(idx.device());
  // Document masking (mask_documents): where each token's document starts; positions restart there.
  std::optional<DocumentLayout> docs;
  if (doc_boundary_ >= 0) docs = document_layout(idx, doc_boundary_);
  // (T, T), (B, 1, T, T) with documents, or undefined for the fused attention, which takes none
  torch::Tensor mask;
  if (mask_.defined())
    mask =
        docs ? attention_mask(T, docs->start, idx.device()) : causal_mask(T).narrow(0, 0, T).narrow(1, 0, T);
  auto x = wte->forward(idx);  // (B, T, C)
  if (!wpe.is_empty()) {
    x = docs ? x + wpe->forward(docs->positions)  // (B, T, C)
             : x + wpe->weight.narrow(0, 0, T);
  }
  if (!ln_emb.is_empty()) x = ln_emb->forward(x);
  if (probe != nullptr) {
    probe->layers.assign(block_refs_.size(), LayerBias{});
    // counted rows / (T - 1): exactly B without documents, so batches weigh as many windows as before
    probe->row_windows = docs && T >= 2
                             ? counted_tokens(*docs).sum().item<double>() / static_cast<double>(T - 1)
                             : static_cast<double>(idx.size(0));
  }
  RopeTables window_rope;  // with documents: the tables' rows at each token's position in its document
  const RopeTables* rope = nullptr;
  if (rope_.cos.defined()) {
    if (docs) window_rope = rope_at(rope_, docs->positions);
    rope = docs ? &window_rope : &rope_;
  }
  const DocumentLayout* layout = docs ? &*docs : nullptr;
  for (size_t l = 0; l < block_refs_.size(); ++l) {
    x = block_refs_[l]->forward(x, mask, rope, layout, probe != nullptr ? &probe->layers[l] : nullptr);
  }
  return ln_f->forward(x);  // (B, T, C)
}

void GptImpl::follow_device(const torch::Device& device) {
  // The RoPE tables and the mask are plain members (not buffers: checkpoints and exports hold parameters
  // only), so model->to(device) leaves them; they follow the tokens' device here, once.
  if (rope_.cos.defined() && rope_.cos.device() != device)
    rope_ = {rope_.cos.to(device), rope_.sin.to(device)};
  if (mask_.defined() && mask_.device() != device) mask_ = mask_.to(device);
}

torch::Device GptImpl::device() const {
  return wte->weight.device();
}

const torch::Tensor& GptImpl::output_weight() const {
  return lm_head.is_empty() ? wte->weight : lm_head->weight;  // (V, C)
}

torch::Tensor GptImpl::forward(const torch::Tensor& idx, BiasProbe* probe) {
  return F::linear(hidden(idx, probe), output_weight());  // (B, T, V)
}

torch::Tensor GptImpl::forward_loss(const torch::Tensor& idx, const torch::Tensor& targets,
                                    BiasProbe* probe) {
  auto h = hidden(idx, probe);
  return lm_head_cross_entropy(h.reshape({-1, h.size(-1)}), output_weight(), targets.reshape({-1}));
}

torch::Tensor GptImpl::token_losses(const torch::Tensor& idx, const torch::Tensor& targets) {
  torch::NoGradGuard no_grad;
  auto h = hidden(idx);
  return lm_head_token_losses(h.reshape({-1, h.size(-1)}), output_weight(), targets.reshape({-1}))
      .view(targets.sizes());  // (B, T)
}

torch::Tensor GptImpl::loss(const torch::Tensor& logits, const torch::Tensor& targets) const {
  return F::cross_entropy(logits.reshape({-1, logits.size(-1)}), targets.reshape({-1}));
}

void GptImpl::init_weights(at::Generator gen) {
  torch::NoGradGuard no_grad;
  const double residual_std = 0.02 / std::sqrt(2.0 * cfg_.n_layer);
  for (auto& item : named_parameters(/*recurse=*/true)) {
    const std::string& name = item.key();
    torch::Tensor p = item.value();
    if (is_variant_parameter(name)) continue;
    auto ends_with = [&](const std::string& s) {
      return name.size() >= s.size() && name.compare(name.size() - s.size(), s.size(), s) == 0;
    };
    bool is_norm = name.find("ln_") != std::string::npos;
    if (ends_with("attn.q_norm") || ends_with("attn.k_norm")) {
      p.fill_(1.0);  // RMSNorm gains: no draw, so the shared weights are those of the model without them
    } else if (ends_with("attn.gate.weight") || ends_with("attn.gate.bias")) {
      p.zero_();  // every gate starts at σ(0) = 0.5; no draw either
    } else if (is_norm && ends_with("weight")) {
      p.fill_(1.0);
    } else if (is_norm && ends_with("bias")) {
      p.zero_();
    } else if (ends_with("attn.proj.weight") || ends_with("mlp.proj.weight")) {
      p.normal_(0.0, residual_std, gen);
    } else {
      p.normal_(0.0, 0.02, gen);
    }
  }
  for (auto& block : block_refs_) block->attn->reset_variant_parameters();
}

std::vector<std::pair<std::string, torch::Tensor>> GptImpl::shared_parameters() const {
  std::vector<std::pair<std::string, torch::Tensor>> out;
  for (const auto& item : named_parameters(true)) {
    if (!is_variant_parameter(item.key())) out.emplace_back(item.key(), item.value());
  }
  return out;
}

std::string GptImpl::weights_checksum() const {
  uint64_t h = 1469598103934665603ULL;  // FNV-1a 64
  for (const auto& [name, p] : shared_parameters()) {
    auto c = p.detach().cpu().contiguous();
    const auto* bytes = static_cast<const unsigned char*>(c.data_ptr());
    size_t n = static_cast<size_t>(c.numel()) * c.element_size();
    for (size_t i = 0; i < n; ++i) {
      h ^= bytes[i];
      h *= 1099511628211ULL;
    }
  }
  char buf[17];
  std::snprintf(buf, sizeof(buf), "%016llx", static_cast<unsigned long long>(h));
  return buf;
}

torch::Tensor GptImpl::effective_lambdas() const {
  std::vector<torch::Tensor> rows;
  for (const auto& block : block_refs_) rows.push_back(block->attn->effective_lambda().cpu());
  return torch::stack(rows);  // (L, H)
}

int64_t GptImpl::num_parameters(bool exclude_embeddings) const {
  int64_t n = 0;
  for (const auto& item : named_parameters(true)) {
    if (exclude_embeddings && item.key().rfind("wpe", 0) == 0) continue;  // nanoGPT excludes positions
    n += item.value().numel();
  }
  return n;
}

}  // namespace xsa
